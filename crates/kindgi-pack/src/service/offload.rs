//! CPU-heavy work of a call — scanning and parsing a large body, validating input, output
//! and config — run on tokio's blocking pool, at most `State::cpu` jobs at once (the
//! concurrency cap), and only until the call's deadline. The async workers stay free for
//! other calls and `/healthz`; a deadline that passes mid-validation is answered at once,
//! while the job finishes in the background still holding its permit, so abandoned jobs
//! cannot pile up past the cap.

use tokio::time::{Instant, timeout_at};

use super::state::State;

/// Why a job gave no value.
pub(crate) enum JobError {
    /// The deadline passed first (waiting for a permit, or running).
    Expired,
    /// The job panicked (a bug in a validator or a parser): its message.
    Panicked(String),
}

/// Runs `work` off the async workers until `until`.
pub(crate) async fn run<T: Send + 'static>(
    state: &State,
    until: Instant,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, JobError> {
    let permit = match timeout_at(until, state.cpu.clone().acquire_owned()).await {
        Ok(Ok(permit)) => permit,
        // Never closed; a closed semaphore would mean the service is going away.
        Ok(Err(_)) | Err(_) => return Err(JobError::Expired),
    };
    let job = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work()
    });
    match timeout_at(until, job).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(JobError::Panicked(e.to_string())),
        Err(_) => Err(JobError::Expired),
    }
}
