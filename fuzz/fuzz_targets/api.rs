//! The `/v1` API: request bodies (and paths, queries) through the real router, in process,
//! over a real runtime on SQLite. The first byte picks the route (`T` POST /v1/tools,
//! `I` the same with an Idempotency-Key, `R` POST /v1/runs, `U` unregister, `C` cancel,
//! `Q` GET /v1/tools?…, `G` GET /v1/runs/…, `J` its journal, `F` GET /v1/flows/…; any
//! other byte: POST /v1/tools with the whole input); the rest is the body, or the text of
//! the path segment or query. Invariants:
//! - never a 5xx: garbage is the caller's problem, answered with a 4xx;
//! - every 4xx is the envelope `{"error": {"code", "message", "requestId"}}`, with the
//!   same request id as the `x-request-id` header;
//! - every 2xx with a body is JSON; each request answers within its budget;
//! - the server is still healthy afterwards.
#![no_main]

use axum::http::Method;
use kindgi_fuzz::api::{api, encode};
use kindgi_fuzz::{runtime, within_budget};
use serde_json::Value;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let api = api();
    let (first, rest) = data.split_first().map_or((0, &data[..0]), |(a, b)| (*a, b));
    let seg = || encode(rest, b"");
    let query = || encode(rest, b"=&");
    let (method, uri, body, headers): (Method, String, Option<&[u8]>, &[(&str, &str)]) = match first
    {
        b'T' => (Method::POST, "/v1/tools".into(), Some(rest), &[]),
        b'I' => (
            Method::POST,
            "/v1/tools".into(),
            Some(rest),
            &[("idempotency-key", "fuzz-key-1")],
        ),
        b'R' => (Method::POST, "/v1/runs".into(), Some(rest), &[]),
        b'U' => {
            let (id, version) = match rest.iter().position(|b| *b == b'/') {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &b"1.0.0"[..]),
            };
            let uri = format!(
                "/v1/tools/{}/versions/{}/unregister",
                encode(id, b""),
                encode(version, b"")
            );
            (Method::POST, uri, None, &[])
        }
        b'C' => (
            Method::POST,
            format!("/v1/runs/{}/cancel", seg()),
            None,
            &[],
        ),
        b'Q' => (Method::GET, format!("/v1/tools?{}", query()), None, &[]),
        b'G' => (Method::GET, format!("/v1/runs/{}", seg()), None, &[]),
        b'J' => (
            Method::GET,
            format!("/v1/runs/r/journal?{}", query()),
            None,
            &[],
        ),
        b'F' => (Method::GET, format!("/v1/flows/{}", seg()), None, &[]),
        _ => (Method::POST, "/v1/tools".into(), Some(data), &[]),
    };
    let response = within_budget("the request", || {
        runtime().block_on(
            api.client
                .send(method.clone(), &uri, body.map(<[u8]>::to_vec), headers),
        )
    });
    let status = response.status.as_u16();
    let text = String::from_utf8_lossy(&response.body);
    assert!(status < 500, "{method} {uri} answered {status}: {text}");
    if status >= 400 {
        let envelope = response.json();
        let field = |k: &str| {
            envelope
                .pointer(&format!("/error/{k}"))
                .and_then(Value::as_str)
        };
        assert!(
            field("code").is_some_and(|c| !c.is_empty())
                && field("message").is_some_and(|m| !m.is_empty()),
            "{method} {uri}: a {status} without the error envelope: {text}"
        );
        let id = field("requestId");
        assert!(
            id.is_some(),
            "{method} {uri}: an envelope without requestId: {text}"
        );
        assert_eq!(
            id,
            response.header("x-request-id"),
            "requestId differs from x-request-id"
        );
    } else if (200..300).contains(&status) && !response.body.is_empty() {
        assert!(
            serde_json::from_slice::<Value>(&response.body).is_ok(),
            "{method} {uri}: a {status} whose body is not JSON: {text}"
        );
    }
    let health = runtime().block_on(api.client.get("/health"));
    assert_eq!(health.status.as_u16(), 200, "/health after {method} {uri}");
});
