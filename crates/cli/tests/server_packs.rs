//! `kindgi server` running packs, with real processes on loopback: the Rust example pack's
//! own service (`target/debug/my-pack serve`, with a token) reached through `--pack-url …
//! --pack-token-env … --pack-index …` runs `my-pack.check-order` end to end on SQLite and on
//! PostgreSQL; `--pack-dir examples/my-pack` builds, supervises and runs it; a pack service
//! unreachable at start is a warning and a clear `pack-unreachable` run failure (and the
//! same run completes once the service is up); a service killed mid-call fails the run
//! `pack-unreachable … failed` while the server keeps answering `/health`; an MCP server named
//! with `--mcp` serves a step of a flow the pack's index holds.
//!
//! Runs are started and read with plain HTTP/1.1 (one helper, [`start_run`]), so the test
//! does not depend on a CLI's flags.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-mcp/tests/support/mod.rs"]
mod mcp_support;
mod support;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kindgi_store::testing::{TestDatabase, postgres_test_url};
use serde_json::{Value, json};
use support::{BIN, PackService, Server, built, repo_root};

/// A pack service token (never to appear in the server's output).
const PACK_TOKEN: &str = "s3cr3t-pack-token-0123456789abcdefABCDEF";
const TOKEN_ENV: &str = "KINDGI_TEST_PACK_TOKEN";

/// `kindgi server` over `database` with `extra`, the pack token in [`TOKEN_ENV`].
fn start_server(database: &str, extra: &[&str]) -> Server {
    Server::start_with(database, extra, &[(TOKEN_ENV, PACK_TOKEN)])
}

/// `exe serve --index index` with [`PACK_TOKEN`], on `port` (0: a free one).
fn pack_service(exe: &Path, index: &Path, port: u16) -> PackService {
    PackService::start(exe, index, PACK_TOKEN, port)
}

/// A tenant admin's key of tenant `default`.
fn api_key(database: &str) -> String {
    support::create_token(database, "default").key
}

/// One HTTP/1.1 request (Connection: close); the status and the JSON body (Null if none).
fn http(method: &str, base: &str, path: &str, key: &str, body: Option<&Value>) -> (u16, Value) {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let status: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let payload = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    let value = if payload.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&payload).unwrap_or_else(|e| panic!("{e}: {payload}"))
    };
    (status, value)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = &rest[n..];
        s = s.strip_prefix("\r\n").unwrap_or(s);
    }
    out
}

/// Starts a run of `flow` (the one place that knows the start body) and returns its record;
/// `wait`: answer once it ended.
fn start_run(server: &Server, key: &str, flow: &str, input: Value, wait: bool) -> Value {
    let (status, run) = http(
        "POST",
        &server.url,
        "/v1/runs",
        key,
        Some(&json!({"flow": flow, "input": input, "options": {"wait": wait}})),
    );
    assert_eq!(status, if wait { 201 } else { 202 }, "{run}");
    run
}

/// Reads a run until it has ended (polls every 50 ms for at most 60 s).
fn ended(server: &Server, key: &str, id: &str) -> Value {
    for _ in 0..1200 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (status, run) = http("GET", &server.url, &format!("/v1/runs/{id}"), key, None);
        assert_eq!(status, 200, "{run}");
        if !["pending", "running"].contains(&run["status"].as_str().unwrap_or("")) {
            return run;
        }
    }
    panic!("run {id} did not end");
}

/// `my-pack index --out DIR/index.json`.
fn my_pack_index(dir: &Path) -> PathBuf {
    let out = dir.join("my-pack-index.json");
    let o = Command::new(built("my-pack"))
        .args(["index", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn remote_args<'a>(url: &'a str, index: &'a str) -> Vec<&'a str> {
    vec![
        "--pack-url",
        url,
        "--pack-token-env",
        TOKEN_ENV,
        "--pack-index",
        index,
    ]
}

fn check_order_end_to_end(database: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let index = my_pack_index(tmp.path());
    let service = pack_service(&built("my-pack"), &index, 0);
    let url = service.url();
    let index_s = index.display().to_string();
    let server = start_server(database, &remote_args(&url, &index_s));
    let key = api_key(database);

    let run = start_run(
        &server,
        &key,
        "my-pack.check-order",
        json!({"orderId": "ord_1001"}),
        true,
    );
    let run = ended(&server, &key, run["id"].as_str().unwrap());
    assert_eq!(run["status"], "completed", "{run}\n{}", server.stderr());
    assert_eq!(
        run["output"],
        json!({"status": "shipped", "orderId": "ord_1001", "totalCents": 4200})
    );
    // The pack's tools are listed for its tenant.
    let (status, page) = http("GET", &server.url, "/v1/tools", &key, None);
    assert_eq!(status, 200, "{page}");
    let ids: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert!(ids.contains(&"my-pack.lookup-order"), "{page}");
    let err = server.stderr();
    assert!(err.contains("pack \"my-pack\" registered"), "{err}");
    assert!(!err.contains(PACK_TOKEN), "the pack token is never printed");
    server.stop();
}

#[test]
fn a_remote_pack_service_runs_check_order_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    check_order_end_to_end(&tmp.path().join("k.db").display().to_string());
}

#[test]
fn a_remote_pack_service_runs_check_order_on_postgres() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = rt.block_on(TestDatabase::postgres()).unwrap();
    let schema = t.schema().unwrap().to_owned();
    let base = postgres_test_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    check_order_end_to_end(&format!("{base}{sep}options=-c%20search_path%3D{schema}"));
    rt.block_on(t.cleanup()).unwrap();
}

#[test]
fn a_pack_folder_is_built_supervised_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db").display().to_string();
    let dir = repo_root().join("examples/my-pack");
    let dir_s = dir.display().to_string();
    let server = start_server(&db, &["--pack-dir", &dir_s, "--tenant", "default"]);
    let key = api_key(&db);
    let run = start_run(
        &server,
        &key,
        "my-pack.check-order",
        json!({"orderId": "ord_1001"}),
        true,
    );
    let run = ended(&server, &key, run["id"].as_str().unwrap());
    assert_eq!(run["status"], "completed", "{run}\n{}", server.stderr());
    assert_eq!(run["output"]["totalCents"], 4200);
    server.stop();
}

