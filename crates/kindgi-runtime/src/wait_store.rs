//! Where a run's waits are kept besides its journal: approvals and pausing calls' waits.
//! The [`WaitStore`] port, the records and the in-memory store are `kindgi_core`'s,
//! re-exported here at their old paths; the database store is kindgi-store's
//! `kindgi_store::waits::WaitsStore`, which implements the port directly.

pub use kindgi_core::StorageError;
pub use kindgi_core::memory::MemoryWaitStore;
pub use kindgi_core::pause::{PauseRecord, PauseStatus};
pub use kindgi_core::ports::{WaitJournal, WaitStore};

/// The wait store's error: core's one [`StorageError`] (the old name, kept for callers).
pub type WaitStoreError = StorageError;
