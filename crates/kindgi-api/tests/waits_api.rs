//! Answering a pausing tool's call over a loopback socket, on SQLite and PostgreSQL: the
//! link it hands out (`POST /v1/waits/{token}`) and `POST /v1/runs/{id}/resume` (our
//! extensions, docs/approvals.md). The answer is checked against the tool's output schema;
//! unknown, malformed, another tenant's or another run's tokens, a second answer, a bad
//! body are refused with their documented status and change nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_store::DatabaseKind;
use serde_json::{Value, json};
use support::gated::server;

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_default()
}

async fn a_pause_is_answered_on_its_link(kind: DatabaseKind) {
    let s = server(kind).await;
    let (run, ticket) = s.paused_run().await;
    assert!(
        ticket
            .link
            .ends_with(&format!("/v1/waits/{}", ticket.token))
    );
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    let other = &got["waitingFor"]["other"][0];
    assert_eq!(other["what"], "tool-pause", "{got}");
    assert_eq!(got["waitingFor"]["approvals"], json!([]));
    // The run names its wait by the token's id, never the token.
    assert!(!got.to_string().contains(&ticket.token));
    let path = format!("/v1/waits/{}", ticket.token);

    // Refused, and the run keeps waiting.
    let fake = format!("kgw_{}", "A".repeat(43));
    for (key, p, body, want) in [
        (
            &s.admin,
            format!("/v1/waits/{fake}"),
            json!({"value": {"answer": "x"}}),
            (404, "wait-not-found"),
        ),
        (
            &s.admin,
            "/v1/waits/nope".to_owned(),
            json!({"value": {"answer": "x"}}),
            (404, "wait-not-found"),
        ),
        (
            &s.other,
            path.clone(),
            json!({"value": {"answer": "x"}}),
            (404, "wait-not-found"),
        ),
        (&s.admin, path.clone(), json!({}), (400, "bad-input")),
        (
            &s.admin,
            path.clone(),
            json!({"value": {"answer": 5}}),
            (400, "wait-answer-invalid"),
        ),
    ] {
        let (status, e) = s.call(key, "POST", &p, Some(body)).await;
        assert_eq!((status, code(&e)), want, "{p}: {e}");
        if want.1 == "wait-answer-invalid" {
            assert!(
                !e["error"]["details"]["issues"]
                    .as_array()
                    .unwrap()
                    .is_empty(),
                "{e}"
            );
        }
        assert!(!e.to_string().contains(&ticket.token), "{e}");
    }
    // A wrong method is an unknown route, whose message does not repeat the token.
    let (status, e) = s.get(&path).await;
    assert_eq!((status, code(&e)), (404, "route-not-found"), "{e}");
    assert!(!e.to_string().contains(&ticket.token), "{e}");
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    assert_eq!(got["status"], "suspended");

    // Answered: the run goes on with the answer as the call's result. Under an
    // Idempotency-Key the retry is the stored answer (kept under the token's id, not the
    // token: routes::waits::path_without_token).
    let answer = || {
        s.http
            .post(format!("{}{path}", s.url))
            .bearer_auth(&s.admin)
            .header("idempotency-key", "answer-1")
            .json(&json!({"value": {"answer": "yes"}}))
            .send()
    };
    let first = answer().await.unwrap();
    assert_eq!(first.status(), 200);
    let done: Value = first.json().await.unwrap();
    assert_eq!(done, json!({"runId": run, "runStatus": "completed"}));
    let again = answer().await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(
        again
            .headers()
            .get("x-idempotent-replay")
            .and_then(|v| v.to_str().ok()),
        Some("true")
    );
    assert_eq!(again.json::<Value>().await.unwrap(), done);
    let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
    assert_eq!(got["output"], json!({"answer": "yes"}), "{got}");

    // Once only.
    let (status, e) = s.post(&path, json!({"value": {"answer": "again"}})).await;
    assert_eq!(status, 409, "{e}");
    assert!(
        ["wait-already-answered", "run-already-terminal"].contains(&code(&e)),
        "{e}"
    );
}

async fn resume_answers_the_runs_own_pause(kind: DatabaseKind) {
    let s = server(kind).await;
    let (first, first_ticket) = s.paused_run().await;
    let (second, second_ticket) = s.paused_run().await;
    let resume = |run: &str| format!("/v1/runs/{run}/resume");

    // Bad bodies, and a token of another run.
    for (body, want) in [
        (json!({}), (400, "bad-input")),
        (json!({"waitpointId": ""}), (400, "bad-input")),
        (
            json!({"waitpointId": "child:x:1", "value": 1}),
            (400, "bad-input"),
        ),
        (
            json!({"waitpointId": second_ticket.token, "value": {"answer": "x"}}),
            (404, "wait-not-found"),
        ),
        (
            json!({"waitpointId": "kgw_nope", "value": {"answer": "x"}}),
            (404, "wait-not-found"),
        ),
        (
            json!({"waitpointId": first_ticket.token}),
            (400, "bad-input"),
        ),
        (
            json!({"waitpointId": first_ticket.token, "value": {"answer": 1}}),
            (400, "wait-answer-invalid"),
        ),
    ] {
        let (status, e) = s.post(&resume(&first), body.clone()).await;
        assert_eq!((status, code(&e)), want, "{body}: {e}");
    }
    // Another tenant's run is not found.
    let (status, e) = s
        .call(
            &s.other,
            "POST",
            &resume(&first),
            Some(json!({"waitpointId": first_ticket.token, "value": {"answer": "x"}})),
        )
        .await;
    assert_eq!((status, code(&e)), (404, "run-not-found"), "{e}");
    for run in [&first, &second] {
        let (_, got) = s.get(&format!("/v1/runs/{run}")).await;
        assert_eq!(got["status"], "suspended");
    }

    // The run's own token: answered, the re-read run is the answer.
    let (status, got) = s
        .post(
            &resume(&first),
            json!({"waitpointId": first_ticket.token, "value": {"answer": "yes"}}),
        )
        .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["id"], first.as_str());
    assert_eq!(got["status"], "completed");
    assert_eq!(got["output"], json!({"answer": "yes"}));
    let (status, e) = s
        .post(
            &resume(&first),
            json!({"waitpointId": first_ticket.token, "value": {"answer": "yes"}}),
        )
        .await;
    assert_eq!((status, code(&e)), (409, "run-already-terminal"), "{e}");
    let (_, still) = s.get(&format!("/v1/runs/{second}")).await;
    assert_eq!(still["status"], "suspended");
}

/// A late answer is `410 wait-expired`, before the sweep and after it; the call fails.
async fn a_late_answer_is_gone(kind: DatabaseKind) {
    let s = server(kind).await;
    let (run, ticket) = s.paused_run_of(support::gated::QUICK_PAUSE_FLOW).await;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let path = format!("/v1/waits/{}", ticket.token);
    let (status, e) = s.post(&path, json!({"value": {"answer": "late"}})).await;
    assert_eq!((status, code(&e)), (410, "wait-expired"), "{e}");
    let got = s.expire(&run).await;
    assert_eq!(got["status"], "failed", "{got}");
    assert!(
        got["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("tool-pause-timeout"),
        "{got}"
    );
    let (status, e) = s.post(&path, json!({"value": {"answer": "late"}})).await;
    assert_eq!((status, code(&e)), (410, "wait-expired"), "{e}");
}

both_stores!(
    a_pause_is_answered_on_its_link,
    resume_answers_the_runs_own_pause,
    a_late_answer_is_gone
);