#[test]
fn a_pack_service_unreachable_at_start_fails_runs_clearly_until_it_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db").display().to_string();
    let index = my_pack_index(tmp.path());
    // A port nothing listens on (yet).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let index_s = index.display().to_string();
    let server = start_server(&db, &remote_args(&url, &index_s));
    let err = server.stderr();
    assert!(err.contains("unreachable at start"), "{err}");
    let key = api_key(&db);

    let run = start_run(
        &server,
        &key,
        "my-pack.check-order",
        json!({"orderId": "ord_1001"}),
        true,
    );
    let run = ended(&server, &key, run["id"].as_str().unwrap());
    assert_eq!(run["status"], "failed", "{run}");
    let msg = run["failureMessage"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "pack-unreachable: tool \"my-pack.lookup-order\" in pack \"my-pack\" could not be called: unavailable: "
        ),
        "{msg}"
    );
    assert!(msg.contains(&url), "{msg}");
    let (status, _) = http("GET", &server.url, "/health", &key, None);
    assert_eq!(status, 200);

    // The service comes up on that address: the next run goes through.
    let _service = pack_service(&built("my-pack"), &index, port);
    let run = start_run(
        &server,
        &key,
        "my-pack.check-order",
        json!({"orderId": "ord_1001"}),
        true,
    );
    let run = ended(&server, &key, run["id"].as_str().unwrap());
    assert_eq!(run["status"], "completed", "{run}");
    server.stop();
}

#[test]
fn a_pack_service_killed_mid_call_fails_the_run_and_the_server_stays_up() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db").display().to_string();
    let service_index = repo_root().join("examples/conformance-pack/index.json");
    let mut service = pack_service(&built("conformance-pack"), &service_index, 0);
    // The server's copy of the index: `conformance.sleep` declared mutating (so its
    // `step.started` is stored before the call goes out) and a flow that sleeps.
    let mut index: Value =
        serde_json::from_str(&std::fs::read_to_string(&service_index).unwrap()).unwrap();
    for t in index["tools"].as_array_mut().unwrap() {
        if t["id"] == "conformance.sleep" {
            t["mutating"] = json!(true);
        }
    }
    index["flows"].as_array_mut().unwrap().push(json!({
        "id": "t.sleepy", "version": "1.0.0", "modulePath": "src/flows.rs",
        "nodes": [{"id": "nap", "kind": "tool", "ref": "conformance.sleep",
                   "inputMapping": {"ms": {"path": "runInput.ms"}}}],
        "edges": [{"id": "e1", "from": "$start", "to": "nap"},
                  {"id": "e2", "from": "nap", "to": "$end"}]
    }));
    let index_path = tmp.path().join("index.json");
    std::fs::write(&index_path, index.to_string()).unwrap();
    let url = service.url();
    let index_s = index_path.display().to_string();
    let server = start_server(&db, &remote_args(&url, &index_s));
    let key = api_key(&db);

    let run = start_run(&server, &key, "t.sleepy", json!({"ms": 600_000}), false);
    let id = run["id"].as_str().unwrap().to_owned();
    // Wait until the call is out: its step.started is stored first.
    let mut started = false;
    for _ in 0..600 {
        let (_, j) = http(
            "GET",
            &server.url,
            &format!("/v1/runs/{id}/journal"),
            &key,
            None,
        );
        if j["data"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["kind"] == "step.started"))
        {
            started = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(started, "the step never started; {}", server.stderr());
    service.kill9();

    let run = ended(&server, &key, &id);
    assert_eq!(run["status"], "failed", "{run}");
    let msg = run["failureMessage"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "pack-unreachable: tool \"conformance.sleep\" in pack \"conformance\" could not be called: failed: "
        ),
        "{msg}"
    );
    let (status, body) = http("GET", &server.url, "/health", &key, None);
    assert_eq!((status, body), (200, json!({"ok": true})));
    server.stop();
}

