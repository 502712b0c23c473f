//! The approval lifecycle at the Runtime API (runtime.md §4, cases 45–51, 55): an agent's
//! gated call parks its turn on a `tool-call:pending` approval; approving runs the call once
//! and the turn completes inside the decision; rejecting hands the model `{status:
//! "rejected", rationale}`; withdrawing fails the turn `hitl-withdrawn`; escalating opens the
//! next tier on the same wait; a decided approval cannot be decided again; another tenant's
//! approval is not found; a decision on a run that ended is refused and records nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use common::{Backend, builder, cleanup, counting_tool};
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{
    AgentSpec, ApprovalError, ApprovalQuery, ApprovalStatus, DecisionInput, DecisionKind,
    ResumeOutcome, ReviewerRole, RunOptions, RunRecord, RunStatus, Runtime,
};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A model that asks for one call of `t.pay`, then says "done"; it keeps what it was sent.
#[derive(Debug, Default)]
struct Script {
    answers: Mutex<VecDeque<ModelResponse>>,
    seen: Mutex<Vec<ModelRequest>>,
}

#[async_trait]
impl ModelProvider for Script {
    fn provider_id(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "script-1"
    }
    async fn invoke(&self, r: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.seen.lock().unwrap().push(r);
        let next = self.answers.lock().unwrap().pop_front();
        Ok(next.unwrap_or(ModelResponse {
            text: "done".into(),
            tool_calls: vec![],
            finish_reason: FinishReason::Stop,
            usage: Default::default(),
            warnings: vec![],
        }))
    }
}

impl Script {
    fn tool_results(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .flat_map(|r| r.messages.iter())
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.content.clone())
            .collect()
    }
}

struct Fixture {
    rt: Runtime,
    model: Arc<Script>,
    runs: Arc<AtomicUsize>,
    db: Option<kindgi_store::testing::TestDatabase>,
}

async fn fixture(backend: Backend, hitl: Value) -> Fixture {
    let (b, db) = builder(backend).await;
    let model = Arc::new(Script::default());
    model.answers.lock().unwrap().push_back(ModelResponse {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: "call-1".into(),
            name: "t.pay".into(),
            arguments: json!({"amount": 5}),
        }],
        finish_reason: FinishReason::ToolUse,
        usage: Default::default(),
        warnings: vec![],
    });
    let rt = b.model(model.clone()).build();
    let runs = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "t.pay",
        json!({"mutating": true}),
        runs.clone(),
        |_| json!({"paid": true}),
    ));
    rt.agents().insert(
        AgentSpec::new("t.agent")
            .with_tools(["t.pay"])
            .with_conversation_policy(json!({"hitl": hitl})),
    );
    Fixture {
        rt,
        model,
        runs,
        db,
    }
}

async fn turn(rt: &Runtime) -> RunRecord {
    rt.start_agent_turn(
        "t.agent",
        None,
        json!({"message": "pay"}),
        RunOptions {
            wait: true,
            ..Default::default()
        },
    )
    .await
    .unwrap()
}

fn reviewer(decision: DecisionKind, role: ReviewerRole, rationale: Option<&str>) -> DecisionInput {
    DecisionInput {
        decision,
        rationale: rationale.map(str::to_owned),
        decided_by: "user:rita".into(),
        reviewer_id: "rita".into(),
        reviewer_role: role,
    }
}

/// The one open approval the suspended turn waits on.
async fn open_approval(rt: &Runtime, run: &RunRecord) -> kindgi_runtime::Approval {
    assert_eq!(
        run.status,
        RunStatus::Suspended,
        "{:?}",
        run.failure_message
    );
    let page = rt
        .list_approvals(&ApprovalQuery {
            tenant_id: run.tenant_id.clone(),
            statuses: vec![ApprovalStatus::Pending],
            run_id: Some(run.id.clone()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.len(), 1, "{page:?}");
    page.into_iter().next().unwrap()
}

fn kinds(rt_journal: &[kindgi_runtime::JournalEntry]) -> Vec<&str> {
    rt_journal.iter().map(|e| e.kind.as_str()).collect()
}

async fn approve_runs_the_call_once(backend: Backend) {
    let f = fixture(backend, json!({"tools": {}})).await;
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
    cleanup(f.db).await;
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

#[tokio::test]
async fn rejecting_hands_the_model_the_rejection_and_the_turn_completes() {
    let f = fixture(Backend::Memory, json!({"tools": {}})).await;
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
    let f = fixture(Backend::Memory, json!({"tools": {}})).await;
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
    let f = fixture(Backend::Memory, json!({"tools": {}})).await;
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
    let f = fixture(Backend::Memory, json!({"tools": {}})).await;
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
    let f = fixture(Backend::Memory, json!({"tools": {}})).await;
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

async fn times_out(backend: Backend) {
    let f = fixture(backend, json!({"tools": {}, "timeoutMs": 1})).await;
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
    cleanup(f.db).await;
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

#[tokio::test]
async fn a_run_that_ends_otherwise_withdraws_its_open_approvals() {
    // A flow whose agent step parks on an approval while a parallel step fails: the run
    // fails once the in-flight steps settled, and nothing waits for the approval any more.
    let f = fixture(Backend::Memory, json!({"tools": {}})).await;
    f.rt.tools().insert_tool(common::tool(
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
        Backend::Memory,
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

/// runtime.md case 56, as this runtime runs it: a flow whose agent step is gated is
/// `suspended` too (the step runs inside the flow run, so the approval's run is the flow
/// run), and approving resumes it to its end within the decision call; the step after the
/// agent runs once, after the gated call.
#[tokio::test]
async fn a_flow_with_a_gated_agent_step_parks_and_completes_within_the_decision() {
    let f = fixture(Backend::Sqlite, json!({"tools": {}})).await;
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
    cleanup(f.db).await;
}
