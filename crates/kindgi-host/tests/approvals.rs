//! The approval lifecycle on every store (memory, SQLite, PostgreSQL; runtime.md §4):
//! approving runs the gated call once and the turn completes inside the decision; an
//! unanswered approval escalates to admin, then expires and the turn fails; and, on SQLite, a
//! flow whose agent step is gated parks and completes within the decision. The other
//! approval tests are kindgi-runtime's `tests/approvals.rs` (memory store, same fixture);
//! these are here because the database runtimes are the host's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-runtime/tests/support/approvals.rs"]
mod fixture;
mod support;

use fixture::{fixture, kinds, open_approval, reviewer, turn};
use kindgi_runtime::{
    ApprovalStatus, DecisionKind, ResumeOutcome, ReviewerRole, RunOptions, RunStatus,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{Backend, builder, cleanup, counting_tool};

async fn approve_runs_the_call_once(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b, json!({"tools": {}})).await;
    let run = turn(&f.rt).await;
    let approval = open_approval(&f.rt, &run).await;
    assert_eq!(approval.subject_kind, "tool-call:pending");
    assert_eq!(approval.required_role, ReviewerRole::Standard);
    assert_eq!(approval.subject_ref["toolId"], "t.pay");
    assert_eq!(approval.subject_ref["arguments"], json!({"amount": 5}));
    assert_eq!(approval.title.as_deref(), Some("HITL review: t.pay"));
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        0,
        "nothing runs before the decision"
    );

    let waiting = f.rt.waiting_for(&run).await.unwrap().unwrap();
    assert_eq!(waiting.approvals.len(), 1);
    let w = &waiting.approvals[0];
    assert_eq!(w["approvalId"], json!(approval.id));
    assert_eq!(w["tool"]["id"], "t.pay");
    assert_eq!(w["tool"]["callId"], "call-1");
    assert!(
        !w.to_string().contains("amount"),
        "waitingFor never shows arguments: {w}"
    );
    let j = f.rt.journal(&run.id, None, None).await.unwrap();
    let k = kinds(&j);
    assert!(
        k.contains(&"approval.requested") && k.contains(&"wait.suspended"),
        "{k:?}"
    );
    assert!(!k.contains(&"step.failed"), "{k:?}");

    let done =
        f.rt.complete_approval(
            &run.tenant_id,
            &approval.id,
            reviewer(DecisionKind::Approve, ReviewerRole::Standard, None),
        )
        .await
        .unwrap();
    assert_eq!(done.kind, "terminal");
    assert!(done.waitpoint_resolved);
    assert_eq!(done.approval.status, ApprovalStatus::Approved);
    assert_eq!(done.decision.decided_by.as_deref(), Some("user:rita"));
    assert_eq!(done.run_status, Some(RunStatus::Completed));
    assert_eq!(done.resume, Some(ResumeOutcome::Ok));
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        1,
        "the approved call ran once"
    );
    assert_eq!(
        f.model.seen.lock().unwrap().len(),
        2,
        "case 61: the model answer recorded before the park is replayed, not asked again"
    );
    assert_eq!(
        f.rt.get_run(&run.id).await.unwrap().status,
        RunStatus::Completed
    );
    let j = f.rt.journal(&run.id, None, None).await.unwrap();
    let k = kinds(&j);
    assert!(
        k.contains(&"approval.completed") && k.contains(&"wait.resumed"),
        "{k:?}"
    );

    let again =
        f.rt.complete_approval(
            &run.tenant_id,
            &approval.id,
            reviewer(DecisionKind::Reject, ReviewerRole::Admin, None),
        )
        .await
        .unwrap_err();
    assert_eq!(again.code(), "approval-already-decided");
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
    cleanup(db).await;
}

#[tokio::test]
async fn approving_runs_the_gated_call_once_memory() {
    approve_runs_the_call_once(Backend::Memory).await;
}

#[tokio::test]
async fn approving_runs_the_gated_call_once_sqlite() {
    approve_runs_the_call_once(Backend::Sqlite).await;
}

#[tokio::test]
async fn approving_runs_the_gated_call_once_postgres() {
    approve_runs_the_call_once(Backend::Postgres).await;
}

