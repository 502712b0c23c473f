//! Pack protocol v2, service side: raw HTTP/1.1 requests to a real pack service on a
//! loopback port (one per fuzz process). The input is header lines, a NUL byte, and a body
//! (no NUL: all body, POST /v1/invoke with the right token). A first line `GET /path` or
//! `POST /path` sets the request line. The harness adds `content-length` and
//! `connection: close` itself and drops the headers that would only make the service wait
//! for bytes that never come (its own 10 s / 60 s timeouts are covered by its tests).
//! Invariants:
//! - every request gets a complete answer, never a 5xx other than 503, never a dropped
//!   connection;
//! - a 200 from `/v1/invoke` is a pack protocol response (`result`, `check-result` or
//!   `error`) with `v: 2`; any other answer from the service is `{"error": "…"}` JSON
//!   (hyper's own refusals of malformed HTTP have an empty body);
//! - the service is still healthy afterwards.
#![no_main]

use kindgi_fuzz::pack::{TOKEN, exchange, service};
use kindgi_fuzz::split_nul;
use kindgi_spec::pack_protocol::Response;
use serde_json::Value;

/// Headers the harness owns: framing, connection handling and `Expect` waits.
const OWNED: [&str; 5] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "host",
    "expect",
];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let addr = service();
    let (head, body) = match split_nul(data) {
        (h, Some(b)) => (h, b),
        (b, None) => (&b""[..], b),
    };
    let head = String::from_utf8_lossy(head);
    let mut lines = head
        .split('\n')
        .map(|l| l.trim_end_matches('\r'))
        .peekable();
    let mut request_line = "POST /v1/invoke".to_owned();
    if let Some(first) = lines.peek() {
        let mut parts = first.splitn(2, ' ');
        if let (Some(m @ ("GET" | "POST" | "PUT" | "HEAD")), Some(p)) = (parts.next(), parts.next())
        {
            if p.starts_with('/') && p.bytes().all(|b| b.is_ascii_graphic()) {
                request_line = format!("{m} {p}");
                lines.next();
            }
        }
    }
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim();
        if name.is_empty() || OWNED.contains(&name.to_ascii_lowercase().as_str()) {
            continue;
        }
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    let has = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    let mut request =
        format!("{request_line} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n");
    if !has("kindgi-pack-token") {
        request.push_str(&format!("kindgi-pack-token: {TOKEN}\r\n"));
    }
    if !has("content-type") {
        request.push_str("content-type: application/json\r\n");
    }
    let mut bytes = request.into_bytes();
    for (k, v) in &headers {
        bytes.extend_from_slice(k.as_bytes());
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(v.as_bytes());
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    bytes.extend_from_slice(body);

    let Some(answer) = exchange(addr, &bytes) else {
        panic!(
            "no complete answer to:\n{}",
            String::from_utf8_lossy(&bytes)
        );
    };
    let status = answer.status;
    assert!(
        status < 500 || status == 503,
        "answered {status}: {}",
        String::from_utf8_lossy(&answer.body)
    );
    let json: Option<Value> = serde_json::from_slice(&answer.body).ok();
    let invoke = request_line == "POST /v1/invoke";
    if status == 200 && invoke {
        match serde_json::from_slice::<Response>(&answer.body) {
            Ok(_) => {}
            Err(e) => panic!(
                "a 200 that is no protocol response ({e}): {}",
                String::from_utf8_lossy(&answer.body)
            ),
        }
        assert_eq!(
            json.as_ref().and_then(|v| v.get("v")),
            Some(&Value::from(2)),
            "a response without v: 2"
        );
    } else if status != 200 {
        let from_hyper =
            answer.body.is_empty() && matches!(status, 400 | 413 | 414 | 431 | 501 | 505);
        let shaped = json
            .as_ref()
            .and_then(|v| v.get("error"))
            .is_some_and(Value::is_string);
        assert!(
            from_hyper || shaped,
            "a {status} without an {{\"error\"}} body: {}",
            String::from_utf8_lossy(&answer.body)
        );
    }
    let health = exchange(
        addr,
        b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n",
    );
    assert_eq!(
        health.map(|a| a.status),
        Some(200),
        "the service is not healthy after the request"
    );
});
