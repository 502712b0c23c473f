//! Where a run's waits are kept besides its journal: approvals (who may decide, what was
//! decided) and pausing calls' waits (the hashed token, its tool and deadline). The
//! [`WaitStore`] trait, and an in-memory store; the database store is
//! [`crate::wait_store_db::DatabaseWaitStore`].
//!
//! The journal is the source of truth for what a run does next (`wait.resumed` /
//! `wait.cancelled`); these rows say what can still be decided and by whom, and they carry
//! the compare-and-set that makes a second, concurrent decision lose. An answer, a decision
//! or a timeout moves its row and journals on the run as one step
//! ([`WaitStore::update_pause_journaled`], [`WaitStore::update_approval_journaled`]): one
//! transaction in the database, so the loser of a race between two servers on one database
//! journals nothing; no in-process lock is needed for that.

use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::approval::{Approval, ApprovalQuery, ApprovalStatus};
use crate::record::{JournalEntry, JournalKind, format_millis, now_millis, parse_millis};
use crate::store::RunStore;

/// A storage failure, naming the operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("wait store: {op} failed: {message}")]
pub struct WaitStoreError {
    pub op: &'static str,
    pub message: String,
}

/// Where a pausing call's wait stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PauseStatus {
    /// The ticket is out; the call has not answered yet or the run waits.
    Open,
    /// The other system answered.
    Answered,
    /// Nobody answered in time.
    Expired,
    /// The call answered at once, failed, was re-issued after a crash, or its run ended.
    Closed,
}

impl PauseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PauseStatus::Open => "open",
            PauseStatus::Answered => "answered",
            PauseStatus::Expired => "expired",
            PauseStatus::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<PauseStatus> {
        [
            PauseStatus::Open,
            PauseStatus::Answered,
            PauseStatus::Expired,
            PauseStatus::Closed,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }
}

/// A pausing call's wait. The token itself is never stored: `token_id` is 40 hex of its
/// sha256, and a presented token is looked up by that.
#[derive(Debug, Clone, PartialEq)]
pub struct PauseRecord {
    pub token_id: String,
    pub tenant_id: String,
    pub run_id: String,
    /// The journal scope of the call's value (`<scope>`), with `call_id` naming the call.
    pub scope: String,
    pub node_id: Option<String>,
    pub call_id: String,
    pub tool_id: String,
    pub tool_version: String,
    pub status: PauseStatus,
    pub created_at: String,
    pub expires_at: String,
    pub updated_at: String,
}

/// What moving a wait's row journals on its run: `entries` appended after the journal's
/// last entry, in the same step as the row's change.
#[derive(Clone, Copy)]
pub struct WaitJournal<'a> {
    /// The run store the runtime journals in. A store keeping its rows beside the journal
    /// (the database's) appends in its own transaction instead.
    pub runs: &'a dyn RunStore,
    pub run_id: &'a str,
    pub entries: &'a [(JournalKind, Value)],
}

impl std::fmt::Debug for WaitJournal<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitJournal")
            .field("run_id", &self.run_id)
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl WaitJournal<'_> {
    /// The entries numbered after the run's last one (read now: for a store whose journal
    /// is apart from its rows, where only one process writes).
    async fn append_to_runs(&self) -> Result<(), WaitStoreError> {
        let fail = |e: crate::store::RunStoreError| WaitStoreError {
            op: "journal.append",
            message: e.to_string(),
        };
        let journal = self
            .runs
            .journal(self.run_id, None, None)
            .await
            .map_err(fail)?;
        let first = journal.last().map_or(1, |e| e.sequence + 1);
        let entries = journal_entries(self.entries, first);
        self.runs.append(self.run_id, &entries).await.map_err(fail)
    }
}

/// `entries` as journal entries numbered from `first`, stamped now, at the top level.
pub(crate) fn journal_entries(entries: &[(JournalKind, Value)], first: u64) -> Vec<JournalEntry> {
    let now = format_millis(now_millis());
    entries
        .iter()
        .zip(first..)
        .map(|((kind, payload), sequence)| JournalEntry {
            sequence,
            kind: *kind,
            node_id: None,
            scope: None,
            payload: Some(payload.clone()),
            timestamp: now.clone(),
        })
        .collect()
}

