//! The [`WaitStore`] over a migrated database (`kindgi_store::waits`): approvals keep their
//! filterable fields in columns and the whole approval as JSON; pauses are plain rows. An
//! answer or decision moves its row and appends to the run's journal in one transaction of
//! this database, which must be the one the runtime's runs are in
//! ([`crate::Runtime::with_database`] builds both over one).

use async_trait::async_trait;
use kindgi_store::Database;
use kindgi_store::waits::{ApprovalFilter, JournalTail, StoredApproval, StoredPause, WaitsStore};

use crate::approval::{Approval, ApprovalQuery, ApprovalStatus, ReviewerRole};
use crate::record::{JournalEntry, format_millis, parse_millis};
use crate::wait_store::{PauseRecord, PauseStatus, StorageError, WaitJournal, WaitStore};
use kindgi_core::ports::journal_entries;

/// Approvals and pauses in the database (SQLite or PostgreSQL).
#[derive(Debug, Clone)]
pub struct DatabaseWaitStore {
    store: WaitsStore,
}

impl DatabaseWaitStore {
    pub fn new(db: Database) -> Self {
        Self {
            store: WaitsStore::new(db),
        }
    }
}

fn err(op: &'static str) -> impl FnOnce(kindgi_store::StoreError) -> StorageError {
    kindgi_store::StoreError::storage(op)
}

fn rank(role: ReviewerRole) -> i64 {
    match role {
        ReviewerRole::Standard => 0,
        ReviewerRole::Senior => 1,
        ReviewerRole::Admin => 2,
    }
}

/// The statuses still waiting for a decision.
const OPEN: [&str; 3] = ["pending", "assigned", "in_review"];

