//! Where runs and journals are kept: the [`RunStore`] trait, an in-memory store (tests,
//! throw-away runtimes) and the database store over `kindgi_store::runs` (SQLite by default,
//! PostgreSQL at scale).
//!
//! The executor of a run assigns its journal sequence numbers, so a store only appends and
//! reads; a duplicate `(run, sequence)` is an error, never a silent overwrite.

use async_trait::async_trait;
use kindgi_store::Database;
pub use kindgi_store::runs::ReplayFilter;
use kindgi_store::runs::{RunFilter, RunsStore, StoredJournalEntry, StoredRun};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::record::{
    JournalEntry, JournalKind, RunAgent, RunMeta, RunRecord, RunStatus, format_millis, parse_millis,
};

/// A storage failure, naming the operation.
#[derive(Debug, thiserror::Error)]
pub enum RunStoreError {
    #[error("run store: {op} failed: {message}")]
    Backend { op: &'static str, message: String },
    #[error("run store: journal entry {run_id}#{sequence} already exists")]
    DuplicateSequence { run_id: String, sequence: u64 },
    #[error("run store: stored data for {what} is corrupt: {reason}")]
    Corrupt { what: String, reason: String },
}

/// Which runs to list, `createdAt desc, id desc`. Times are milliseconds since the epoch.
#[derive(Debug, Clone, Default)]
pub struct RunQuery {
    pub tenant_id: Option<String>,
    pub project_id: Option<String>,
    /// Any of these statuses (any status when empty).
    pub statuses: Vec<RunStatus>,
    pub flow_id: Option<String>,
    pub flow_version: Option<String>,
    pub agent_id: Option<String>,
    pub agent_version: Option<String>,
    pub parent_run_id: Option<String>,
    pub top_level_only: bool,
    pub children_only: bool,
    pub trigger_id: Option<String>,
    pub replays: ReplayFilter,
    pub eval_run_id: Option<String>,
    /// Strictly after / before.
    pub created_after: Option<i64>,
    pub created_before: Option<i64>,
    /// A page cursor: runs strictly after `(createdAt, id)` in the list's order.
    pub after: Option<(i64, String)>,
    pub limit: Option<u32>,
}

impl RunQuery {
    /// True when `r` passes every filter except the cursor and the limit.
    pub fn matches(&self, r: &RunRecord) -> bool {
        let eq = |want: &Option<String>, got: Option<&str>| {
            want.as_deref().is_none_or(|w| got == Some(w))
        };
        let created = parse_millis(&r.created_at);
        let agent = r.meta.agent.as_ref();
        let trigger_id = r
            .meta
            .trigger
            .as_ref()
            .and_then(|t| t.get("triggerId"))
            .and_then(Value::as_str);
        eq(&self.tenant_id, Some(&r.tenant_id))
            && eq(&self.project_id, r.meta.project_id.as_deref())
            && (self.statuses.is_empty() || self.statuses.contains(&r.status))
            && eq(&self.flow_id, Some(&r.flow_id))
            && eq(&self.flow_version, Some(&r.flow_version))
            && eq(&self.agent_id, agent.map(|a| a.id.as_str()))
            && eq(&self.agent_version, agent.map(|a| a.version.as_str()))
            && eq(&self.parent_run_id, r.parent_run_id.as_deref())
            && (!self.top_level_only || r.parent_run_id.is_none())
            && (!self.children_only || r.parent_run_id.is_some())
            && eq(&self.trigger_id, trigger_id)
            && match self.replays {
                ReplayFilter::Include => true,
                ReplayFilter::Exclude => r.meta.replay_of.is_none(),
                ReplayFilter::Only => r.meta.replay_of.is_some(),
            }
            && eq(&self.eval_run_id, r.meta.eval_run_id.as_deref())
            && self.created_after.is_none_or(|t| created > t)
            && self.created_before.is_none_or(|t| created < t)
    }

