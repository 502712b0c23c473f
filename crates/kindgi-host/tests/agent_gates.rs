//! An agent step's approval gates on every store (memory, SQLite, PostgreSQL; runtime.md
//! cases 27, 33, 36, 43–45): a gated call parks the run and runs once approved; and, on
//! SQLite's conversation log, the session gate (`afterTurns`, case 54). The other gate and
//! scheduling tests are kindgi-runtime's `tests/agent_gates.rs` (memory store, same
//! fixture); these are here because the database runtimes are the host's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-runtime/tests/support/agent_gates.rs"]
mod fixture;
mod support;

use fixture::{
    AGENT, Probe, Script, asks, completed, decide, ids, mutating, ro, runtime,
    suspended_timeout_ms, text, the_open_approval, turn, with_policy,
};
use kindgi_runtime::agent::hitl::{args_hash, tool_call_token};
use kindgi_runtime::{DecisionKind, ReviewerRole, RunRecord, RunStatus, Runtime};
use serde_json::json;
use std::sync::Arc;
use support::{Backend, builder, cleanup};

/// Cases 27, 33, 36, 43, 44, 45: under `hitl: {tools: {}}` the read-only call before the
/// mutating one runs, the mutating one parks the run on an approval naming its exact
/// arguments; approved, it runs once, the call before it does not run again, and the
/// read-only calls after it run one at a time.
async fn a_gated_call_parks_and_runs_once_approved(backend: Backend) {
    let (b, db) = builder(backend).await;
    let probe = Arc::new(Probe::default());
    let pay_args = json!({"to": "acme", "amount": 12.5});
    let model = Script::new(vec![asks(&[
        ("c1", "t.r1", json!({})),
        ("c2", "t.pay", pay_args.clone()),
        ("c3", "t.r2", json!({})),
        ("c4", "t.r3", json!({})),
    ])]);
    let rt = runtime(
        b,
        model.clone(),
        &probe,
        &[
            ("t.r1", ro()),
            ("t.pay", mutating()),
            ("t.r2", ro()),
            ("t.r3", ro()),
        ],
        with_policy(json!({"hitl": {"tools": {}}})),
    );
    let run = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &run).await;
    assert_eq!(probe.runs("t.r1"), 1, "the read-only call before it ran");
    assert_eq!(probe.runs("t.pay"), 0, "nothing runs before the decision");
    assert_eq!(probe.runs("t.r2") + probe.runs("t.r3"), 0);

    assert_eq!(approval.subject_kind, "tool-call:pending");
    assert_eq!(approval.required_role, ReviewerRole::Standard);
    assert_eq!(approval.title.as_deref(), Some("HITL review: t.pay"));
    assert_eq!(
        approval.description.as_deref(),
        Some("Tool call t.pay awaiting reviewer approval before dispatch.")
    );
    let hash = args_hash(&json!({"amount": 12.5, "to": "acme"}));
    let s = &approval.subject_ref;
    assert_eq!(s["agentId"], AGENT);
    assert_eq!(s["agentVersion"], "0.0.0");
    assert_eq!(s["toolId"], "t.pay");
    assert_eq!(s["toolVersion"], "1.0.0");
    assert_eq!(s["callId"], "c2");
    assert_eq!(s["argsHash"], json!(hash));
    assert_eq!(s["arguments"], pay_args);
    assert_eq!(
        s["conversationId"],
        json!(run.meta.agent.as_ref().unwrap().conversation_id)
    );
    assert_eq!(
        approval.wait_token_id.as_deref(),
        Some(tool_call_token(&run.id, "c2", &hash).as_str())
    );
    assert_eq!(suspended_timeout_ms(&rt, &run).await, 86_400_000);

    let status = decide(&rt, &approval, DecisionKind::Approve, None).await;
    assert_eq!(status, RunStatus::Completed);
    assert_eq!(probe.runs("t.pay"), 1, "the approved call ran once");
    assert_eq!(
        probe.runs("t.r1"),
        1,
        "the call before the park did not run again"
    );
    assert_eq!(probe.runs("t.r2"), 1);
    assert_eq!(probe.runs("t.r3"), 1);
    let log = probe.log();
    let tail: Vec<&str> = log.iter().skip(2).map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "start t.pay",
            "end t.pay",
            "start t.r2",
            "end t.r2",
            "start t.r3",
            "end t.r3"
        ],
        "after the gated call the rest run one at a time"
    );
    let last = model.seen.lock().unwrap().len() - 1;
    assert_eq!(ids(&model.tool_results(last)), ["c1", "c2", "c3", "c4"]);
    cleanup(db).await;
}

