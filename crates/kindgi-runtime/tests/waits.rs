//! Waits, on the memory store: a flow step calling a pausing tool parks its run
//! (`suspended`, `wait.suspended`, no `step.failed`) until the other system answers on the
//! call's link; answering late is refused; a tool asking to wait longer than 24 days fails
//! the call; an unanswered pause times out; a waiting child run parks its parent. Parking and
//! resuming on every store and deadlines surviving a restart are kindgi-host's
//! `tests/waits.rs` (same fixture).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/waits.rs"]
mod fixture;
mod support;

use fixture::{fixture, kinds, waited};
use kindgi_runtime::{RunStatus, Runtime, WaitError};
use serde_json::json;
use std::sync::atomic::Ordering;

#[tokio::test]
async fn a_pause_longer_than_24_days_fails_the_call() {
    let f = fixture(Runtime::in_memory(), Some(24 * 86_400_000 + 1)).await;
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
    let f = fixture(Runtime::in_memory(), Some(60_000)).await;
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
async fn an_unanswered_pause_times_out_and_the_call_fails() {
    let f = fixture(Runtime::in_memory(), Some(1)).await;
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
    let f = fixture(Runtime::in_memory(), Some(1)).await;
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
async fn a_waiting_child_run_parks_its_parent_and_one_answer_finishes_both() {
    let f = fixture(Runtime::in_memory(), None).await;
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
