//! A run from its journal to its end: [`execute_run`] reads the journal, makes a record
//! that ended before agree with it, finds the run's flow, journals `run.started`, hands the
//! graph to the driver ([`super::driver`]) and stores how the run ended — completed, failed
//! or cancelled with its terminal entry, parked (`suspended`) on a wait, left for recovery
//! when the process stops, or left alone when another executor took it over.

use kindgi_tools::secret_mask::SecretMask;
use serde_json::{Map, Value, json};
use std::sync::Arc;

use crate::engine::ctx::{RunCtx, journal_failure};
use crate::engine::failure::{Failure, FailureKind};
use crate::engine::journal::{JournalWriter, Replay};
use crate::engine::shared::{Shared, flow_for_run};
use crate::engine::stop::RunStop;
use crate::record::{JournalKind, RunRecord, RunStatus, format_millis, now_millis};
use crate::store::payload;

/// Runs (or resumes) `run` to a terminal status and returns its final record.
pub(crate) async fn execute_run(
    shared: Arc<Shared>,
    mut run: RunRecord,
    depth: u32,
    stop: RunStop,
    max_parallelism: Option<u32>,
) -> RunRecord {
    let cancel = stop.token().clone();
    let store = shared.store.clone();
    let entries = match store.journal(&run.id, None, None).await {
        Ok(e) => e,
        Err(e) => {
            return finish(
                &shared,
                run,
                Err(Failure::fatal(format!(
                    "journal-unavailable: the run's journal could not be read: {e}"
                ))),
                None,
            )
            .await;
        }
    };
    let replay = Replay::build(&entries);
    if let Some((kind, payload)) = &replay.terminal {
        // Ended before; make the record agree with the journal.
        if !run.status.is_terminal() {
            let p = payload.clone().unwrap_or(Value::Null);
            let result = match kind {
                JournalKind::RunCompleted => Ok(p.get("output").cloned().unwrap_or(Value::Null)),
                JournalKind::RunCancelled => Err(Failure::cancelled()),
                _ => Err(Failure::fatal(
                    p.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("failed")
                        .to_owned(),
                )),
            };
            return finish(&shared, run, result, None).await;
        }
        return run;
    }
    let journal = JournalWriter::new(store.clone(), run.id.clone(), replay.last_sequence);
    let flow = match flow_for_run(&shared, &run).await {
        Ok(Some(flow)) => flow,
        Ok(None) => {
            let f = Failure::fatal(format!(
                "flow-not-found: flow \"{}\" version {} is not registered any more, so run {} cannot go on",
                run.flow_id, run.flow_version, run.id
            ));
            return finish(&shared, run, Err(f), Some(&journal)).await;
        }
        Err(e) => {
            let f = Failure::fatal(e.to_string());
            return finish(&shared, run, Err(f), Some(&journal)).await;
        }
    };
    if !replay.run_started
        && let Err(e) = journal
            .write(
                JournalKind::RunStarted,
                None,
                "",
                Some(payload([("input", run.input.clone())])),
            )
            .await
    {
        return finish(&shared, run, Err(journal_failure(e)), None).await;
    }
    run.status = RunStatus::Running;
    run.updated_at = format_millis(now_millis());
    // Stored with the first journal write (one commit for both).
    journal.set_run(run.clone()).await;
    let max_parallelism = max_parallelism
        .unwrap_or_else(|| flow.flow.max_parallelism_or_default())
        .max(1) as usize;
    let ctx = RunCtx {
        shared: shared.clone(),
        run: run.clone(),
        flow,
        journal,
        replay,
        cancel,
        stop,
        depth,
        max_parallelism,
        state: Value::Object(Map::new()),
    };
    let result = ctx.run_top().await;
    let RunCtx { journal, .. } = ctx;
    finish(&shared, run, result, Some(&journal)).await
}

/// A failure's message as the host log shows it: with the run's secrets masked (`mask`: the
/// run's, when it has a journal writer), as everything the run stores is.
fn logged_message<'a>(f: &'a Failure, mask: Option<&SecretMask>) -> std::borrow::Cow<'a, str> {
    match mask {
        Some(mask) => mask.mask_str(&f.message),
        None => std::borrow::Cow::Borrowed(&f.message),
    }
}

