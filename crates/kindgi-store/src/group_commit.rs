//! Group commit of run journal writes: the step boundaries of many runs (`append_and_update`:
//! "these entries happened, and the run is now in this state") written in one transaction,
//! so concurrent runs share a commit instead of paying one each. On PostgreSQL a commit waits
//! for the WAL flush, so a thousand runs finishing a step at once are a few flushes, not a
//! thousand; on SQLite every write goes through its one writer connection anyway, and the
//! batch saves that connection a `BEGIN`/`COMMIT` round per write.
//!
//! How: [`GroupCommit`] owns a bounded queue and a few writer tasks (one on SQLite, which has
//! one writer; [`PG_WRITERS`] on PostgreSQL). A writer takes the first write waiting, then
//! whatever else is already queued (at most [`MAX_BATCH`]), and writes them all in one
//! transaction. Each caller awaits its own answer, so a write is acknowledged only once it is
//! committed, as before. Nothing waits for a batch to fill: a write alone is written at once.
//!
//! Failures stay each write's own: when a batch fails (a duplicate sequence from a second
//! executor, a lost connection), it is rolled back whole and its writes are written again one
//! at a time, each answered with its own result. Writes of one run never race each other (its
//! executor awaits each before the next), so the order within a run holds. When the writer
//! tasks are gone (their tokio runtime ended), the caller writes directly.

use std::sync::Arc;

use kindgi_core::ids::parse_millis;
use kindgi_core::run::{JournalEntry, RunRecord};
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::{Backend, StoreError};

/// The most writes in one transaction.
pub const MAX_BATCH: usize = 128;
/// Writer tasks on PostgreSQL (each a connection of the pool while it writes).
pub const PG_WRITERS: usize = 4;
/// Writes queued before a caller waits for room.
const QUEUE: usize = 4096;

const OP: &str = "run_journal.append";

/// A run's moving parts (the runs store's `update_run` writes the same).
pub(crate) const UPDATE_RUN: &str = "UPDATE runs SET status = $2, output = $3, failure_message = $4, \
     updated_at = $5, completed_at = $6 WHERE id = $1";

/// One journal entry (also appended by the waits store, after the run's last entry).
pub(crate) const INSERT_ENTRY: &str = "INSERT INTO run_journal (run_id, sequence, kind, node_id, scope, \
     payload, timestamp) VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// One journal entry as its row's binds (its payload serialized once, by the caller).
#[derive(Debug)]
struct EntryRow {
    sequence: i64,
    kind: &'static str,
    node_id: Option<String>,
    scope: Option<String>,
    payload: Option<String>,
    timestamp: i64,
}

/// The moving parts of a run's row (as `UPDATE_RUN` binds them).
#[derive(Debug)]
struct RunRow {
    id: String,
    status: &'static str,
    output: Option<String>,
    failure_message: Option<String>,
    updated_at: i64,
    completed_at: Option<i64>,
}

/// One `append_and_update`, owned so it can wait in the queue.
#[derive(Debug)]
pub struct JournalWrite {
    run_id: String,
    entries: Vec<EntryRow>,
    run: Option<RunRow>,
}

impl JournalWrite {
    pub fn new(run_id: &str, entries: &[JournalEntry], run: Option<&RunRecord>) -> JournalWrite {
        JournalWrite {
            run_id: run_id.to_owned(),
            entries: entries
                .iter()
                .map(|e| EntryRow {
                    sequence: i64::try_from(e.sequence).unwrap_or(i64::MAX),
                    kind: e.kind.as_str(),
                    node_id: e.node_id.clone(),
                    scope: e.scope.clone(),
                    payload: e.payload.as_ref().map(ToString::to_string),
                    timestamp: parse_millis(&e.timestamp),
                })
                .collect(),
            run: run.map(|r| RunRow {
                id: r.id.clone(),
                status: r.status.as_str(),
                output: r.output.as_ref().map(ToString::to_string),
                failure_message: r.failure_message.clone(),
                updated_at: parse_millis(&r.updated_at),
                completed_at: r.completed_at.as_deref().map(parse_millis),
            }),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.run.is_none()
    }
}

struct Job {
    write: JournalWrite,
    answer: oneshot::Sender<Result<(), StoreError>>,
}

/// The queue and its writer tasks, shared by every clone of one database's run store.
#[derive(Debug)]
pub struct GroupCommit {
    queue: mpsc::Sender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("run_id", &self.write.run_id)
            .finish()
    }
}

