//! Where runs and journals are kept. The [`RunStore`] port, its query and the in-memory
//! store are `kindgi_core`'s (re-exported here at their old paths); this module keeps the
//! database store over `kindgi_store::runs` (SQLite by default, PostgreSQL at scale) until
//! the store implements the port itself.
//!
//! The executor of a run assigns its journal sequence numbers, so a store only appends and
//! reads; a duplicate `(run, sequence)` is an error, never a silent overwrite.

use async_trait::async_trait;
use kindgi_store::Database;
use kindgi_store::runs::{RunFilter, RunsStore, StoredJournalEntry, StoredRun};
use serde_json::Value;

pub use kindgi_core::StorageError;
pub use kindgi_core::memory::MemoryRunStore;
pub use kindgi_core::ports::{ReplayFilter, RunQuery, RunStore};

use crate::record::{
    JournalEntry, JournalKind, RunAgent, RunMeta, RunRecord, RunStatus, format_millis, parse_millis,
};

/// The run store's error: core's one [`StorageError`] (the old name, kept for callers).
pub type RunStoreError = StorageError;

/// The store's filter for `query`.
fn filter_of(query: &RunQuery) -> RunFilter {
    RunFilter {
        tenant_id: query.tenant_id.clone(),
        project_id: query.project_id.clone(),
        statuses: query
            .statuses
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect(),
        flow_id: query.flow_id.clone(),
        flow_version: query.flow_version.clone(),
        agent_id: query.agent_id.clone(),
        agent_version: query.agent_version.clone(),
        parent_run_id: query.parent_run_id.clone(),
        top_level_only: query.top_level_only,
        children_only: query.children_only,
        trigger_id: query.trigger_id.clone(),
        replays: query.replays,
        eval_run_id: query.eval_run_id.clone(),
        created_after: query.created_after,
        created_before: query.created_before,
        after: query.after.clone(),
        limit: query.limit,
    }
}

/// Runs and journals in the database (`runs` and `run_journal` tables).
#[derive(Debug, Clone)]
pub struct DatabaseRunStore {
    runs: RunsStore,
}

impl DatabaseRunStore {
    /// The database must be migrated (`Database::migrate`, which creates these tables).
    pub fn new(db: Database) -> Self {
        Self {
            runs: RunsStore::new(db),
        }
    }
}

fn backend(op: &'static str) -> impl FnOnce(kindgi_store::StoreError) -> StorageError {
    kindgi_store::StoreError::storage(op)
}

fn to_stored(r: &RunRecord) -> StoredRun {
    let m = &r.meta;
    StoredRun {
        id: r.id.clone(),
        tenant_id: r.tenant_id.clone(),
        flow_id: r.flow_id.clone(),
        flow_version: r.flow_version.clone(),
        status: r.status.as_str().to_owned(),
        dry_run: r.dry_run,
        input: r.input.clone(),
        output: r.output.clone(),
        failure_message: r.failure_message.clone(),
        parent_run_id: r.parent_run_id.clone(),
        parent_node_id: r.parent_node_id.clone(),
        options: None,
        created_at: parse_millis(&r.created_at),
        updated_at: parse_millis(&r.updated_at),
        completed_at: r.completed_at.as_deref().map(parse_millis),
        project_id: m.project_id.clone(),
        segments: (!m.segments.is_empty())
            .then(|| serde_json::to_value(&m.segments).unwrap_or(Value::Null)),
        trace_id: m.trace_id.clone(),
        started_by: m.started_by.clone(),
        agent: m.agent.as_ref().and_then(|a| serde_json::to_value(a).ok()),
        agent_id: m.agent.as_ref().map(|a| a.id.clone()),
        agent_version: m.agent.as_ref().map(|a| a.version.clone()),
        trigger_id: m
            .trigger
            .as_ref()
            .and_then(|t| t.get("triggerId"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        trigger: m.trigger.clone(),
        replay_of: m.replay_of.clone(),
        eval_run_id: m.eval_run_id.clone(),
    }
}

fn from_stored(s: StoredRun) -> Result<RunRecord, StorageError> {
    let what = format!("run {}", s.id);
    let status = RunStatus::parse(&s.status).ok_or_else(|| StorageError::Corrupt {
        what: format!("run {}", s.id),
        reason: format!("unknown status \"{}\"", s.status),
        source: None,
    })?;
    Ok(RunRecord {
        id: s.id,
        tenant_id: s.tenant_id,
        flow_id: s.flow_id,
        flow_version: s.flow_version,
        status,
        input: s.input,
        output: s.output,
        failure_message: s.failure_message,
        dry_run: s.dry_run,
        created_at: format_millis(s.created_at),
        updated_at: format_millis(s.updated_at),
        completed_at: s.completed_at.map(format_millis),
        parent_run_id: s.parent_run_id,
        parent_node_id: s.parent_node_id,
        meta: RunMeta {
            project_id: s.project_id,
            segments: decode(&what, s.segments)?.unwrap_or_default(),
            trace_id: s.trace_id,
            started_by: s.started_by,
            agent: decode::<RunAgent>(&what, s.agent)?,
            trigger: s.trigger,
            replay_of: s.replay_of,
            eval_run_id: s.eval_run_id,
        },
    })
}

fn decode<T: serde::de::DeserializeOwned>(
    what: &str,
    v: Option<Value>,
) -> Result<Option<T>, StorageError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v)
            .map(Some)
            .map_err(|e| StorageError::corrupt(what, e)),
    }
}

