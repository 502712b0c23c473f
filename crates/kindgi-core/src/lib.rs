//! Kindgi core: the floor the run engine and the store both stand on — the records, the
//! storage ports, one storage error, their in-memory implementations and the shared ids.
//!
//! # Design
//!
//! * **The floor.** `kindgi-core` sits above `kindgi-spec` and `kindgi-tools` (a port's
//!   signature names a tool manifest or a secret resolver) and below `kindgi-store`,
//!   `kindgi-runtime`, `kindgi-api` and `kindgi-host`. It has no sqlx, no axum and asks for
//!   no tokio runtime: what is here is data and traits, so every floor above can name it.
//! * **A port in core, its implementation in kindgi-store.** The records ([`run`],
//!   [`approval`], [`pause`], [`connection_wait`], [`conversation`], [`definition`]) are what runs are on the wire and what the
//!   engine reasons about; the [`ports`] are expressed in those records, never in a store's
//!   rows. A backend implements a port directly on its own types (as `kindgi-store`'s
//!   `StoreRegistry` implements `kindgi_tools::registry::ToolRegistry`), so no adapter or
//!   mirror type sits between the engine and a table. The in-memory implementations
//!   ([`memory`]) are here too, so any crate's tests can use them.
//! * **One [`StorageError`]**, `#[non_exhaustive]`, with the backend's error chained as its
//!   source: a port never answers `Result<_, String>`. Callers match on its kind
//!   ([`StorageError::DuplicateSequence`] is "the run was taken over"), never on its text.
//! * **One copy of each shared id and constant** ([`ids`]): the record time format, the
//!   wait-token id hash, [`ALL_TENANTS`], [`DEFAULT_WAIT_MS`], [`split_tool_ref`].
//! * **Room for what comes next.** Claiming a run under a lease with a fencing token is an
//!   extension trait beside [`RunStore`] (its doc says how). Each trigger kind (schedules,
//!   webhooks, mail) is one more record, port and pair of implementations in the same
//!   places; [`trigger`] holds the words they share with runs.

pub mod approval;
pub mod connection;
pub mod connection_wait;
pub mod conversation;
pub mod definition;
pub mod error;
pub mod ids;
pub mod mail_trigger;
pub mod memory;
pub mod pause;
pub mod ports;
pub mod run;
pub mod schedule;
pub mod trigger;
pub mod webhook;

pub use error::{BoxError, StorageError};
pub use ids::{
    ALL_TENANTS, DEFAULT_WAIT_MS, format_millis, now_millis, parse_millis, split_tool_ref,
    token_id, wait_token_id,
};
pub use memory::{MemoryConnectionStore, MemoryRunStore, MemoryWaitStore};
pub use ports::{
    CallValues, CheckError, CheckRequest, ConnectionStore, ConversationLog, DefinitionSource,
    GuardrailChecks, ReplayFilter, RunQuery, RunStore, TenantApprovalPolicy, WaitJournal,
    WaitStore,
};
pub use trigger::{
    FireOutcome, Mailbox, OwnerKind, RunTrigger, StartedBy, TriggerKind, TriggerOwner,
    TriggerStatus, Unattended,
};
