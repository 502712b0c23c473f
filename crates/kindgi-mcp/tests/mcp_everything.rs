//! The reference "everything" MCP server (npm) over stdio, streamable HTTP and SSE.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_mcp::{ConnectOptions, McpClient, McpSource, mcp_tool_name, mcp_tools};
use kindgi_spec::Transport;
use kindgi_tools::ToolContext;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::*;

const CALL: Duration = Duration::from_secs(30);

/// What every transport must show: the manifests and an echo call.
async fn check_server(endpoint: &str) {
    let client = McpClient::connect(endpoint, ConnectOptions::default())
        .await
        .unwrap();
    assert_eq!(
        client.server().name.as_deref(),
        Some("mcp-servers/everything")
    );

    let manifests = client.list_tools().await.unwrap();
    let names: Vec<&str> = manifests.iter().map(mcp_tool_name).collect();
    for expected in ["echo", "get-sum", "get-structured-content"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let echo = manifests
        .iter()
        .find(|m| m.id == "mcp-servers-everything.echo")
        .unwrap();
    assert_eq!(echo.transport, Some(Transport::Mcp));
    assert_eq!(echo.mcp_endpoint.as_deref(), Some(endpoint));
    assert_eq!(echo.version, "2.0.0", "the server's plain X.Y.Z version");
    assert_eq!(echo.description, "Echoes back the input string");
    assert_eq!(echo.input["properties"]["message"]["type"], "string");
    // The server says readOnlyHint: true; the manifest still says mutating.
    assert_eq!(
        echo.metadata.as_ref().unwrap()["mcp"]["annotations"]["readOnlyHint"],
        true
    );
    assert_eq!(echo.mutating, Some(true));
    assert!(!echo.is_read_only());

    let out = client
        .call_tool("echo", json!({"message": "hi there"}), CALL)
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(
        out.value,
        json!([{"type": "text", "text": "Echo: hi there"}])
    );

    let out = client
        .call_tool(
            "get-structured-content",
            json!({"location": "Chicago"}),
            CALL,
        )
        .await
        .unwrap();
    assert_eq!(
        out.value,
        json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82})
    );
    let sc = manifests
        .iter()
        .find(|m| m.id == "mcp-servers-everything.get-structured-content")
        .unwrap();
    assert_eq!(sc.output["properties"]["humidity"]["type"], "number");
    client.close().await;
}

#[tokio::test]
async fn everything_over_stdio() {
    let Some(endpoint) = everything_stdio() else {
        return;
    };
    check_server(&endpoint).await;
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let Some(server) = everything_http("streamableHttp") else {
        return;
    };
    check_server(&format!("mcp+http://127.0.0.1:{}/mcp", server.port)).await;
}

#[tokio::test]
async fn everything_over_sse() {
    let Some(server) = everything_http("sse") else {
        return;
    };
    check_server(&format!("mcp+sse://127.0.0.1:{}/sse", server.port)).await;
}

#[tokio::test]
async fn bad_arguments_come_back_as_a_tool_error_or_refusal() {
    let Some(endpoint) = everything_stdio() else {
        return;
    };
    let client = McpClient::connect(&endpoint, ConnectOptions::default())
        .await
        .unwrap();
    match client
        .call_tool("get-sum", json!({"a": "one", "b": 2}), CALL)
        .await
    {
        Ok(out) => {
            assert!(out.is_error, "{out:?}");
            assert!(!out.error_text().is_empty());
        }
        Err(e) => assert!(
            e.to_string().contains("refused tools/call \"get-sum\""),
            "{e}"
        ),
    }
    let err = client
        .call_tool("echo", json!([1, 2]), CALL)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("must be a JSON object"), "{err}");
}

#[tokio::test]
async fn listed_tools_dispatch_through_invoke() {
    let Some(endpoint) = everything_stdio() else {
        return;
    };
    let client = McpClient::connect(&endpoint, ConnectOptions::default())
        .await
        .unwrap();
    let source: Arc<dyn McpSource> = Arc::new(client);
    let tools = mcp_tools(source, CALL).await.unwrap();
    let sum = tools
        .iter()
        .find(|t| t.id() == "mcp-servers-everything.get-sum")
        .unwrap();
    let out = kindgi_tools::invoke(sum, &json!({"a": 2, "b": 40}), ToolContext::for_test())
        .await
        .unwrap();
    let text = out[0]["text"].as_str().unwrap();
    assert!(text.contains("42"), "{text}");

    // The engine validates against the server's schemas (MCP mode) before calling it.
    let err = kindgi_tools::invoke(sum, &json!({"a": 2}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code.as_str(), "input-validation-failed", "{err:?}");

    let structured = tools
        .iter()
        .find(|t| t.id() == "mcp-servers-everything.get-structured-content")
        .unwrap();
    let out = kindgi_tools::invoke(
        structured,
        &json!({"location": "New York"}),
        ToolContext::for_test(),
    )
    .await
    .unwrap();
    assert_eq!(out["temperature"], 33);
    let err = kindgi_tools::invoke(
        structured,
        &json!({"location": "Atlantis"}),
        ToolContext::for_test(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code.as_str(), "input-validation-failed", "{err:?}");
}

#[tokio::test]
async fn listed_manifests_pass_manifest_validation() {
    let Some(endpoint) = everything_stdio() else {
        return;
    };
    let client = McpClient::connect(&endpoint, ConnectOptions::default())
        .await
        .unwrap();
    let engine = kindgi_tools::engine::ToolSchemaEngine::new();
    let check = kindgi_spec::validate::ManifestCheck {
        production: true,
        has_handler: None,
    };
    for manifest in client.list_tools().await.unwrap() {
        let raw = serde_json::to_value(&manifest).unwrap();
        let checked = kindgi_spec::validate::validate_manifest(&raw, &check, &engine);
        assert!(checked.is_ok(), "{}: {:?}", manifest.id, checked.err());
    }
}

#[tokio::test]
async fn concurrent_calls_get_their_own_answers() {
    let Some(endpoint) = everything_stdio() else {
        return;
    };
    let client = Arc::new(
        McpClient::connect(&endpoint, ConnectOptions::default())
            .await
            .unwrap(),
    );
    let calls = (0..24).map(|i| {
        let client = client.clone();
        tokio::spawn(async move {
            let out = client
                .call_tool("echo", json!({"message": format!("m{i}")}), CALL)
                .await
                .unwrap();
            (i, out.value)
        })
    });
    for call in calls.collect::<Vec<_>>() {
        let (i, value) = call.await.unwrap();
        assert_eq!(
            value,
            json!([{"type": "text", "text": format!("Echo: m{i}")}])
        );
    }
}
