//! The official Python SDK (kindgi 0.1.10, `kindgi.client.Kindgi`) against the API on a real
//! loopback socket, with a real MCP server (FastMCP): MCP endpoints (register, duplicate,
//! refusal, list, get, resources, prompts, unregister) and conversations (open, list, get,
//! close twice, 501 unregister, 404, messages paged), on SQLite and PostgreSQL. The script is
//! tests/clients/sdk_mcp_conversations.py; it fails on anything the SDK cannot parse.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod catalog;
#[path = "../../kindgi-mcp/tests/support/mod.rs"]
mod mcp_support;
mod support;

use kindgi_api::{AppState, router};
use kindgi_core::conversation::{NewConversation, Role};
use kindgi_store::DatabaseKind;
use kindgi_store::conversations::ConversationStore;
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};

/// The Python with the official SDK, or `None` (failing under KINDGI_REQUIRE_REFERENCE=1).
fn sdk_python() -> Option<String> {
    let found = std::env::var("KINDGI_REFERENCE_PYTHON").ok().filter(|p| {
        std::process::Command::new(p)
            .args(["-c", "import kindgi.client, mcp.server.fastmcp"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    mcp_support::reference(
        "the official Python SDK (KINDGI_REFERENCE_PYTHON with `kindgi` and `mcp`)",
        found,
    )
}

async fn sdk_drives_mcp_and_conversations(kind: DatabaseKind) {
    let Some(python) = sdk_python() else {
        return;
    };
    let Some(server) = catalog::catalog_server() else {
        return;
    };
    let t = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(t.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    // A conversation with three messages, as the runtime would leave it.
    let store = ConversationStore::new(t.db.clone());
    let conv = store
        .open(
            "acme",
            NewConversation {
                agent_id: "support".into(),
                agent_version: "1.0.0".into(),
                title: "Seeded".into(),
                scope: json!({}),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    for (role, text) in [
        (Role::User, "hi"),
        (Role::Assistant, "hello"),
        (Role::User, "bye"),
    ] {
        store
            .append_message("acme", &conv.id, role, &json!(text), None, None)
            .await
            .unwrap();
    }

    let served = support::serve_loopback(router(state)).await;
    let url = served.url.clone();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients/sdk_mcp_conversations.py");
    let output = tokio::process::Command::new(python)
        .arg(script)
        .env("KINDGI_API_URL", &url)
        .env("KINDGI_TOKEN", &key)
        .env("MCP_URL", format!("http://127.0.0.1:{}/mcp", server.port))
        .env("CONVERSATION_ID", &conv.id)
        .output()
        .await
        .unwrap();
    served.stop().await;
    assert!(
        output.status.success(),
        "the SDK script failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();

    assert_eq!(out["register"], json!({"endpointId": "sdk"}));
    assert_eq!(out["duplicate"]["status"], 409);
    assert_eq!(out["duplicate"]["code"], "mcp-endpoint-already-registered");
    assert_eq!(out["credential"]["status"], 400);
    assert_eq!(out["credential"]["code"], "invalid-mcp-endpoint");
    assert_eq!(
        out["credential"]["details"]["reason"],
        "credential-in-headers"
    );
    assert_eq!(out["list"]["data"][0]["endpointId"], "sdk");
    assert_eq!(out["list"]["hasMore"], false);
    assert_eq!(out["get"]["config"]["transport"], "streamable-http");
    assert!(
        out["resources"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == "docs://readme")
    );
    assert_eq!(out["read"]["text"], "# Catalog\nHello.");
    assert_eq!(out["prompts"]["data"][0]["name"], "greet");
    assert_eq!(
        out["prompt"]["messages"][0]["content"]["text"],
        "Say hello to Ada."
    );
    assert_eq!(out["tool"]["transport"], "mcp");
    assert_eq!(out["tool"]["version"], "1.0.0");
    assert_eq!(
        out["unregister"],
        json!({"endpointId": "sdk", "unregistered": true})
    );
    assert_eq!(out["unregister_again"]["status"], 404);
    assert_eq!(out["unregister_again"]["code"], "mcp-endpoint-not-found");
    assert_eq!(out["tool_after"]["status"], 410);

    assert_eq!(out["open"]["title"], "From the SDK");
    assert_eq!(out["open"]["status"], "open");
    assert_eq!(out["conv_list"]["data"].as_array().unwrap().len(), 2);
    assert_eq!(out["conv_get"]["id"], out["open"]["id"]);
    assert_eq!(out["close"]["status"], "closed");
    assert_eq!(out["close_again"]["closedAt"], out["close"]["closedAt"]);
    assert_eq!(out["conv_unregister"]["status"], 501);
    assert_eq!(
        out["conv_unregister"]["code"],
        "conversation-unregister-unsupported"
    );
    assert_eq!(out["conv_missing"]["status"], 404);
    assert_eq!(out["conv_missing"]["code"], "conversation-not-found");
    let seqs = |v: &Value| -> Vec<i64> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["sequence"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(seqs(&out["messages_first"]), [0, 1]);
    assert_eq!(out["messages_first"]["hasMore"], true);
    assert_eq!(seqs(&out["messages_rest"]), [2]);
    assert_eq!(out["messages_rest"]["data"][0]["content"], "bye");
    drop(server);
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite() {
    sdk_drives_mcp_and_conversations(DatabaseKind::Sqlite).await
}

#[tokio::test]
async fn postgres() {
    sdk_drives_mcp_and_conversations(DatabaseKind::Postgres).await
}
