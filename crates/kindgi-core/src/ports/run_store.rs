//! The run-store port: durable runs and their append-only journals (runtime.md §1.4).
//!
//! The executor of a run assigns its journal sequence numbers, so a store only appends and
//! reads; a duplicate `(run, sequence)` is [`StorageError::DuplicateSequence`], never a
//! silent overwrite.

use async_trait::async_trait;

use crate::error::StorageError;
use crate::ids::parse_millis;
use crate::run::{JournalEntry, RunRecord, RunStatus};
use crate::trigger::StartedBy;

/// Which replay runs a list holds (platform-api.md §3.3 `replays`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReplayFilter {
    /// Any run, replays included.
    #[default]
    Include,
    /// Only runs that are not replays.
    Exclude,
    /// Only replays.
    Only,
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
    /// Any of these `startedBy` values (any when empty; our extension `?startedBy=`).
    pub started_by: Vec<StartedBy>,
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
        let trigger_id = r.meta.trigger.as_ref().map(|t| t.trigger_id.as_str());
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
            && (self.started_by.is_empty()
                || r.meta
                    .started_by
                    .is_some_and(|b| self.started_by.contains(&b)))
            && match self.replays {
                ReplayFilter::Include => true,
                ReplayFilter::Exclude => r.meta.replay_of.is_none(),
                ReplayFilter::Only => r.meta.replay_of.is_some(),
            }
            && eq(&self.eval_run_id, r.meta.eval_run_id.as_deref())
            && self.created_after.is_none_or(|t| created > t)
            && self.created_before.is_none_or(|t| created < t)
    }
}

/// Durable runs and journals.
///
/// # Leases and fencing (the scale-out work), as an addition
///
/// Replicas sharing one database will claim a run before driving it. That is added beside
/// this trait, not into it, so every store and every caller of today keeps compiling:
///
/// ```text
/// pub struct Fence { pub run_id: String, pub owner: String, pub token: u64 }
///
/// #[async_trait]
/// pub trait RunLeases: RunStore {
///     /// Takes (or renews) the run for `owner` until `lease_until_ms`; a claim of a run
///     /// another owner holds unexpired is `Ok(None)`. Each new claim bumps the token.
///     async fn claim(&self, run_id: &str, owner: &str, lease_until_ms: i64)
///         -> Result<Option<Fence>, StorageError>;
///     /// `append_and_update`, refused unless `fence.token` is still the run's current one
///     /// (checked in the same transaction): a stale owner gets `StorageError::Fenced`.
///     async fn append_fenced(&self, fence: &Fence, entries: &[JournalEntry],
///         run: Option<&RunRecord>) -> Result<(), StorageError>;
/// }
/// ```
///
/// A store that cannot fence does not implement `RunLeases`, and a runtime given one runs
/// single-owner as today. The fence check sits where the duplicate-sequence check already
/// is ([`RunStore::append_and_update`] is one transaction), and the executor already stops
/// a run without failing it on [`StorageError::DuplicateSequence`]; a `Fenced` variant (the
/// error is `#[non_exhaustive]`) takes the same path. A trigger store follows the same
/// pattern: a `Trigger` record in core, a `TriggerStore` port beside this one, its memory
/// implementation in [`crate::memory`] and its SQL one in kindgi-store.
#[async_trait]
pub trait RunStore: Send + Sync + std::fmt::Debug {
    async fn insert_run(&self, run: &RunRecord) -> Result<(), StorageError>;
    async fn update_run(&self, run: &RunRecord) -> Result<(), StorageError>;
    async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, StorageError>;
    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, StorageError>;
    /// Appends entries whose sequences the caller assigned (in order, one transaction).
    async fn append(&self, run_id: &str, entries: &[JournalEntry]) -> Result<(), StorageError>;
    /// Appends entries and stores `run` (when given) — in one transaction where the backend
    /// can, so a step boundary and the run's new state cost one commit.
    async fn append_and_update(
        &self,
        run_id: &str,
        entries: &[JournalEntry],
        run: Option<&RunRecord>,
    ) -> Result<(), StorageError> {
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
    ) -> Result<Vec<JournalEntry>, StorageError>;
}