#[test]
fn pack_flags_that_do_not_pair_are_a_usage_error() {
    let o = Command::new(BIN)
        .args([
            "server",
            "--listen",
            "127.0.0.1:0",
            "--pack-url",
            "http://127.0.0.1:9",
            "--pack-index",
            "x.json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("each --pack-url needs one --pack-token-env NAME and one --pack-index FILE"),
        "{err}"
    );
}

#[test]
fn a_missing_token_variable_is_named_and_no_server_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let index = my_pack_index(tmp.path());
    let db = tmp.path().join("k.db").display().to_string();
    let o = Command::new(BIN)
        .args(["server", "--listen", "127.0.0.1:0", "--database", &db])
        .args(["--pack-url", "http://127.0.0.1:9", "--pack-index"])
        .arg(&index)
        .args(["--pack-token-env", "KINDGI_TEST_NO_SUCH_VAR"])
        .env_remove("KINDGI_TEST_NO_SUCH_VAR")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("its token variable KINDGI_TEST_NO_SUCH_VAR is not set"),
        "{err}"
    );
}

#[test]
fn an_mcp_server_named_with_mcp_serves_a_flow_step() {
    let Some(endpoint) = mcp_support::everything_stdio() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db").display().to_string();
    let pack_index = my_pack_index(tmp.path());
    let service = pack_service(&built("my-pack"), &pack_index, 0);
    // The server's index: my-pack's, plus a flow whose step is the MCP server's tool.
    let mut index: Value =
        serde_json::from_str(&std::fs::read_to_string(&pack_index).unwrap()).unwrap();
    index["flows"].as_array_mut().unwrap().push(json!({
        "id": "t.weather", "version": "1.0.0", "modulePath": "src/flows.rs",
        "nodes": [{"id": "w", "kind": "tool", "ref": "mcp-servers-everything.get-structured-content",
                   "inputMapping": {"location": {"path": "runInput.location"}}}],
        "edges": [{"id": "e1", "from": "$start", "to": "w"}, {"id": "e2", "from": "w", "to": "$end"}]
    }));
    let index_path = tmp.path().join("index.json");
    std::fs::write(&index_path, index.to_string()).unwrap();
    let url = service.url();
    let index_s = index_path.display().to_string();
    let mut args = remote_args(&url, &index_s);
    args.extend(["--mcp", endpoint.as_str()]);
    let server = start_server(&db, &args);
    let key = api_key(&db);
    assert!(
        server
            .stderr()
            .contains("registered for tenant \"default\""),
        "{}",
        server.stderr()
    );
    let run = start_run(
        &server,
        &key,
        "t.weather",
        json!({"location": "Chicago"}),
        true,
    );
    let run = ended(&server, &key, run["id"].as_str().unwrap());
    assert_eq!(run["status"], "completed", "{run}\n{}", server.stderr());
    assert_eq!(
        run["output"],
        json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82})
    );
    // An MCP tool never runs in a dry run.
    let (status, run) = http(
        "POST",
        &server.url,
        "/v1/runs",
        &key,
        Some(
            &json!({"flow": "t.weather", "input": {"location": "Chicago"}, "options": {"dryRun": true}}),
        ),
    );
    assert_eq!(status, 201, "{run}");
    let run = ended(&server, &key, run["id"].as_str().unwrap());
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run["failureMessage"].as_str().unwrap().starts_with(
            "dry-run-effectful-tool: tool \"mcp-servers-everything.get-structured-content\""
        ),
        "{run}"
    );
    let (status, page) = http("GET", &server.url, "/v1/tools?limit=100", &key, None);
    assert_eq!(status, 200);
    assert!(
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == "mcp-servers-everything.echo"),
        "{page}"
    );
    server.stop();
}

#[test]
fn a_config_file_names_the_pack_and_its_tenant() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db").display().to_string();
    let index = my_pack_index(tmp.path());
    let service = pack_service(&built("my-pack"), &index, 0);
    let config = tmp.path().join("kindgi.json");
    std::fs::write(
        &config,
        json!({"packs": [{"url": service.url(), "tokenEnv": TOKEN_ENV,
                          "index": "my-pack-index.json", "tenant": "default"}]})
        .to_string(),
    )
    .unwrap();
    let config_s = config.display().to_string();
    let server = start_server(&db, &["--config", &config_s]);
    let key = api_key(&db);
    let run = start_run(
        &server,
        &key,
        "my-pack.check-order",
        json!({"orderId": "ord_1001"}),
        true,
    );
    let run = ended(&server, &key, run["id"].as_str().unwrap());
    assert_eq!(run["status"], "completed", "{run}\n{}", server.stderr());
    server.stop();
}
