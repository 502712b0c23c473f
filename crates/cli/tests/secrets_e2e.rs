//! Secrets end to end (issue 19, findings 4 and 11), on the real binary:
//!
//! * masking: an http tool sends a secret (`authorization.secretRef`) to a loopback server
//!   that echoes it (as is, base64 and URL-encoded) in a 500; the value is in none of
//!   `GET /v1/runs/{id}` (`failureMessage`), its journal, its SSE stream, its progress, nor
//!   the SQLite files of `kindgi server`;
//! * pack tools: a tool of the official Python SDK declaring `needs_spec={"env": …,
//!   "secrets": {"PROBE_SECRET": …}}` gets exactly its declared secret in `ctx.secrets`
//!   (values set with the official CLI), under `kindgi dev` and under `kindgi server
//!   --pack-url`; a missing one fails the call before it is sent, naming the command that
//!   sets it; a pack tool that raises an error quoting its secret has it masked.
//!
//! The same probe in a pack of the official TypeScript SDK under `kindgi dev`.
//!
//! The pack tests need `KINDGI_REFERENCE_PYTHON` (and the TypeScript one the wheel's
//! `node_modules` and Node 24); skipped without them, failed when `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;
mod support;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::Server;

/// The http tool's secret, with characters that base64 and URL encoding change.
const SECRET: &str = "sk-live_4f9d/Zq+7a w0rd";
const SECRET_B64: &str = "c2stbGl2ZV80ZjlkL1pxKzdhIHcwcmQ=";
const SECRET_URL: &str = "sk-live_4f9d%2FZq%2B7a%20w0rd";
/// The pack tool's declared secret and one it does not declare.
const PROBE_SECRET: &str = "probe-secret-value-7Q2m";
const OTHER_SECRET: &str = "other-secret-value-never-sent";
/// base64 of 32 bytes: the server's secrets key.
const SECRETS_KEY: &str = "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=";

/// One HTTP/1.1 request (Connection: close); status and body text.
fn http_text(
    method: &str,
    base: &str,
    path: &str,
    key: &str,
    body: Option<&Value>,
) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    // A stream that stays open ends the read with a timeout: what came is what counts.
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, rest.to_owned())
}

fn http(method: &str, base: &str, path: &str, key: &str, body: Option<&Value>) -> (u16, Value) {
    let (status, text) = http_text(method, base, path, key, body);
    let start = text.find(['{', '[']).unwrap_or(0);
    let end = text.rfind(['}', ']']).map_or(text.len(), |i| i + 1);
    let v = serde_json::from_str(&text[start..end]).unwrap_or(Value::String(text.clone()));
    (status, v)
}

