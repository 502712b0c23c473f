//! Crashes around an approved mutating call. Between the reviewer's decision and the call
//! it allows: the runtime process is killed (`KINDGI_FAULT=after-decision` aborts it right
//! after the decision and its approval row are stored, before the run resumes), a new
//! process recovers, and the approved call runs exactly once. While the approved call is in
//! flight (the tool aborts the process after its side effect, before its result is
//! journaled: a kill -9 mid-call): recovery cannot know the call ran, so it sends it again —
//! at-least-once — with the same `ctx.idempotencyKey`, which is what lets a pack dedupe it
//! (docs/approvals.md "After a crash"). The tool appends a line with its key to a file each
//! time it runs.
//!
//! The processes are this test binary run again with `--ignored --exact crash_child`; the
//! phase is in `KINDGI_CRASH_PHASE`, the SQLite file in `KINDGI_CRASH_DB`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use async_trait::async_trait;
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{
    AgentSpec, ApprovalQuery, ApprovalStatus, DecisionInput, DecisionKind, ReviewerRole,
    RunOptions, RunQuery, RunStatus, Runtime,
};
use kindgi_tools::{BoxFuture, HandlerError, Tool, ToolContext};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Asks for one call of `t.pay` until it has seen a tool result, then says "done".
#[derive(Debug)]
struct Model;

#[async_trait]
impl ModelProvider for Model {
    fn provider_id(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "script-1"
    }
    async fn invoke(&self, r: ModelRequest) -> Result<ModelResponse, ModelError> {
        let first = !r.messages.iter().any(|m| m.role == Role::Tool);
        let (text, calls, finish) = if first {
            (
                String::new(),
                vec![ToolCall {
                    id: "call-1".into(),
                    name: "t.pay".into(),
                    arguments: json!({"amount": 5}),
                }],
                FinishReason::ToolUse,
            )
        } else {
            ("done".into(), vec![], FinishReason::Stop)
        };
        Ok(ModelResponse {
            text,
            tool_calls: calls,
            finish_reason: finish,
            usage: Default::default(),
            warnings: vec![],
        })
    }
}

async fn runtime(db_path: &Path, calls_file: PathBuf) -> Runtime {
    let db = kindgi_store::Database::connect(db_path.to_str().unwrap())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let rt = Runtime::over(db.ports()).model(Arc::new(Model)).build();
    let handler: kindgi_tools::Handler = Arc::new(move |_input, ctx: ToolContext| {
        let calls_file = calls_file.clone();
        let fut: BoxFuture<'static, Result<serde_json::Value, HandlerError>> =
            Box::pin(async move {
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&calls_file)
                    .unwrap();
                let key = ctx.idempotency_key.unwrap_or_default();
                writeln!(f, "paid {key}").unwrap();
                drop(f);
                if std::env::var("KINDGI_CRASH_IN_CALL").is_ok() {
                    // Killed mid-call: the effect happened, its result never comes back.
                    std::process::abort();
                }
                Ok(json!({"paid": true}))
            });
        fut
    });
    rt.tools().insert_tool(Tool::from_parts(
        support::manifest("t.pay", json!({"mutating": true})),
        handler,
    ));
    let mut agent = AgentSpec::new("t.agent").with_tools(["t.pay"]);
    agent.conversation_policy = Some(json!({"hitl": {"tools": {}}}));
    rt.agents().insert(agent);
    rt
}

