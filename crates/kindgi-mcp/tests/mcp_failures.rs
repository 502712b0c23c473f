//! Servers that crash, hang or print garbage: each gives a clear error, never a hang.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_mcp::{ConnectOptions, McpClient, McpError};
use serde_json::json;
use std::time::{Duration, Instant};
use support::*;

const QUICK: Duration = Duration::from_secs(10);

async fn connect(mode: &str) -> McpClient {
    McpClient::connect(
        &misbehaving(mode),
        ConnectOptions {
            timeout: QUICK,
            ..Default::default()
        },
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_server_that_exits_mid_call() {
    let client = connect("exit").await;
    assert_eq!(client.list_tools().await.unwrap()[0].version, "1.2.3");
    let started = Instant::now();
    let err = client
        .call_tool("boom", json!({}), Duration::from_secs(60))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(matches!(err, McpError::Closed { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("closed the connection during tools/call \"boom\""),
        "{text}"
    );
    assert!(text.contains("exit status: 3"), "{text}");
    assert!(text.contains("dying on purpose"), "{text}");
    // Later calls fail at once too.
    let err = client
        .call_tool("boom", json!({}), Duration::from_secs(60))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Closed { .. }), "{err:?}");
}

#[tokio::test]
async fn a_server_that_never_answers() {
    let client = connect("hang").await;
    let started = Instant::now();
    let err = client
        .call_tool("boom", json!({}), Duration::from_millis(400))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        err.to_string(),
        format!(
            "the MCP server {} did not answer tools/call \"boom\" within 400ms",
            misbehaving("hang")
        )
    );
}

#[tokio::test]
async fn a_server_that_prints_garbage() {
    let client = connect("garbage").await;
    let started = Instant::now();
    let err = client
        .call_tool("boom", json!({}), Duration::from_secs(60))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "garbage must fail fast, took {:?}",
        started.elapsed()
    );
    let text = err.to_string();
    assert!(
        text.contains(
            "not a JSON-RPC message: \"Traceback (most recent call last): this is not JSON-RPC\""
        ),
        "{text}"
    );
}

#[tokio::test]
async fn servers_that_fail_to_start() {
    let err = McpClient::connect(
        &misbehaving("garbage-at-start"),
        ConnectOptions {
            timeout: QUICK,
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("Welcome to my server!"), "{err}");

    let err = McpClient::connect(
        &misbehaving("exit-at-start"),
        ConnectOptions {
            timeout: QUICK,
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("could not connect to the MCP server"),
        "{text}"
    );
    assert!(
        text.contains("cannot start: missing configuration") && text.contains("exit status: 2"),
        "{text}"
    );

    let err = McpClient::connect(
        "mcp+stdio:///no/such/kindgi-server --flag",
        ConnectOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("/no/such/kindgi-server"), "{err}");

    let err = McpClient::connect("mcp+ftp://x", ConnectOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::InvalidEndpoint { .. }), "{err:?}");
}

#[tokio::test]
async fn http_endpoints_that_are_down() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // The TLS forms too: building their clients must not panic (crypto provider set up).
    for endpoint in [
        format!("mcp+http://127.0.0.1:{port}/mcp"),
        format!("mcp+sse://127.0.0.1:{port}/sse"),
        format!("mcp+https://127.0.0.1:{port}/mcp"),
        format!("mcp+sses://127.0.0.1:{port}/sse"),
    ] {
        let started = Instant::now();
        let err = McpClient::connect(
            &endpoint,
            ConnectOptions {
                timeout: QUICK,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
        assert!(
            started.elapsed() < QUICK,
            "{endpoint}: took {:?}",
            started.elapsed()
        );
        assert!(
            err.to_string()
                .starts_with(&format!("could not connect to the MCP server {endpoint}")),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_server_that_hangs_at_initialize_times_out() {
    // `sleep` reads nothing and writes nothing: the handshake never completes.
    let started = Instant::now();
    let err = McpClient::connect(
        "mcp+stdio://sleep 30",
        ConnectOptions {
            timeout: Duration::from_millis(500),
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.to_string()
            .contains("did not answer initialize within 500ms"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_whose_tool_list_cursors_go_round_in_circles() {
    // Before, the listing asked again and again until the connect timeout, then said
    // "did not answer" about a server that answered every page.
    let client = connect("cursor-loop").await;
    let started = Instant::now();
    let err = client.list_tools().await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(err, McpError::Protocol { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("sent the page cursor \"again\" twice"),
        "{text}"
    );
}

#[tokio::test]
async fn a_server_that_floods_stderr_with_bytes_that_are_not_utf8_still_answers() {
    // Before, stderr draining stopped at the first line that is not UTF-8; the server then
    // blocked on its full stderr pipe and the call hung until its timeout.
    let client = connect("stderr-flood").await;
    let outcome = client
        .call_tool("boom", json!({}), Duration::from_secs(20))
        .await
        .unwrap();
    assert!(!outcome.is_error);
    assert_eq!(outcome.value, json!([{"type": "text", "text": "survived"}]));
}
