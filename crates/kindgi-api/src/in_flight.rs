//! The `Idempotency-Key`s whose first request is running in this process (see
//! [`crate::idempotency`]): known only here, so a key is never held by a request that died.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// The keys (tenant, key) whose first request is running in this process.
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight(Arc<Mutex<HashSet<(String, String)>>>);

/// Holds a key in [`InFlight`] until dropped (also when the request is cancelled).
pub(crate) struct InFlightGuard {
    set: InFlight,
    entry: (String, String),
}

impl InFlight {
    /// Holds `(tenant, key)`, or `None` when another request holds it.
    pub(crate) fn enter(&self, tenant: &str, key: &str) -> Option<InFlightGuard> {
        let entry = (tenant.to_owned(), key.to_owned());
        let mut set = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        set.insert(entry.clone()).then(|| InFlightGuard {
            set: self.clone(),
            entry,
        })
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        let mut set = self
            .set
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        set.remove(&self.entry);
    }
}