async fn times_out(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b, json!({"tools": {}, "timeoutMs": 1})).await;
    let run = turn(&f.rt).await;
    let first = open_approval(&f.rt, &run).await;
    let mut chain = vec![first.clone()];
    for role in [ReviewerRole::Senior, ReviewerRole::Admin] {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        assert_eq!(f.rt.expire_due_waits().await.unwrap(), 1);
        let before = chain.last().unwrap().clone();
        let escalated =
            f.rt.approval(&run.tenant_id, &before.id)
                .await
                .unwrap()
                .unwrap();
        assert_eq!(escalated.status, ApprovalStatus::Escalated);
        let next_id = escalated.escalated_to.clone().unwrap();
        let next =
            f.rt.approval(&run.tenant_id, &next_id)
                .await
                .unwrap()
                .unwrap();
        assert_eq!(next.required_role, role);
        assert_eq!(next.status, ApprovalStatus::Pending);
        assert_eq!(next.wait_token_id, first.wait_token_id, "the same wait");
        assert!(next.expires_at > before.expires_at, "a fresh deadline");
        assert_eq!(
            f.rt.get_run(&run.id).await.unwrap().status,
            RunStatus::Suspended
        );
        chain.push(next);
    }
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(f.rt.expire_due_waits().await.unwrap(), 1);
    let last = chain.last().unwrap();
    let expired =
        f.rt.approval(&run.tenant_id, &last.id)
            .await
            .unwrap()
            .unwrap();
    assert_eq!(expired.status, ApprovalStatus::Expired);
    let after = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(after.status, RunStatus::Failed);
    assert_eq!(after.failure().unwrap().code, "hitl-cancelled");
    assert_eq!(
        after.failure_message.as_deref(),
        Some("hitl-cancelled: Tool-call HITL cancelled for t.pay: timeout")
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        f.rt.expire_due_waits().await.unwrap(),
        0,
        "nothing left to time out"
    );
    cleanup(db).await;
}

#[tokio::test]
async fn an_unanswered_approval_escalates_to_admin_then_expires_and_the_turn_fails_memory() {
    times_out(Backend::Memory).await;
}

#[tokio::test]
async fn an_unanswered_approval_escalates_to_admin_then_expires_and_the_turn_fails_sqlite() {
    times_out(Backend::Sqlite).await;
}

#[tokio::test]
async fn an_unanswered_approval_escalates_to_admin_then_expires_and_the_turn_fails_postgres() {
    times_out(Backend::Postgres).await;
}

/// runtime.md case 56, as this runtime runs it: a flow whose agent step is gated is
/// `suspended` too (the step runs inside the flow run, so the approval's run is the flow
/// run), and approving resumes it to its end within the decision call; the step after the
/// agent runs once, after the gated call.
#[tokio::test]
async fn a_flow_with_a_gated_agent_step_parks_and_completes_within_the_decision() {
    let (b, db) = builder(Backend::Sqlite).await;
    let f = fixture(b, json!({"tools": {}})).await;
    let after = Arc::new(AtomicUsize::new(0));
    f.rt.tools().insert_tool(counting_tool(
        "t.after",
        json!({"mutating": false}),
        after.clone(),
        |_| json!({"done": true}),
    ));
    let flow = json!({
        "id": "t.gated-flow", "version": "1.0.0",
        "nodes": [
            {"id": "agent", "kind": "agent", "ref": "t.agent"},
            {"id": "after", "kind": "tool", "ref": "t.after"}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "agent"},
            {"id": "e2", "from": "agent", "to": "after"},
            {"id": "e3", "from": "after", "to": "$end"}
        ]
    });
    f.rt.flows().insert_json(&flow.to_string()).unwrap();
    let run =
        f.rt.start_run(
            "t.gated-flow",
            None,
            json!({"message": "pay"}),
            RunOptions {
                wait: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let approval = open_approval(&f.rt, &run).await;
    assert_eq!(approval.run_id.as_deref(), Some(run.id.as_str()));
    assert_eq!(
        after.load(Ordering::SeqCst),
        0,
        "nothing after the gate ran"
    );
    let done =
        f.rt.complete_approval(
            &run.tenant_id,
            &approval.id,
            reviewer(DecisionKind::Approve, ReviewerRole::Standard, None),
        )
        .await
        .unwrap();
    assert_eq!(done.run_status, Some(RunStatus::Completed));
    assert_eq!(f.runs.load(Ordering::SeqCst), 1, "the gated call ran once");
    assert_eq!(after.load(Ordering::SeqCst), 1, "the next step ran once");
    let end = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(
        end.status,
        RunStatus::Completed,
        "{:?}",
        end.failure_message
    );
    assert_eq!(end.output, Some(json!({"done": true})));
    let journal = f.rt.journal(&run.id, None, None).await.unwrap();
    let k = kinds(&journal);
    assert!(
        k.contains(&"wait.suspended") && k.contains(&"wait.resumed"),
        "{k:?}"
    );
    cleanup(db).await;
}
