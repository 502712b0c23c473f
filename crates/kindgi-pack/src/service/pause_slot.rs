//! The out-of-band channel a pausing handler answers *pause* through: a task-local slot the
//! service sets around each tool call and reads after it (docs/pauses.md). It belongs to the
//! service, which owns the call; the SDK's `sdk::pause` only writes into it, so the SDK
//! depends on the service and never the other way round.

use std::sync::{Arc, Mutex};

/// The pause a handler asked for in the current call, as the service reads it.
#[derive(Debug, Default)]
pub(crate) struct PauseSlot {
    /// `Some(timeout_ms)` once the handler paused (`timeout_ms` `None`: the ticket's).
    asked: Mutex<Option<Option<u64>>>,
}

impl PauseSlot {
    /// What the handler asked for, if it paused.
    pub(crate) fn asked(&self) -> Option<Option<u64>> {
        self.asked.lock().ok().and_then(|g| *g)
    }

    /// Records that the handler paused, for `timeout_ms` (`None`: the ticket's timeout).
    pub(crate) fn ask(&self, timeout_ms: Option<u64>) {
        if let Ok(mut g) = self.asked.lock() {
            *g = Some(timeout_ms);
        }
    }
}

tokio::task_local! {
    /// The current tool call's pause slot (set by the service around each handler).
    pub(crate) static PAUSE: Arc<PauseSlot>;
}
