//! The storage ports: what the run engine asks of storage and of the host, expressed in
//! core's records. Each returns [`crate::StorageError`] where storage can fail. A port
//! lives here; its implementations live in [`crate::memory`] (in memory) and in
//! kindgi-store (SQLite, PostgreSQL) or the host.

mod bundle;
mod call_values;
mod connection_store;
mod conversation_log;
mod definition_source;
mod guardrail_checks;
mod mail_trigger_store;
mod project_directory;
mod provider_registry;
mod reviewer_roster;
mod run_store;
mod schedule_store;
mod tenant_policy;
mod tenant_states;
mod wait_store;
mod webhook_store;

pub use bundle::StoragePorts;
pub use call_values::CallValues;
pub use connection_store::ConnectionStore;
pub use conversation_log::ConversationLog;
pub use definition_source::DefinitionSource;
pub use guardrail_checks::{CheckError, CheckRequest, GuardrailChecks};
pub use mail_trigger_store::MailTriggerStore;
pub use project_directory::{DirectoryWrite, ProjectDirectory, ProjectRecord, TenantSettings};
pub use provider_registry::{ProviderRegistration, ProviderRegistry, ProviderWrite, SecretRef};
pub use reviewer_roster::{NewReviewer, ReviewerRecord, ReviewerRoster, RosterQuery};
pub use run_store::{ReplayFilter, RunQuery, RunStore};
pub use schedule_store::{AnyOwner, FireHold, OwnerAccess, ScheduleQuery, ScheduleStore};
pub use tenant_policy::TenantApprovalPolicy;
pub use tenant_states::{Standing, Suspension, TenantStanding, TenantState, TenantStates};
pub use wait_store::{WaitJournal, WaitStore, approval_matches, journal_entries};
pub use webhook_store::{FireQuery, WebhookQuery, WebhookStore};