/// Journals the terminal entry (when a writer is given) and stores the final record.
async fn finish(
    shared: &Shared,
    mut run: RunRecord,
    result: Result<Value, Failure>,
    journal: Option<&JournalWriter>,
) -> RunRecord {
    if let Err(f) = &result {
        match f.kind {
            FailureKind::Lost => {
                // Another executor journals this run: leave the record to it.
                let mask = journal.map(|j| j.mask().as_ref());
                tracing::warn!(run = %run.id, "{}", logged_message(f, mask));
                return shared
                    .store
                    .get_run(&run.id)
                    .await
                    .ok()
                    .flatten()
                    .unwrap_or(run);
            }
            FailureKind::Interrupted => {
                // The process is stopping: store what is buffered (with the `running` record
                // queued at the start) and leave the run for recovery, as a crash would —
                // never worse.
                if let Some(j) = journal
                    && let Err(e) = j.flush().await
                {
                    tracing::warn!(run = %run.id, error = %e, "could not store the interrupted run's journal");
                }
                return run;
            }
            FailureKind::Suspended { .. } => return park(shared, run, journal).await,
            FailureKind::Retryable | FailureKind::Fatal | FailureKind::Cancelled => {}
        }
    }
    let now = format_millis(now_millis());
    run.updated_at = now.clone();
    run.completed_at = Some(now);
    let entry = match result {
        Ok(output) => {
            run.status = RunStatus::Completed;
            run.output = Some(output.clone());
            run.failure_message = None;
            (JournalKind::RunCompleted, payload([("output", output)]))
        }
        Err(f) if f.kind == FailureKind::Cancelled => {
            run.status = RunStatus::Cancelled;
            (
                JournalKind::RunCancelled,
                payload([("reason", json!("cancelled"))]),
            )
        }
        Err(f) => {
            run.status = RunStatus::Failed;
            run.failure_message = Some(f.message.clone());
            (
                JournalKind::RunFailed,
                payload([("message", json!(f.message))]),
            )
        }
    };
    if let Some(j) = journal {
        // The record is returned (and may be stored directly below) as well as journaled.
        j.mask_run(&mut run);
    }
    let stored = match journal {
        // The terminal entry and the final record in one commit.
        Some(j) => {
            async {
                j.write(entry.0, None, "", Some(entry.1)).await?;
                j.set_run(run.clone()).await;
                j.flush().await
            }
            .await
        }
        None => shared.store.update_run(&run).await,
    };
    if let Err(e) = stored {
        tracing::warn!(run = %run.id, error = %e, "could not journal the run's end");
        if let Err(e) = shared.store.update_run(&run).await {
            tracing::warn!(run = %run.id, error = %e, "could not store the run's end");
        }
    }
    crate::engine::run_end::withdraw_open_waits(shared, &run).await;
    run
}

/// Stores a run that waits: `suspended`, no terminal entry; nothing executes it until an
/// answer (or a cancellation) of one of its waits resumes it.
async fn park(shared: &Shared, mut run: RunRecord, journal: Option<&JournalWriter>) -> RunRecord {
    run.status = RunStatus::Suspended;
    run.updated_at = format_millis(now_millis());
    let stored = match journal {
        Some(j) => {
            j.set_run(run.clone()).await;
            j.flush().await
        }
        None => shared.store.update_run(&run).await,
    };
    if let Err(e) = stored {
        tracing::warn!(run = %run.id, error = %e, "could not store the suspended run");
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logged_failure_message_has_the_runs_secrets_masked() {
        let mask = SecretMask::new();
        mask.add("sk-lost-run-123");
        let f = Failure::lost("run-taken-over: while sending sk-lost-run-123");
        assert_eq!(
            logged_message(&f, Some(&mask)),
            "run-taken-over: while sending ***"
        );
        assert_eq!(logged_message(&f, None), f.message);
    }
}
