//! Approvals on the wire (platform-api.md §4): `OA:Approval` and `OA:CompleteApprovalResult`
//! from the runtime's records (tenant ids as UUIDs, the run as `provenanceRef {runId}`,
//! only the fields the schemas allow), and the REST mapping of an [`ApprovalError`].

use kindgi_runtime::approval::{Approval, ApprovalCompletion, ApprovalDecision};
use serde_json::{Map, Value, json};

use crate::runs_list::put;

fn text(v: &Option<String>) -> Option<Value> {
    v.as_ref().map(|s| json!(s))
}

/// `OA:ApprovalDecisionRecord`: the decision as an approval carries it.
pub fn decision_record(d: &ApprovalDecision) -> Value {
    let mut o = Map::new();
    o.insert("decision".into(), json!(d.decision.as_str()));
    put(&mut o, "decidedBy", text(&d.decided_by));
    o.insert("reviewerId".into(), json!(d.reviewer_id));
    o.insert(
        "reviewerRoleAtDecision".into(),
        json!(d.reviewer_role_at_decision.as_str()),
    );
    o.insert("decidedAt".into(), json!(d.decided_at));
    put(&mut o, "rationale", text(&d.rationale));
    Value::Object(o)
}

/// `OA:ReviewDecision`: the decision a completion reports.
fn review_decision(d: &ApprovalDecision) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(d.id));
    o.insert("approvalId".into(), json!(d.approval_id));
    o.insert("reviewerId".into(), json!(d.reviewer_id));
    o.insert("decision".into(), json!(d.decision.as_str()));
    put(&mut o, "rationale", text(&d.rationale));
    o.insert(
        "reviewerRoleAtDecision".into(),
        json!(d.reviewer_role_at_decision.as_str()),
    );
    o.insert("decidedAt".into(), json!(d.decided_at));
    Value::Object(o)
}

/// `OA:Approval` of `a`.
pub fn approval_json(a: &Approval) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(a.id));
    o.insert(
        "tenantId".into(),
        json!(crate::projects::tenant_uuid(&a.tenant_id)),
    );
    put(&mut o, "projectId", text(&a.project_id));
    o.insert("subjectKind".into(), json!(a.subject_kind));
    o.insert("subjectRef".into(), a.subject_ref.clone());
    o.insert("requiredRole".into(), json!(a.required_role.as_str()));
    o.insert("status".into(), json!(a.status.as_str()));
    put(&mut o, "title", text(&a.title));
    put(&mut o, "description", text(&a.description));
    put(
        &mut o,
        "provenanceRef",
        a.run_id.as_ref().map(|r| json!({"runId": r})),
    );
    put(&mut o, "waitTokenId", text(&a.wait_token_id));
    o.insert("createdAt".into(), json!(a.created_at));
    o.insert("updatedAt".into(), json!(a.updated_at));
    put(&mut o, "decidedAt", text(&a.decided_at));
    put(&mut o, "expiresAt", text(&a.expires_at));
    put(&mut o, "decision", a.decision.as_ref().map(decision_record));
    put(&mut o, "requestedBy", text(&a.requested_by));
    o.insert("separateApprover".into(), json!(a.separate_approver));
    put(&mut o, "withdrawnBecause", text(&a.withdrawn_because));
    put(&mut o, "escalatedFrom", text(&a.escalated_from));
    put(&mut o, "escalatedTo", text(&a.escalated_to));
    Value::Object(o)
}

/// `OA:CompleteApprovalResult` of `c`.
pub fn completion_json(c: &ApprovalCompletion) -> Value {
    let mut o = Map::new();
    o.insert("kind".into(), json!(c.kind));
    o.insert("approval".into(), approval_json(&c.approval));
    o.insert("decision".into(), review_decision(&c.decision));
    put(
        &mut o,
        "nextApproval",
        c.next_approval.as_ref().map(approval_json),
    );
    o.insert("waitpointResolved".into(), json!(c.waitpoint_resolved));
    put(&mut o, "runStatus", c.run_status.map(|s| json!(s.as_str())));
    put(
        &mut o,
        "resume",
        c.resume.as_ref().and_then(|r| serde_json::to_value(r).ok()),
    );
    Value::Object(o)
}

/// `404 approval-not-found` ``No approval with id <id>`` with `details.approvalId`.
#[cfg(test)]
mod tests {
    use super::*;
    use kindgi_runtime::approval::{ApprovalStatus, DecisionKind, ReviewerRole};

    fn approval() -> Approval {
        Approval {
            id: "5f0c1a57-37a4-4c39-9d52-2f7d7a2c8f10".into(),
            tenant_id: "acme".into(),
            project_id: None,
            subject_kind: "tool-call:pending".into(),
            subject_ref: json!({"toolId": "t", "callId": "c1"}),
            required_role: ReviewerRole::Standard,
            status: ApprovalStatus::Approved,
            title: Some("Run t?".into()),
            description: None,
            wait_token_id: Some("abc".into()),
            run_id: Some("r1".into()),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            updated_at: "2026-01-01T00:00:01.000Z".into(),
            decided_at: Some("2026-01-01T00:00:01.000Z".into()),
            expires_at: None,
            decision: Some(ApprovalDecision {
                id: "d1".into(),
                approval_id: "5f0c1a57-37a4-4c39-9d52-2f7d7a2c8f10".into(),
                decision: DecisionKind::Approve,
                decided_by: Some("user:admin".into()),
                reviewer_id: "rv".into(),
                reviewer_role_at_decision: ReviewerRole::Admin,
                decided_at: "2026-01-01T00:00:01.000Z".into(),
                rationale: None,
            }),
            requested_by: None,
            separate_approver: false,
            withdrawn_because: None,
            escalated_from: None,
            escalated_to: None,
        }
    }

    #[test]
    fn an_approval_names_its_run_as_provenance_and_its_tenant_as_a_uuid() {
        let a = approval_json(&approval());
        assert_eq!(a["provenanceRef"], json!({"runId": "r1"}));
        assert_eq!(a["tenantId"], json!(crate::projects::tenant_uuid("acme")));
        assert!(a.get("runId").is_none());
        // The record an approval carries has no id of its own; the completion's has.
        assert!(a["decision"].get("id").is_none());
        assert_eq!(a["decision"]["decidedBy"], "user:admin");
    }
}
