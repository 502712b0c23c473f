//! The HTTP synthesizer under the host's address policy (`HttpSynthesizer::with_egress`),
//! against real listeners on loopback. Loopback is all a test may contact, so the design is:
//! the "allowed" server is on 127.0.0.1 and the policy allows exactly `127.0.0.1/32`; the
//! "internal" service is on 127.0.0.2, which the policy refuses like any loopback address.
//! The internal service counts the connections it accepts and answers a marker body that
//! must appear in no error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod http_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http_support::{call, failed, manifest, start};
use kindgi_tools::Handler;
use kindgi_tools::egress::{AllowedRange, EgressPolicy};
use kindgi_tools::http::HttpSynthesizer;
use kindgi_tools::synth::SpecSynthesizer;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const INTERNAL_BODY: &str = "internal-only-0f9c2e";

/// A raw HTTP service on 127.0.0.2 answering [`INTERNAL_BODY`]; its port and accept count.
async fn internal_service() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let body = format!("{{\"secret\":\"{INTERNAL_BODY}\"}}");
                let _ = s
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        )
                        .as_bytes(),
                    )
                    .await;
            });
        }
    });
    (port, accepted)
}

fn policy(allow: &[&str]) -> EgressPolicy {
    EgressPolicy::public_only(allow.iter().map(|a| a.parse::<AllowedRange>().unwrap()))
}

fn tool(policy: EgressPolicy, url: String) -> Handler {
    let m = manifest(
        "acme.fetch",
        json!({"kind": "http", "method": "GET", "urlTemplate": url}),
        json!({}),
    );
    HttpSynthesizer::new()
        .with_egress(policy)
        .synthesize(&m, m.spec.as_ref().unwrap())
        .unwrap()
}

fn urlencode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[tokio::test]
async fn a_literal_internal_address_is_refused_before_connecting() {
    let (port, accepted) = internal_service().await;
    let h = tool(
        policy(&["127.0.0.1/32"]),
        format!("http://127.0.0.2:{port}/"),
    );
    let err = failed(call(&h, json!({})).await);
    assert_eq!(
        err,
        format!(
            "http-tool \"acme.fetch\" may not reach http://127.0.0.2:{port}/: 127.0.0.2 is a loopback address (127.0.0.0/8, ::1); this server does not connect to such addresses for a tenant's definitions. The operator allows it with `kindgi server --allow-private-egress 127.0.0.2/32` (or `egress.allowPrivate` in --config)"
        )
    );
    // The mapped IPv6 form of the same address.
    let h = tool(
        policy(&["127.0.0.1/32"]),
        format!("http://[::ffff:127.0.0.2]:{port}/"),
    );
    assert!(failed(call(&h, json!({})).await).contains("is a loopback address"));
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_redirect_from_an_allowed_host_to_an_internal_one_is_refused_at_the_hop() {
    let (port, accepted) = internal_service().await;
    let allowed = start().await;
    let target = format!("http://127.0.0.2:{port}/meta");
    let h = tool(
        policy(&["127.0.0.1/32"]),
        format!("{}/redirect?to={}", allowed.base(), urlencode(&target)),
    );
    let err = failed(call(&h, json!({})).await);
    assert!(
        err.starts_with(&format!(
            "http-tool \"acme.fetch\" was redirected to {target}: 127.0.0.2 is a loopback address"
        )),
        "{err}"
    );
    assert!(!err.contains(INTERNAL_BODY));
    assert_eq!(allowed.hits(), 1, "the allowed host answered the redirect");
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_name_resolving_to_an_internal_address_is_refused_by_the_resolver() {
    // `localhost` is 127.0.0.1 (and maybe ::1); only 127.0.0.3/32 is allowed.
    let allowed = start().await;
    let h = tool(
        policy(&["127.0.0.3/32"]),
        format!("{}/json", allowed.base_localhost()),
    );
    let err = failed(call(&h, json!({})).await);
    assert!(
        err.starts_with(&format!(
            "http-tool \"acme.fetch\" may not reach {}/json: the host \"localhost\" resolves to ",
            allowed.base_localhost()
        )),
        "{err}"
    );
    assert!(err.contains("which is a loopback address"), "{err}");
    assert!(err.contains("--allow-private-egress"), "{err}");
    assert_eq!(allowed.hits(), 0, "no connection was made");
}

#[tokio::test]
async fn the_allow_list_lifts_the_rule_and_an_open_policy_refuses_nothing() {
    let (port, accepted) = internal_service().await;
    let url = format!("http://127.0.0.2:{port}/");
    let out: Value = call(&tool(policy(&["127.0.0.2/32"]), url.clone()), json!({}))
        .await
        .unwrap();
    assert_eq!(out["secret"], INTERNAL_BODY);
    let out: Value = call(&tool(EgressPolicy::open(), url), json!({}))
        .await
        .unwrap();
    assert_eq!(out["secret"], INTERNAL_BODY);
    assert_eq!(accepted.load(Ordering::SeqCst), 2);

    // A name is admitted when what it resolves to is allowed.
    let allowed = start().await;
    let h = tool(
        policy(&["127.0.0.0/8", "::1/128"]),
        format!("{}/json", allowed.base_localhost()),
    );
    assert_eq!(call(&h, json!({})).await.unwrap()["number"], 42);
}
