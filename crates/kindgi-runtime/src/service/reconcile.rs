//! Recovery of suspended runs at start-up (part of [`Runtime::recover`]): the wait rows and
//! the journal are brought back in line after a crash between a decision's two writes, and
//! a suspended run whose waits are all answered or cancelled in its journal is resumed.
//!
//! A decision is journaled first, so a crash leaves at worst a journaled decision whose row
//! is still open: the row is moved on from the journal (`approval.completed`). A row decided
//! without its journal entry (written by another tool, or an older build) gets the entry.

use serde_json::{Value, json};
use std::collections::HashMap;

use crate::approval::{Approval, ApprovalDecision, ApprovalQuery, ApprovalStatus, DecisionKind};
use crate::engine::journal::Replay;
use crate::engine::journal::WaitOutcome;
use crate::record::{JournalEntry, JournalKind, RunRecord, RunStatus, format_millis, now_millis};
use crate::service::{Runtime, RuntimeError};
use crate::store::RunQuery;
use crate::wait_store::{PauseStatus, WaitStoreError};

fn store_err(e: WaitStoreError) -> RuntimeError {
    RuntimeError::Store(e)
}

/// `approval.completed` entries by approval id: the status they moved to.
fn completed_in_journal(journal: &[JournalEntry]) -> HashMap<String, ApprovalStatus> {
    journal
        .iter()
        .filter(|e| e.kind == JournalKind::ApprovalCompleted)
        .filter_map(|e| {
            let p = e.payload.as_ref()?;
            let id = p.get("approvalId")?.as_str()?.to_owned();
            let status = ApprovalStatus::parse(p.get("status")?.as_str()?)?;
            Some((id, status))
        })
        .collect()
}

/// The journal entry a decided row implies for its wait (`None`: it resumes nothing).
fn entry_for_row(a: &Approval, token: &str) -> Option<(JournalKind, Value)> {
    match a.status {
        ApprovalStatus::Approved | ApprovalStatus::Rejected => {
            let d = a.decision.as_ref()?;
            let mut v = serde_json::Map::new();
            v.insert("decided".into(), json!(d.decision));
            if let Some(r) = &d.rationale {
                v.insert("rationale".into(), json!(r));
            }
            if let Some(by) = &d.decided_by {
                v.insert("decidedBy".into(), json!(by));
            }
            v.insert("approvalId".into(), json!(a.id));
            Some((
                JournalKind::WaitResumed,
                json!({"tokenId": token, "value": Value::Object(v)}),
            ))
        }
        ApprovalStatus::Withdrawn => Some((
            JournalKind::WaitCancelled,
            json!({"tokenId": token, "reason": "withdrawn"}),
        )),
        ApprovalStatus::Expired => Some((
            JournalKind::WaitCancelled,
            json!({"tokenId": token, "reason": "timeout"}),
        )),
        _ => None,
    }
}

/// The decision a journaled `wait.resumed` value records (for a row moved on from it).
fn decision_from_journal(a: &Approval, value: Option<&Value>) -> Option<ApprovalDecision> {
    let v = value?;
    let decision = DecisionKind::parse(v.get("decided")?.as_str()?)?;
    Some(ApprovalDecision {
        id: uuid::Uuid::new_v4().to_string(),
        approval_id: a.id.clone(),
        decision,
        decided_by: v
            .get("decidedBy")
            .and_then(Value::as_str)
            .map(str::to_owned),
        reviewer_id: v
            .get("decidedBy")
            .and_then(Value::as_str)
            .and_then(|b| b.strip_prefix("user:"))
            .unwrap_or("unknown")
            .to_owned(),
        reviewer_role_at_decision: a.required_role,
        decided_at: format_millis(now_millis()),
        rationale: v
            .get("rationale")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

impl Runtime {
    /// Reconciles every suspended run and resumes those with nothing left to wait for.
    /// Returns the ids of the top-level runs resumed.
    pub(crate) async fn recover_suspended(&self) -> Result<Vec<String>, RuntimeError> {
        let query = RunQuery {
            statuses: vec![RunStatus::Suspended],
            ..RunQuery::default()
        };
        let mut resumed = Vec::new();
        for run in self.shared.store.list_runs(&query).await? {
            if !self.reconcile_run(&run).await? {
                continue;
            }
            let root = self.root_of(&run).await?;
            if root.status.is_terminal()
                || resumed.contains(&root.id)
                || self.active_runs().contains(&root.id)
            {
                continue;
            }
            resumed.push(root.id.clone());
            self.spawn(root, None);
        }
        Ok(resumed)
    }

    /// Brings `run`'s wait rows and journal in line; true when every wait it parked on has
    /// an answer or a cancellation in its journal.
    async fn reconcile_run(&self, run: &RunRecord) -> Result<bool, RuntimeError> {
        let journal = self.shared.store.journal(&run.id, None, None).await?;
        let replay = Replay::build(&journal);
        let completed = completed_in_journal(&journal);
        let waits = &self.shared.waits;
        let approvals = waits
            .list_approvals(&ApprovalQuery {
                tenant_id: run.tenant_id.clone(),
                run_id: Some(run.id.clone()),
                limit: 1000,
                ..ApprovalQuery::default()
            })
            .await
            .map_err(store_err)?;
        let mut answered: Vec<String> = replay.waits.keys().cloned().collect();
        let mut missing = Vec::new();
        for a in approvals {
            let Some(token) = a.wait_token_id.clone() else {
                continue;
            };
            let in_journal = replay.waits.get(&token);
            if a.status.is_open() {
                if let Some(status) = completed.get(&a.id) {
                    let resumed = match in_journal {
                        Some(WaitOutcome::Resumed(v)) => Some(v),
                        _ => None,
                    };
                    let moved = Approval {
                        status: *status,
                        decision: decision_from_journal(&a, resumed),
                        updated_at: format_millis(now_millis()),
                        decided_at: Some(format_millis(now_millis())),
                        ..a.clone()
                    };
                    waits
                        .update_approval_if(&moved, a.status)
                        .await
                        .map_err(store_err)?;
                }
            } else if in_journal.is_none()
                && !answered.contains(&token)
                && let Some(entry) = entry_for_row(&a, &token)
            {
                missing.push(entry);
                answered.push(token);
            }
        }
        if !missing.is_empty() {
            let guard = self.lock_for_answer(run).await?;
            self.append_outside(&run.id, missing).await?;
            drop(guard);
        }
        for p in waits.open_pauses_of_run(&run.id).await.map_err(store_err)? {
            let status = match replay.waits.get(&p.token_id) {
                Some(WaitOutcome::Resumed(_)) => PauseStatus::Answered,
                Some(WaitOutcome::Cancelled { .. }) => PauseStatus::Expired,
                None => continue,
            };
            let moved = crate::PauseRecord {
                status,
                updated_at: format_millis(now_millis()),
                ..p
            };
            waits
                .update_pause_if(&moved, PauseStatus::Open)
                .await
                .map_err(store_err)?;
        }
        for t in &replay.waits_suspended {
            if answered.contains(t) {
                continue;
            }
            // A child run's wait ends with the child (whose own waits resume this tree).
            let child = t
                .strip_prefix("child:")
                .and_then(|r| r.rsplit_once(':'))
                .map(|(c, _)| c);
            let ended = match child {
                Some(c) => self
                    .shared
                    .store
                    .get_run(c)
                    .await?
                    .is_some_and(|c| c.status.is_terminal()),
                None => false,
            };
            if !ended {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