#[async_trait]
impl RunStore for DatabaseRunStore {
    async fn insert_run(&self, run: &RunRecord) -> Result<(), StorageError> {
        self.runs
            .insert_run(&to_stored(run))
            .await
            .map_err(backend("runs.insert_run"))
    }

    async fn update_run(&self, run: &RunRecord) -> Result<(), StorageError> {
        let found = self
            .runs
            .update_run(&to_stored(run))
            .await
            .map_err(backend("runs.update_run"))?;
        if found {
            Ok(())
        } else {
            Err(StorageError::NotFound {
                op: "runs.update_run",
                what: format!("run {}", run.id),
            })
        }
    }

    async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, StorageError> {
        match self
            .runs
            .get_run(id)
            .await
            .map_err(backend("runs.get_run"))?
        {
            Some(s) => from_stored(s).map(Some),
            None => Ok(None),
        }
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, StorageError> {
        let filter = filter_of(query);
        self.runs
            .list_runs(&filter)
            .await
            .map_err(backend("runs.list_runs"))?
            .into_iter()
            .map(from_stored)
            .collect()
    }

    async fn append(&self, run_id: &str, entries: &[JournalEntry]) -> Result<(), StorageError> {
        self.append_and_update(run_id, entries, None).await
    }

    async fn append_and_update(
        &self,
        run_id: &str,
        entries: &[JournalEntry],
        run: Option<&RunRecord>,
    ) -> Result<(), StorageError> {
        let stored: Vec<StoredJournalEntry> = entries
            .iter()
            .map(|e| StoredJournalEntry {
                run_id: run_id.to_owned(),
                sequence: i64::try_from(e.sequence).unwrap_or(i64::MAX),
                kind: e.kind.as_str().to_owned(),
                node_id: e.node_id.clone(),
                scope: e.scope.clone(),
                payload: e.payload.clone(),
                timestamp: parse_millis(&e.timestamp),
            })
            .collect();
        let run = run.map(to_stored);
        self.runs
            .append_journal_and_update(&stored, run.as_ref())
            .await
            .map_err(|e| {
                if e.is_unique_violation() {
                    StorageError::DuplicateSequence {
                        run_id: run_id.to_owned(),
                        sequence: entries.first().map(|e| e.sequence).unwrap_or(0),
                    }
                } else {
                    e.into_storage("runs.append")
                }
            })
    }

    async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, StorageError> {
        let after = after.map(|a| i64::try_from(a).unwrap_or(i64::MAX));
        let rows = self
            .runs
            .journal(run_id, after, limit)
            .await
            .map_err(backend("runs.journal"))?;
        rows.into_iter()
            .map(|r| {
                let kind = JournalKind::parse(&r.kind).ok_or_else(|| StorageError::Corrupt {
                    what: format!("journal entry {}#{}", r.run_id, r.sequence),
                    reason: format!("unknown kind \"{}\"", r.kind),
                    source: None,
                })?;
                Ok(JournalEntry {
                    sequence: u64::try_from(r.sequence).unwrap_or(0),
                    kind,
                    node_id: r.node_id,
                    scope: r.scope,
                    payload: r.payload,
                    timestamp: format_millis(r.timestamp),
                })
            })
            .collect()
    }
}

/// Helper for payloads: `{key: value, …}`.
pub(crate) fn payload<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in pairs {
        m.insert(k.to_owned(), v);
    }
    Value::Object(m)
}
