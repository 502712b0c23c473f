//! Waits: a flow step calling a pausing tool parks its run (`suspended`, `wait.suspended`,
//! no `step.failed`) until the other system answers on the call's link; the answer (checked
//! against the tool's output schema) is the call's result and the run goes on. Answering
//! twice, late, for another tenant, with a malformed token or an invalid value is refused
//! and changes nothing; a tool asking to wait longer than 24 days fails the call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use common::{Backend, builder, cleanup, counting_tool};
use kindgi_runtime::{
    JournalEntry, RunOptions, RunStatus, Runtime, ToolCallError, ToolDispatcher, ToolTransport,
    WaitError,
};
use kindgi_spec::ToolManifest;
use kindgi_tools::dispatch::CallOutcome;
use kindgi_tools::{ToolContext, WaitTicket};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A pausing tool: hands its ticket to "the other system" (the test) and pauses for
/// `timeout_ms`.
#[derive(Debug)]
struct PausingTool {
    manifest: ToolManifest,
    tickets: Arc<Mutex<Vec<WaitTicket>>>,
    timeout_ms: Option<u64>,
}

#[async_trait]
impl ToolDispatcher for PausingTool {
    fn manifest(&self) -> &ToolManifest {
        &self.manifest
    }
    fn transport(&self) -> ToolTransport {
        ToolTransport::Pack
    }
    async fn call(&self, _input: Value, _ctx: ToolContext) -> Result<Value, ToolCallError> {
        panic!("a pausing tool is called with call_or_pause")
    }
    async fn call_or_pause(
        &self,
        _input: Value,
        ctx: ToolContext,
    ) -> Result<CallOutcome, ToolCallError> {
        self.tickets
            .lock()
            .unwrap()
            .push(ctx.wait.clone().expect("a ticket"));
        Ok(CallOutcome::Paused {
            timeout_ms: self.timeout_ms,
        })
    }
}

struct Fixture {
    rt: Runtime,
    tickets: Arc<Mutex<Vec<WaitTicket>>>,
    after: Arc<AtomicUsize>,
    db: Option<kindgi_store::testing::TestDatabase>,
}

async fn fixture(backend: Backend, timeout_ms: Option<u64>) -> Fixture {
    let (b, db) = builder(backend).await;
    let rt = b.build();
    let tickets = Arc::new(Mutex::new(Vec::new()));
    let manifest = common::manifest(
        "acme.ask-human",
        json!({
            "pauses": true,
            "output": {"type": "object", "properties": {"answer": {"type": "string"}},
                       "required": ["answer"], "additionalProperties": false}
        }),
    );
    rt.tools().insert(Arc::new(PausingTool {
        manifest,
        tickets: tickets.clone(),
        timeout_ms,
    }));
    let after = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "acme.after",
        json!({}),
        after.clone(),
        |input| json!({"got": input}),
    ));
    rt.flows().insert_json(&flow().to_string()).unwrap();
    Fixture {
        rt,
        tickets,
        after,
        db,
    }
}

/// `$start → ask (pausing) → after → $end`.
fn flow() -> Value {
    json!({
        "id": "acme.ask", "version": "1.0.0",
        "nodes": [
            {"id": "ask", "kind": "tool", "ref": "acme.ask-human"},
            {"id": "after", "kind": "tool", "ref": "acme.after"}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "ask"},
            {"id": "e2", "from": "ask", "to": "after"},
            {"id": "e3", "from": "after", "to": "$end"}
        ]
    })
}

fn waited() -> RunOptions {
    RunOptions {
        wait: true,
        tenant_id: Some("acme".into()),
        ..RunOptions::default()
    }
}

fn kinds(j: &[JournalEntry]) -> Vec<String> {
    j.iter()
        .map(|e| match &e.node_id {
            Some(n) => format!("{} {n}", e.kind),
            None => e.kind.to_string(),
        })
        .collect()
}

