//! The approval lifecycle at the Runtime API (runtime.md §4, cases 45–51, 55), on the memory
//! store: an agent's gated call parks its turn on a `tool-call:pending` approval; rejecting
//! hands the model `{status: "rejected", rationale}`; withdrawing fails the turn
//! `hitl-withdrawn`; escalating opens the next tier on the same wait; a decided approval
//! cannot be decided again; another tenant's approval is not found; a decision on a run that
//! ended is refused and records nothing. Approving and timing out on every store, and a
//! gated flow step on SQLite, are kindgi-host's `tests/approvals.rs` (same fixture).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/approvals.rs"]
mod fixture;
mod support;

use fixture::{fixture, kinds, open_approval, reviewer, turn};
use kindgi_runtime::model::{FinishReason, ModelResponse, ToolCall};
use kindgi_runtime::{
    ApprovalError, ApprovalQuery, ApprovalStatus, DecisionKind, ReviewerRole, RunOptions,
    RunStatus, Runtime,
};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

#[tokio::test]
async fn rejecting_hands_the_model_the_rejection_and_the_turn_completes() {
    let f = fixture(Runtime::in_memory(), json!({"tools": {}})).await;
    let run = turn(&f.rt).await;
    let approval = open_approval(&f.rt, &run).await;
    let done =
        f.rt.complete_approval(
            &run.tenant_id,
            &approval.id,
            reviewer(DecisionKind::Reject, ReviewerRole::Standard, Some("no")),
        )
        .await
        .unwrap();
    assert_eq!(done.approval.status, ApprovalStatus::Rejected);
    assert_eq!(done.run_status, Some(RunStatus::Completed));
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        0,
        "a rejected call never runs"
    );
    let results = f.model.tool_results();
    assert!(
        results
            .iter()
            .any(|r| r == r#"{"status":"rejected","rationale":"no"}"#),
        "{results:?}"
    );
}

#[tokio::test]
async fn withdrawing_fails_the_turn_hitl_withdrawn() {
    let f = fixture(Runtime::in_memory(), json!({"tools": {}})).await;
    let run = turn(&f.rt).await;
    let approval = open_approval(&f.rt, &run).await;
    let done =
        f.rt.complete_approval(
            &run.tenant_id,
            &approval.id,
            reviewer(DecisionKind::Withdraw, ReviewerRole::Standard, None),
        )
        .await
        .unwrap();
    assert_eq!(done.approval.status, ApprovalStatus::Withdrawn);
    assert_eq!(done.run_status, Some(RunStatus::Failed));
    let after = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(after.failure().unwrap().code, "hitl-withdrawn");
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
    let j = f.rt.journal(&run.id, None, None).await.unwrap();
    assert!(kinds(&j).contains(&"wait.cancelled"));
}

#[tokio::test]
async fn escalating_opens_the_next_tier_on_the_same_wait() {
    let f = fixture(Runtime::in_memory(), json!({"tools": {}})).await;
    let run = turn(&f.rt).await;
    let approval = open_approval(&f.rt, &run).await;
    let done =
        f.rt.complete_approval(
            &run.tenant_id,
            &approval.id,
            reviewer(DecisionKind::Escalate, ReviewerRole::Standard, None),
        )
        .await
        .unwrap();
    assert_eq!(done.kind, "escalated");
    assert!(!done.waitpoint_resolved);
    assert_eq!(done.approval.status, ApprovalStatus::Escalated);
    let next = done.next_approval.unwrap();
    assert_eq!(next.required_role, ReviewerRole::Senior);
    assert_eq!(next.wait_token_id, approval.wait_token_id);
    assert_eq!(next.escalated_from.as_deref(), Some(approval.id.as_str()));
    assert_eq!(
        done.approval.escalated_to.as_deref(),
        Some(next.id.as_str())
    );
    assert_eq!(
        f.rt.get_run(&run.id).await.unwrap().status,
        RunStatus::Suspended
    );

    let escalated_again =
        f.rt.complete_approval(
            &run.tenant_id,
            &approval.id,
            reviewer(DecisionKind::Approve, ReviewerRole::Admin, None),
        )
        .await
        .unwrap_err();
    assert_eq!(escalated_again.code(), "approval-terminal");
    let too_low =
        f.rt.complete_approval(
            &run.tenant_id,
            &next.id,
            reviewer(DecisionKind::Approve, ReviewerRole::Standard, None),
        )
        .await
        .unwrap_err();
    assert_eq!(
        too_low,
        ApprovalError::InsufficientRole {
            have: "standard".into(),
            need: "senior".into()
        }
    );
    let approved =
        f.rt.complete_approval(
            &run.tenant_id,
            &next.id,
            reviewer(DecisionKind::Approve, ReviewerRole::Senior, None),
        )
        .await
        .unwrap();
    assert_eq!(approved.run_status, Some(RunStatus::Completed));
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn another_tenants_or_an_unknown_approval_is_not_found() {
    let f = fixture(Runtime::in_memory(), json!({"tools": {}})).await;
    let run = turn(&f.rt).await;
    let approval = open_approval(&f.rt, &run).await;
    assert_eq!(f.rt.approval("other", &approval.id).await.unwrap(), None);
    for (tenant, id) in [
        ("other", approval.id.as_str()),
        (run.tenant_id.as_str(), "nope"),
    ] {
        let e =
            f.rt.complete_approval(
                tenant,
                id,
                reviewer(DecisionKind::Approve, ReviewerRole::Admin, None),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), "approval-not-found");
    }
    assert_eq!(
        f.rt.get_run(&run.id).await.unwrap().status,
        RunStatus::Suspended,
        "nothing changed"
    );
}

