//! A reviewer's decision on an approval (platform-api.md §4): checked (tenant, status,
//! role, four eyes, the run still going), then in one step of the wait store the approval row is moved
//! on with a compare-and-set on its open status, an escalation's successor stored, and the
//! decision journaled on the waiting run (`approval.completed`, then `wait.resumed` or
//! `wait.cancelled`) — the loser of two concurrent decisions, on any server of the
//! database, changes and journals nothing — then the run is resumed inline.

use serde_json::{Map, Value, json};

use crate::approval::{
    Approval, ApprovalCompletion, ApprovalDecision, ApprovalError, ApprovalStatus, DecisionInput,
    DecisionKind, ResumeOutcome, ReviewerRole,
};
use crate::record::{JournalKind, RunRecord, format_millis, now_millis, parse_millis};
use crate::service::Runtime;
use crate::steps::wait::requested_payload;
use kindgi_core::ids::DEFAULT_WAIT_MS;

fn store_err(e: kindgi_core::StorageError) -> ApprovalError {
    ApprovalError::Store(e)
}

/// Taking the run's resume lock failed: a store failure, whatever read of the run failed.
fn lock_err(e: crate::runtime::RuntimeError) -> ApprovalError {
    ApprovalError::Store(e.into_storage("approvals.lock_for_answer"))
}

/// Whether `approval` may still be decided by the person `by` (`user:<id>`), a reviewer of
/// `role`.
fn check_decidable(approval: &Approval, role: ReviewerRole, by: &str) -> Result<(), ApprovalError> {
    let status = approval.status.as_str().to_owned();
    let id = approval.id.clone();
    match approval.status {
        ApprovalStatus::Approved | ApprovalStatus::Rejected => {
            return Err(ApprovalError::AlreadyDecided { id, status });
        }
        ApprovalStatus::Expired | ApprovalStatus::Withdrawn | ApprovalStatus::Escalated => {
            return Err(ApprovalError::Terminal { id, status });
        }
        _ => {}
    }
    if role < approval.required_role {
        return Err(ApprovalError::InsufficientRole {
            have: role.as_str().to_owned(),
            need: approval.required_role.as_str().to_owned(),
        });
    }
    if approval.separate_approver && approval.requested_by.as_deref() == Some(by) {
        return Err(ApprovalError::SeparateApproverRequired {
            id: approval.id.clone(),
            requested_by: by.to_owned(),
        });
    }
    Ok(())
}

/// How long each tier of this approval's chain has.
fn tier_timeout_ms(approval: &Approval) -> u64 {
    let created = parse_millis(&approval.created_at);
    approval
        .expires_at
        .as_deref()
        .map(parse_millis)
        .filter(|e| *e > created)
        .map_or(DEFAULT_WAIT_MS, |e| (e - created) as u64)
}

/// The approval one tier up that replaces `from` (same wait token, fresh deadline).
pub(crate) fn successor(from: &Approval, role: ReviewerRole, now: i64) -> Approval {
    Approval {
        id: uuid::Uuid::new_v4().to_string(),
        required_role: role,
        status: ApprovalStatus::Pending,
        created_at: format_millis(now),
        updated_at: format_millis(now),
        decided_at: None,
        expires_at: Some(format_millis(
            now.saturating_add(tier_timeout_ms(from) as i64),
        )),
        decision: None,
        withdrawn_because: None,
        escalated_from: Some(from.id.clone()),
        escalated_to: None,
        ..from.clone()
    }
}

