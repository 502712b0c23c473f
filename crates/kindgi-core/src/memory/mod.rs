//! The in-memory implementations of the storage ports: lost with the process; for tests,
//! throw-away runtimes and the API's tests.

mod connection_store;
mod mail_triggers;
mod provider_registry;
mod run_store;
mod schedule_store;
mod wait_store;
mod webhook_store;

pub use connection_store::MemoryConnectionStore;
pub use mail_triggers::MemoryMailTriggers;
pub use provider_registry::MemoryProviderRegistry;
pub use run_store::MemoryRunStore;
pub use schedule_store::MemoryScheduleStore;
pub use wait_store::MemoryWaitStore;
pub use webhook_store::MemoryWebhookStore;
