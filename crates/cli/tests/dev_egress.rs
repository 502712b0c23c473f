//! `kindgi dev` keeps its egress policy open (issue 19, finding 3): on one developer's machine
//! the definitions are their own, so an MCP endpoint at a loopback address — which `kindgi
//! server` refuses without `--allow-private-egress` (`server_egress.rs`) — registers, and a
//! flow calling its tool reads the server's answer.
//!
//! Design: the MCP server is built with the official Python `mcp` SDK (FastMCP) and listens on
//! 127.0.0.2, the loopback address `server_egress.rs` shows refused; the pack is the Python
//! example (official `kindgi` SDK) plus a flow naming the endpoint's tool. An http tool cannot
//! be the probe here: dev's registries are read-only (the pack's files are the truth) and a
//! pack's declarative http tools are not registered, so the test pins that refusal instead —
//! should dev ever take http tools, this test fails and must grow their egress check.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use dev_common::*;
use serde_json::{Value, json};

/// What the loopback MCP server's tool answers.
const MARKER: &str = "loopback-answer-5e2a81";

/// A FastMCP server on 127.0.0.2 (a host other than 127.0.0.1/localhost, so FastMCP's own
/// DNS-rebinding guard, which would only allow those names, is off).
const MCP_SERVER: &str = r#"
import socket
import anyio
import uvicorn
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("dev-egress-probe", host="127.0.0.2", log_level="WARNING")

@mcp.tool()
def fetch() -> str:
    """Answers the marker."""
    return "loopback-answer-5e2a81"

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.2", 0))
sock.listen(128)
server = uvicorn.Server(uvicorn.Config(mcp.streamable_http_app(), log_level="warning"))

async def run():
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await server.serve(sockets=[sock])

anyio.run(run)
"#;

/// The pack's flow: one call of the endpoint `probe`'s tool `fetch`.
const PROBE_FLOW: &str = r#"
from kindgi import Flow

probe_flow = Flow(
    id="my-pack.probe-flow",
    version="0.1.0",
    nodes=[{"id": "fetch", "kind": "tool", "ref": "probe.fetch"}],
    edges=[
        {"id": "e1", "from": "$start", "to": "fetch"},
        {"id": "e2", "from": "fetch", "to": "$end"},
    ],
)
"#;

/// The MCP server process, killed when dropped.
struct McpServer {
    child: Child,
    port: u16,
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_mcp_server(python: &Path, dir: &Path) -> McpServer {
    let script = dir.join("probe_server.py");
    std::fs::write(&script, MCP_SERVER).unwrap();
    let mut child = Command::new(python)
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(port) = line.strip_prefix("PORT ") {
                let _ = tx.send(port.trim().parse::<u16>().unwrap());
            }
        }
    });
    let port = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the FastMCP server did not report its port");
    McpServer { child, port }
}

/// The dev API key in the folder's discovery file.
fn dev_token(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join(".kindgirc.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["token"].as_str().unwrap().to_owned()
}

/// `METHOD url` with the dev key: the status and the JSON body (`Null` when not JSON).
async fn send(
    http: &reqwest::Client,
    method: &str,
    url: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut r = http
        .request(method.parse().unwrap(), url)
        .bearer_auth(token)
        .timeout(Duration::from_secs(60));
    if let Some(b) = body {
        r = r.json(&b);
    }
    let response = r.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_registers_and_calls_an_mcp_endpoint_on_loopback() {
    let Some(python) = reference_python("dev_registers_and_calls_an_mcp_endpoint_on_loopback")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mcp = start_mcp_server(&python, work.path());
    let pack = copy_pack(&repo_root().join("examples/my-pack-python"));
    std::fs::write(pack.path().join("flows/probe_flow.py"), PROBE_FLOW).unwrap();
    let py = python.display().to_string();
    let dev = start_dev(pack.path(), &[("KINDGI_PYTHON", &py)], &["--no-watch"]);
    let token = dev_token(pack.path());
    let http = reqwest::Client::new();

    // The endpoint at 127.0.0.2 registers and syncs: its tool is in the registry.
    let url = format!("http://127.0.0.2:{}/mcp", mcp.port);
    let endpoint = json!({"endpointId": "probe", "name": "probe", "transport": "streamable-http",
                          "config": {"transport": "streamable-http", "url": url},
                          "scopeKind": "tenant"});
    let (status, v) = send(
        &http,
        "POST",
        &format!("{}/v1/mcp/endpoints", dev.url),
        &token,
        Some(endpoint),
    )
    .await;
    assert_eq!(status, 201, "{v}");
    let (status, read) = send(
        &http,
        "GET",
        &format!("{}/v1/mcp/endpoints/probe", dev.url),
        &token,
        None,
    )
    .await;
    assert_eq!(status, 200, "{read}");
    assert!(read["syncError"].is_null(), "{read}");
    assert_eq!(read["toolIds"], json!(["probe.fetch"]), "{read}");

    // A run of the pack's flow calls it there and gets the server's answer.
    let out = kindgi_in(
        pack.path(),
        &["runs", "start", "--flow=my-pack.probe-flow", "--input={}"],
    );
    assert_eq!(out.code, 0, "{out:?}\n{}", dev.stderr());
    let run = out.json();
    assert_eq!(run["status"], "completed", "{run}");
    assert!(run["output"].to_string().contains(MARKER), "{run}");

    // No http tool takes this path under dev: the registry refuses the write.
    let project = kindgi_api::projects::default_project_id("default");
    let tool = json!({
        "projectId": project, "id": "probe.direct", "version": "1.0.0",
        "description": "fetch", "mutating": false,
        "input": {"type": "object"}, "output": {},
        "spec": {"kind": "http", "method": "GET", "urlTemplate": url},
    });
    let (status, v) = send(
        &http,
        "POST",
        &format!("{}/v1/tools", dev.url),
        &token,
        Some(tool),
    )
    .await;
    assert_eq!(status, 409, "{v}");
    assert_eq!(v["error"]["code"], "registry-read-only", "{v}");

    let status = dev.stop();
    assert!(status.success(), "{status}");
}