    fn filter(&self) -> RunFilter {
        RunFilter {
            tenant_id: self.tenant_id.clone(),
            project_id: self.project_id.clone(),
            statuses: self
                .statuses
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect(),
            flow_id: self.flow_id.clone(),
            flow_version: self.flow_version.clone(),
            agent_id: self.agent_id.clone(),
            agent_version: self.agent_version.clone(),
            parent_run_id: self.parent_run_id.clone(),
            top_level_only: self.top_level_only,
            children_only: self.children_only,
            trigger_id: self.trigger_id.clone(),
            replays: self.replays,
            eval_run_id: self.eval_run_id.clone(),
            created_after: self.created_after,
            created_before: self.created_before,
            after: self.after.clone(),
            limit: self.limit,
        }
    }
}

/// Durable runs and journals.
#[async_trait]
pub trait RunStore: Send + Sync + std::fmt::Debug {
    async fn insert_run(&self, run: &RunRecord) -> Result<(), RunStoreError>;
    async fn update_run(&self, run: &RunRecord) -> Result<(), RunStoreError>;
    async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, RunStoreError>;
    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, RunStoreError>;
    /// Appends entries whose sequences the caller assigned (in order, one transaction).
    async fn append(&self, run_id: &str, entries: &[JournalEntry]) -> Result<(), RunStoreError>;
    /// Appends entries and stores `run` (when given) — in one transaction where the backend
    /// can, so a step boundary and the run's new state cost one commit.
    async fn append_and_update(
        &self,
        run_id: &str,
        entries: &[JournalEntry],
        run: Option<&RunRecord>,
    ) -> Result<(), RunStoreError> {
        if !entries.is_empty() {
            self.append(run_id, entries).await?;
        }
        if let Some(r) = run {
            self.update_run(r).await?;
        }
        Ok(())
    }
    /// Entries with `sequence > after`, in order, at most `limit`.
    async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, RunStoreError>;
}

/// Runs and journals in memory: lost with the process.
#[derive(Debug, Default)]
pub struct MemoryRunStore {
    inner: Mutex<MemoryInner>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    runs: HashMap<String, RunRecord>,
    order: Vec<String>,
    journals: HashMap<String, Vec<JournalEntry>>,
}

impl MemoryRunStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, MemoryInner>, RunStoreError> {
        self.inner.lock().map_err(|_| RunStoreError::Backend {
            op: "lock",
            message: "poisoned".into(),
        })
    }
}

#[async_trait]
impl RunStore for MemoryRunStore {
    async fn insert_run(&self, run: &RunRecord) -> Result<(), RunStoreError> {
        let mut g = self.lock()?;
        if g.runs.contains_key(&run.id) {
            return Err(RunStoreError::Backend {
                op: "insert_run",
                message: format!("run {} already exists", run.id),
            });
        }
        g.runs.insert(run.id.clone(), run.clone());
        g.order.push(run.id.clone());
        Ok(())
    }

    async fn update_run(&self, run: &RunRecord) -> Result<(), RunStoreError> {
        let mut g = self.lock()?;
        match g.runs.get_mut(&run.id) {
            Some(r) => {
                *r = run.clone();
                Ok(())
            }
            None => Err(RunStoreError::Backend {
                op: "update_run",
                message: format!("no run {}", run.id),
            }),
        }
    }