impl GroupCommit {
    /// Starts the writers on the current tokio runtime; `None` outside one.
    pub fn start(backend: &Backend) -> Option<GroupCommit> {
        let handle = tokio::runtime::Handle::try_current().ok()?;
        let (queue, rx) = mpsc::channel(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        let writers = match backend {
            Backend::Sqlite(_) => 1,
            Backend::Postgres(_) => PG_WRITERS,
        };
        for _ in 0..writers {
            handle.spawn(writer(rx.clone(), backend.clone()));
        }
        Some(GroupCommit { queue })
    }

    /// Writes `write` in the next batch and returns once it is committed (or failed). When
    /// the writers are gone, writes it directly.
    pub async fn write(&self, backend: &Backend, write: JournalWrite) -> Result<(), StoreError> {
        let (answer, wait) = oneshot::channel();
        match self.queue.send(Job { write, answer }).await {
            Ok(()) => match wait.await {
                Ok(result) => result,
                // The writer ended mid-batch (its runtime stopped): nothing says it committed.
                Err(_) => Err(StoreError::Query {
                    op: OP,
                    source: sqlx::Error::WorkerCrashed,
                }),
            },
            Err(mpsc::error::SendError(job)) => write_batch(backend, &[&job.write]).await,
        }
    }
}

/// Takes a batch off the queue (the first write waiting, then what else is queued), writes it,
/// answers each; ends when every sender is gone.
async fn writer(rx: Arc<Mutex<mpsc::Receiver<Job>>>, backend: Backend) {
    loop {
        let batch = {
            let mut rx = rx.lock().await;
            let Some(first) = rx.recv().await else {
                return;
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            batch
        };
        commit(&backend, batch).await;
    }
}

async fn commit(backend: &Backend, batch: Vec<Job>) {
    if batch.len() > 1 {
        let writes: Vec<&JournalWrite> = batch.iter().map(|j| &j.write).collect();
        if write_batch(backend, &writes).await.is_ok() {
            for job in batch {
                let _ = job.answer.send(Ok(()));
            }
            return;
        }
        // Rolled back whole: each again on its own, for its own answer.
    }
    for job in batch {
        let result = write_batch(backend, &[&job.write]).await;
        let _ = job.answer.send(result);
    }
}

/// Writes `writes` in one transaction.
pub async fn write_batch(backend: &Backend, writes: &[&JournalWrite]) -> Result<(), StoreError> {
    macro_rules! body {
        ($pool:expr) => {{
            let mut tx = $pool.begin().await.map_err(StoreError::query(OP))?;
            for w in writes {
                for e in &w.entries {
                    sqlx::query(INSERT_ENTRY)
                        .bind(&w.run_id)
                        .bind(e.sequence)
                        .bind(e.kind)
                        .bind(&e.node_id)
                        .bind(&e.scope)
                        .bind(&e.payload)
                        .bind(e.timestamp)
                        .execute(&mut *tx)
                        .await
                        .map_err(StoreError::query(OP))?;
                }
                if let Some(r) = &w.run {
                    sqlx::query(UPDATE_RUN)
                        .bind(&r.id)
                        .bind(r.status)
                        .bind(&r.output)
                        .bind(&r.failure_message)
                        .bind(r.updated_at)
                        .bind(r.completed_at)
                        .execute(&mut *tx)
                        .await
                        .map_err(StoreError::query("runs.update"))?;
                }
            }
            tx.commit().await.map_err(StoreError::query(OP))
        }};
    }
    match backend {
        Backend::Sqlite(pools) => body!(&pools.writer),
        Backend::Postgres(pool) => body!(pool),
    }
}
