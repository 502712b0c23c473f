//! The pack client against real loopback HTTP servers that misbehave on purpose: 503s with
//! Retry-After, a dropped connection after the request was read, a 502, a server that never
//! answers. Each server is a small HTTP/1.1 responder on 127.0.0.1:0 that records what it got.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kindgi_pack_client::client::{CallOptions, PackCallError, PackClient, PackClientConfig};
use kindgi_spec::pack_protocol::{CallContext, ErrorCode, Response, ToolInvoke, ToolRef};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone)]
enum Action {
    Respond(u16, Vec<(&'static str, &'static str)>, String),
    /// Read the request, then close the connection without a byte.
    Drop,
    /// Read the request and never answer.
    Hang,
}

#[derive(Debug, Clone)]
struct Seen {
    head: String,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim().eq_ignore_ascii_case(name)).then(|| v.trim().to_owned())
        })
    }
}

struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// TCP connections accepted.
    accepted: Arc<std::sync::atomic::AtomicUsize>,
}

/// Answers the n-th request (0-based, across connections) with `script(n)`.
async fn server(script: impl Fn(usize) -> Action + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let script = Arc::new(script);
    let record = seen.clone();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let script = script.clone();
            let record = record.clone();
            tokio::spawn(async move { serve(stream, &*script, &record).await });
        }
    });
    Server {
        url,
        seen,
        accepted,
    }
}

async fn serve(
    mut stream: TcpStream,
    script: &(dyn Fn(usize) -> Action + Send + Sync),
    seen: &Mutex<Vec<Seen>>,
) {
    let mut buf = Vec::new();
    loop {
        // Read one request: the head, then content-length bytes.
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let len: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap())
            })
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
        buf.drain(..head_end + len);
        let n = {
            let mut seen = seen.lock().unwrap();
            seen.push(Seen { head, body });
            seen.len() - 1
        };
        match script(n) {
            Action::Respond(status, headers, body) => {
                let mut out = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", body.len());
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                out.push_str(&body);
                if stream.write_all(out.as_bytes()).await.is_err() {
                    return;
                }
            }
            Action::Drop => return,
            Action::Hang => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                return;
            }
        }
    }
}

fn ok_result() -> Action {
    Action::Respond(
        200,
        vec![
            ("content-type", "application/json; charset=utf-8"),
            ("kindgi-duration-ms", "3"),
            ("kindgi-artifact-version", "20261001.7"),
        ],
        r#"{"v":2,"kind":"result","output":{"message":"hi"}}"#.to_owned(),
    )
}

fn overloaded(retry_after: &'static str) -> Action {
    Action::Respond(
        503,
        vec![("retry-after", retry_after)],
        r#"{"error":"overloaded"}"#.to_owned(),
    )
}

fn echo() -> ToolInvoke {
    let mut ctx = CallContext::new("t-1", "run-1");
    ctx.request_id = Some("call-9".to_owned());
    ToolInvoke::new(
        ToolRef {
            id: "conformance.echo".into(),
            version: None,
            extra: Default::default(),
        },
        json!({"message": "hi"}),
        ctx,
    )
}

fn client(url: &str) -> PackClient {
    PackClient::new(PackClientConfig::new(
        url,
        "tok-abcdefghijklmnopqrstuvwxyz012345",
    ))
    .unwrap()
}