/// One phase, in a process of its own (run by the test below, not by `cargo test`).
#[tokio::test]
#[ignore = "a child process of a_crash_after_the_decision_runs_the_call_exactly_once"]
async fn crash_child() {
    let Ok(phase) = std::env::var("KINDGI_CRASH_PHASE") else {
        return;
    };
    let db = PathBuf::from(std::env::var("KINDGI_CRASH_DB").unwrap());
    let calls = db.with_file_name("calls.txt");
    let rt = runtime(&db, calls).await;
    match phase.as_str() {
        "park-and-decide" => {
            let run = rt
                .start_agent_turn(
                    "t.agent",
                    None,
                    json!({"message": "pay"}),
                    RunOptions {
                        wait: true,
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
            assert_eq!(run.status, RunStatus::Suspended);
            let page = rt
                .list_approvals(&ApprovalQuery {
                    tenant_id: run.tenant_id.clone(),
                    run_id: Some(run.id.clone()),
                    limit: 10,
                    ..Default::default()
                })
                .await
                .unwrap();
            // Aborts inside: after the decision is stored, or in the call it allows.
            let _ = rt
                .complete_approval(
                    &run.tenant_id,
                    &page[0].id,
                    DecisionInput {
                        decision: DecisionKind::Approve,
                        rationale: None,
                        decided_by: "user:rita".into(),
                        reviewer_id: "rita".into(),
                        reviewer_role: ReviewerRole::Standard,
                    },
                )
                .await;
            panic!("the decision or the call should have aborted the process");
        }
        "recover" => {
            let resumed = rt.recover().await.unwrap();
            for id in resumed {
                rt.wait_for_run(&id).await.unwrap();
            }
        }
        other => panic!("unknown phase {other}"),
    }
}

fn child(db: &Path, phase: &str, fault: Option<&str>) -> std::process::ExitStatus {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--ignored", "--exact", "crash_child", "--nocapture"])
        .env("KINDGI_CRASH_PHASE", phase)
        .env("KINDGI_CRASH_DB", db)
        .env_remove("KINDGI_FAULT")
        .env_remove("KINDGI_CRASH_IN_CALL");
    match fault {
        Some("in-call") => {
            cmd.env("KINDGI_CRASH_IN_CALL", "1");
        }
        Some(f) => {
            cmd.env("KINDGI_FAULT", f);
        }
        None => {}
    }
    cmd.status().unwrap()
}

/// The idempotency key of each run of the tool, in order.
fn calls(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|s| {
            s.lines()
                .map(|l| l.trim_start_matches("paid ").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn lines(path: &Path) -> usize {
    calls(path).len()
}

#[tokio::test]
async fn a_crash_after_the_decision_runs_the_call_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kindgi.db");
    let calls = dir.path().join("calls.txt");

    let crashed = child(&db, "park-and-decide", Some("after-decision"));
    assert!(
        !crashed.success(),
        "the first process was killed: {crashed:?}"
    );
    assert_eq!(lines(&calls), 0, "the call did not run before the crash");

    let recovered = child(&db, "recover", None);
    assert!(recovered.success(), "{recovered:?}");
    assert_eq!(
        lines(&calls),
        1,
        "the approved call ran once after recovery"
    );

    let again = child(&db, "recover", None);
    assert!(again.success(), "{again:?}");
    assert_eq!(lines(&calls), 1, "and never again");

    let rt = runtime(&db, calls.clone()).await;
    let runs = rt.list_runs(&RunQuery::default()).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Completed, "{:?}", runs[0]);
    let approvals = rt
        .list_approvals(&ApprovalQuery {
            tenant_id: runs[0].tenant_id.clone(),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(approvals.len(), 1);
    assert_eq!(
        approvals[0].status,
        ApprovalStatus::Approved,
        "the decision was not lost: the row caught up from the journal"
    );
    assert_eq!(
        approvals[0]
            .decision
            .as_ref()
            .and_then(|d| d.decided_by.as_deref()),
        Some("user:rita")
    );
}

#[tokio::test]
async fn a_crash_during_the_approved_call_sends_it_again_with_the_same_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kindgi.db");
    let calls_file = dir.path().join("calls.txt");

    let crashed = child(&db, "park-and-decide", Some("in-call"));
    assert!(!crashed.success(), "killed mid-call: {crashed:?}");
    let first = calls(&calls_file);
    assert_eq!(
        first.len(),
        1,
        "the call started before the kill: {first:?}"
    );
    let key = uuid::Uuid::parse_str(&first[0]).expect("the idempotency key is a UUID");
    assert_eq!(key.get_version_num(), 5, "the pack protocol's UUIDv5");

    let recovered = child(&db, "recover", None);
    assert!(recovered.success(), "{recovered:?}");
    let sent = calls(&calls_file);
    assert_eq!(
        sent.len(),
        2,
        "at-least-once: the runtime cannot know the call ran, so it is sent again: {sent:?}"
    );
    assert_eq!(
        sent[1], sent[0],
        "the re-sent call carries the first attempt's idempotency key"
    );

    let again = child(&db, "recover", None);
    assert!(again.success(), "{again:?}");
    assert_eq!(
        lines(&calls_file),
        2,
        "and never again once its result is journaled"
    );
    let rt = runtime(&db, calls_file.clone()).await;
    let runs = rt.list_runs(&RunQuery::default()).await.unwrap();
    assert_eq!(runs[0].status, RunStatus::Completed, "{:?}", runs[0]);
}