#[tokio::test]
async fn deciding_after_the_run_was_cancelled_records_nothing() {
    let f = fixture(Runtime::in_memory(), json!({"tools": {}})).await;
    let run = turn(&f.rt).await;
    let approval = open_approval(&f.rt, &run).await;
    let cancelled = f.rt.cancel_run(&run.id).await.unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    let before = f.rt.journal(&run.id, None, None).await.unwrap().len();
    let e =
        f.rt.complete_approval(
            &run.tenant_id,
            &approval.id,
            reviewer(DecisionKind::Approve, ReviewerRole::Standard, None),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), "run-already-terminal");
    assert_eq!(
        f.rt.journal(&run.id, None, None).await.unwrap().len(),
        before
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
    let withdrawn =
        f.rt.approval(&run.tenant_id, &approval.id)
            .await
            .unwrap()
            .unwrap();
    assert_eq!(withdrawn.status, ApprovalStatus::Withdrawn);
    assert_eq!(
        withdrawn.withdrawn_because.as_deref(),
        Some("run-cancelled")
    );
}

#[tokio::test]
async fn a_run_that_ends_otherwise_withdraws_its_open_approvals() {
    // A flow whose agent step parks on an approval while a parallel step fails: the run
    // fails once the in-flight steps settled, and nothing waits for the approval any more.
    let f = fixture(Runtime::in_memory(), json!({"tools": {}})).await;
    f.rt.tools().insert_tool(support::tool(
        "t.boom",
        json!({"mutating": false}),
        |_| async { Err(kindgi_tools::HandlerError::msg("boom")) },
    ));
    let flow = json!({
        "id": "t.both", "version": "1.0.0",
        "nodes": [
            {"id": "agent", "kind": "agent", "ref": "t.agent"},
            {"id": "boom", "kind": "tool", "ref": "t.boom"}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "agent"},
            {"id": "e2", "from": "$start", "to": "boom"},
            {"id": "e3", "from": "agent", "to": "$end"},
            {"id": "e4", "from": "boom", "to": "$end"}
        ]
    });
    f.rt.flows().insert_json(&flow.to_string()).unwrap();
    let run =
        f.rt.start_run(
            "t.both",
            None,
            json!({"message": "pay"}),
            RunOptions {
                wait: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    let all =
        f.rt.list_approvals(&ApprovalQuery {
            tenant_id: run.tenant_id.clone(),
            run_id: Some(run.id.clone()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].status, ApprovalStatus::Withdrawn);
    assert_eq!(all[0].withdrawn_because.as_deref(), Some("run-ended"));
}

#[tokio::test]
async fn ask_on_first_use_remembers_an_approval_per_conversation() {
    // Beyond the reference: an approved call of a tool with exactly these arguments is not
    // asked about again in the same conversation; other arguments or another conversation
    // are.
    let f = fixture(
        Runtime::in_memory(),
        json!({"tools": {"default": "ask_on_first_use"}}),
    )
    .await;
    let ask = |args: Value| ModelResponse {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: "call-2".into(),
            name: "t.pay".into(),
            arguments: args,
        }],
        finish_reason: FinishReason::ToolUse,
        usage: Default::default(),
        warnings: vec![],
    };
    let start = |conversation: &str| {
        f.rt.start_agent_turn(
            "t.agent",
            None,
            json!({"message": "pay", "conversationId": conversation}),
            RunOptions {
                wait: true,
                ..Default::default()
            },
        )
    };
    let first = start("conv-1").await.unwrap();
    let approval = open_approval(&f.rt, &first).await;
    f.rt.complete_approval(
        &first.tenant_id,
        &approval.id,
        reviewer(DecisionKind::Approve, ReviewerRole::Standard, None),
    )
    .await
    .unwrap();
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);

    let push = |r| f.model.answers.lock().unwrap().push_back(r);
    push(ask(json!({"amount": 5})));
    let same = start("conv-1").await.unwrap();
    assert_eq!(
        same.status,
        RunStatus::Completed,
        "{:?}",
        same.failure_message
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 2, "ran without asking again");

    push(ask(json!({"amount": 6})));
    let other_args = start("conv-1").await.unwrap();
    assert_eq!(other_args.status, RunStatus::Suspended);

    push(ask(json!({"amount": 5})));
    let other_conversation = start("conv-2").await.unwrap();
    assert_eq!(other_conversation.status, RunStatus::Suspended);
    assert_eq!(f.runs.load(Ordering::SeqCst), 2);
}