/// Approvals and pauses, tenant-scoped.
#[async_trait]
pub trait WaitStore: Send + Sync + std::fmt::Debug {
    /// Stores a new approval.
    async fn insert_approval(&self, approval: &Approval) -> Result<(), WaitStoreError>;
    async fn get_approval(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Approval>, WaitStoreError>;
    /// At most `query.limit + 1` approvals in the query's order.
    async fn list_approvals(&self, query: &ApprovalQuery) -> Result<Vec<Approval>, WaitStoreError>;
    /// Replaces the approval when its stored status is still `expected` (false: it was not).
    async fn update_approval_if(
        &self,
        approval: &Approval,
        expected: ApprovalStatus,
    ) -> Result<bool, WaitStoreError>;
    /// Open approvals (any tenant) whose `expiresAt` is at or before `at_ms`.
    async fn approvals_due(&self, at_ms: i64) -> Result<Vec<Approval>, WaitStoreError>;
    /// The earliest `expiresAt` of an open approval or pause, in ms.
    async fn next_deadline(&self) -> Result<Option<i64>, WaitStoreError>;
    /// Whether the conversation already had an approved call of `tool_id` with `args_hash`.
    async fn approved_in_conversation(
        &self,
        tenant: &str,
        conversation_id: &str,
        tool_id: &str,
        args_hash: &str,
    ) -> Result<bool, WaitStoreError>;

    /// Stores a new pause; an open pause of the same `(run, scope, call)` is closed first
    /// (a call re-issued after a crash gets a fresh token).
    async fn insert_pause(&self, pause: &PauseRecord) -> Result<(), WaitStoreError>;
    async fn get_pause(&self, token_id: &str) -> Result<Option<PauseRecord>, WaitStoreError>;
    /// Replaces the pause when its stored status is still `expected`.
    async fn update_pause_if(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
    ) -> Result<bool, WaitStoreError>;
    /// Open pauses whose `expiresAt` is at or before `at_ms`.
    async fn pauses_due(&self, at_ms: i64) -> Result<Vec<PauseRecord>, WaitStoreError>;
    /// Open pauses of a run.
    async fn open_pauses_of_run(&self, run_id: &str) -> Result<Vec<PauseRecord>, WaitStoreError>;

    /// Replaces the pause when its stored status is still `expected` and appends `journal`,
    /// as one step: false when it was not `expected` (another answer, the timeout or the
    /// run's end came first), and then nothing is journaled.
    ///
    /// This default, for a store apart from the journal (in memory, one process), moves the
    /// row first — the compare-and-set decides the race — and puts it back if the journal
    /// refuses the entries.
    async fn update_pause_journaled(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
        journal: WaitJournal<'_>,
    ) -> Result<bool, WaitStoreError> {
        let Some(before) = self.get_pause(&pause.token_id).await? else {
            return Ok(false);
        };
        if !self.update_pause_if(pause, expected).await? {
            return Ok(false);
        }
        if let Err(e) = journal.append_to_runs().await {
            self.update_pause_if(&before, pause.status).await?;
            return Err(e);
        }
        Ok(true)
    }

    /// Replaces the approval when its stored status is still `expected`, stores `successor`
    /// (an escalation's next tier) and appends `journal` (none: the approval names no
    /// waiting run), as one step: false when the status was not `expected`, and then
    /// nothing is stored or journaled. The default is as for
    /// [`WaitStore::update_pause_journaled`].
    async fn update_approval_journaled(
        &self,
        approval: &Approval,
        expected: ApprovalStatus,
        successor: Option<&Approval>,
        journal: Option<WaitJournal<'_>>,
    ) -> Result<bool, WaitStoreError> {
        let Some(before) = self.get_approval(&approval.tenant_id, &approval.id).await? else {
            return Ok(false);
        };
        if !self.update_approval_if(approval, expected).await? {
            return Ok(false);
        }
        let journaled = match journal {
            Some(j) => j.append_to_runs().await,
            None => Ok(()),
        };
        if let Err(e) = journaled {
            self.update_approval_if(&before, approval.status).await?;
            return Err(e);
        }
        if let Some(next) = successor {
            self.insert_approval(next).await?;
        }
        Ok(true)
    }
}

/// True when `a` passes every filter of `q` except the cursor and the limit.
pub(crate) fn approval_matches(q: &ApprovalQuery, a: &Approval) -> bool {
    let created = parse_millis(&a.created_at);
    a.tenant_id == q.tenant_id
        && (q.statuses.is_empty() || q.statuses.contains(&a.status))
        && q.run_id
            .as_ref()
            .is_none_or(|r| a.run_id.as_ref() == Some(r))
        && (q.wait_token_ids.is_empty()
            || a.wait_token_id
                .as_ref()
                .is_some_and(|t| q.wait_token_ids.contains(t)))
        && q.required_role.is_none_or(|r| a.required_role == r)
        && q.max_role.is_none_or(|r| a.required_role <= r)
        && q.created_after
            .as_ref()
            .is_none_or(|t| created > parse_millis(t))
        && q.decided_by.as_ref().is_none_or(|d| {
            a.decision
                .as_ref()
                .and_then(|x| x.decided_by.as_ref())
                .is_some_and(|x| x == d)
        })
}

/// Approvals and pauses in memory: lost with the process.
#[derive(Debug, Default)]
pub struct MemoryWaitStore {
    inner: Mutex<MemoryInner>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    approvals: Vec<Approval>,
    pauses: HashMap<String, PauseRecord>,
}

impl MemoryWaitStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(
        &self,
        op: &'static str,
    ) -> Result<std::sync::MutexGuard<'_, MemoryInner>, WaitStoreError> {
        self.inner.lock().map_err(|_| WaitStoreError {
            op,
            message: "poisoned".into(),
        })
    }
}