fn to_row(a: &Approval) -> Result<StoredApproval, StorageError> {
    let s = |k: &str| {
        a.subject_ref
            .get(k)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    Ok(StoredApproval {
        id: a.id.clone(),
        tenant_id: a.tenant_id.clone(),
        status: a.status.as_str().to_owned(),
        required_rank: rank(a.required_role),
        wait_token_id: a.wait_token_id.clone(),
        run_id: a.run_id.clone(),
        created_at: parse_millis(&a.created_at),
        expires_at: a.expires_at.as_deref().map(parse_millis),
        decided_by: a.decision.as_ref().and_then(|d| d.decided_by.clone()),
        conversation_id: s("conversationId"),
        tool_id: s("toolId"),
        args_hash: s("argsHash"),
        body: serde_json::to_string(a).map_err(StorageError::backend_of("approvals.encode"))?,
    })
}

fn from_row(r: StoredApproval) -> Result<Approval, StorageError> {
    serde_json::from_str(&r.body)
        .map_err(|e| StorageError::corrupt(format!("approval {}", r.id), e))
}

fn pause_row(p: &PauseRecord) -> StoredPause {
    StoredPause {
        token_id: p.token_id.clone(),
        tenant_id: p.tenant_id.clone(),
        run_id: p.run_id.clone(),
        scope: p.scope.clone(),
        node_id: p.node_id.clone(),
        call_id: p.call_id.clone(),
        tool_id: p.tool_id.clone(),
        tool_version: p.tool_version.clone(),
        status: p.status.as_str().to_owned(),
        created_at: parse_millis(&p.created_at),
        expires_at: parse_millis(&p.expires_at),
        updated_at: parse_millis(&p.updated_at),
    }
}

fn pause_from(r: StoredPause) -> Result<PauseRecord, StorageError> {
    let status = PauseStatus::parse(&r.status).ok_or_else(|| StorageError::Corrupt {
        what: format!("pause {}", r.token_id),
        reason: format!("unknown status {:?}", r.status),
        source: None,
    })?;
    Ok(PauseRecord {
        token_id: r.token_id,
        tenant_id: r.tenant_id,
        run_id: r.run_id,
        scope: r.scope,
        node_id: r.node_id,
        call_id: r.call_id,
        tool_id: r.tool_id,
        tool_version: r.tool_version,
        status,
        created_at: format_millis(r.created_at),
        expires_at: format_millis(r.expires_at),
        updated_at: format_millis(r.updated_at),
    })
}

fn filter(q: &ApprovalQuery) -> ApprovalFilter {
    ApprovalFilter {
        tenant_id: q.tenant_id.clone(),
        statuses: q.statuses.iter().map(|s| s.as_str().to_owned()).collect(),
        run_id: q.run_id.clone(),
        wait_token_ids: q.wait_token_ids.clone(),
        required_rank: q.required_role.map(rank),
        max_rank: q.max_role.map(rank),
        created_after: q.created_after.as_deref().map(parse_millis),
        decided_by: q.decided_by.clone(),
        ascending: q.ascending,
        after: q
            .after
            .as_ref()
            .map(|(at, id)| (parse_millis(at), id.clone())),
        limit: q.limit,
    }
}

/// The journal's entries (their sequences are assigned in the transaction).
fn journal_rows(j: &WaitJournal<'_>) -> Vec<JournalEntry> {
    journal_entries(j.entries, 0)
}

#[async_trait]
impl WaitStore for DatabaseWaitStore {
    async fn insert_approval(&self, approval: &Approval) -> Result<(), StorageError> {
        let row = to_row(approval)?;
        self.store
            .insert_approval(&row)
            .await
            .map_err(err("approvals.insert"))
    }

    async fn get_approval(&self, tenant: &str, id: &str) -> Result<Option<Approval>, StorageError> {
        let row = self
            .store
            .get_approval(tenant, id)
            .await
            .map_err(err("approvals.get"))?;
        row.map(from_row).transpose()
    }

    async fn list_approvals(&self, query: &ApprovalQuery) -> Result<Vec<Approval>, StorageError> {
        let rows = self
            .store
            .list_approvals(&filter(query))
            .await
            .map_err(err("approvals.list"))?;
        rows.into_iter().map(from_row).collect()
    }

    async fn update_approval_if(
        &self,
        approval: &Approval,
        expected: ApprovalStatus,
    ) -> Result<bool, StorageError> {
        let row = to_row(approval)?;
        self.store
            .update_approval_if(&row, expected.as_str())
            .await
            .map_err(err("approvals.update"))
    }

    async fn approvals_due(&self, at_ms: i64) -> Result<Vec<Approval>, StorageError> {
        let rows = self
            .store
            .approvals_due(at_ms, &OPEN)
            .await
            .map_err(err("approvals.due"))?;
        rows.into_iter().map(from_row).collect()
    }

    async fn next_deadline(&self) -> Result<Option<i64>, StorageError> {
        self.store
            .next_deadline(&OPEN)
            .await
            .map_err(err("waits.next_deadline"))
    }

    async fn approved_in_conversation(
        &self,
        tenant: &str,
        conversation_id: &str,
        tool_id: &str,
        args_hash: &str,
    ) -> Result<bool, StorageError> {
        self.store
            .approved_in_conversation(tenant, conversation_id, tool_id, args_hash)
            .await
            .map_err(err("approvals.approved_in_conversation"))
    }

    async fn insert_pause(&self, pause: &PauseRecord) -> Result<(), StorageError> {
        self.store
            .insert_pause(&pause_row(pause))
            .await
            .map_err(err("wait_pauses.insert"))
    }

    async fn get_pause(&self, token_id: &str) -> Result<Option<PauseRecord>, StorageError> {
        let row = self
            .store
            .get_pause(token_id)
            .await
            .map_err(err("wait_pauses.get"))?;
        row.map(pause_from).transpose()
    }

    async fn update_pause_if(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
    ) -> Result<bool, StorageError> {
        self.store
            .update_pause_if(&pause_row(pause), expected.as_str())
            .await
            .map_err(err("wait_pauses.update"))
    }

    async fn pauses_due(&self, at_ms: i64) -> Result<Vec<PauseRecord>, StorageError> {
        let rows = self
            .store
            .open_pauses(Some(at_ms), None)
            .await
            .map_err(err("wait_pauses.due"))?;
        rows.into_iter().map(pause_from).collect()
    }

    async fn open_pauses_of_run(&self, run_id: &str) -> Result<Vec<PauseRecord>, StorageError> {
        let rows = self
            .store
            .open_pauses(None, Some(run_id))
            .await
            .map_err(err("wait_pauses.of_run"))?;
        rows.into_iter().map(pause_from).collect()
    }

    async fn update_pause_journaled(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
        journal: WaitJournal<'_>,
    ) -> Result<bool, StorageError> {
        let entries = journal_rows(&journal);
        let tail = JournalTail {
            run_id: journal.run_id,
            entries: &entries,
        };
        self.store
            .update_pause_journaled(&pause_row(pause), expected.as_str(), tail)
            .await
            .map_err(err("wait_pauses.answer"))
    }

    async fn update_approval_journaled(
        &self,
        approval: &Approval,
        expected: ApprovalStatus,
        successor: Option<&Approval>,
        journal: Option<WaitJournal<'_>>,
    ) -> Result<bool, StorageError> {
        let row = to_row(approval)?;
        let next = successor.map(to_row).transpose()?;
        let entries = journal.as_ref().map(journal_rows).unwrap_or_default();
        let tail = journal.map(|j| JournalTail {
            run_id: j.run_id,
            entries: &entries,
        });
        self.store
            .update_approval_journaled(&row, expected.as_str(), next.as_ref(), tail)
            .await
            .map_err(err("approvals.decide"))
    }
}
