//! A Python pack's declarative tool (`http_tool`, official SDK `kindgi==0.1.10`) runs in the
//! runtime under `kindgi dev`, its bearer secret read from the pack's `.env` (the official
//! dev's dotenv secrets), and an agent the runtime leaves out is not listed: a flow that
//! runs it fails naming why. Needs `KINDGI_REFERENCE_PYTHON` (skipped without it, failed
//! when `KINDGI_REQUIRE_REFERENCE=1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use dev_common::*;

/// A loopback HTTP server answering `{"status":"shipped"}` to every request; records each
/// request's first line and `Authorization` header.
/// Each request's first line and `Authorization` header.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

fn status_server() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let mut auth = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("authorization")
                {
                    auth = v.trim().to_owned();
                }
            }
            log.lock().unwrap().push((first.trim().to_owned(), auth));
            let body = r#"{"status":"shipped"}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (base, seen)
}

fn tools(base: &str) -> String {
    format!(
        r#"
"""A declarative tool: one HTTP GET, its bearer from the secret ACME_TOKEN."""
from pydantic import BaseModel
from kindgi import http_tool

class Ask(BaseModel):
    orderId: str

class Status(BaseModel):
    status: str

order_status = http_tool(
    id="my-pack.order-status",
    version="0.1.0",
    description="The status of an order, from the order service.",
    input=Ask,
    output=Status,
    method="GET",
    url_template="{base}/orders/{{orderId}}/status",
    authorization={{"kind": "bearer", "secretRef": {{"envName": "local", "name": "ACME_TOKEN"}}}},
    mutating=False,
)
"#
    )
}

const AGENTS: &str = r#"
from kindgi import Agent

bad_agent = Agent(
    id="my-pack.bad-agent",
    version="0.1.0",
    name="Bad agent",
    instructions="Never loaded.",
    tools=[],
    conversation_policy={"hitlAfterTurns": 0},
)
"#;

const FLOWS: &str = r#"
from kindgi import Flow

status_flow = Flow(
    id="my-pack.status-flow",
    version="0.1.0",
    name="Order status",
    nodes=[{"id": "status", "kind": "tool", "ref": "my-pack.order-status",
            "inputMapping": {"orderId": {"path": "runInput.orderId"}}}],
    edges=[
        {"id": "e1", "from": "$start", "to": "status"},
        {"id": "e2", "from": "status", "to": "$end"},
    ],
)

bad_flow = Flow(
    id="my-pack.bad-flow",
    version="0.1.0",
    name="Runs the bad agent",
    nodes=[{"id": "agent", "kind": "agent", "ref": "my-pack.bad-agent"}],
    edges=[
        {"id": "e1", "from": "$start", "to": "agent"},
        {"id": "e2", "from": "agent", "to": "$end"},
    ],
)
"#;

#[test]
fn a_declarative_tool_runs_with_its_dotenv_secret_and_a_left_out_agent_names_why() {
    let Some(python) = reference_python(
        "a_declarative_tool_runs_with_its_dotenv_secret_and_a_left_out_agent_names_why",
    ) else {
        return;
    };
    let (base, seen) = status_server();
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    std::fs::write(tmp.path().join("tools/status_tool.py"), tools(&base)).unwrap();
    std::fs::write(tmp.path().join("agents/bad_agent.py"), AGENTS).unwrap();
    std::fs::write(tmp.path().join("flows/more_flows.py"), FLOWS).unwrap();
    // The app's .env, then Kindgi's own file, which wins; KINDGI_* names are never secrets.
    std::fs::write(tmp.path().join(".env"), "ACME_TOKEN=from-app\nKINDGI_X=1\n").unwrap();
    std::fs::create_dir_all(tmp.path().join(".kindgi")).unwrap();
    std::fs::write(
        tmp.path().join(".kindgi/secrets.env"),
        "ACME_TOKEN=\"tok-${SUFFIX}\"\nSUFFIX=unused\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join(".env.local"), "SUFFIX=42\n").unwrap();
    let py = python.display().to_string();
    let dev = start_dev(tmp.path(), &[("KINDGI_PYTHON", &py)], &["--no-watch"]);
    let err = dev.stderr();
    assert!(
        err.contains("left out agent \"my-pack.bad-agent\"")
            && err.contains("hitlAfterTurns must be a positive integer"),
        "{err}"
    );

    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--flow=my-pack.status-flow",
            "--input={\"orderId\":\"ord_7\"}",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}\n{}", dev.stderr());
    let run = out.json();
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["output"], serde_json::json!({"status": "shipped"}));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![(
            "GET /orders/ord_7/status HTTP/1.1".to_owned(),
            "Bearer tok-42".to_owned()
        )],
        "the runtime made the call, with the secret from the pack's env files"
    );

    // The left-out agent is not listed, and the flow that runs it says why.
    let out = kindgi_in(tmp.path(), &["agents", "list"]);
    assert!(!out.stdout.contains("my-pack.bad-agent"), "{out:?}");
    let out = kindgi_in(
        tmp.path(),
        &["runs", "start", "--flow=my-pack.bad-flow", "--input={}"],
    );
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(
        text.contains("left out of pack")
            && text.contains("hitlAfterTurns must be a positive integer"),
        "{out:?}"
    );
    let status = dev.stop();
    assert!(status.success(), "{status:?}");
}