/// A loopback server that answers every request `500` with a body echoing its
/// `Authorization` header, and the secret base64- and URL-encoded.
fn echo_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut auth = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("authorization")
                {
                    auth = v.trim().to_owned();
                }
            }
            let body = format!(
                "denied: you sent Authorization={auth}; as base64 {SECRET_B64}; url-encoded {SECRET_URL}"
            );
            let _ = write!(
                conn,
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

/// Every byte of every file under `dir` (the database and its WAL), as lossy text.
fn files_text(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    text
}

fn assert_masked(what: &str, text: &str) {
    for form in [
        SECRET,
        SECRET_B64,
        SECRET_URL,
        "c2stbGl2ZV80ZjlkL1pxKzdhIHcwcmQ",
    ] {
        assert!(
            !text.contains(form),
            "{what} holds the secret ({form}):\n{text}"
        );
    }
}

#[test]
fn an_echoed_secret_is_masked_in_the_run_its_journal_its_stream_and_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db").display().to_string();
    // The echo server is on loopback, which `kindgi server` refuses to a tenant's tools unless
    // the operator allows it.
    let server = Server::start_with(
        &db,
        &["--allow-private-egress", "127.0.0.1/32"],
        &[("KINDGI_SECRETS_KEY", SECRETS_KEY)],
    );
    let key = support::create_token(&db, "default").key;
    let base = echo_server();
    let (status, project) = http("GET", &server.url, "/v1/projects/default", &key, None);
    assert_eq!(status, 200, "{project}");
    let project = project["id"].as_str().unwrap().to_owned();
    let (status, v) = http(
        "POST",
        &server.url,
        "/v1/secrets",
        &key,
        Some(
            &json!({"scope": {"kind": "tenant"}, "envName": "local", "name": "api-token",
            "value": SECRET, "writeMode": "create-new"}),
        ),
    );
    assert_eq!(status, 201, "{v}");
    let tool = json!({
        "projectId": project, "id": "acme.echo", "version": "1.0.0",
        "description": "Calls a server that echoes its credential",
        "input": {"type": "object"}, "output": {"type": "object"}, "mutating": false,
        "spec": {"kind": "http", "method": "GET", "urlTemplate": format!("{base}/orders"),
            "authorization": {"kind": "bearer", "secretRef": {"envName": "local", "name": "api-token"}}},
    });
    let (status, v) = http("POST", &server.url, "/v1/tools", &key, Some(&tool));
    assert_eq!(status, 201, "{v}");
    let flow = json!({
        "projectId": project, "id": "acme.echo-flow", "version": "1.0.0", "name": "Echo",
        "nodes": [{"id": "call", "kind": "tool", "ref": "acme.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "call"}, {"id": "e2", "from": "call", "to": "$end"}],
    });
    let (status, v) = http("POST", &server.url, "/v1/flows", &key, Some(&flow));
    assert_eq!(status, 201, "{v}");
    let (status, run) = http(
        "POST",
        &server.url,
        "/v1/runs",
        &key,
        Some(&json!({"flow": "acme.echo-flow", "input": {}, "options": {"wait": true}})),
    );
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().unwrap().to_owned();

    let (_, got) = http_text("GET", &server.url, &format!("/v1/runs/{id}"), &key, None);
    let record: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(record["status"], "failed", "{record}");
    let message = record["failureMessage"].as_str().unwrap();
    // The echo reached the message, masked in every form.
    assert!(
        message.contains("status 500") && message.contains("Authorization=Bearer ***"),
        "{message}"
    );
    assert!(
        message.contains("as base64 ***; url-encoded ***"),
        "{message}"
    );
    assert_masked("the start answer", &run.to_string());
    assert_masked("GET /v1/runs/{id}", &got);
    let (_, journal) = http_text(
        "GET",
        &server.url,
        &format!("/v1/runs/{id}/journal"),
        &key,
        None,
    );
    assert!(journal.contains("step.failed"), "{journal}");
    assert_masked("the journal", &journal);
    let (_, progress) = http_text(
        "GET",
        &server.url,
        &format!("/v1/runs/{id}/progress"),
        &key,
        None,
    );
    assert_masked("the progress", &progress);
    let (_, stream) = http_text(
        "GET",
        &server.url,
        &format!("/v1/runs/{id}/stream"),
        &key,
        None,
    );
    assert!(stream.contains("run.failed"), "{stream}");
    assert_masked("the SSE stream", &stream);
    let (_, list) = http_text("GET", &server.url, "/v1/runs?include=output", &key, None);
    assert_masked("the runs list", &list);
    server.stop();
    assert_masked("the database files", &files_text(tmp.path()));
}

// ----- pack tools (the official Python SDK) ----------------------------------------------

const PROBE_TOOL: &str = r#"
"""my-pack.probe: answers the env values and secrets its call carried."""
import logging
import sys
from typing import Any, Dict
from pydantic import BaseModel
from kindgi import ToolContext, tool

class Nothing(BaseModel):
    pass

class Seen(BaseModel):
    env: Dict[str, Any]
    secrets: Dict[str, Any]
    reversed: Dict[str, Any] = {}

@tool(id="my-pack.probe", version="0.1.0", mutating=False,
      needs_spec={"env": {"PROBE_ENV": {"type": "string"}},
                  "secrets": {"PROBE_SECRET": {"type": "string"}}})
def probe(_: Nothing, ctx: ToolContext) -> Seen:
    """Answers what it sees."""
    return Seen(env=dict(ctx.env), secrets=dict(ctx.secrets),
                reversed={k: v[::-1] for k, v in ctx.secrets.items()})

@tool(id="my-pack.leaky", version="0.1.0", mutating=False,
      needs_spec={"secrets": {"PROBE_SECRET": {"type": "string"}}})
def leaky(_: Nothing, ctx: ToolContext) -> Seen:
    """Fails quoting its secret, as a careless client library would."""
    raise RuntimeError("upstream refused key " + ctx.secrets["PROBE_SECRET"])

@tool(id="my-pack.chatty", version="0.1.0", mutating=False,
      needs_spec={"secrets": {"PROBE_SECRET": {"type": "string"}}})
def chatty(_: Nothing, ctx: ToolContext) -> Seen:
    """Prints its secret on stdout, on stderr and through logging, as a debugging pack might."""
    secret = ctx.secrets["PROBE_SECRET"]
    print("chatty stdout " + secret, flush=True)
    logging.getLogger("chatty").warning("chatty logged %s", secret)
    print("chatty stderr " + secret, file=sys.stderr, flush=True)
    print("chatty done", file=sys.stderr, flush=True)
    return Seen(env={}, secrets={})

@tool(id="my-pack.needs-missing", version="0.1.0", mutating=False,
      needs_spec={"secrets": {"MISSING_SECRET": {"type": "string"}}})
def needs_missing(_: Nothing, ctx: ToolContext) -> Seen:
    """Never called: its secret is not set."""
    return Seen(env={}, secrets=dict(ctx.secrets))
"#;

const PROBE_FLOWS: &str = r#"
from kindgi import Flow

def one(flow_id, tool_id):
    return Flow(
        id=flow_id,
        version="0.1.0",
        nodes=[{"id": "call", "kind": "tool", "ref": tool_id}],
        edges=[
            {"id": "e1", "from": "$start", "to": "call"},
            {"id": "e2", "from": "call", "to": "$end"},
        ],
    )

probe_flow = one("my-pack.probe-flow", "my-pack.probe")
leaky_flow = one("my-pack.leaky-flow", "my-pack.leaky")
missing_flow = one("my-pack.missing-flow", "my-pack.needs-missing")
chatty_flow = one("my-pack.chatty-flow", "my-pack.chatty")
"#;

/// The Python example pack with the probe tools and flows, in a temp dir.
fn probe_pack() -> tempfile::TempDir {
    let tmp = dev_common::copy_pack(&dev_common::repo_root().join("examples/my-pack-python"));
    std::fs::write(tmp.path().join("tools/probe.py"), PROBE_TOOL).unwrap();
    std::fs::write(tmp.path().join("flows/probe_flows.py"), PROBE_FLOWS).unwrap();
    tmp
}

/// The official CLI (`.venv/bin/kindgi`, next to the reference Python).
fn official_cli(python: &Path) -> PathBuf {
    let cli = python.with_file_name("kindgi");
    assert!(cli.exists(), "the official CLI is not at {}", cli.display());
    cli
}

/// The official CLI in `cwd` (`target`: `--url`/`--token`, else the `.kindgirc.json` there),
/// with `stdin`; it must exit 0.
fn official(cli: &Path, cwd: &Path, target: Option<(&str, &str)>, args: &[&str], stdin: &str) {
    let mut cmd = Command::new(cli);
    cmd.args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some((url, token)) = target {
        cmd.args(["--url", url, "--token", token]);
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "kindgi {}: {text}", args.join(" "));
    assert!(!text.contains(PROBE_SECRET), "the CLI printed the secret");
}

/// Sets `PROBE_ENV`, `PROBE_SECRET` and `OTHER_SECRET` for the tenant with the official CLI.
fn set_values(cli: &Path, cwd: &Path, target: Option<(&str, &str)>) {
    official(
        cli,
        cwd,
        target,
        &[
            "env",
            "set",
            "PROBE_ENV",
            "eu-west",
            "--env=local",
            "--scope=tenant",
        ],
        "",
    );
    for (name, value) in [
        ("PROBE_SECRET", PROBE_SECRET),
        ("OTHER_SECRET", OTHER_SECRET),
    ] {
        official(
            cli,
            cwd,
            target,
            &[
                "secrets",
                "set",
                name,
                "--env=local",
                "--scope=tenant",
                "--from-stdin",
            ],
            value,
        );
    }
}

/// Runs the three probe flows against `url` with `key` and checks what each call carried.
fn probe_runs(url: &str, key: &str) {
    let start = |flow: &str| {
        let (status, run) = http(
            "POST",
            url,
            "/v1/runs",
            key,
            Some(&json!({"flow": flow, "input": {}, "options": {"wait": true}})),
        );
        assert_eq!(status, 201, "{run}");
        let id = run["id"].as_str().unwrap().to_owned();
        let (_, record) = http_text("GET", url, &format!("/v1/runs/{id}"), key, None);
        let (_, journal) = http_text("GET", url, &format!("/v1/runs/{id}/journal"), key, None);
        (serde_json::from_str::<Value>(&record).unwrap(), journal)
    };
    // Exactly the declared secret arrives, with the env value; the undeclared one does not.
    let (run, journal) = start("my-pack.probe-flow");
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(
        run["output"]["env"],
        json!({"PROBE_ENV": "eu-west"}),
        "{run}"
    );
    // The output the handler returned carried the value: it is stored masked (and the
    // reversed copy shows the value itself arrived).
    assert_eq!(
        run["output"]["secrets"],
        json!({"PROBE_SECRET": "***"}),
        "{run}"
    );
    let reversed: String = PROBE_SECRET.chars().rev().collect();
    assert_eq!(
        run["output"]["reversed"],
        json!({"PROBE_SECRET": reversed}),
        "{run}"
    );
    assert!(!run.to_string().contains(OTHER_SECRET));
    assert!(!journal.contains(PROBE_SECRET), "{journal}");
    // A pack error quoting the secret is masked.
    let (run, journal) = start("my-pack.leaky-flow");
    assert_eq!(run["status"], "failed", "{run}");
    let message = run["failureMessage"].as_str().unwrap();
    assert!(message.contains("upstream refused key ***"), "{message}");
    assert!(!journal.contains(PROBE_SECRET), "{journal}");
    // A required secret that is not set fails the call before it is sent, saying how to set it.
    let (run, _) = start("my-pack.missing-flow");
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(
        run["failureMessage"],
        "precondition-failed: Tool \"my-pack.needs-missing\" was not run: secret-value-missing: tool \"my-pack.needs-missing\" needs secret \"MISSING_SECRET\", which is not set in env \"local\" for this tenant (its project or the tenant); set it with `kindgi secrets set MISSING_SECRET --env=local --scope=tenant --from-stdin`",
        "{run}"
    );
}

#[test]
fn a_python_pack_tool_gets_exactly_its_declared_secrets_under_kindgi_dev() {
    let test = "a_python_pack_tool_gets_exactly_its_declared_secrets_under_kindgi_dev";
    let Some(python) = dev_common::reference_python(test) else {
        return;
    };
    let cli = official_cli(&python);
    let tmp = probe_pack();
    let py = python.display().to_string();
    let dev = dev_common::start_dev(tmp.path(), &[("KINDGI_PYTHON", &py)], &["--no-watch"]);
    set_values(&cli, tmp.path(), None);
    let rc: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join(".kindgirc.json")).unwrap())
            .unwrap();
    let key = rc["token"].as_str().unwrap();
    probe_runs(&dev.url, key);
    // A tool that prints its secret: `kindgi dev` relays each line with the value masked.
    let (status, run) = http(
        "POST",
        &dev.url,
        "/v1/runs",
        key,
        Some(&json!({"flow": "my-pack.chatty-flow", "input": {}, "options": {"wait": true}})),
    );
    assert_eq!(status, 201, "{run}");
    assert_eq!(run["status"], "completed", "{run}");
    let relayed = |s: &str| s.contains("chatty done") && s.contains("chatty stdout");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !relayed(&dev.stderr()) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = dev.stderr();
    assert!(
        relayed(&stderr),
        "the pack's lines were not relayed: {stderr}"
    );
    for line in [
        "chatty stdout ***",
        "chatty logged ***",
        "chatty stderr ***",
    ] {
        assert!(stderr.contains(line), "{line} in {stderr}");
    }
    assert!(!stderr.contains(PROBE_SECRET), "{stderr}");
    assert!(dev.stop().success());
}