#[tokio::test]
async fn a_result_carries_headers_ids_deadline_and_traceparent() {
    let s = server(|_| ok_result()).await;
    let options = CallOptions {
        timeout: Some(Duration::from_millis(2500)),
        ..Default::default()
    };
    let answer = client(&s.url).invoke_tool(&echo(), &options).await.unwrap();
    match &answer.response {
        Response::Result(r) => assert_eq!(r.output, json!({"message": "hi"})),
        other => panic!("expected a result, got {other:?}"),
    }
    assert_eq!(answer.duration_ms, Some(3));
    assert_eq!(answer.artifact_version.as_deref(), Some("20261001.7"));
    assert_eq!(answer.attempts, 1);
    let seen = s.seen.lock().unwrap()[0].clone();
    assert!(
        seen.head.starts_with("POST /v1/invoke HTTP/1.1"),
        "{}",
        seen.head
    );
    assert_eq!(
        seen.header("kindgi-pack-token").as_deref(),
        Some("tok-abcdefghijklmnopqrstuvwxyz012345")
    );
    assert_eq!(
        seen.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(seen.header("kindgi-run-id").as_deref(), Some("run-1"));
    assert_eq!(seen.header("kindgi-request-id").as_deref(), Some("call-9"));
    assert_eq!(seen.header("kindgi-protocol").as_deref(), Some("2"));
    let timeout: u64 = seen.header("kindgi-timeout-ms").unwrap().parse().unwrap();
    assert!(
        timeout > 2000 && timeout <= 2500,
        "kindgi-timeout-ms {timeout}"
    );
    let tp = seen.header("traceparent").unwrap();
    assert!(tp.starts_with("00-") && tp.len() == 55, "{tp}");
    let body: serde_json::Value = serde_json::from_str(&seen.body).unwrap();
    assert_eq!(body["kind"], "invoke");
    assert_eq!(body["ctx"]["runId"], "run-1");
}

#[tokio::test]
async fn an_error_message_is_an_answer_not_a_transport_failure() {
    let s = server(|_| {
        Action::Respond(
            200,
            vec![],
            r#"{"v":2,"kind":"error","code":"handler-throw","message":"Handler for tool \"x\" threw: Error: boom","toolId":"x","cause":{"name":"Error","message":"boom","stack":""}}"#.to_owned(),
        )
    })
    .await;
    let answer = client(&s.url)
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap();
    match answer.response {
        Response::Error(e) => {
            assert_eq!(e.code, ErrorCode::HandlerThrow);
            assert_eq!(e.tool_id.as_deref(), Some("x"));
        }
        other => panic!("expected an error message, got {other:?}"),
    }
    assert_eq!(
        s.seen.lock().unwrap().len(),
        1,
        "an error message is never retried"
    );
}

#[tokio::test]
async fn a_503_is_retried_after_its_retry_after_then_succeeds() {
    let s = server(|n| if n < 2 { overloaded("1") } else { ok_result() }).await;
    let started = Instant::now();
    let answer = client(&s.url)
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap();
    let waited = started.elapsed();
    assert!(matches!(answer.response, Response::Result(_)));
    assert_eq!(answer.attempts, 3);
    assert_eq!(s.seen.lock().unwrap().len(), 3);
    // Two Retry-After: 1 waits happened before the third attempt.
    assert!(
        waited >= Duration::from_millis(1900),
        "retried too early: {waited:?}"
    );
    // Every attempt sent the same message and a shrinking deadline.
    let seen = s.seen.lock().unwrap().clone();
    assert!(seen.iter().all(|r| r.body == seen[0].body));
    let t0: u64 = seen[0]
        .header("kindgi-timeout-ms")
        .unwrap()
        .parse()
        .unwrap();
    let t2: u64 = seen[2]
        .header("kindgi-timeout-ms")
        .unwrap()
        .parse()
        .unwrap();
    assert!(t2 < t0, "{t2} !< {t0}");
}

#[tokio::test]
async fn retries_are_bounded_and_the_error_says_the_call_did_not_run() {
    let s = server(|_| overloaded("0")).await;
    let mut config = PackClientConfig::new(&s.url, "tok");
    config.max_retries = 2;
    let err = PackClient::new(config)
        .unwrap()
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    match &err {
        PackCallError::Unavailable {
            attempts, reason, ..
        } => {
            assert_eq!(*attempts, 3);
            assert_eq!(reason, "overloaded");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(!err.may_have_run());
    assert_eq!(s.seen.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_503_is_not_retried_past_the_deadline() {
    let s = server(|_| overloaded("1")).await;
    let options = CallOptions {
        timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let err = client(&s.url)
        .invoke_tool(&echo(), &options)
        .await
        .unwrap_err();
    assert!(
        matches!(err, PackCallError::Unavailable { attempts: 1, .. }),
        "{err:?}"
    );
    assert_eq!(s.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn missing_env_503_reports_the_names() {
    let s = server(|_| {
        Action::Respond(
            503,
            vec![("retry-after", "0")],
            r#"{"error":"missing env","missingEnv":["A","B"]}"#.to_owned(),
        )
    })
    .await;
    let mut config = PackClientConfig::new(&s.url, "tok");
    config.max_retries = 0;
    let err = PackClient::new(config)
        .unwrap()
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    match err {
        PackCallError::Unavailable { missing_env, .. } => {
            assert_eq!(missing_env, Some(vec!["A".into(), "B".into()]))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_connection_dropped_after_sending_is_not_retried_and_may_have_run() {
    let s = server(|_| Action::Drop).await;
    let err = client(&s.url)
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, PackCallError::Interrupted { .. }), "{err:?}");
    assert!(err.may_have_run());
    assert_eq!(
        s.seen.lock().unwrap().len(),
        1,
        "a call that may have run is never retried"
    );
}

#[tokio::test]
async fn a_502_is_not_retried_and_may_have_run() {
    let s =
        server(|_| Action::Respond(502, vec![], r#"{"error":"pack service failed"}"#.to_owned()))
            .await;
    let err = client(&s.url)
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, PackCallError::ServerFailed { status: 502, .. }),
        "{err:?}"
    );
    assert!(err.may_have_run());
    assert_eq!(s.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_silent_service_times_out_after_deadline_and_grace_without_retry() {
    let s = server(|_| Action::Hang).await;
    let mut config = PackClientConfig::new(&s.url, "tok");
    config.answer_grace = Duration::from_millis(200);
    let options = CallOptions {
        timeout: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let started = Instant::now();
    let err = PackClient::new(config)
        .unwrap()
        .invoke_tool(&echo(), &options)
        .await
        .unwrap_err();
    assert!(matches!(err, PackCallError::Timeout { .. }), "{err:?}");
    assert!(err.may_have_run());
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(s.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_did_not_run() {
    // Bind, learn the port, close: nothing listens there now.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let err = client(&url)
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, PackCallError::Connect { .. }), "{err:?}");
    assert!(!err.may_have_run());
}

#[tokio::test]
async fn a_401_is_a_refusal_that_did_not_run() {
    let s =
        server(|_| Action::Respond(401, vec![], r#"{"error":"Bad pack token"}"#.to_owned())).await;
    let err = client(&s.url)
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    match &err {
        PackCallError::Refused { status, error, .. } => {
            assert_eq!(*status, 401);
            assert_eq!(error, "Bad pack token");
        }
        other => panic!("{other:?}"),
    }
    assert!(!err.may_have_run());
}

#[tokio::test]
async fn a_200_that_is_not_a_response_message_is_a_bad_response() {
    let s = server(|_| Action::Respond(200, vec![], r#"{"v":2,"kind":"invoke"}"#.to_owned())).await;
    let err = client(&s.url)
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, PackCallError::BadResponse { .. }), "{err:?}");
    assert!(err.may_have_run());
}

#[tokio::test]
async fn connections_are_pooled_across_calls() {
    let s = server(|_| ok_result()).await;
    let c = client(&s.url);
    for _ in 0..5 {
        c.invoke_tool(&echo(), &CallOptions::default())
            .await
            .unwrap();
    }
    assert_eq!(s.seen.lock().unwrap().len(), 5);
    assert_eq!(
        s.accepted.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "five sequential calls should reuse one pooled keep-alive connection"
    );
}

#[tokio::test]
async fn a_deadline_too_far_for_the_clock_is_no_deadline_not_a_panic() {
    // `Instant::now() + Duration::MAX` used to panic, and the millis were truncated.
    let s = server(|_| ok_result()).await;
    let options = CallOptions {
        timeout: Some(Duration::MAX),
        ..CallOptions::default()
    };
    let answer = client(&s.url).invoke_tool(&echo(), &options).await.unwrap();
    assert_eq!(answer.attempts, 1);
    let sent = s.seen.lock().unwrap()[0]
        .header("kindgi-timeout-ms")
        .unwrap();
    let sent: u64 = sent.parse().unwrap();
    assert!(sent > 1_000_000_000_000, "{sent}");
}

#[tokio::test]
async fn an_answer_over_the_size_limit_is_refused_and_may_have_run() {
    let big = format!(
        r#"{{"v":2,"kind":"result","output":{{"blob":"{}"}}}}"#,
        "x".repeat(4096)
    );
    let s = server(move |_| Action::Respond(200, vec![], big.clone())).await;
    let mut config = PackClientConfig::new(&s.url, "tok-abcdefghijklmnopqrstuvwxyz012345");
    config.max_response_bytes = 1024;
    let err = PackClient::new(config)
        .unwrap()
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    match &err {
        PackCallError::TooLarge { limit, .. } => assert_eq!(*limit, 1024),
        other => panic!("{other:?}"),
    }
    assert!(err.may_have_run());
    assert!(err.to_string().contains("1024 byte limit"), "{err}");

    // Within the limit the same answer is read.
    let big = format!(
        r#"{{"v":2,"kind":"result","output":{{"blob":"{}"}}}}"#,
        "x".repeat(100)
    );
    let s = server(move |_| Action::Respond(200, vec![], big.clone())).await;
    let mut config = PackClientConfig::new(&s.url, "tok-abcdefghijklmnopqrstuvwxyz012345");
    config.max_response_bytes = 1024;
    let answer = PackClient::new(config)
        .unwrap()
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap();
    assert!(matches!(answer.response, Response::Result(_)), "{answer:?}");
}

#[tokio::test]
async fn a_huge_error_body_is_cut_and_still_classified() {
    let body = format!(r#"{{"error":"Bad pack token"}}{}"#, " ".repeat(200_000));
    let s = server(move |_| Action::Respond(401, vec![], body.clone())).await;
    let err = client(&s.url)
        .invoke_tool(&echo(), &CallOptions::default())
        .await
        .unwrap_err();
    match &err {
        // Only a 64 KiB prefix is read; the object and some padding fit in it.
        PackCallError::Refused { status, error, .. } => {
            assert_eq!(*status, 401);
            assert_eq!(error, "Bad pack token");
        }
        other => panic!("{other:?}"),
    }
}

/// Issue 19, finding 10: a service at its concurrency cap (the official services answer
/// `503 {"error":"overloaded"}` + `Retry-After` past 32 calls in flight) turns a mutating
/// tool's call away five times, then runs it. Through the pack dispatch the runtime uses,
/// the call succeeds, and the service ran it once (every other attempt was a 503, which
/// provably did not run). Before the fix the client gave up after 4 attempts.
#[tokio::test]
async fn a_mutating_call_turned_away_by_503s_is_retried_until_it_runs_once() {
    use kindgi_pack_client::dispatch::{PackServiceCaller, ServiceSlot};
    use kindgi_tools::dispatch::PackCaller as _;
    let s = server(|n| if n < 5 { overloaded("0") } else { ok_result() }).await;
    let slot = ServiceSlot::remote(&s.url, "tok-abcdefghijklmnopqrstuvwxyz012345", |c| {
        c.retry_backoff = Duration::from_millis(20);
    })
    .unwrap();
    let caller = PackServiceCaller::new(slot);
    let manifest: kindgi_spec::ToolManifest = serde_json::from_value(json!({
        "id": "conformance.echo",
        "description": "a mutating echo",
        "version": "1.0.0",
        "input": {"type": "object"},
        "output": {},
        "mutating": true,
    }))
    .unwrap();
    let ctx = kindgi_tools::ToolContext::for_test();
    let output = caller
        .call_tool(&manifest, json!({"message": "hi"}), &ctx)
        .await
        .unwrap();
    assert_eq!(output, json!({"message": "hi"}));
    let seen = s.seen.lock().unwrap();
    assert_eq!(seen.len(), 6, "five 503s, then the one attempt that ran");
}
