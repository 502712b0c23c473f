//! The runtime's own start and stop: recovering the runs a stopped process left, the runs
//! executing here, a graceful shutdown and a hard abort.

use tokio::sync::watch;

use super::{Runtime, RuntimeError};
use crate::record::RunStatus;
use crate::store::RunQuery;

impl Runtime {
    /// Resumes every top-level run left pending or running (by a process that stopped),
    /// from its journal. Returns the ids resumed. Call once at start-up.
    ///
    /// Also reconciles suspended runs with their wait rows, resumes those whose waits were
    /// all answered or cancelled meanwhile (their ids are returned too), and starts the
    /// sweeper that times waits out.
    pub async fn recover(&self) -> Result<Vec<String>, RuntimeError> {
        self.start_sweeper();
        let mut resumed = self.recover_suspended().await?;
        let query = RunQuery {
            statuses: vec![RunStatus::Pending, RunStatus::Running],
            top_level_only: true,
            ..RunQuery::default()
        };
        let runs = self.shared.store.list_runs(&query).await?;
        for run in runs {
            let executing = self
                .shared
                .active
                .lock()
                .map(|g| g.contains_key(&run.id))
                .unwrap_or(false);
            if !executing {
                resumed.push(run.id.clone());
                self.spawn(run, None);
            }
        }
        Ok(resumed)
    }

    /// Ids of the runs executing in this process.
    pub fn active_runs(&self) -> Vec<String> {
        self.shared
            .active
            .lock()
            .map(|g| g.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// A graceful stop that never does worse than a crash: every executing run stops at once
    /// (an in-flight tool call is abandoned), stores the journal it has buffered and is left
    /// `running` (or `pending`) with no terminal entry — exactly what [`Runtime::recover`]
    /// resumes on the next start. Waits up to `grace` for the runs to store their journals,
    /// then aborts any that have not (as a crash would). Returns the ids left to resume.
    ///
    /// Runs started afterwards stop at once too, left `pending`.
    pub async fn shutdown(&self, grace: std::time::Duration) -> Vec<String> {
        // The runs executing now, taken before the stop is signalled: once it is, a run's task
        // (on another worker) may store its state and leave the map before this thread looks.
        let waits: Vec<(String, watch::Receiver<bool>)> = self
            .shared
            .active
            .lock()
            .map(|g| {
                g.iter()
                    .map(|(id, a)| (id.clone(), a.done.clone()))
                    .collect()
            })
            .unwrap_or_default();
        self.shared.shutdown.cancel();
        let ids: Vec<String> = waits.iter().map(|(id, _)| id.clone()).collect();
        let all = futures::future::join_all(waits.into_iter().map(|(_, mut rx)| async move {
            let _ = rx.wait_for(|done| *done).await;
        }));
        if tokio::time::timeout(grace, all).await.is_err() {
            tracing::warn!("runs still executing {grace:?} after shutdown began; aborting them");
            self.abort_all();
        }
        ids
    }

    /// Stops every executing task at once without journaling anything — what a crash does.
    /// For tests of recovery and for a hard shutdown; the runs resume on the next
    /// [`Runtime::recover`].
    pub fn abort_all(&self) {
        if let Ok(mut g) = self.shared.active.lock() {
            for (_, a) in g.drain() {
                a.handle.abort();
            }
        }
    }
}