impl Runtime {
    /// See [`Runtime::complete_approval`].
    pub(crate) async fn decide_approval(
        &self,
        tenant: &str,
        id: &str,
        input: DecisionInput,
    ) -> Result<ApprovalCompletion, ApprovalError> {
        let approval = self.decidable(tenant, id, &input).await?;
        let run = self.approval_run(&approval).await?;
        let guard = match &run {
            Some(r) => Some(self.lock_for_answer(r).await.map_err(lock_err)?),
            None => None,
        };
        // Again under the lock: a concurrent decision, a timeout or the run's end may have
        // come first.
        let approval = self.decidable(tenant, id, &input).await?;
        let run = self.approval_run(&approval).await?;
        let now = now_millis();
        let decision = ApprovalDecision {
            id: uuid::Uuid::new_v4().to_string(),
            approval_id: approval.id.clone(),
            decision: input.decision,
            decided_by: Some(input.decided_by.clone()),
            reviewer_id: input.reviewer_id.clone(),
            reviewer_role_at_decision: input.reviewer_role,
            decided_at: format_millis(now),
            rationale: input.rationale.clone(),
        };
        let status = match input.decision {
            DecisionKind::Approve => ApprovalStatus::Approved,
            DecisionKind::Reject => ApprovalStatus::Rejected,
            DecisionKind::Withdraw => ApprovalStatus::Withdrawn,
            DecisionKind::Escalate => ApprovalStatus::Escalated,
        };
        let mut decided = Approval {
            status,
            updated_at: format_millis(now),
            decided_at: Some(format_millis(now)),
            decision: Some(decision.clone()),
            ..approval.clone()
        };
        let next = (input.decision == DecisionKind::Escalate).then(|| {
            let role = approval.required_role.next().unwrap_or(ReviewerRole::Admin);
            successor(&approval, role, now)
        });
        if let Some(n) = &next {
            decided.escalated_to = Some(n.id.clone());
        }
        let entries = match (&run, &approval.wait_token_id) {
            (Some(_), Some(token)) => decision_entries(&decided, next.as_ref(), token, &decision),
            _ => Vec::new(),
        };
        let journal = run
            .as_ref()
            .filter(|_| !entries.is_empty())
            .map(|r| self.outside_journal(&r.id, &entries));
        let moved = self
            .shared
            .waits
            .update_approval_journaled(&decided, approval.status, next.as_ref(), journal)
            .await
            .map_err(store_err)?;
        if !moved {
            // Another decision or the timeout came first: say which.
            self.decidable(tenant, id, &input).await?;
            return Err(ApprovalError::AlreadyDecided {
                id: approval.id.clone(),
                status: "decided".into(),
            });
        }
        crate::fault::point("after-decision");
        if next.is_some() {
            self.shared.deadlines.notify_one();
        }
        let mut completion = ApprovalCompletion {
            kind: if next.is_some() {
                "escalated"
            } else {
                "terminal"
            }
            .into(),
            approval: decided,
            decision,
            next_approval: next.clone(),
            waitpoint_resolved: next.is_none() && run.is_some(),
            run_status: run.as_ref().map(|r| r.status),
            resume: None,
        };
        let Some(guard) = guard else {
            return Ok(completion);
        };
        if next.is_some() {
            // The run keeps waiting, on the successor.
            drop(guard);
            return Ok(completion);
        }
        let run_id = run.map(|r| r.id).unwrap_or_default();
        match self.resume_inline(guard, &run_id).await {
            Ok(after) => {
                completion.run_status = Some(after.status);
                completion.resume = Some(ResumeOutcome::Ok);
            }
            Err(e) => {
                completion.resume = Some(ResumeOutcome::Failed {
                    code: e.code().to_owned(),
                    message: e.to_string(),
                })
            }
        }
        Ok(completion)
    }

    /// The approval, if `role` may decide it now.
    async fn decidable(
        &self,
        tenant: &str,
        id: &str,
        input: &DecisionInput,
    ) -> Result<Approval, ApprovalError> {
        let approval = self
            .shared
            .waits
            .get_approval(tenant, id)
            .await
            .map_err(store_err)?
            .ok_or_else(|| ApprovalError::NotFound { id: id.to_owned() })?;
        if approval.withdrawn_because.is_some() {
            // Withdrawn because its run ended: that is what the reviewer is told.
            self.approval_run(&approval).await?;
        }
        check_decidable(&approval, input.reviewer_role, &input.decided_by)?;
        Ok(approval)
    }

    /// The run waiting on `approval` (`None`: it names none); refused when it has ended.
    async fn approval_run(&self, approval: &Approval) -> Result<Option<RunRecord>, ApprovalError> {
        let Some(run_id) = &approval.run_id else {
            return Ok(None);
        };
        let Some(run) = self.shared.store.get_run(run_id).await.map_err(store_err)? else {
            return Ok(None);
        };
        if run.status.is_terminal() {
            return Err(ApprovalError::RunTerminal {
                run_id: run.id,
                status: run.status.as_str().to_owned(),
            });
        }
        Ok(Some(run))
    }
}

/// What a decision journals on the waiting run: `approval.completed`, then the wait's
/// answer (approve / reject), its cancellation (withdraw), or the successor's request.
pub(crate) fn decision_entries(
    decided: &Approval,
    next: Option<&Approval>,
    token: &str,
    decision: &ApprovalDecision,
) -> Vec<(JournalKind, Value)> {
    let mut out = vec![(
        JournalKind::ApprovalCompleted,
        json!({
            "approvalId": decided.id,
            "decision": decision.decision,
            "status": decided.status,
        }),
    )];
    match decision.decision {
        DecisionKind::Approve | DecisionKind::Reject => {
            let mut v = Map::new();
            v.insert("decided".into(), json!(decision.decision));
            if let Some(r) = &decision.rationale {
                v.insert("rationale".into(), json!(r));
            }
            if let Some(by) = &decision.decided_by {
                v.insert("decidedBy".into(), json!(by));
            }
            v.insert("approvalId".into(), json!(decided.id));
            out.push((
                JournalKind::WaitResumed,
                json!({"tokenId": token, "value": Value::Object(v)}),
            ));
        }
        DecisionKind::Withdraw => out.push((
            JournalKind::WaitCancelled,
            json!({"tokenId": token, "reason": "withdrawn"}),
        )),
        DecisionKind::Escalate => {
            if let Some(n) = next {
                out.push((JournalKind::ApprovalRequested, requested_payload(n, token)));
            }
        }
    }
    out
}
