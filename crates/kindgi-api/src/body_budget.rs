//! The memory budget of the answers written page by page ([`crate::paged_body`], the run
//! streams of [`crate::sse`]): every chunk they hand to a connection is charged against one
//! budget for the whole server until the connection has written it out (or closed), and a
//! chunk that does not fit waits for room. Together with the per-answer bound (one page),
//! this caps what slow or stalled readers can make the server hold: per connection one page
//! plus its write buffer, in all [`DEFAULT_TOTAL_BYTES`] unless the operator gives another
//! total (`kindgi server --body-budget-bytes`, `kindgi_host::caps`).

use std::sync::Arc;

use axum::body::Bytes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What all paged answers and streams may hold at once, unwritten: 256 MiB.
pub const DEFAULT_TOTAL_BYTES: usize = 256 * 1024 * 1024;

/// The budget, in KiB permits. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct BodyBudget {
    permits: Arc<Semaphore>,
    total_kib: usize,
}

impl Default for BodyBudget {
    fn default() -> Self {
        BodyBudget::new(DEFAULT_TOTAL_BYTES)
    }
}

/// A chunk and its share of the budget, given back when the connection drops the chunk.
struct Charged {
    bytes: Vec<u8>,
    _permit: OwnedSemaphorePermit,
}

impl AsRef<[u8]> for Charged {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl BodyBudget {
    /// A budget of `total_bytes` (at least 1 KiB).
    pub fn new(total_bytes: usize) -> BodyBudget {
        let total_kib = (total_bytes / 1024).clamp(1, Semaphore::MAX_PERMITS);
        BodyBudget {
            permits: Arc::new(Semaphore::new(total_kib)),
            total_kib,
        }
    }

    /// Bytes charged now (in whole KiB).
    pub fn in_use_bytes(&self) -> usize {
        (self.total_kib - self.permits.available_permits()) * 1024
    }

    /// `chunk`, charged: waits until the budget has room for it. A chunk larger than the
    /// whole budget takes all of it.
    pub async fn charge(&self, chunk: Vec<u8>) -> Bytes {
        let kib = chunk.len().div_ceil(1024).clamp(1, self.total_kib);
        let kib = u32::try_from(kib).unwrap_or(u32::MAX);
        match self.permits.clone().acquire_many_owned(kib).await {
            Ok(permit) => Bytes::from_owner(Charged {
                bytes: chunk,
                _permit: permit,
            }),
            // Never closed; were it, the chunk goes uncharged rather than lost.
            Err(_) => Bytes::from(chunk),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn chunks_hold_their_share_until_dropped() {
        let budget = BodyBudget::new(4 * 1024);
        let a = budget.charge(vec![0; 3000]).await;
        assert_eq!(budget.in_use_bytes(), 3 * 1024);
        let waiting = budget.charge(vec![0; 2048]);
        tokio::pin!(waiting);
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        drop(a);
        let b = waiting.await;
        assert_eq!(b.len(), 2048);
        assert_eq!(budget.in_use_bytes(), 2 * 1024);
        drop(b);
        assert_eq!(budget.in_use_bytes(), 0);
    }
}
