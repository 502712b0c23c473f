//! The in-memory implementations of the storage ports: lost with the process; for tests,
//! throw-away runtimes and the API's tests.

mod mail_triggers;
mod provider_registry;
mod run_store;
mod wait_store;

pub use mail_triggers::MemoryMailTriggers;
pub use provider_registry::MemoryProviderRegistry;
pub use run_store::MemoryRunStore;
pub use wait_store::MemoryWaitStore;
