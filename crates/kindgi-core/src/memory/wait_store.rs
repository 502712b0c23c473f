//! Approvals, pauses and connection waits in memory ([`MemoryWaitStore`]): lost with the process; for tests
//! and throw-away runtimes. It journals through the [`crate::ports::WaitJournal`]'s run store, after the
//! row moved (one process writes).

use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::approval::{Approval, ApprovalQuery, ApprovalStatus};
use crate::connection_wait::{ConnectionWait, ConnectionWaitQuery};
use crate::error::StorageError;
use crate::ids::parse_millis;
use crate::pause::{PauseRecord, PauseStatus};
use crate::ports::{WaitStore, approval_matches};

/// Approvals and pauses in memory: lost with the process.
#[derive(Debug, Default)]
pub struct MemoryWaitStore {
    inner: Mutex<MemoryInner>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    approvals: Vec<Approval>,
    pauses: HashMap<String, PauseRecord>,
    connection_waits: HashMap<String, ConnectionWait>,
}

impl MemoryWaitStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(
        &self,
        op: &'static str,
    ) -> Result<std::sync::MutexGuard<'_, MemoryInner>, StorageError> {
        self.inner.lock().map_err(|_| StorageError::poisoned(op))
    }
}

#[async_trait]
impl WaitStore for MemoryWaitStore {
    async fn insert_approval(&self, approval: &Approval) -> Result<(), StorageError> {
        let mut g = self.lock("waits.insert_approval")?;
        if g.approvals.iter().any(|a| a.id == approval.id) {
            return Err(StorageError::Conflict {
                op: "waits.insert_approval",
                what: format!("approval {}", approval.id),
                source: None,
            });
        }
        g.approvals.push(approval.clone());
        Ok(())
    }

    async fn get_approval(&self, tenant: &str, id: &str) -> Result<Option<Approval>, StorageError> {
        let g = self.lock("waits.get_approval")?;
        Ok(g.approvals
            .iter()
            .find(|a| a.id == id && a.tenant_id == tenant)
            .cloned())
    }

    async fn list_approvals(&self, q: &ApprovalQuery) -> Result<Vec<Approval>, StorageError> {
        let g = self.lock("waits.list_approvals")?;
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
    ) -> Result<bool, StorageError> {
        let mut g = self.lock("waits.update_approval")?;
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

    async fn approvals_due(&self, at_ms: i64) -> Result<Vec<Approval>, StorageError> {
        let g = self.lock("waits.approvals_due")?;
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

    async fn next_deadline(&self) -> Result<Option<i64>, StorageError> {
        let g = self.lock("waits.next_deadline")?;
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
        let connections = g
            .connection_waits
            .values()
            .filter(|w| w.status == PauseStatus::Open)
            .map(|w| parse_millis(&w.expires_at));
        Ok(approvals.chain(pauses).chain(connections).min())
    }

    async fn approved_in_conversation(
        &self,
        tenant: &str,
        conversation_id: &str,
        tool_id: &str,
        args_hash: &str,
    ) -> Result<bool, StorageError> {
        let g = self.lock("waits.approved_in_conversation")?;
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

    async fn insert_pause(&self, pause: &PauseRecord) -> Result<(), StorageError> {
        let mut g = self.lock("waits.insert_pause")?;
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

    async fn get_pause(&self, token_id: &str) -> Result<Option<PauseRecord>, StorageError> {
        Ok(self.lock("waits.get_pause")?.pauses.get(token_id).cloned())
    }

    async fn update_pause_if(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
    ) -> Result<bool, StorageError> {
        let mut g = self.lock("waits.update_pause")?;
        match g.pauses.get_mut(&pause.token_id) {
            Some(p) if p.status == expected => {
                *p = pause.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn pauses_due(&self, at_ms: i64) -> Result<Vec<PauseRecord>, StorageError> {
        let g = self.lock("waits.pauses_due")?;
        Ok(g.pauses
            .values()
            .filter(|p| p.status == PauseStatus::Open && parse_millis(&p.expires_at) <= at_ms)
            .cloned()
            .collect())
    }

    async fn open_pauses_of_run(&self, run_id: &str) -> Result<Vec<PauseRecord>, StorageError> {
        let g = self.lock("waits.open_pauses_of_run")?;
        Ok(g.pauses
            .values()
            .filter(|p| p.run_id == run_id && p.status == PauseStatus::Open)
            .cloned()
            .collect())
    }

    async fn insert_connection_wait(&self, wait: &ConnectionWait) -> Result<(), StorageError> {
        let mut g = self.lock("waits.insert_connection_wait")?;
        g.connection_waits
            .entry(wait.token_id.clone())
            .or_insert_with(|| wait.clone());
        Ok(())
    }

    async fn get_connection_wait(
        &self,
        token_id: &str,
    ) -> Result<Option<ConnectionWait>, StorageError> {
        let g = self.lock("waits.get_connection_wait")?;
        Ok(g.connection_waits.get(token_id).cloned())
    }

    async fn update_connection_wait_if(
        &self,
        wait: &ConnectionWait,
        expected: PauseStatus,
    ) -> Result<bool, StorageError> {
        let mut g = self.lock("waits.update_connection_wait")?;
        match g.connection_waits.get_mut(&wait.token_id) {
            Some(w) if w.status == expected => {
                *w = wait.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn open_connection_waits(
        &self,
        query: &ConnectionWaitQuery,
    ) -> Result<Vec<ConnectionWait>, StorageError> {
        let g = self.lock("waits.open_connection_waits")?;
        let mut out: Vec<ConnectionWait> = g
            .connection_waits
            .values()
            .filter(|w| query.matches(w))
            .cloned()
            .collect();
        out.sort_by_key(|w| (parse_millis(&w.expires_at), w.token_id.clone()));
        Ok(out)
    }
}
