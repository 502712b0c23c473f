//! The run context: everything one executing run needs (its record, flow, journal writer,
//! replay index, stop signal, depth), handed to the driver, every node kind and every step.
//! It also holds the few things every one of them does the same way: turn a journal write's
//! error or a run's stop into a [`Failure`], name a child scope, and record a decision once.

use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::catalogue::LoadedFlow;
use crate::engine::expr::{Env, NodeOutputs};
use crate::engine::failure::Failure;
use crate::engine::journal::{JournalWriter, Replay};
use crate::engine::shared::Shared;
use crate::engine::stop::RunStop;
use crate::record::{JournalKind, RunRecord};
use crate::store::{RunStoreError, payload};

/// Everything one executing run needs.
pub(crate) struct RunCtx {
    pub shared: Arc<Shared>,
    pub run: RunRecord,
    pub flow: Arc<LoadedFlow>,
    pub journal: JournalWriter,
    pub replay: Replay,
    pub cancel: CancellationToken,
    /// Why `cancel` fired.
    pub(crate) stop: RunStop,
    pub depth: u32,
    pub max_parallelism: usize,
    /// The run's `state` (what expressions read as `state.…`).
    pub(crate) state: Value,
}

impl std::fmt::Debug for RunCtx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunCtx")
            .field("run", &self.run.id)
            .finish_non_exhaustive()
    }
}

impl RunCtx {
    /// The failure of a run whose stop signal fired: cancelled, or interrupted when the
    /// process is stopping.
    pub(crate) fn stop_failure(&self) -> Failure {
        if self.stop.is_interrupt() {
            Failure::interrupted()
        } else {
            Failure::cancelled()
        }
    }

    /// What expressions see: the run's input and state, and the node outputs `outputs`.
    pub(crate) fn env<'a>(&'a self, outputs: &'a NodeOutputs) -> Env<'a> {
        Env {
            run_input: &self.run.input,
            state: &self.state,
            node_outputs: outputs,
            iteration_index: None,
            iteration_output: None,
        }
    }

    /// `record`: the first call journals `value.recorded`; a resumed run gets the journaled
    /// value back without running `decide` again.
    pub(crate) async fn recorded<F>(
        &self,
        scope: &str,
        key: &str,
        decide: F,
    ) -> Result<Value, Failure>
    where
        F: std::future::Future<Output = Result<Value, Failure>>,
    {
        if let Some(v) = self.replay.values.get(&(scope.to_owned(), key.to_owned())) {
            return Ok(v.clone());
        }
        self.journal.flush().await.map_err(journal_failure)?;
        let v = decide.await?;
        self.journal
            .write(
                JournalKind::ValueRecorded,
                None,
                "",
                Some(payload([
                    ("scope", json!(scope)),
                    ("key", json!(key)),
                    ("value", v.clone()),
                ])),
            )
            .await
            .map_err(journal_failure)?;
        Ok(v)
    }
}

/// A journal write that failed: the run was taken over (its sequence was taken), or the
/// journal is unavailable.
pub(crate) fn journal_failure(e: RunStoreError) -> Failure {
    if let RunStoreError::DuplicateSequence { .. } = e {
        return Failure::lost(format!("run-taken-over: {e}"));
    }
    Failure::fatal(format!(
        "journal-unavailable: the run's journal could not be written: {e}"
    ))
}

/// Formats schema issues as `<instancePath or />: <message>`, joined.
pub(crate) fn issues_text(issues: &kindgi_schema::Issues) -> String {
    issues
        .iter()
        .map(|i| {
            let at = if i.instance_path().is_empty() {
                "/"
            } else {
                i.instance_path()
            };
            format!("{at}: {}", i.message())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A scope inside `scope`: `<scope>/<part>` (or `part` at the top).
pub(crate) fn child_scope(scope: &str, part: &str) -> String {
    if scope.is_empty() {
        part.to_owned()
    } else {
        format!("{scope}/{part}")
    }
}

/// Scope string for values recorded by a node: `<scope>/<node>`.
pub(crate) fn node_scope(scope: &str, node: &str) -> String {
    child_scope(scope, node)
}