    async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, RunStoreError> {
        Ok(self.lock()?.runs.get(id).cloned())
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, RunStoreError> {
        let g = self.lock()?;
        let mut out: Vec<RunRecord> = g
            .runs
            .values()
            .filter(|r| query.matches(r))
            .filter(|r| {
                query.after.as_ref().is_none_or(|(at, id)| {
                    let c = parse_millis(&r.created_at);
                    c < *at || (c == *at && r.id < *id)
                })
            })
            .cloned()
            .collect();
        out.sort_by(|a, b| {
            (parse_millis(&b.created_at), &b.id).cmp(&(parse_millis(&a.created_at), &a.id))
        });
        if let Some(l) = query.limit {
            out.truncate(l as usize);
        }
        Ok(out)
    }

    async fn append(&self, run_id: &str, entries: &[JournalEntry]) -> Result<(), RunStoreError> {
        let mut g = self.lock()?;
        let journal = g.journals.entry(run_id.to_owned()).or_default();
        for e in entries {
            if journal.iter().any(|x| x.sequence == e.sequence) {
                return Err(RunStoreError::DuplicateSequence {
                    run_id: run_id.to_owned(),
                    sequence: e.sequence,
                });
            }
            journal.push(e.clone());
        }
        Ok(())
    }

    async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, RunStoreError> {
        let g = self.lock()?;
        let after = after.unwrap_or(0);
        let mut out: Vec<JournalEntry> = g
            .journals
            .get(run_id)
            .map(|j| j.iter().filter(|e| e.sequence > after).cloned().collect())
            .unwrap_or_default();
        out.sort_by_key(|e| e.sequence);
        if let Some(l) = limit {
            out.truncate(l as usize);
        }
        Ok(out)
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

fn backend(op: &'static str) -> impl FnOnce(kindgi_store::StoreError) -> RunStoreError {
    move |e| {
        if e.is_unique_violation() {
            RunStoreError::Backend {
                op,
                message: format!("duplicate key: {e}"),
            }
        } else {
            RunStoreError::Backend {
                op,
                message: e.to_string(),
            }
        }
    }
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

fn from_stored(s: StoredRun) -> Result<RunRecord, RunStoreError> {
    let what = format!("run {}", s.id);
    let status = RunStatus::parse(&s.status).ok_or_else(|| RunStoreError::Corrupt {
        what: format!("run {}", s.id),
        reason: format!("unknown status \"{}\"", s.status),
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
) -> Result<Option<T>, RunStoreError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v)
            .map(Some)
            .map_err(|e| RunStoreError::Corrupt {
                what: what.to_owned(),
                reason: e.to_string(),
            }),
    }
}

#[async_trait]
impl RunStore for DatabaseRunStore {
    async fn insert_run(&self, run: &RunRecord) -> Result<(), RunStoreError> {
        self.runs
            .insert_run(&to_stored(run))
            .await
            .map_err(backend("insert_run"))
    }

    async fn update_run(&self, run: &RunRecord) -> Result<(), RunStoreError> {
        let found = self
            .runs
            .update_run(&to_stored(run))
            .await
            .map_err(backend("update_run"))?;
        if found {
            Ok(())
        } else {
            Err(RunStoreError::Backend {
                op: "update_run",
                message: format!("no run {}", run.id),
            })
        }
    }

    async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, RunStoreError> {
        match self.runs.get_run(id).await.map_err(backend("get_run"))? {
            Some(s) => from_stored(s).map(Some),
            None => Ok(None),
        }
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, RunStoreError> {
        let filter = query.filter();
        self.runs
            .list_runs(&filter)
            .await
            .map_err(backend("list_runs"))?
            .into_iter()
            .map(from_stored)
            .collect()
    }

    async fn append(&self, run_id: &str, entries: &[JournalEntry]) -> Result<(), RunStoreError> {
        self.append_and_update(run_id, entries, None).await
    }

    async fn append_and_update(
        &self,
        run_id: &str,
        entries: &[JournalEntry],
        run: Option<&RunRecord>,
    ) -> Result<(), RunStoreError> {
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
                    RunStoreError::DuplicateSequence {
                        run_id: run_id.to_owned(),
                        sequence: entries.first().map(|e| e.sequence).unwrap_or(0),
                    }
                } else {
                    RunStoreError::Backend {
                        op: "append",
                        message: e.to_string(),
                    }
                }
            })
    }

    async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, RunStoreError> {
        let after = after.map(|a| i64::try_from(a).unwrap_or(i64::MAX));
        let rows = self
            .runs
            .journal(run_id, after, limit)
            .await
            .map_err(backend("journal"))?;
        rows.into_iter()
            .map(|r| {
                let kind = JournalKind::parse(&r.kind).ok_or_else(|| RunStoreError::Corrupt {
                    what: format!("journal entry {}#{}", r.run_id, r.sequence),
                    reason: format!("unknown kind \"{}\"", r.kind),
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
