//! `kindgi mcp list|call`: the real binary against real MCP servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-mcp/tests/support/mod.rs"]
mod support;

use serde_json::{Value, json};
use std::process::{Command, Output};
use support::*;

fn kindgi(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kindgi"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn list_prints_manifests_of_the_everything_server() {
    let Some(endpoint) = everything_stdio() else {
        return;
    };
    let out = kindgi(&["mcp", "list", &endpoint]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let manifests = stdout_json(&out);
    let echo = manifests
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "mcp-servers-everything.echo")
        .unwrap();
    assert_eq!(echo["transport"], "mcp");
    assert_eq!(echo["mcpEndpoint"], endpoint.as_str());
    assert_eq!(echo["mutating"], true);
    assert_eq!(echo["metadata"]["mcp"]["toolName"], "echo");
    // Each printed manifest reads back as a ToolManifest.
    let _: Vec<kindgi_spec::ToolManifest> = serde_json::from_value(manifests).unwrap();
}

#[test]
fn list_with_a_prefix_over_streamable_http() {
    let Some(server) = everything_http("streamableHttp") else {
        return;
    };
    let endpoint = format!("mcp+http://127.0.0.1:{}/mcp", server.port);
    let out = kindgi(&["mcp", "list", &endpoint, "--id-prefix", "everything"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ids: Vec<String> = stdout_json(&out)
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(ids.contains(&"everything.get-sum".to_owned()), "{ids:?}");
}

#[test]
fn call_prints_the_result() {
    let Some(endpoint) = everything_stdio() else {
        return;
    };
    let out = kindgi(&[
        "mcp",
        "call",
        &endpoint,
        "echo",
        "--input",
        r#"{"message":"from the cli"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout_json(&out),
        json!([{"type": "text", "text": "Echo: from the cli"}])
    );

    let out = kindgi(&[
        "mcp",
        "call",
        &endpoint,
        "get-structured-content",
        "--input",
        r#"{"location":"Chicago"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["temperature"], 36);
}

#[test]
fn a_tool_error_exits_1() {
    let Some(endpoint) = fastmcp_stdio() else {
        return;
    };
    let out = kindgi(&[
        "mcp",
        "call",
        &endpoint,
        "fail",
        "--input",
        r#"{"message":"card declined"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("MCP tool \"fail\" reported an error:"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("card declined"), "{}", stderr(&out));

    let out = kindgi(&[
        "mcp",
        "call",
        &endpoint,
        "add",
        "--input",
        r#"{"a":20,"b":22}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out), json!({"result": 42}));
}

#[test]
fn usage_and_connection_problems_exit_2() {
    let out = kindgi(&["mcp", "list", "mcp+gopher://x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid MCP endpoint \"mcp+gopher://x\""),
        "{}",
        stderr(&out)
    );

    let out = kindgi(&[
        "mcp",
        "call",
        "mcp+stdio://true",
        "x",
        "--input",
        "{not json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--input is not JSON"),
        "{}",
        stderr(&out)
    );

    let out = kindgi(&["mcp", "call", "mcp+stdio://true", "x", "--input", "[1]"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--input must be a JSON object"),
        "{}",
        stderr(&out)
    );

    let out = kindgi(&["mcp", "call", &misbehaving("exit"), "boom"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("dying on purpose"),
        "{}",
        stderr(&out)
    );

    let out = kindgi(&[
        "mcp",
        "call",
        &misbehaving("hang"),
        "boom",
        // Long enough for python3 to start and answer initialize on a loaded machine.
        "--timeout-ms",
        "3000",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did not answer tools/call \"boom\" within 3000ms"),
        "{}",
        stderr(&out)
    );

    let out = kindgi(&["mcp", "list", "mcp+stdio:///no/such/server"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("could not start the MCP server"),
        "{}",
        stderr(&out)
    );
}
