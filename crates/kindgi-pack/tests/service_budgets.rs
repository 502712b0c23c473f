//! The service's budgets, in process over real loopback HTTP: CPU-heavy validation runs off
//! the async workers under the call's one deadline, a concurrency slot is taken only once
//! the body is in, a body whose parsed form would be huge is refused before parsing, and
//! `content-type` must be the JSON media type.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod service_common;

use kindgi_pack::sdk::Pack;
use serde_json::{Value, json};
use service_common::{Svc, TOKEN, call, handler, index_file, tool};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A pack whose one tool's input pattern needs the backtracking engine (a back-reference)
/// and backtracks exponentially on `a…a!` (20 `a`: seconds in a debug build).
fn regex_pack() -> Pack {
    let input =
        json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+\\1$"}}});
    Pack::new("test", "1.0.0").tool(
        "t/regex.rs",
        tool(
            "test.regex",
            "1.0.0",
            input,
            json!({"type": "object"}),
            handler(|_, _| async move { Ok(json!({})) }),
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_validation_answers_at_the_deadline_and_health_stays_up() {
    let pack = regex_pack();
    let file = index_file(&pack, |_| {});
    let svc = Svc::start_with(pack, file, |_| {}).await;
    let body = call("test.regex", json!({"s": format!("{}!", "a".repeat(20))})).to_string();
    // As many slow calls as the runtime has workers: on the workers, they would stall it.
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let req = svc
                .http
                .post(format!("{}/v1/invoke", svc.base))
                .header("kindgi-pack-token", TOKEN)
                .header("content-type", "application/json")
                .header("kindgi-timeout-ms", "500")
                .body(body.clone());
            tokio::spawn(async move {
                let started = Instant::now();
                let res = req.send().await.unwrap();
                let status = res.status();
                let answer: Value = res.json().await.unwrap();
                (status, answer, started.elapsed())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let asked = Instant::now();
    let health = svc
        .http
        .get(format!("{}/healthz", svc.base))
        .send()
        .await
        .unwrap();
    let health_took = asked.elapsed();
    assert_eq!(health.status(), 200);
    assert!(
        health_took < Duration::from_millis(1500),
        "/healthz took {health_took:?} while validations ran"
    );
    for c in calls {
        let (status, answer, took) = c.await.unwrap();
        assert_eq!(status, 200);
        // A backtracking budget in the schema engine may end the validation first; either
        // way the call is answered about its deadline, not seconds later.
        assert!(
            answer["code"] == "deadline-exceeded" || answer["code"] == "input-validation-failed",
            "{answer}"
        );
        if answer["code"] == "deadline-exceeded" {
            assert_eq!(answer["message"], "test.regex passed its deadline");
            assert_eq!(answer["toolId"], "test.regex");
        }
        assert!(took < Duration::from_secs(2), "answered after {took:?}");
    }
}

/// Headers of an echo call whose body never comes.
fn headers_only() -> String {
    format!(
        "POST /v1/invoke HTTP/1.1\r\nhost: x\r\nkindgi-pack-token: {TOKEN}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_that_send_no_body_hold_no_slot() {
    let pack = service_common::pack(false);
    let file = index_file(&pack, |_| {});
    let svc = Svc::start_with(pack, file, |o| o.max_concurrency = 4).await;
    let mut silent = Vec::new();
    for _ in 0..4 {
        let mut s = TcpStream::connect(("127.0.0.1", svc.port)).await.unwrap();
        s.write_all(headers_only().as_bytes()).await.unwrap();
        silent.push(s);
    }
    // Let the service read every header block (and reach its body wait).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let res = tokio::time::timeout(
        Duration::from_secs(10),
        svc.invoke_with(&call("test.echo", json!({"message": "hi"})), &[]),
    )
    .await
    .expect("answered well before the body timeout");
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.unwrap();
    assert_eq!(answer["output"], json!({"message": "hi"}), "{answer}");
    drop(silent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_service_still_refuses_before_reading_the_body() {
    let svc = Svc::start_with(
        service_common::pack(false),
        index_file(&service_common::pack(false), |_| {}),
        |o| o.max_concurrency = 1,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("go");
    let held = {
        let (http, base) = (svc.http.clone(), svc.base.clone());
        let body = call("test.hold", json!({"release": release.to_str().unwrap()})).to_string();
        tokio::spawn(async move {
            http.post(format!("{base}/v1/invoke"))
                .header("kindgi-pack-token", TOKEN)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    };
    while svc.running.as_ref().unwrap().in_flight() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let res = svc
        .invoke_with(&call("test.echo", json!({"message": "hi"})), &[])
        .await;
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "1");
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"error": "overloaded"})
    );
    std::fs::write(&release, b"").unwrap();
    assert_eq!(held.await.unwrap()["kind"], "result");
}

/// An echo call with exactly this `content-type`.
async fn echo_as(svc: &Svc, content_type: &str) -> reqwest::Response {
    svc.http
        .post(format!("{}/v1/invoke", svc.base))
        .header("kindgi-pack-token", TOKEN)
        .header("content-type", content_type)
        .body(call("test.echo", json!({"message": "hi"})).to_string())
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_type_must_be_the_json_media_type() {
    let svc = Svc::start().await;
    for ct in [
        "application/jsonx",
        "application/json-seq",
        "text/plain; x=application/json",
        "text/plain, application/json",
        "xapplication/json",
    ] {
        let res = echo_as(&svc, ct).await;
        assert_eq!(res.status(), 415, "{ct}");
        assert_eq!(
            res.json::<Value>().await.unwrap(),
            json!({"error": "Content-Type must be application/json"})
        );
    }
    for ct in [
        "application/json",
        "application/json; charset=utf-8",
        "application/json ;charset=UTF-8",
    ] {
        let res = echo_as(&svc, ct).await;
        assert_eq!(res.status(), 200, "{ct}");
        assert_eq!(res.json::<Value>().await.unwrap()["kind"], "result", "{ct}");
    }
}

/// `[1,1,1,…]` of about `bytes` bytes.
fn dense_numbers(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 2);
    s.push_str("[1");
    while s.len() + 3 < bytes {
        s.push_str(",1");
    }
    s.push(']');
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_too_large_once_parsed_is_refused_before_parsing() {
    let svc = Svc::start().await;
    let input = dense_numbers(9 * 1024 * 1024);
    let body = format!(
        r#"{{"v":2,"kind":"invoke","tool":{{"id":"test.echo"}},"ctx":{{"tenantId":"t","runId":"r"}},"input":{input}}}"#
    );
    let res = svc
        .http
        .post(format!("{}/v1/invoke", svc.base))
        .header("kindgi-pack-token", TOKEN)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let answer: Value = res.json().await.unwrap();
    assert_eq!(answer["code"], "malformed-message", "{answer}");
    let message = answer["message"].as_str().unwrap();
    assert!(
        message.starts_with("Request body is too large once parsed")
            && message.contains("at most 80 MiB"),
        "{message}"
    );
    // A large body of few values is fine.
    let big = "x".repeat(9 * 1024 * 1024);
    let res = svc
        .invoke_with(&call("test.echo", json!({"message": big})), &[])
        .await;
    let answer: Value = res.json().await.unwrap();
    assert_eq!(answer["kind"], "result");
    assert_eq!(
        answer["output"]["message"].as_str().unwrap().len(),
        big.len()
    );
}
