//! The wait-store port: where a run's waits are kept besides its journal — approvals (who
//! may decide, what was decided), pausing calls' waits (the hashed token, its tool and
//! deadline) and calls waiting for a person to connect an app ([`ConnectionWait`]).
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

use crate::approval::{Approval, ApprovalQuery, ApprovalStatus};
use crate::connection_wait::{ConnectionWait, ConnectionWaitQuery};
use crate::error::StorageError;
use crate::ids::{format_millis, now_millis, parse_millis};
use crate::pause::{PauseRecord, PauseStatus};
use crate::ports::RunStore;
use crate::run::{JournalEntry, JournalKind};

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
    pub async fn append_to_runs(&self) -> Result<(), StorageError> {
        let journal = self.runs.journal(self.run_id, None, None).await?;
        let first = journal.last().map_or(1, |e| e.sequence + 1);
        let entries = journal_entries(self.entries, first);
        self.runs.append(self.run_id, &entries).await
    }
}

/// `entries` as journal entries numbered from `first`, stamped now, at the top level.
pub fn journal_entries(entries: &[(JournalKind, Value)], first: u64) -> Vec<JournalEntry> {
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
    async fn insert_approval(&self, approval: &Approval) -> Result<(), StorageError>;
    async fn get_approval(&self, tenant: &str, id: &str) -> Result<Option<Approval>, StorageError>;
    /// At most `query.limit + 1` approvals in the query's order.
    async fn list_approvals(&self, query: &ApprovalQuery) -> Result<Vec<Approval>, StorageError>;
    /// Replaces the approval when its stored status is still `expected` (false: it was not).
    async fn update_approval_if(
        &self,
        approval: &Approval,
        expected: ApprovalStatus,
    ) -> Result<bool, StorageError>;
    /// Open approvals (any tenant) whose `expiresAt` is at or before `at_ms`.
    async fn approvals_due(&self, at_ms: i64) -> Result<Vec<Approval>, StorageError>;
    /// The earliest `expiresAt` of an open approval, pause or connection wait, in ms.
    async fn next_deadline(&self) -> Result<Option<i64>, StorageError>;
    /// Whether the conversation already had an approved call of `tool_id` with `args_hash`.
    async fn approved_in_conversation(
        &self,
        tenant: &str,
        conversation_id: &str,
        tool_id: &str,
        args_hash: &str,
    ) -> Result<bool, StorageError>;

    /// Stores a new pause; an open pause of the same `(run, scope, call)` is closed first
    /// (a call re-issued after a crash gets a fresh token).
    async fn insert_pause(&self, pause: &PauseRecord) -> Result<(), StorageError>;
    async fn get_pause(&self, token_id: &str) -> Result<Option<PauseRecord>, StorageError>;
    /// Replaces the pause when its stored status is still `expected`.
    async fn update_pause_if(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
    ) -> Result<bool, StorageError>;
    /// Open pauses whose `expiresAt` is at or before `at_ms`.
    async fn pauses_due(&self, at_ms: i64) -> Result<Vec<PauseRecord>, StorageError>;
    /// Open pauses of a run.
    async fn open_pauses_of_run(&self, run_id: &str) -> Result<Vec<PauseRecord>, StorageError>;

    /// Stores a new connection wait; one already stored under its token id stays as it is
    /// (a call re-parked after a crash reaches the same token).
    async fn insert_connection_wait(&self, wait: &ConnectionWait) -> Result<(), StorageError>;
    async fn get_connection_wait(
        &self,
        token_id: &str,
    ) -> Result<Option<ConnectionWait>, StorageError>;
    /// Replaces the connection wait when its stored status is still `expected`.
    async fn update_connection_wait_if(
        &self,
        wait: &ConnectionWait,
        expected: PauseStatus,
    ) -> Result<bool, StorageError>;
    /// The open connection waits `query` selects, the earliest deadline first.
    async fn open_connection_waits(
        &self,
        query: &ConnectionWaitQuery,
    ) -> Result<Vec<ConnectionWait>, StorageError>;

    /// Replaces the connection wait when its stored status is still `expected` and appends
    /// `journal`, as one step (see [`WaitStore::update_pause_journaled`]; this default is as
    /// that one's).
    async fn update_connection_wait_journaled(
        &self,
        wait: &ConnectionWait,
        expected: PauseStatus,
        journal: WaitJournal<'_>,
    ) -> Result<bool, StorageError> {
        let Some(before) = self.get_connection_wait(&wait.token_id).await? else {
            return Ok(false);
        };
        if !self.update_connection_wait_if(wait, expected).await? {
            return Ok(false);
        }
        if let Err(e) = journal.append_to_runs().await {
            self.update_connection_wait_if(&before, wait.status).await?;
            return Err(e);
        }
        Ok(true)
    }

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
    ) -> Result<bool, StorageError> {
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
    ) -> Result<bool, StorageError> {
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
pub fn approval_matches(q: &ApprovalQuery, a: &Approval) -> bool {
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
