//! Resuming a suspended run after one of its waits was answered or cancelled: the answer is
//! journaled on the waiting run from outside its executor (which has ended: a suspended run
//! holds none), then the top-level run is executed again inline and replays its journal, so
//! the step that waited gets its answer.
//!
//! Which answer wins is decided by the wait store: an answer, a decision or a timeout moves
//! its row and journals on the run in one step ([`crate::wait_store::WaitJournal`]), so two
//! servers on one database never both win. Here, answers to one run's waits also take a
//! per-run lock and wait until no executor of the run is active in this process — a run
//! still on its way to park (its in-flight steps finishing) is never resumed twice.

use serde_json::Value;

use crate::record::{JournalEntry, JournalKind, RunRecord, format_millis, now_millis};
use crate::service::{Runtime, RuntimeError};
use crate::store::RunStoreError;
use crate::wait_store::WaitJournal;

/// Sub-flows nest at most this deep when looking for a run's top-level run.
const MAX_ANCESTRY: usize = 64;

/// Holding this, a caller may journal on the run's tree: nothing else answers its waits
/// and no executor of it is active.
pub(crate) struct ResumeGuard {
    _guard: tokio::sync::OwnedMutexGuard<()>,
    /// The top-level run (the one executed again).
    pub root: RunRecord,
}

impl Runtime {
    /// The top-level run of `run` (itself when it has no parent).
    pub(crate) async fn root_of(&self, run: &RunRecord) -> Result<RunRecord, RuntimeError> {
        let mut current = run.clone();
        for _ in 0..MAX_ANCESTRY {
            let Some(parent) = current.parent_run_id.clone() else {
                return Ok(current);
            };
            current = self.get_run(&parent).await?;
        }
        Ok(current)
    }

    /// Takes the resume lock of `run`'s tree and waits until it is not executing here.
    pub(crate) async fn lock_for_answer(
        &self,
        run: &RunRecord,
    ) -> Result<ResumeGuard, RuntimeError> {
        let root = self.root_of(run).await?;
        let lock = {
            let mut locks = match self.shared.resume_locks.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            locks.entry(root.id.clone()).or_default().clone()
        };
        let guard = lock.lock_owned().await;
        let root = self.wait_for_run(&root.id).await?;
        Ok(ResumeGuard {
            _guard: guard,
            root,
        })
    }

    /// Appends `entries` (kind, payload) at the end of `run_id`'s journal. Only with the
    /// run's [`ResumeGuard`] held.
    pub(crate) async fn append_outside(
        &self,
        run_id: &str,
        entries: Vec<(JournalKind, Value)>,
    ) -> Result<(), RunStoreError> {
        let journal = self.shared.store.journal(run_id, None, None).await?;
        let mut next = journal.last().map_or(1, |e| e.sequence + 1);
        let now = format_millis(now_millis());
        let entries: Vec<JournalEntry> = entries
            .into_iter()
            .map(|(kind, payload)| {
                let e = JournalEntry {
                    sequence: next,
                    kind,
                    node_id: None,
                    scope: None,
                    payload: Some(payload),
                    timestamp: now.clone(),
                };
                next += 1;
                e
            })
            .collect();
        self.shared.store.append(run_id, &entries).await
    }

    /// `entries` to journal on `run_id` with a wait row's change
    /// ([`crate::WaitStore::update_pause_journaled`]). Only with the run's [`ResumeGuard`] held.
    pub(crate) fn outside_journal<'a>(
        &'a self,
        run_id: &'a str,
        entries: &'a [(JournalKind, Value)],
    ) -> WaitJournal<'a> {
        WaitJournal {
            runs: self.shared.store.as_ref(),
            run_id,
            entries,
        }
    }

    /// Executes the guarded tree's top-level run again (when it has not ended) and waits
    /// until it parks again or ends; releases the lock once the executor is registered.
    /// Returns `run_id`'s record afterwards.
    pub(crate) async fn resume_inline(
        &self,
        guard: ResumeGuard,
        run_id: &str,
    ) -> Result<RunRecord, RuntimeError> {
        let root = guard.root.clone();
        if !root.status.is_terminal() && !self.active_runs().contains(&root.id) {
            self.spawn(root.clone(), None);
        }
        drop(guard);
        self.wait_for_run(&root.id).await?;
        self.get_run(run_id).await
    }
}