#[tokio::test]
async fn a_gated_call_parks_and_runs_once_approved_memory() {
    a_gated_call_parks_and_runs_once_approved(Backend::Memory).await;
}

#[tokio::test]
async fn a_gated_call_parks_and_runs_once_approved_sqlite() {
    a_gated_call_parks_and_runs_once_approved(Backend::Sqlite).await;
}

#[tokio::test]
async fn a_gated_call_parks_and_runs_once_approved_postgres() {
    a_gated_call_parks_and_runs_once_approved(Backend::Postgres).await;
}

/// A next turn of `conversation`, as the API starts one: the user's message kept, the turn
/// counted, then the run.
async fn next_turn(
    rt: &Runtime,
    store: &kindgi_store::conversations::ConversationStore,
    conversation: &str,
) -> RunRecord {
    store
        .append_message(
            "default",
            conversation,
            kindgi_runtime::model::Role::User,
            &json!("again"),
            None,
            None,
        )
        .await
        .unwrap();
    store.bump_turn("default", conversation).await.unwrap();
    turn(rt, Some(conversation)).await
}

/// Case 54: `afterTurns: 2` — the first two turns run; the third waits for a reviewer
/// before its model is called; rejected, it fails `hitl-rejected`; the next one, approved,
/// runs.
#[tokio::test]
async fn past_after_turns_a_turn_waits_for_a_reviewer_before_its_model_call() {
    let (b, db) = builder(Backend::Sqlite).await;
    let store =
        kindgi_store::conversations::ConversationStore::new(db.as_ref().unwrap().db.clone());
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![text("one"), text("two"), text("four")]);
    let rt = runtime(
        b,
        model.clone(),
        &probe,
        &[],
        with_policy(json!({"hitl": {"afterTurns": 2, "defaultReviewerRole": "senior"}})),
    );
    let first = turn(&rt, None).await;
    completed(&first);
    let id = first
        .meta
        .agent
        .as_ref()
        .unwrap()
        .conversation_id
        .clone()
        .unwrap();
    completed(&next_turn(&rt, &store, &id).await);
    let calls = || model.seen.lock().unwrap().len();
    assert_eq!(calls(), 2);

    let third = next_turn(&rt, &store, &id).await;
    let approval = the_open_approval(&rt, &third).await;
    assert_eq!(calls(), 2, "no model call before the reviewer's answer");
    assert_eq!(approval.subject_kind, "agent-turn:session-hitl-gate");
    assert_eq!(approval.required_role, ReviewerRole::Senior);
    assert_eq!(
        approval.subject_ref,
        json!({"conversationId": id, "agentId": AGENT, "agentVersion": "0.0.0", "turnCount": 2, "threshold": 2})
    );
    assert_eq!(
        approval.description.as_deref(),
        Some("Conversation reached HITL threshold: 2 turns >= 2")
    );
    assert_eq!(
        approval.wait_token_id.as_deref(),
        Some(kindgi_runtime::agent::hitl::session_gate_token(&third.id, 2).as_str())
    );
    assert_eq!(
        decide(&rt, &approval, DecisionKind::Reject, Some("too long")).await,
        RunStatus::Failed
    );
    let failed = rt.get_run(&third.id).await.unwrap();
    assert_eq!(
        failed.failure_message.as_deref(),
        Some("hitl-rejected: Reviewer rejected the session-HITL gate: too long")
    );
    assert_eq!(failed.failure().unwrap().code, "hitl-rejected");
    assert_eq!(calls(), 2);

    let fourth = next_turn(&rt, &store, &id).await;
    let approval = the_open_approval(&rt, &fourth).await;
    assert_eq!(approval.subject_ref["turnCount"], 3);
    assert_eq!(
        decide(&rt, &approval, DecisionKind::Approve, None).await,
        RunStatus::Completed
    );
    assert_eq!(calls(), 3);
    assert_eq!(
        rt.get_run(&fourth.id).await.unwrap().output.unwrap()["text"],
        "four"
    );
    cleanup(db).await;
}
