//! CPU-heavy request work (manifest validation and schema compilation, run-input
//! validation) off the async workers: it runs on tokio's blocking threads, at most
//! [`max_jobs`] at a time (the number of CPUs), so expensive requests queue among themselves
//! while `/health` and every other request keep their workers. Waiting for a slot is async.

use std::future::Future;
use std::sync::OnceLock;

use tokio::sync::Semaphore;

use crate::error::ApiError;

/// How many CPU jobs run at once: the machine's parallelism (at least 1).
pub fn max_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

fn slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| Semaphore::new(max_jobs()))
}

/// Run `job` on a blocking thread once a slot is free.
pub async fn run<T, F>(job: F) -> Result<T, ApiError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _slot = slots()
        .acquire()
        .await
        .map_err(|e| ApiError::internal(&e))?;
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| ApiError::internal(&e))
}

/// Drive `work` (an async call whose CPU part matters, e.g. starting a run, which validates
/// its input) on a blocking thread once a slot is free. Its I/O still uses the runtime's
/// drivers; only the polling moves off the workers.
pub async fn run_async<T, F>(work: F) -> Result<T, ApiError>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handle = tokio::runtime::Handle::current();
    run(move || handle.block_on(work)).await
}
