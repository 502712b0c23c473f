//! One backend's implementations of the ports a run engine keeps its state in, handed over
//! together: what a storage crate gives the composition root (`kindgi_store::Database::ports`)
//! and the runtime is built over (`Runtime::over`). A bundle, so that a caller cannot pair one
//! database's runs with another's waits, and so a new port (a trigger store, a lease table) is
//! one more field here rather than one more builder call in every host, test and benchmark.

use std::sync::Arc;

use super::{
    ConnectionStore, ConversationLog, MailTriggerStore, ProviderRegistry, ReviewerRoster, RunStore,
    ScheduleStore, WaitStore, WebhookStore,
};

/// Runs and their journal, approvals and pauses, agent turns' conversations and the reviewer
/// roster, all kept by one backend.
#[derive(Clone)]
pub struct StoragePorts {
    pub runs: Arc<dyn RunStore>,
    pub waits: Arc<dyn WaitStore>,
    pub conversations: Arc<dyn ConversationLog>,
    /// The tenants' registered model providers (`/v1/providers`), read by the model router.
    pub providers: Arc<dyn ProviderRegistry>,
    pub reviewers: Arc<dyn ReviewerRoster>,
    /// Schedules and their fire ledger (`/v1/schedules`), read by the schedule loop.
    pub schedules: Arc<dyn ScheduleStore>,
    /// Webhook triggers and their fires (`/v1/webhooks`, `/v1/hooks`).
    pub webhooks: Arc<dyn WebhookStore>,
    /// The tenants' connections to other apps (`/v1/connections`), resolved per tool call.
    pub connections: Arc<dyn ConnectionStore>,
    /// Mail triggers and their fires (`/v1/mail-triggers`, the inbound mail receiver).
    pub mail_triggers: Arc<dyn MailTriggerStore>,
}

impl std::fmt::Debug for StoragePorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoragePorts").finish_non_exhaustive()
    }
}