/// `python -m kindgi.pack serve --index INDEX` with `token`, on a free port; killed on drop.
struct PythonService {
    child: Child,
    port: u16,
}

impl Drop for PythonService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python_service(python: &Path, dir: &Path, index: &Path, token: &str) -> PythonService {
    let o = Command::new(python)
        .args(["-m", "kindgi.pack", "index", "--pack-dir"])
        .arg(dir)
        .arg("--output")
        .arg(index)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(python)
        .args(["-m", "kindgi.pack", "serve", "--index"])
        .arg(index)
        .current_dir(dir)
        .env("KINDGI_PACK_SERVICE_TOKEN", token)
        .env("PORT", port.to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let service = PythonService { child, port };
    for _ in 0..300 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return service;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(service);
    panic!("the Python pack service did not listen on {port}");
}

#[test]
fn a_python_pack_tool_gets_exactly_its_declared_secrets_under_kindgi_server_pack_url() {
    let test = "a_python_pack_tool_gets_exactly_its_declared_secrets_under_kindgi_server_pack_url";
    let Some(python) = dev_common::reference_python(test) else {
        return;
    };
    let cli = official_cli(&python);
    let tmp = probe_pack();
    let index = tmp.path().join("index.json");
    let token = "python-pack-token-0123456789abcdef";
    let service = python_service(&python, tmp.path(), &index, token);
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("k.db").display().to_string();
    let url = format!("http://127.0.0.1:{}", service.port);
    let index_s = index.display().to_string();
    let server = Server::start_with(
        &db,
        &[
            "--pack-url",
            &url,
            "--pack-token-env",
            "KINDGI_TEST_PACK_TOKEN",
            "--pack-index",
            &index_s,
        ],
        &[
            ("KINDGI_SECRETS_KEY", SECRETS_KEY),
            ("KINDGI_TEST_PACK_TOKEN", token),
        ],
    );
    let key = support::create_token(&db, "default").key;
    set_values(&cli, state.path(), Some((&server.url, &key)));
    probe_runs(&server.url, &key);
    let stderr = server.stderr();
    assert!(!stderr.contains(PROBE_SECRET), "{stderr}");
    server.stop();
    drop(service);
    let stored = files_text(state.path());
    assert!(!stored.contains(PROBE_SECRET));
}

const TS_PROBE_TOOL: &str = r#"
// my-pack.probe: answers the env values and the secrets (reversed) its call carried.
import { defineTool } from '@kindgi/sdk/define';
import type { ToolId } from '@kindgi/sdk/types';
import { z } from 'zod';

const defined = defineTool({
  id: 'my-pack.probe' as ToolId,
  description: 'Answers what it sees.',
  version: '0.1.0',
  input: z.object({}),
  output: z.object({ env: z.record(z.string()), reversed: z.record(z.string()) }),
  effects: [],
  mutating: false,
  needsSpec: {
    env: { PROBE_ENV: { type: 'string' } },
    secrets: { PROBE_SECRET: { type: 'string' } },
  },
  handler: async (_input: Record<string, never>, ctx: any) => {
    const secrets: Record<string, string> = ctx.secrets ?? {};
    const reversed: Record<string, string> = {};
    for (const [k, v] of Object.entries(secrets)) reversed[k] = String(v).split('').reverse().join('');
    return { env: { ...(ctx.env ?? {}) }, reversed };
  },
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.probe failed to compile: ${defined.error.message}`);
}

export default defined.value;
"#;

const TS_PROBE_FLOW: &str = r#"
import { defineFlow } from '@kindgi/sdk/define';

const defined = defineFlow({
  id: 'my-pack.probe-flow',
  version: '0.1.0',
  name: 'Probe',
  nodes: [{ id: 'call', kind: 'tool', ref: 'my-pack.probe' }],
  edges: [
    { id: 'e1', from: '$start', to: 'call' },
    { id: 'e2', from: 'call', to: '$end' },
  ],
});

if (defined.kind === 'err') {
  throw new Error(`my-pack.probe-flow failed to compile: ${defined.error.message}`);
}

export default defined.value;
"#;

#[test]
fn a_typescript_pack_tool_gets_exactly_its_declared_secrets_under_kindgi_dev() {
    let test = "a_typescript_pack_tool_gets_exactly_its_declared_secrets_under_kindgi_dev";
    let (Some(r), Some(python)) = (
        dev_common::ts_reference(test),
        dev_common::reference_python(test),
    ) else {
        return;
    };
    let cli = official_cli(&python);
    let tmp = dev_common::ts_pack(&r);
    for (dir, text) in [
        ("tools/probe", TS_PROBE_TOOL),
        ("flows/probe-flow", TS_PROBE_FLOW),
    ] {
        std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        std::fs::write(tmp.path().join(dir).join("index.ts"), text).unwrap();
    }
    let node = r.node.display().to_string();
    let dev = dev_common::start_dev(tmp.path(), &[("KINDGI_NODE", &node)], &["--no-watch"]);
    set_values(&cli, tmp.path(), None);
    let rc: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join(".kindgirc.json")).unwrap())
            .unwrap();
    let key = rc["token"].as_str().unwrap().to_owned();
    let (status, run) = http(
        "POST",
        &dev.url,
        "/v1/runs",
        &key,
        Some(&json!({"flow": "my-pack.probe-flow", "input": {}, "options": {"wait": true}})),
    );
    assert_eq!(status, 201, "{run}\n{}", dev.stderr());
    let reversed: String = PROBE_SECRET.chars().rev().collect();
    assert_eq!(run["status"], "completed", "{run}\n{}", dev.stderr());
    assert_eq!(
        run["output"],
        json!({"env": {"PROBE_ENV": "eu-west"}, "reversed": {"PROBE_SECRET": reversed}}),
        "{run}"
    );
    assert!(!dev.stderr().contains(PROBE_SECRET));
    assert!(dev.stop().success());
}

/// The bearer-guarded MCP server (the official Python MCP SDK's FastMCP,
/// `crates/kindgi-api/tests/servers/bearer_mcp.py`) over streamable HTTP, appending each
/// request's `Authorization` to `seen`; killed on drop.
struct GuardedMcp {
    child: Child,
    url: String,
}

impl Drop for GuardedMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn guarded_mcp(python: &Path, token: &str, seen: &Path) -> GuardedMcp {
    let script = dev_common::repo_root().join("crates/kindgi-api/tests/servers/bearer_mcp.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg("streamable-http")
        .env("MCP_TOKEN", token)
        .env("MCP_SEEN", seen)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .strip_prefix("PORT ")
        .unwrap_or_else(|| panic!("bearer_mcp.py printed {line:?}"))
        .trim()
        .parse()
        .unwrap();
    GuardedMcp {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// The MCP token, and a wrong one the server quotes back in its 401.
const MCP_TOKEN: &str = "mcp-run-bearer-Kp4wQ9zX";
const MCP_WRONG: &str = "mcp-rotated-wrong-Tn6yR2vB";

/// A run's call of a tool of an MCP endpoint that authenticates with a `secretRef` sends the
/// secret the run resolves (`Authorization: Bearer <value>`) on `kindgi server`; after the
/// secret gets a new (wrong) version the next run connects with that one, fails naming its
/// server's answer, and the value is masked in the run and its journal.
#[test]
fn a_runs_call_of_a_secret_ref_mcp_tool_sends_the_runs_secret() {
    let Some(python) = dev_common::reference_python("secret_ref_mcp_run") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let seen = tmp.path().join("seen.txt");
    let mcp = guarded_mcp(&python, MCP_TOKEN, &seen);
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let db = data.join("k.db").display().to_string();
    let server = Server::start_with(
        &db,
        &["--allow-private-egress", "127.0.0.1/32"],
        &[("KINDGI_SECRETS_KEY", SECRETS_KEY)],
    );
    let key = support::create_token(&db, "default").key;
    let url = &server.url;
    let secret = |mode: &str, value: &str| {
        let body = json!({"scope": {"kind": "tenant"}, "envName": "local", "name": "MCP_TOKEN",
                          "value": value, "writeMode": mode});
        let (status, v) = http("POST", url, "/v1/secrets", &key, Some(&body));
        assert!(status == 201 || status == 200, "{status} {v}");
    };
    secret("create-new", MCP_TOKEN);
    let endpoint = json!({"endpointId": "guarded", "name": "guarded", "transport": "streamable-http",
        "config": {"transport": "streamable-http", "url": mcp.url},
        "secretRef": {"envName": "local", "name": "MCP_TOKEN"}, "scopeKind": "tenant"});
    let (status, v) = http("POST", url, "/v1/mcp/endpoints", &key, Some(&endpoint));
    assert_eq!(status, 201, "{v}");
    let (_, got) = http("GET", url, "/v1/mcp/endpoints/guarded", &key, None);
    assert_eq!(got["toolIds"], json!(["guarded.add"]), "{got}");
    let (_, project) = http("GET", url, "/v1/projects/default", &key, None);
    let flow = json!({
        "projectId": project["id"], "id": "acme.add-flow", "version": "1.0.0", "name": "Add",
        "nodes": [{"id": "add", "kind": "tool", "ref": "guarded.add"}],
        "edges": [{"id": "e1", "from": "$start", "to": "add"}, {"id": "e2", "from": "add", "to": "$end"}],
    });
    let (status, v) = http("POST", url, "/v1/flows", &key, Some(&flow));
    assert_eq!(status, 201, "{v}");
    let run = |what: &str| {
        let body =
            json!({"flow": "acme.add-flow", "input": {"a": 2, "b": 3}, "options": {"wait": true}});
        let (status, run) = http("POST", url, "/v1/runs", &key, Some(&body));
        assert_eq!(status, 201, "{what}: {run}");
        let id = run["id"].as_str().unwrap().to_owned();
        let (_, record) = http_text("GET", url, &format!("/v1/runs/{id}"), &key, None);
        let (_, journal) = http_text("GET", url, &format!("/v1/runs/{id}/journal"), &key, None);
        (
            serde_json::from_str::<Value>(&record).unwrap(),
            record + &journal,
        )
    };

    let (record, _) = run("with the registered secret");
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(record["output"], json!({"result": 5}), "{record}");
    let sent = std::fs::read_to_string(&seen).unwrap();
    let last = sent.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        format!("Bearer {MCP_TOKEN}"),
        "the run's call sent {last:?}"
    );

    // A new version of the secret is what the next run's call sends.
    secret("add-version", MCP_WRONG);
    let (record, text) = run("with a wrong new version");
    assert_eq!(record["status"], "failed", "{record}");
    let sent = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        sent.lines().last().unwrap_or_default(),
        format!("Bearer {MCP_WRONG}")
    );
    let message = record["failureMessage"].as_str().unwrap_or_default();
    assert!(message.contains("could not be reached"), "{message}");
    assert!(
        !text.contains(MCP_WRONG) && !text.contains(MCP_TOKEN),
        "a token reached the run or its journal: {text}"
    );
    drop(server);
    let files = files_text(&data);
    for token in [MCP_TOKEN, MCP_WRONG] {
        assert!(!files.contains(token), "the SQLite files hold {token}");
    }
}