#[async_trait]
impl WaitStore for MemoryWaitStore {
    async fn insert_approval(&self, approval: &Approval) -> Result<(), WaitStoreError> {
        let mut g = self.lock("insert_approval")?;
        if g.approvals.iter().any(|a| a.id == approval.id) {
            return Err(WaitStoreError {
                op: "insert_approval",
                message: format!("approval {} already exists", approval.id),
            });
        }
        g.approvals.push(approval.clone());
        Ok(())
    }

    async fn get_approval(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Approval>, WaitStoreError> {
        let g = self.lock("get_approval")?;
        Ok(g.approvals
            .iter()
            .find(|a| a.id == id && a.tenant_id == tenant)
            .cloned())
    }

    async fn list_approvals(&self, q: &ApprovalQuery) -> Result<Vec<Approval>, WaitStoreError> {
        let g = self.lock("list_approvals")?;
        let key = |a: &Approval| (parse_millis(&a.created_at), a.id.clone());
        let mut rows: Vec<&Approval> = g
            .approvals
            .iter()
            .filter(|a| approval_matches(q, a))
            .filter(|a| match &q.after {
                None => true,
                Some((at, id)) => {
                    let cursor = (parse_millis(at), id.clone());
                    if q.ascending {
                        key(a) > cursor
                    } else {
                        key(a) < cursor
                    }
                }
            })
            .collect();
        rows.sort_by_key(|a| key(a));
        if !q.ascending {
            rows.reverse();
        }
        Ok(rows.into_iter().take(q.limit + 1).cloned().collect())
    }

    async fn update_approval_if(
        &self,
        approval: &Approval,
        expected: ApprovalStatus,
    ) -> Result<bool, WaitStoreError> {
        let mut g = self.lock("update_approval")?;
        match g
            .approvals
            .iter_mut()
            .find(|a| a.id == approval.id && a.tenant_id == approval.tenant_id)
        {
            Some(a) if a.status == expected => {
                *a = approval.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn approvals_due(&self, at_ms: i64) -> Result<Vec<Approval>, WaitStoreError> {
        let g = self.lock("approvals_due")?;
        Ok(g.approvals
            .iter()
            .filter(|a| a.status.is_open())
            .filter(|a| {
                a.expires_at
                    .as_deref()
                    .is_some_and(|t| parse_millis(t) <= at_ms)
            })
            .cloned()
            .collect())
    }

    async fn next_deadline(&self) -> Result<Option<i64>, WaitStoreError> {
        let g = self.lock("next_deadline")?;
        let approvals = g
            .approvals
            .iter()
            .filter(|a| a.status.is_open())
            .filter_map(|a| a.expires_at.as_deref().map(parse_millis));
        let pauses = g
            .pauses
            .values()
            .filter(|p| p.status == PauseStatus::Open)
            .map(|p| parse_millis(&p.expires_at));
        Ok(approvals.chain(pauses).min())
    }

    async fn approved_in_conversation(
        &self,
        tenant: &str,
        conversation_id: &str,
        tool_id: &str,
        args_hash: &str,
    ) -> Result<bool, WaitStoreError> {
        let g = self.lock("approved_in_conversation")?;
        let s = |a: &Approval, f: &str| {
            a.subject_ref
                .get(f)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        Ok(g.approvals.iter().any(|a| {
            a.tenant_id == tenant
                && a.status == ApprovalStatus::Approved
                && s(a, "conversationId").as_deref() == Some(conversation_id)
                && s(a, "toolId").as_deref() == Some(tool_id)
                && s(a, "argsHash").as_deref() == Some(args_hash)
        }))
    }

    async fn insert_pause(&self, pause: &PauseRecord) -> Result<(), WaitStoreError> {
        let mut g = self.lock("insert_pause")?;
        for p in g.pauses.values_mut() {
            if p.run_id == pause.run_id
                && p.scope == pause.scope
                && p.call_id == pause.call_id
                && p.status == PauseStatus::Open
            {
                p.status = PauseStatus::Closed;
                p.updated_at = pause.created_at.clone();
            }
        }
        g.pauses.insert(pause.token_id.clone(), pause.clone());
        Ok(())
    }

    async fn get_pause(&self, token_id: &str) -> Result<Option<PauseRecord>, WaitStoreError> {
        Ok(self.lock("get_pause")?.pauses.get(token_id).cloned())
    }

    async fn update_pause_if(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
    ) -> Result<bool, WaitStoreError> {
        let mut g = self.lock("update_pause")?;
        match g.pauses.get_mut(&pause.token_id) {
            Some(p) if p.status == expected => {
                *p = pause.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn pauses_due(&self, at_ms: i64) -> Result<Vec<PauseRecord>, WaitStoreError> {
        let g = self.lock("pauses_due")?;
        Ok(g.pauses
            .values()
            .filter(|p| p.status == PauseStatus::Open && parse_millis(&p.expires_at) <= at_ms)
            .cloned()
            .collect())
    }

    async fn open_pauses_of_run(&self, run_id: &str) -> Result<Vec<PauseRecord>, WaitStoreError> {
        let g = self.lock("open_pauses_of_run")?;
        Ok(g.pauses
            .values()
            .filter(|p| p.run_id == run_id && p.status == PauseStatus::Open)
            .cloned()
            .collect())
    }
}
