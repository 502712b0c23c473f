//! Where runs and journals are kept. The [`RunStore`] port, its query and the in-memory
//! store are `kindgi_core`'s (re-exported here at their old paths); the database store is
//! `kindgi_store::runs::RunsStore`, which implements the port itself (SQLite by default,
//! PostgreSQL at scale).
//!
//! The executor of a run assigns its journal sequence numbers, so a store only appends and
//! reads; a duplicate `(run, sequence)` is an error, never a silent overwrite.

use serde_json::Value;

pub use kindgi_core::StorageError;
pub use kindgi_core::memory::MemoryRunStore;
pub use kindgi_core::ports::{ReplayFilter, RunQuery, RunStore};

/// The run store's error: core's one [`StorageError`] (the old name, kept for callers).
pub type RunStoreError = StorageError;

/// Helper for payloads: `{key: value, …}`.
pub(crate) fn payload<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in pairs {
        m.insert(k.to_owned(), v);
    }
    Value::Object(m)
}
