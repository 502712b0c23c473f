//! CPU-heavy work of a call — scanning and parsing a large body, validating input, output
//! and config — run on tokio's blocking pool, at most `State::cpu` jobs at once (the
//! concurrency cap), and only until the call's deadline. The async workers stay free for
//! other calls and `/healthz`; a deadline that passes mid-validation is answered at once,
//! while the job finishes in the background still holding its permit, so abandoned jobs
//! cannot pile up past the cap.
//!
//! Small work stays on the worker: a hop to the blocking pool costs more than validating a
//! small value (it took 15–40 % of the service's throughput), so a small body's input and a
//! small output are first validated in place under [`INLINE`] budgets, which bound that work
//! to well under a millisecond; only when they run out does the validation move here, under
//! the validator's full budgets, and its answer is the one the first try would have given.

use kindgi_schema::Budgets;
use serde_json::Value;
use tokio::time::{Instant, timeout_at};

use super::state::State;

/// The budgets of a validation tried on an async worker: 10,000 regex steps and evaluated
/// nodes bound it to tens of microseconds; the issue budget is the default one, so running it
/// out here means it runs out in full too.
pub(crate) const INLINE: Budgets = Budgets {
    regex_steps: 10_000,
    evaluated_nodes: 10_000,
    issues: Budgets::DEFAULT.issues,
};

/// The most JSON values a value tried on an async worker may hold: leaf checks are not
/// counted by the budgets, so the size bounds them.
const INLINE_VALUES: usize = 4_096;

/// Whether `value` holds at most [`INLINE_VALUES`] values (stops counting past it).
pub(crate) fn is_small(value: &Value) -> bool {
    let mut left = INLINE_VALUES;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        if left == 0 {
            return false;
        }
        left -= 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            Value::String(s) if s.len() > 64 * 1024 => return false,
            _ => {}
        }
    }
    true
}

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
