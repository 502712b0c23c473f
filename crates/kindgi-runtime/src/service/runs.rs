//! Reading and cancelling runs: a run's record, the list, its journal, waiting for its end,
//! and cancelling it (here or, for a run not executing here, in its record and journal).

use super::{Runtime, RuntimeError};
use crate::record::{JournalEntry, JournalKind, RunRecord, RunStatus, format_millis, now_millis};
use crate::store::RunQuery;

impl Runtime {
    /// A run's record.
    pub async fn get_run(&self, run_id: &str) -> Result<RunRecord, RuntimeError> {
        self.shared
            .store
            .get_run(run_id)
            .await?
            .ok_or_else(|| RuntimeError::RunNotFound {
                run_id: run_id.to_owned(),
            })
    }

    /// Runs, newest first.
    pub async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, RuntimeError> {
        Ok(self.shared.store.list_runs(query).await?)
    }

    /// A run's journal entries after `after` (a sequence number), at most `limit`.
    pub async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, RuntimeError> {
        self.get_run(run_id).await?;
        Ok(self.shared.store.journal(run_id, after, limit).await?)
    }

    /// Waits until the run is no longer pending or running here, and returns its record.
    pub async fn wait_for_run(&self, run_id: &str) -> Result<RunRecord, RuntimeError> {
        let rx = self
            .shared
            .active
            .lock()
            .ok()
            .and_then(|g| g.get(run_id).map(|a| a.done.clone()));
        if let Some(mut rx) = rx {
            while !*rx.borrow() {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        }
        self.get_run(run_id).await
    }

    /// Cancels a run: an executing one stops at its next step boundary (in-flight tools see
    /// their cancellation signal) and ends `cancelled`, sub-runs included.
    pub async fn cancel_run(&self, run_id: &str) -> Result<RunRecord, RuntimeError> {
        let run = self.get_run(run_id).await?;
        if run.status.is_terminal() {
            return Err(RuntimeError::RunAlreadyTerminal {
                run_id: run_id.to_owned(),
                status: run.status,
            });
        }
        let stop = self
            .shared
            .active
            .lock()
            .ok()
            .and_then(|g| g.get(run_id).map(|a| a.stop.clone()));
        match stop {
            Some(s) => {
                s.request_cancel();
                self.wait_for_run(run_id).await
            }
            None => self.cancel_here(run).await,
        }
    }

    /// Cancels a run no executor of this process drives (a suspended one, or one left by a
    /// process that stopped): journals `run.cancelled`, withdraws its open approvals
    /// (`run-cancelled`) and cancels its unfinished child runs the same way. Under the
    /// run's resume lock, so no answer to one of its waits is journaled meanwhile.
    async fn cancel_here(&self, run: RunRecord) -> Result<RunRecord, RuntimeError> {
        let guard = self.lock_for_answer(&run).await?;
        let run = self.get_run(&run.id).await?;
        if run.status.is_terminal() {
            return Err(RuntimeError::RunAlreadyTerminal {
                run_id: run.id,
                status: run.status,
            });
        }
        let mut pending = vec![run.clone()];
        let mut first = None;
        while let Some(r) = pending.pop() {
            let children = self
                .shared
                .store
                .list_runs(&RunQuery {
                    parent_run_id: Some(r.id.clone()),
                    ..RunQuery::default()
                })
                .await?;
            pending.extend(children.into_iter().filter(|c| !c.status.is_terminal()));
            let ended = self.end_cancelled(r).await?;
            first.get_or_insert(ended);
        }
        drop(guard);
        Ok(first.unwrap_or(run))
    }

    /// Journals `run.cancelled` for a run not executing here and stores it cancelled.
    async fn end_cancelled(&self, mut run: RunRecord) -> Result<RunRecord, RuntimeError> {
        let entries = self.shared.store.journal(&run.id, None, None).await?;
        let last = entries.last().map(|e| e.sequence).unwrap_or(0);
        let now = format_millis(now_millis());
        let entry = JournalEntry {
            sequence: last + 1,
            kind: JournalKind::RunCancelled,
            node_id: None,
            scope: None,
            payload: Some(serde_json::json!({"reason": "cancelled"})),
            timestamp: now.clone(),
        };
        self.shared.store.append(&run.id, &[entry]).await?;
        run.status = RunStatus::Cancelled;
        run.updated_at = now.clone();
        run.completed_at = Some(now);
        self.shared.store.update_run(&run).await?;
        crate::engine::run_end::withdraw_open_waits(&self.shared, &run).await;
        Ok(run)
    }
}