async fn parks_and_resumes(backend: Backend) {
    let f = fixture(backend, None).await;
    let run =
        f.rt.start_run("acme.ask", None, json!({"q": "ok?"}), waited())
            .await
            .unwrap();
    assert_eq!(run.status, RunStatus::Suspended, "{run:?}");
    let ticket = f.tickets.lock().unwrap()[0].clone();
    assert!(ticket.token.starts_with("kgw_"));
    assert_eq!(
        ticket.link,
        format!("http://127.0.0.1:8080/v1/waits/{}", ticket.token)
    );
    assert_eq!(ticket.timeout_ms, 24 * 60 * 60 * 1000);
    let j = f.rt.journal(&run.id, None, None).await.unwrap();
    let k = kinds(&j);
    assert!(k.contains(&"wait.suspended ask".to_owned()), "{k:?}");
    assert!(!k.iter().any(|k| k.starts_with("step.failed")), "{k:?}");
    assert!(
        !k.iter()
            .any(|k| k.starts_with("run.") && k != "run.started"),
        "no terminal entry: {k:?}"
    );
    let journal_text = serde_json::to_string(&j).unwrap();
    assert!(
        !journal_text.contains(&ticket.token),
        "the journal never carries the token"
    );
    let suspended = j
        .iter()
        .find(|e| e.kind.as_str() == "wait.suspended")
        .unwrap();
    let token_id = suspended.payload.as_ref().unwrap()["tokenId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(token_id.len(), 40);
    assert_eq!(suspended.payload.as_ref().unwrap()["timeoutMs"], 86_400_000);

    let waiting = f.rt.waiting_for(&run).await.unwrap().unwrap();
    assert!(waiting.approvals.is_empty());
    assert_eq!(waiting.other[0]["what"], "tool-pause");
    assert_eq!(waiting.other[0]["tokenId"], json!(token_id));
    assert_eq!(waiting.other[0]["toolId"], "acme.ask-human");

    // Refusals change nothing.
    let wrong_tenant =
        f.rt.answer_wait("other", &ticket.token, json!({"answer": "yes"}))
            .await;
    assert_eq!(wrong_tenant, Err(WaitError::NotFound));
    let malformed = f.rt.answer_wait("acme", "kgw_nope", json!({})).await;
    assert_eq!(malformed, Err(WaitError::NotFound));
    let invalid =
        f.rt.answer_wait("acme", &ticket.token, json!({"answer": 3}))
            .await
            .unwrap_err();
    let WaitError::Invalid {
        tool_id, issues, ..
    } = &invalid
    else {
        panic!("{invalid:?}")
    };
    assert_eq!(tool_id, "acme.ask-human");
    assert!(!issues.is_empty());
    assert_eq!(invalid.code(), "wait-answer-invalid");
    assert_eq!(
        f.rt.get_run(&run.id).await.unwrap().status,
        RunStatus::Suspended
    );
    assert_eq!(f.after.load(Ordering::SeqCst), 0);

    let answered =
        f.rt.answer_wait("acme", &ticket.token, json!({"answer": "yes"}))
            .await
            .unwrap();
    assert_eq!(answered.run_id, run.id);
    assert_eq!(answered.run_status, RunStatus::Completed);
    let done = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(done.output, Some(json!({"got": {"answer": "yes"}})));
    assert_eq!(f.tickets.lock().unwrap().len(), 1, "the tool ran once");
    assert_eq!(f.after.load(Ordering::SeqCst), 1);
    let k = kinds(&f.rt.journal(&run.id, None, None).await.unwrap());
    assert!(k.contains(&"wait.resumed".to_owned()), "{k:?}");
    assert_eq!(k.last().map(String::as_str), Some("run.completed"));

    let twice =
        f.rt.answer_wait("acme", &ticket.token, json!({"answer": "again"}))
            .await;
    assert_eq!(twice, Err(WaitError::AlreadyAnswered));
    assert_eq!(twice.unwrap_err().code(), "wait-already-answered");
    cleanup(f.db).await;
}

#[tokio::test]
async fn a_pausing_call_parks_the_run_and_its_answer_resumes_it_memory() {
    parks_and_resumes(Backend::Memory).await;
}

#[tokio::test]
async fn a_pause_longer_than_24_days_fails_the_call() {
    let f = fixture(Backend::Memory, Some(24 * 86_400_000 + 1)).await;
    let run =
        f.rt.start_run("acme.ask", None, json!({}), waited())
            .await
            .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    let msg = run.failure_message.unwrap();
    assert!(
        msg.starts_with(
            "pause-timeout-too-long: tool \"acme.ask-human\" asked to wait 2073600001 ms"
        ),
        "{msg}"
    );
    let token = f.tickets.lock().unwrap()[0].token.clone();
    assert_eq!(
        f.rt.answer_wait("acme", &token, json!({"answer": "x"}))
            .await,
        Err(WaitError::NotFound),
        "a refused pause's link answers nothing"
    );
}

#[tokio::test]
async fn a_shorter_pause_is_the_journaled_timeout() {
    let f = fixture(Backend::Memory, Some(60_000)).await;
    let run =
        f.rt.start_run("acme.ask", None, json!({}), waited())
            .await
            .unwrap();
    assert_eq!(run.status, RunStatus::Suspended);
    let j = f.rt.journal(&run.id, None, None).await.unwrap();
    let suspended = j
        .iter()
        .find(|e| e.kind.as_str() == "wait.suspended")
        .unwrap();
    assert_eq!(suspended.payload.as_ref().unwrap()["timeoutMs"], 60_000);
}

#[tokio::test]
async fn a_pausing_call_parks_the_run_and_its_answer_resumes_it_sqlite() {
    parks_and_resumes(Backend::Sqlite).await;
}

#[tokio::test]
async fn a_pausing_call_parks_the_run_and_its_answer_resumes_it_postgres() {
    parks_and_resumes(Backend::Postgres).await;
}

#[tokio::test]
async fn an_unanswered_pause_times_out_and_the_call_fails() {
    let f = fixture(Backend::Memory, Some(1)).await;
    let run =
        f.rt.start_run("acme.ask", None, json!({}), waited())
            .await
            .unwrap();
    assert_eq!(run.status, RunStatus::Suspended);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(f.rt.expire_due_waits().await.unwrap(), 1);
    let after = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(after.status, RunStatus::Failed);
    assert_eq!(
        after.failure_message.as_deref(),
        Some("tool-pause-timeout: tool \"acme.ask-human\" got no answer within 1 ms")
    );
    assert_eq!(f.after.load(Ordering::SeqCst), 0);
    let token = f.tickets.lock().unwrap()[0].token.clone();
    let late =
        f.rt.answer_wait("acme", &token, json!({"answer": "late"}))
            .await
            .unwrap_err();
    assert!(matches!(late, WaitError::Expired { .. }), "{late:?}");
    assert_eq!(late.code(), "wait-expired");
}

#[tokio::test]
async fn a_late_answer_before_the_sweep_is_refused_as_expired() {
    let f = fixture(Backend::Memory, Some(1)).await;
    let run =
        f.rt.start_run("acme.ask", None, json!({}), waited())
            .await
            .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let token = f.tickets.lock().unwrap()[0].token.clone();
    let late =
        f.rt.answer_wait("acme", &token, json!({"answer": "late"}))
            .await;
    assert!(matches!(late, Err(WaitError::Expired { .. })), "{late:?}");
    assert_eq!(
        f.rt.get_run(&run.id).await.unwrap().status,
        RunStatus::Suspended,
        "the sweeper, not the late answer, ends the wait"
    );
}

#[tokio::test]
async fn deadlines_survive_a_restart() {
    // The first runtime parks the run and goes away; the second one's sweeper (started by
    // recover) reads the deadline from the database and times the wait out.
    let f = fixture(Backend::Sqlite, Some(200)).await;
    let run =
        f.rt.start_run("acme.ask", None, json!({}), waited())
            .await
            .unwrap();
    assert_eq!(run.status, RunStatus::Suspended);
    let db = f.db.as_ref().unwrap().db.clone();
    f.rt.shutdown(std::time::Duration::from_secs(5)).await;
    let second = Runtime::with_database(db).build();
    for id in f.rt.tools().ids() {
        second.tools().insert(f.rt.tools().get(&id).unwrap());
    }
    second.flows().insert_json(&flow().to_string()).unwrap();
    second.recover().await.unwrap();
    let mut status = RunStatus::Suspended;
    for _ in 0..200 {
        status = second.get_run(&run.id).await.unwrap().status;
        if status.is_terminal() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status, RunStatus::Failed);
    let after = second.get_run(&run.id).await.unwrap();
    assert!(
        after
            .failure_message
            .unwrap()
            .starts_with("tool-pause-timeout: tool \"acme.ask-human\""),
    );
    cleanup(f.db).await;
}

#[tokio::test]
async fn a_waiting_child_run_parks_its_parent_and_one_answer_finishes_both() {
    let f = fixture(Backend::Memory, None).await;
    let parent = json!({
        "id": "acme.outer", "version": "1.0.0",
        "nodes": [{"id": "sub", "kind": "subgraph", "flowRef": {"flowId": "acme.ask", "version": "1.0.0"},
                   "inputMapping": {"q": {"path": "runInput.q"}}, "outputSchema": {"type": "object"},
                   "convergence": "success-only"}],
        "edges": [{"id": "e1", "from": "$start", "to": "sub"}, {"id": "e2", "from": "sub", "to": "$end"}]
    });
    f.rt.flows().insert_json(&parent.to_string()).unwrap();
    let run =
        f.rt.start_run("acme.outer", None, json!({"q": "ok?"}), waited())
            .await
            .unwrap();
    assert_eq!(run.status, RunStatus::Suspended, "{run:?}");
    let j = f.rt.journal(&run.id, None, None).await.unwrap();
    let suspended = j
        .iter()
        .find(|e| e.kind.as_str() == "wait.suspended")
        .unwrap();
    let token = suspended.payload.as_ref().unwrap()["tokenId"]
        .as_str()
        .unwrap();
    assert!(token.starts_with("child:"), "{token}");
    let waiting = f.rt.waiting_for(&run).await.unwrap().unwrap();
    assert_eq!(waiting.other[0]["what"], "child-run");
    assert_eq!(waiting.other[0]["childStatus"], "suspended");

    let ticket = f.tickets.lock().unwrap()[0].clone();
    let answered =
        f.rt.answer_wait("acme", &ticket.token, json!({"answer": "yes"}))
            .await
            .unwrap();
    assert_eq!(answered.run_status, RunStatus::Completed, "the child");
    let outer = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(outer.status, RunStatus::Completed, "{outer:?}");
    assert_eq!(outer.output, Some(json!({"got": {"answer": "yes"}})));
    let k = kinds(&f.rt.journal(&run.id, None, None).await.unwrap());
    assert!(k.contains(&"wait.resumed sub".to_owned()), "{k:?}");
    assert_eq!(f.tickets.lock().unwrap().len(), 1);
}
