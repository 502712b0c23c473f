//! Limits and hostile input, in process over real loopback HTTP: the 10 MiB rule (exact,
//! over, chunked), slow and abandoned bodies, deadlines, disconnects, the concurrency cap and
//! the drain.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod service_common;

use serde_json::{Value, json};
use service_common::{Svc, TOKEN, call, check, raw};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const MIB10: usize = 10 * 1024 * 1024;

fn head(len: Option<usize>, chunked: bool) -> String {
    let mut h = format!(
        "POST /v1/invoke HTTP/1.1\r\nhost: x\r\nkindgi-pack-token: {TOKEN}\r\ncontent-type: application/json\r\nconnection: close\r\n"
    );
    if let Some(len) = len {
        h.push_str(&format!("content-length: {len}\r\n"));
    }
    if chunked {
        h.push_str("transfer-encoding: chunked\r\n");
    }
    h.push_str("\r\n");
    h
}

/// An echo request padded with spaces to exactly `size` bytes.
fn padded(size: usize) -> Vec<u8> {
    let mut body = call("test.echo", json!({"message": "big"}))
        .to_string()
        .into_bytes();
    body.resize(size, b' ');
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_of_exactly_10_mib_is_accepted_and_one_more_byte_is_413() {
    let svc = Svc::start().await;
    let res = svc
        .http
        .post(format!("{}/v1/invoke", svc.base))
        .header("kindgi-pack-token", TOKEN)
        .header("content-type", "application/json")
        .body(padded(MIB10))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.json::<Value>().await.unwrap()["output"],
        json!({"message": "big"})
    );
    let res = svc
        .http
        .post(format!("{}/v1/invoke", svc.base))
        .header("kindgi-pack-token", TOKEN)
        .header("content-type", "application/json")
        .body(padded(MIB10 + 1))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 413);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"error": "Request body too large"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_body_over_the_limit_is_413() {
    let svc = Svc::start().await;
    let mut stream = TcpStream::connect(("127.0.0.1", svc.port)).await.unwrap();
    stream.write_all(head(None, true).as_bytes()).await.unwrap();
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..11 {
        let _ = stream
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await;
        let _ = stream.write_all(&chunk).await;
        let _ = stream.write_all(b"\r\n").await;
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut out),
    )
    .await;
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    // The service is fine afterwards.
    assert_eq!(
        svc.invoke(&call("test.echo", json!({"message": "hi"})))
            .await["kind"],
        "result"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_truncated_and_abandoned_requests_do_not_hurt() {
    let svc = Svc::start().await;
    // Not HTTP at all.
    let out = raw(svc.port, b"\x00\x01garbage\r\n\r\n", Duration::from_secs(2)).await;
    assert!(out.is_empty() || out.starts_with("HTTP/1.1 400"), "{out}");
    // A body shorter than its content-length, then the caller leaves.
    {
        let mut stream = TcpStream::connect(("127.0.0.1", svc.port)).await.unwrap();
        stream
            .write_all(head(Some(1000), false).as_bytes())
            .await
            .unwrap();
        stream.write_all(b"{\"v\":2,").await.unwrap();
    }
    // A content-length far beyond the limit is refused without reading it all.
    let out = raw(
        svc.port,
        head(Some(1 << 40), false).as_bytes(),
        Duration::from_secs(8),
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 413"), "{out}");
    // With `Expect: 100-continue` an oversized body is refused before it is sent.
    let mut h = head(Some(MIB10 + 1), false);
    h.insert_str(h.len() - 2, "expect: 100-continue\r\n");
    let started = Instant::now();
    let out = raw(svc.port, h.as_bytes(), Duration::from_secs(8)).await;
    assert!(out.starts_with("HTTP/1.1 413"), "{out}");
    assert!(started.elapsed() < Duration::from_millis(900));
    // Deeply nested JSON is a malformed message, not a crash.
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let res = svc
        .http
        .post(format!("{}/v1/invoke", svc.base))
        .header("kindgi-pack-token", TOKEN)
        .header("content-type", "application/json")
        .body(nested)
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.json::<Value>().await.unwrap()["code"],
        "malformed-message"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(svc.running.as_ref().unwrap().in_flight(), 0);
    assert_eq!(
        svc.invoke(&call("test.echo", json!({"message": "hi"})))
            .await["kind"],
        "result"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_does_not_starve_other_callers() {
    let svc = Svc::start().await;
    let mut slow = TcpStream::connect(("127.0.0.1", svc.port)).await.unwrap();
    slow.write_all(head(Some(100), false).as_bytes())
        .await
        .unwrap();
    slow.write_all(b"{").await.unwrap();
    let started = Instant::now();
    for _ in 0..20 {
        assert_eq!(
            svc.invoke(&call("test.echo", json!({"message": "hi"})))
                .await["kind"],
            "result"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    // The slow caller's own deadline bounds how long its body is awaited.
    let mut slow = TcpStream::connect(("127.0.0.1", svc.port)).await.unwrap();
    let mut h = head(Some(100), false);
    h.insert_str(h.len() - 2, "kindgi-timeout-ms: 200\r\n");
    slow.write_all(h.as_bytes()).await.unwrap();
    slow.write_all(b"{").await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read_to_end(&mut slow, &mut out),
    )
    .await;
    assert!(
        String::from_utf8_lossy(&out).starts_with("HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_answers_at_once_and_logs_the_late_finisher() {
    let svc = Svc::start().await;
    let started = Instant::now();
    let res = svc
        .invoke_with(
            &call("test.sleep", json!({"ms": 5000})),
            &[("kindgi-timeout-ms", "200")],
        )
        .await;
    let out: Value = res.json().await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        out,
        json!({"v":2,"kind":"error","code":"deadline-exceeded","message":"test.sleep passed its deadline","toolId":"test.sleep"})
    );
    // A handler that ignores its signal finishes late and says so.
    let out: Value = svc
        .invoke_with(
            &call("test.stubborn", json!({"ms": 300})),
            &[("kindgi-timeout-ms", "50")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(out["code"], "deadline-exceeded");
    let late = svc
        .logs
        .wait_for(|r| r["event"] == "handler-finished-late" && r["id"] == "test.stubborn")
        .await;
    assert_eq!(late["target"], "tool");
    let after = late["afterMs"].as_u64().unwrap();
    assert!((150..1000).contains(&after), "{after}");
    // A check waiting on its abort signal.
    let out: Value = svc
        .invoke_with(
            &check("test.waits", json!({}), "x"),
            &[("kindgi-timeout-ms", "100")],
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(out["code"], "deadline-exceeded");
    assert_eq!(out["checkId"], "test.waits");
    assert!(out.get("toolId").is_none());
    let late = svc
        .logs
        .wait_for(|r| r["event"] == "handler-finished-late" && r["id"] == "test.waits")
        .await;
    assert!(late["afterMs"].as_u64().unwrap() < 1000);
    // Huge and invalid deadlines fall back or clamp; the call still runs.
    for t in ["99999999999999999999", "abc", "0", "-1", " 5000 "] {
        let out: Value = svc
            .invoke_with(
                &call("test.sleep", json!({"ms": 10})),
                &[("kindgi-timeout-ms", t)],
            )
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(out["kind"], "result", "{t}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnect_cancels_the_handler_and_frees_the_slot() {
    let pack = service_common::pack(false);
    let file = service_common::index_file(&pack, |_| {});
    let svc = Svc::start_with(pack, file, |o| o.max_concurrency = 1).await;
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("never").to_string_lossy().into_owned();
    let body = call("test.hold", json!({"release": release})).to_string();
    {
        let mut stream = TcpStream::connect(("127.0.0.1", svc.port)).await.unwrap();
        stream
            .write_all(head(Some(body.len()), false).as_bytes())
            .await
            .unwrap();
        stream.write_all(body.as_bytes()).await.unwrap();
        for _ in 0..200 {
            if svc.running.as_ref().unwrap().in_flight() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // At the cap: a second call provably does not run.
        let res = svc
            .invoke_with(&call("test.echo", json!({"message": "hi"})), &[])
            .await;
        assert_eq!(res.status(), 503);
        assert_eq!(res.headers()["retry-after"], "1");
        assert_eq!(
            res.json::<Value>().await.unwrap(),
            json!({"error": "overloaded"})
        );
        let info = svc
            .http
            .get(format!("{}/v1/info", svc.base))
            .header("kindgi-pack-token", TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(info.status(), 200);
    } // the caller goes away
    let r = svc
        .logs
        .wait_for(|r| r["event"] == "call" && r["outcome"] == "cancelled")
        .await;
    assert_eq!(r["id"], "test.hold");
    assert_eq!(
        r["message"]
            .as_str()
            .unwrap()
            .split(' ')
            .take(3)
            .collect::<Vec<_>>(),
        ["tool", "test.hold", "cancelled"]
    );
    for _ in 0..200 {
        if svc.running.as_ref().unwrap().in_flight() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        svc.invoke(&call("test.echo", json!({"message": "hi"})))
            .await["kind"],
        "result"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_finishes_in_flight_calls_and_refuses_new_ones() {
    let pack = service_common::pack(false);
    let file = service_common::index_file(&pack, |_| {});
    let mut svc = Svc::start_with(pack, file, |o| o.drain = Duration::from_secs(3)).await;
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("release").to_string_lossy().into_owned();
    let http = svc.http.clone();
    let base = svc.base.clone();
    let body = call("test.hold", json!({"release": release}));
    let held = tokio::spawn(async move {
        http.post(format!("{base}/v1/invoke"))
            .header("kindgi-pack-token", TOKEN)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    });
    while svc.running.as_ref().unwrap().in_flight() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let running = svc.running.take().unwrap();
    let drained = tokio::spawn(running.drain());
    svc.logs.wait_for(|r| r["event"] == "draining").await;
    let res = svc
        .http
        .get(format!("{}/readyz", svc.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"error": "draining"})
    );
    let res = svc
        .invoke_with(&call("test.echo", json!({"message": "hi"})), &[])
        .await;
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "1");
    assert_eq!(
        svc.http
            .get(format!("{}/healthz", svc.base))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    std::fs::write(&release, "").unwrap();
    assert_eq!(held.await.unwrap()["output"], json!({"released": true}));
    tokio::time::timeout(Duration::from_secs(3), drained)
        .await
        .unwrap()
        .unwrap();
    svc.logs.wait_for(|r| r["event"] == "stopped").await;
    assert!(TcpStream::connect(("127.0.0.1", svc.port)).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_callers_all_get_answers() {
    let svc = Svc::start().await;
    let mut tasks = Vec::new();
    for i in 0..64 {
        let http = svc.http.clone();
        let base = svc.base.clone();
        tasks.push(tokio::spawn(async move {
            let res = http
                .post(format!("{base}/v1/invoke"))
                .header("kindgi-pack-token", TOKEN)
                .header("content-type", "application/json")
                .body(call("test.echo", json!({"message": format!("m{i}")})).to_string())
                .send()
                .await
                .unwrap();
            (res.status().as_u16(), res.text().await.unwrap())
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let (status, body) = t.await.unwrap();
        assert!(status == 200 || status == 503, "{status} {body}");
        if status == 200 {
            ok += 1;
        } else {
            assert_eq!(body, r#"{"error":"overloaded"}"#);
        }
    }
    assert!(ok >= 32);
}
