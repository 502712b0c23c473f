//! A failed answer's quoted body never carries the credential the http tool sent, also when
//! the server echoes it across the 512-character cut (issue 19), against a real loopback
//! server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod http_support;

use http_support::*;
use kindgi_tools::ToolContext;
use serde_json::json;
use std::sync::Arc;

const SECRET: &str = "sk-live-0123456789abcdefghijklmnopqrstuv";

async fn quoted_body(query: &str) -> String {
    let s = start().await;
    let spec = json!({
        "kind": "http",
        "method": "GET",
        "urlTemplate": format!("{}/secret-at?{query}", s.base()),
        "authorization": {"kind": "header", "headerName": "X-API-Key", "secretRef": {"envName": "e", "name": "k"}},
    });
    let h = synthesize(&manifest("t.echo", spec, json!({}))).unwrap();
    let mut ctx = ToolContext::for_test();
    ctx.secrets = Some(Arc::new(Secrets {
        value: SECRET.into(),
        ..Default::default()
    }));
    let err = failed(h(json!({}), ctx).await);
    let prefix = "http-tool \"t.echo\" got status 500 Internal Server Error — ";
    assert!(err.starts_with(prefix), "{err}");
    err[prefix.len()..].to_owned()
}

#[tokio::test]
async fn a_secret_straddling_the_cut_is_masked_whole() {
    let text = quoted_body("at=505").await;
    assert!(!text.contains(&SECRET[..4]), "{text}");
    assert_eq!(
        text,
        format!("{}***-tai", "x".repeat(505)),
        "512 characters"
    );
}

#[tokio::test]
async fn a_secret_cut_off_where_reading_stops_leaves_none_of_its_characters() {
    // Far longer than what is read: the read stops inside some copy of the secret.
    let text = quoted_body("at=0&times=200").await;
    assert!(!text.is_empty());
    assert!(text.chars().all(|c| c == '*'), "{text}");
    assert!(text.chars().count() <= 512);
}
