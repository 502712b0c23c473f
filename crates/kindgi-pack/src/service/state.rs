//! The state every request shares: the bound pack, the token, readiness, draining, the
//! in-flight counter with its cap (a lock-free try-acquire, so a 503 provably did not run)
//! and the budgets of [`Limits`] as semaphores.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use subtle::ConstantTimeEq;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use super::limits::Limits;
use super::pack::LoadedPack;
use crate::log::Logger;

pub(crate) struct State {
    pub pack: LoadedPack,
    /// `kindgi-artifact-version`, built once (absent if the version is not a valid header).
    pub artifact_header: Option<http::HeaderValue>,
    pub logger: Arc<Logger>,
    token: Box<[u8]>,
    /// `KINDGI_PACK_TENANT_ID` (2.7.0): the only tenant this service answers for.
    pub tenant: Option<String>,
    /// Under the strict env check, the required names that have no value.
    pub strict_missing_env: Option<bytes::Bytes>,
    pub ready: AtomicBool,
    pub draining: AtomicBool,
    in_flight: AtomicUsize,
    cap: usize,
    /// Notified whenever the in-flight count drops (the drain waits on it).
    pub idle: Notify,
    pub limits: Limits,
    /// Bytes of bodies larger than `limits.small_body` being received.
    reading: Arc<Semaphore>,
    /// Estimated bytes of larger calls parsed and not yet answered.
    parsed: Arc<Semaphore>,
    /// CPU-heavy jobs running off the async workers: at most the concurrency cap. A job
    /// holds its permit until it really ends, even after its call answered at its deadline.
    pub cpu: Arc<Semaphore>,
}

impl State {
    pub fn new(
        pack: LoadedPack,
        logger: Arc<Logger>,
        token: &str,
        tenant: Option<String>,
        strict_missing_env: Option<bytes::Bytes>,
        cap: usize,
        limits: Limits,
    ) -> Self {
        let artifact_header = http::HeaderValue::from_str(&pack.artifact_version).ok();
        Self {
            pack,
            artifact_header,
            logger,
            token: token.as_bytes().into(),
            tenant,
            strict_missing_env,
            ready: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            cap: cap.max(1),
            idle: Notify::new(),
            limits,
            reading: Arc::new(Semaphore::new(permits(limits.reading_bytes))),
            parsed: Arc::new(Semaphore::new(permits(limits.parsed_bytes))),
            cpu: Arc::new(Semaphore::new(cap.clamp(1, Semaphore::MAX_PERMITS))),
        }
    }

    /// Whether the cap is reached now (checked before the body is read; the slot itself is
    /// taken once the body is in, so a caller slow to send one holds no slot).
    pub fn at_cap(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) >= self.cap
    }

    /// Waits for room for `bytes` of a body being received.
    pub async fn reserve_reading(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        reserve(&self.reading, self.limits.reading_bytes, bytes).await
    }

    /// Waits for room for `bytes` of a parsed call.
    pub async fn reserve_parsed(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        reserve(&self.parsed, self.limits.parsed_bytes, bytes).await
    }

    /// Constant-time token comparison (leaks only the length). Empty never matches.
    pub fn token_ok(&self, received: &[u8]) -> bool {
        !received.is_empty() && bool::from(self.token.ct_eq(received))
    }

    /// Takes an in-flight slot unless the cap is reached.
    pub fn try_admit(self: &Arc<Self>) -> Option<Permit> {
        let mut current = self.in_flight.load(Ordering::Relaxed);
        loop {
            if current >= self.cap {
                return None;
            }
            match self.in_flight.compare_exchange_weak(
                current,
                current + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Some(Permit {
                        state: self.clone(),
                    });
                }
                Err(actual) => current = actual,
            }
        }
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }
}

fn permits(bytes: usize) -> usize {
    bytes.clamp(1, Semaphore::MAX_PERMITS)
}

/// Takes `bytes` of a byte budget of `total`, all at once (so no call holds part of it while
/// waiting for more); a request larger than the whole budget takes all of it.
/// (`None` only if the semaphore were closed, which these never are.)
async fn reserve(
    budget: &Arc<Semaphore>,
    total: usize,
    bytes: usize,
) -> Option<OwnedSemaphorePermit> {
    let n = bytes.clamp(1, permits(total)).min(u32::MAX as usize) as u32;
    budget.clone().acquire_many_owned(n).await.ok()
}

/// One admitted call; dropping it frees the slot.
pub(crate) struct Permit {
    state: Arc<State>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.state.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.state.idle.notify_waiters();
        }
    }
}
