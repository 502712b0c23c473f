//! A server built with the official Python MCP SDK (FastMCP) over stdio, SSE and streamable HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_mcp::{ConnectOptions, ManifestOptions, McpClient, McpError, McpSource, mcp_tools};
use kindgi_tools::{HandlerError, ToolContext};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::*;

const CALL: Duration = Duration::from_secs(30);

async fn check_server(endpoint: &str) {
    let options = ConnectOptions {
        manifest: ManifestOptions {
            id_prefix: Some("py".into()),
        },
        ..Default::default()
    };
    let client = McpClient::connect(endpoint, options).await.unwrap();
    assert_eq!(client.server().name.as_deref(), Some("kindgi-fastmcp-test"));
    let manifests = client.list_tools().await.unwrap();
    let mut ids: Vec<&str> = manifests.iter().map(|m| m.id.as_str()).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "py.add",
            "py.fail",
            "py.order-status",
            "py.peek",
            "py.slow",
            "py.weather"
        ]
    );
    let add = manifests.iter().find(|m| m.id == "py.add").unwrap();
    assert_eq!(add.metadata.as_ref().unwrap()["mcp"]["toolName"], "add");
    assert_eq!(add.description, "Add two integers and return the sum.");
    assert_eq!(add.input["required"], json!(["a", "b"]));
    let peek = manifests.iter().find(|m| m.id == "py.peek").unwrap();
    assert_eq!(
        peek.metadata.as_ref().unwrap()["mcp"]["annotations"]["readOnlyHint"],
        true
    );
    assert_eq!(peek.mutating, Some(true));

    let out = client
        .call_tool("add", json!({"a": 2, "b": 3}), CALL)
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(
        out.value,
        json!({"result": 5}),
        "structuredContent wins over content"
    );
    let out = client
        .call_tool("weather", json!({"city": "Lima"}), CALL)
        .await
        .unwrap();
    assert_eq!(
        out.value,
        json!({"city": "Lima", "temperature": 21, "conditions": "Sunny"})
    );

    let out = client
        .call_tool("fail", json!({"message": "no such order"}), CALL)
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(
        out.error_text().contains("no such order"),
        "{}",
        out.error_text()
    );
    client.close().await;
}

#[tokio::test]
async fn fastmcp_over_stdio() {
    let Some(endpoint) = fastmcp_stdio() else {
        return;
    };
    check_server(&endpoint).await;
}

#[tokio::test]
async fn fastmcp_over_sse() {
    let Some(server) = fastmcp_http("sse") else {
        return;
    };
    check_server(&format!("mcp+sse://127.0.0.1:{}/sse", server.port)).await;
}

#[tokio::test]
async fn fastmcp_over_streamable_http() {
    let Some(server) = fastmcp_http("streamable-http") else {
        return;
    };
    check_server(&format!("mcp+http://127.0.0.1:{}/mcp", server.port)).await;
}

#[tokio::test]
async fn a_slow_call_times_out_and_the_session_stays_usable() {
    let Some(endpoint) = fastmcp_stdio() else {
        return;
    };
    let client = McpClient::connect(&endpoint, ConnectOptions::default())
        .await
        .unwrap();
    let started = Instant::now();
    let err = client
        .call_tool("slow", json!({"seconds": 30}), Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(err, McpError::Timeout { ms: 300, .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("did not answer tools/call \"slow\" within 300ms"),
        "{err}"
    );
    let out = client
        .call_tool("add", json!({"a": 1, "b": 1}), CALL)
        .await
        .unwrap();
    assert_eq!(out.value, json!({"result": 2}));
}

#[tokio::test]
async fn tool_errors_and_cancellation_through_handlers() {
    let Some(endpoint) = fastmcp_stdio() else {
        return;
    };
    let client = McpClient::connect(&endpoint, ConnectOptions::default())
        .await
        .unwrap();
    let source: Arc<dyn McpSource> = Arc::new(client);
    let tools = mcp_tools(source, CALL).await.unwrap();
    let fail = tools
        .iter()
        .find(|t| t.id() == "kindgi-fastmcp-test.fail")
        .unwrap();
    let err = (fail.handler())(json!({"message": "boom"}), ToolContext::for_test())
        .await
        .unwrap_err();
    let HandlerError::Failed(message) = err else {
        panic!("{err:?}")
    };
    assert!(
        message.starts_with("MCP tool \"fail\" at mcp+stdio://"),
        "{message}"
    );
    assert!(
        message.contains("reported an error: ") && message.contains("boom"),
        "{message}"
    );

    let status = tools
        .iter()
        .find(|t| t.id() == "kindgi-fastmcp-test.order-status")
        .unwrap();
    let out = (status.handler())(json!({"order_id": "A-7"}), ToolContext::for_test())
        .await
        .unwrap();
    assert_eq!(out, json!({"result": "order A-7 shipped"}));

    let slow = tools
        .iter()
        .find(|t| t.id() == "kindgi-fastmcp-test.slow")
        .unwrap();
    let ctx = ToolContext::for_test();
    let signal = ctx.signal.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        signal.cancel();
    });
    let started = Instant::now();
    let err = (slow.handler())(json!({"seconds": 30}), ctx)
        .await
        .unwrap_err();
    assert_eq!(err, HandlerError::Failed("aborted".into()));
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// An HTTP server that dies in the middle of a call: the call fails, it does not wait out its timeout.
async fn server_dies_mid_call(mode: &str, path: &str, scheme: &str) {
    let Some(server) = fastmcp_http(mode) else {
        return;
    };
    let endpoint = format!("{scheme}://127.0.0.1:{}/{path}", server.port);
    let client = McpClient::connect(&endpoint, ConnectOptions::default())
        .await
        .unwrap();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        drop(server);
    });
    let started = Instant::now();
    let result = client
        .call_tool("slow", json!({"seconds": 60}), Duration::from_secs(40))
        .await;
    killer.join().unwrap();
    let err = result.unwrap_err();
    eprintln!("{mode}: {:?}: {err}", started.elapsed());
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{mode}: took {:?} ({err})",
        started.elapsed()
    );
    assert!(err.to_string().contains(&endpoint), "{err}");
}

#[tokio::test]
async fn a_streamable_http_server_that_dies_mid_call() {
    server_dies_mid_call("streamable-http", "mcp", "mcp+http").await;
}

#[tokio::test]
async fn an_sse_server_that_dies_mid_call() {
    server_dies_mid_call("sse", "sse", "mcp+sse").await;
}
