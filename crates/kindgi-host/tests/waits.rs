//! Waits on every store (memory, SQLite, PostgreSQL): a flow step calling a pausing tool
//! parks its run until the other system answers on the call's link; the answer (checked
//! against the tool's output schema) is the call's result and the run goes on; answering
//! twice, for another tenant, with a malformed token or an invalid value is refused and
//! changes nothing; and a pause's deadline survives a restart (SQLite). The other wait
//! tests are kindgi-runtime's `tests/waits.rs` (memory store, same fixture); these are here
//! because the database runtimes are the host's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-runtime/tests/support/waits.rs"]
mod fixture;
mod support;

use fixture::{fixture, flow, kinds, waited};
use kindgi_runtime::{RunStatus, WaitError};
use serde_json::json;
use std::sync::atomic::Ordering;
use support::{Backend, builder, cleanup};

async fn parks_and_resumes(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b, None).await;
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
    cleanup(db).await;
}

#[tokio::test]
async fn a_pausing_call_parks_the_run_and_its_answer_resumes_it_memory() {
    parks_and_resumes(Backend::Memory).await;
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
async fn deadlines_survive_a_restart() {
    // The first runtime parks the run and goes away; the second one's sweeper (started by
    // recover) reads the deadline from the database and times the wait out.
    let (b, test_db) = builder(Backend::Sqlite).await;
    let f = fixture(b, Some(200)).await;
    let run =
        f.rt.start_run("acme.ask", None, json!({}), waited())
            .await
            .unwrap();
    assert_eq!(run.status, RunStatus::Suspended);
    let db = test_db.as_ref().unwrap().db.clone();
    f.rt.shutdown(std::time::Duration::from_secs(5)).await;
    let second = kindgi_runtime::Runtime::over(db.ports()).build();
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
    cleanup(test_db).await;
}
