//! Why a run stops before its end: somebody asked to cancel it (it ends `cancelled`), or the
//! process is stopping (it is left as a crash would leave it — `running`, its journal
//! flushed — and resumes on the next [`crate::Runtime::recover`]).
//!
//! One token fires in both cases, so every wait in the executor (and every tool's
//! cancellation signal) needs to watch only one thing; the cause is read afterwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

/// A run's stop signal and its cause. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct RunStop {
    token: CancellationToken,
    /// Set by a cancel request; shared with the run's child runs (a cancelled parent cancels
    /// them, it does not interrupt them).
    requested: Arc<AtomicBool>,
    /// The runtime-wide stop, fired by [`crate::Runtime::shutdown`].
    shutdown: CancellationToken,
}

impl RunStop {
    /// A top-level run's signal, fired too when `shutdown` fires.
    pub(crate) fn new(shutdown: &CancellationToken) -> Self {
        Self {
            token: shutdown.child_token(),
            requested: Arc::new(AtomicBool::new(false)),
            shutdown: shutdown.clone(),
        }
    }

    /// A child run's signal: fires with its parent's, same cause.
    pub(crate) fn child(&self) -> Self {
        Self {
            token: self.token.child_token(),
            requested: self.requested.clone(),
            shutdown: self.shutdown.clone(),
        }
    }

    /// The token every wait of the run watches.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// A cancel request: the run ends `cancelled`.
    pub(crate) fn request_cancel(&self) {
        self.requested.store(true, Ordering::SeqCst);
        self.token.cancel();
    }

    /// True when the run stops because the process does (and nobody asked to cancel it).
    pub(crate) fn is_interrupt(&self) -> bool {
        self.shutdown.is_cancelled() && !self.requested.load(Ordering::SeqCst)
    }
}
