//! `kindgi server`'s egress policy end to end (issue 19, finding 3): a tenant's definitions —
//! http tools (and each redirect hop), MCP endpoints registered through the API (on register,
//! on proxy requests, at boot) and MCP tools published to the registry — never make the
//! server connect to a loopback, private or otherwise internal address unless the operator
//! allows its range with `--allow-private-egress CIDR`.
//!
//! Design: a test may contact loopback only, so "internal" and "allowed" are both loopback
//! addresses told apart by the allow-list. The internal services listen on 127.0.0.2 (and one
//! on 127.0.0.1, reached by the name `localhost`); the allowed redirector listens on
//! 127.0.0.3, and the server runs with `--allow-private-egress 127.0.0.3/32` only. Every
//! internal service counts the connections it accepts and answers a marker body that must
//! appear nowhere: not in a run's output or `failureMessage`, its journal, an API answer or
//! the server's stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-mcp/tests/support/mod.rs"]
mod mcp_support;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What an internal service answers; must never leave the server.
const MARKER: &str = "internal-only-7c1d93";

/// A raw HTTP service on `ip` answering [`MARKER`] (or, with `location`, a 302 there).
struct Service {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Service {
    async fn start(ip: &str, location: Option<String>) -> Service {
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let location = location.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 8192];
                    let _ = s.read(&mut buf).await;
                    let answer = match &location {
                        Some(to) => format!(
                            "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        ),
                        None => {
                            let body = format!("{{\"secret\":\"{MARKER}\"}}");
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                                body.len()
                            )
                        }
                    };
                    let _ = s.write_all(answer.as_bytes()).await;
                });
            }
        });
        Service { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// The server's API as tenant `acme`'s admin.
struct Api {
    base: String,
    key: String,
    http: reqwest::Client,
}

impl Api {
    fn new(server: &Server, key: &str) -> Api {
        Api {
            base: server.url.clone(),
            key: key.to_owned(),
            http: reqwest::Client::new(),
        }
    }

    /// The status and the body's text.
    async fn send(&self, method: &str, path: &str, body: Option<Value>) -> (u16, String) {
        let mut r = self
            .http
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .timeout(Duration::from_secs(120));
        if let Some(b) = body {
            r = r.json(&b);
        }
        let response = r.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let (status, text) = self.send("POST", path, Some(body)).await;
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Registers an http tool `acme.<name>` GETting `url`, and a one-node flow
    /// `acme.run-<name>` calling it.
    async fn http_tool_and_flow(&self, name: &str, url: &str) {
        let project = kindgi_api::projects::default_project_id("acme");
        let tool = json!({
            "projectId": project, "id": format!("acme.{name}"), "version": "1.0.0",
            "description": "fetch", "mutating": false,
            "input": {"type": "object"}, "output": {},
            "spec": {"kind": "http", "method": "GET", "urlTemplate": url},
        });
        let (status, v) = self.post("/v1/tools", tool).await;
        assert_eq!(status, 201, "{v}");
        self.flow(name).await;
    }

    async fn flow(&self, name: &str) {
        let project = kindgi_api::projects::default_project_id("acme");
        let flow = json!({
            "projectId": project, "id": format!("acme.run-{name}"), "version": "1.0.0",
            "name": name,
            "nodes": [{"id": "call", "kind": "tool", "ref": format!("acme.{name}")}],
            "edges": [{"id": "e1", "from": "$start", "to": "call"},
                      {"id": "e2", "from": "call", "to": "$end"}],
        });
        let (status, v) = self.post("/v1/flows", flow).await;
        assert_eq!(status, 201, "{v}");
    }

    /// Runs `acme.run-<name>` to its end: the run record and its journal's text.
    async fn run(&self, name: &str) -> (Value, String) {
        let (status, run) = self
            .post(
                "/v1/runs",
                json!({"flow": format!("acme.run-{name}"), "input": {}, "options": {"wait": true}}),
            )
            .await;
        assert_eq!(status, 201, "{run}");
        let id = run["id"].as_str().unwrap().to_owned();
        let (status, journal) = self
            .send("GET", &format!("/v1/runs/{id}/journal"), None)
            .await;
        assert_eq!(status, 200, "{journal}");
        (run, journal)
    }
}

fn sqlite(dir: &tempfile::TempDir) -> String {
    dir.path().join("kindgi.db").display().to_string()
}

/// A run that failed with the egress refusal `expected`, the marker nowhere.
fn assert_refused(name: &str, run: &Value, journal: &str, expected: &str) {
    assert_eq!(run["status"], "failed", "{name}: {run}");
    let failure = run.to_string();
    assert!(failure.contains(expected), "{name}: {failure}");
    assert!(
        failure.contains("--allow-private-egress"),
        "{name}: {failure}"
    );
    assert!(!failure.contains(MARKER), "{name}: {failure}");
    assert!(!journal.contains(MARKER), "{name}: {journal}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_tools_never_reach_internal_addresses_directly_by_redirect_or_by_name() {
    let internal = Service::start("127.0.0.2", None).await;
    let internal_url = format!("http://127.0.0.2:{}/latest/meta-data", internal.port);
    let redirector = Service::start("127.0.0.3", Some(internal_url.clone())).await;
    // On 127.0.0.1, reached as `localhost`, which 127.0.0.3/32 does not cover.
    let by_name = Service::start("127.0.0.1", None).await;

    let dir = tempfile::tempdir().unwrap();
    let db = sqlite(&dir);
    let key = support::create_token(&db, "acme").key;
    let server = Server::start_with(&db, &["--allow-private-egress", "127.0.0.3/32"], &[]);
    let api = Api::new(&server, &key);

    api.http_tool_and_flow("direct", &internal_url).await;
    api.http_tool_and_flow(
        "redirected",
        &format!("http://127.0.0.3:{}/go", redirector.port),
    )
    .await;
    api.http_tool_and_flow("named", &format!("http://localhost:{}/", by_name.port))
        .await;
    // The server's own API, by its loopback address, is internal too.
    api.http_tool_and_flow("itself", &format!("{}/health", server.url))
        .await;

    let (run, journal) = api.run("direct").await;
    assert_refused(
        "direct",
        &run,
        &journal,
        &format!(
            "may not reach {internal_url}: 127.0.0.2 is a loopback address (127.0.0.0/8, ::1)"
        ),
    );
    assert!(
        run.to_string()
            .contains("kindgi server --allow-private-egress 127.0.0.2/32"),
        "{run}"
    );
    let (run, journal) = api.run("redirected").await;
    assert_refused(
        "redirected",
        &run,
        &journal,
        &format!("was redirected to {internal_url}: 127.0.0.2 is a loopback address"),
    );
    assert_eq!(redirector.accepted(), 1, "the allowed hop was requested");
    let (run, journal) = api.run("named").await;
    assert_refused(
        "named",
        &run,
        &journal,
        "the host \\\"localhost\\\" resolves to ",
    );
    let (run, journal) = api.run("itself").await;
    assert_refused("itself", &run, &journal, "127.0.0.1 is a loopback address");

    assert_eq!(
        internal.accepted(),
        0,
        "the internal service saw no connection"
    );
    assert_eq!(by_name.accepted(), 0, "nor did the one behind `localhost`");
    assert!(!server.stderr().contains(MARKER), "{}", server.stderr());
    server.stop();

    // The operator lifts the rule for exactly 127.0.0.2: the same run now reads it.
    let server = Server::start_with(&db, &["--allow-private-egress", "127.0.0.2/32"], &[]);
    let api = Api::new(&server, &key);
    let (run, _) = api.run("direct").await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["output"]["secret"], MARKER, "{run}");
    assert_eq!(internal.accepted(), 1);
    // 127.0.0.3 is no longer allowed.
    let (run, _) = api.run("redirected").await;
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run.to_string().contains("127.0.0.3 is a loopback address"),
        "{run}"
    );
    server.stop();
}

fn mcp_body(id: &str, transport: &str, url: &str) -> Value {
    json!({"endpointId": id, "name": id, "transport": transport,
           "config": {"transport": transport, "url": url}, "scopeKind": "tenant"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_endpoints_at_internal_addresses_are_refused_without_a_connection() {
    let internal = Service::start("127.0.0.2", None).await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite(&dir);
    let key = support::create_token(&db, "acme").key;

    // Allowed at first: the endpoint is registered (its sync fails: no MCP server there).
    let server = Server::start_with(&db, &["--allow-private-egress", "127.0.0.2/32"], &[]);
    let api = Api::new(&server, &key);
    let url = format!("http://127.0.0.2:{}/mcp", internal.port);
    let (status, v) = api
        .post(
            "/v1/mcp/endpoints",
            mcp_body("kept", "streamable-http", &url),
        )
        .await;
    assert_eq!(status, 201, "{v}");
    assert!(internal.accepted() > 0, "allowed: the server connected");
    server.stop();

    // Refused now: nothing connects at boot, on register, on a proxy request or at run time.
    let before = internal.accepted();
    let server = Server::start(&db);
    let api = Api::new(&server, &key);
    for (id, transport) in [("fresh", "streamable-http"), ("legacy", "http-sse")] {
        let (status, v) = api
            .post("/v1/mcp/endpoints", mcp_body(id, transport, &url))
            .await;
        assert_eq!(status, 403, "{v}");
        assert_eq!(v["error"]["code"], "host-access-denied", "{v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("127.0.0.2 is a loopback address")
                && message.contains("kindgi server --allow-private-egress 127.0.0.2/32"),
            "{message}"
        );
        assert!(!message.contains(MARKER));
    }
    let (status, v) = api
        .post(
            "/v1/mcp/endpoints",
            mcp_body(
                "named",
                "streamable-http",
                &format!("http://localhost:{}/mcp", internal.port),
            ),
        )
        .await;
    assert_eq!(status, 403, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the host \"localhost\" resolves to "),
        "{v}"
    );
    let (status, text) = api
        .send("GET", "/v1/mcp/endpoints/kept/resources", None)
        .await;
    assert_eq!(status, 502, "{text}");
    assert!(text.contains("127.0.0.2 is a loopback address"), "{text}");
    // An MCP tool published straight to the registry, naming the internal address.
    let project = kindgi_api::projects::default_project_id("acme");
    let tool = json!({
        "projectId": project, "id": "acme.mcp-probe", "version": "1.0.0",
        "description": "probe", "mutating": true, "transport": "mcp",
        "mcpEndpoint": format!("mcp+http://127.0.0.2:{}/mcp", internal.port),
        "input": {"type": "object"}, "output": {},
    });
    let (status, v) = api.post("/v1/tools", tool).await;
    assert_eq!(status, 201, "{v}");
    api.flow("mcp-probe").await;
    let (run, journal) = api.run("mcp-probe").await;
    assert_refused(
        "mcp-probe",
        &run,
        &journal,
        "127.0.0.2 is a loopback address",
    );
    assert_eq!(
        internal.accepted(),
        before,
        "no connection after the policy refused the address"
    );
    // One naming a stdio command: not run (this server has no --allow-stdio-mcp).
    let ran = dir.path().join("ran");
    let tool = json!({
        "projectId": project, "id": "acme.stdio-probe", "version": "1.0.0",
        "description": "probe", "mutating": true, "transport": "mcp",
        "mcpEndpoint": format!("mcp+stdio://touch {}", ran.display()),
        "input": {"type": "object"}, "output": {},
    });
    let (status, v) = api.post("/v1/tools", tool).await;
    assert_eq!(status, 201, "{v}");
    api.flow("stdio-probe").await;
    let (run, _) = api.run("stdio-probe").await;
    assert_eq!(run["status"], "failed", "{run}");
    assert!(run.to_string().contains("--allow-stdio-mcp"), "{run}");
    assert!(!ran.exists(), "the command was not run");
    assert!(
        server.stderr().contains("127.0.0.2 is a loopback address"),
        "the boot sync says why: {}",
        server.stderr()
    );
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_mcp_endpoint_registers_its_tools() {
    // The official Python SDK's FastMCP server listens on 127.0.0.1; only that is allowed.
    let Some(fastmcp) = mcp_support::fastmcp_http("streamable-http") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite(&dir);
    let key = support::create_token(&db, "acme").key;
    let server = Server::start_with(&db, &["--allow-private-egress", "127.0.0.1/32"], &[]);
    let api = Api::new(&server, &key);
    let url = format!("http://127.0.0.1:{}/mcp", fastmcp.port);
    let (status, v) = api
        .post(
            "/v1/mcp/endpoints",
            mcp_body("fast", "streamable-http", &url),
        )
        .await;
    assert_eq!(status, 201, "{v}");
    let (status, text) = api.send("GET", "/v1/mcp/endpoints/fast", None).await;
    assert_eq!(status, 200, "{text}");
    let read: Value = serde_json::from_str(&text).unwrap();
    assert!(
        read["toolIds"].as_array().is_some_and(|t| !t.is_empty()),
        "{read}"
    );
    server.stop();
}

#[test]
fn bad_egress_ranges_stop_the_server_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite(&dir);
    let o = std::process::Command::new(support::BIN)
        .args(["server", "--listen", "127.0.0.1:0", "--database", &db])
        .args(["--allow-private-egress", "10.0.0.0/33"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("\"10.0.0.0/33\" is not a CIDR range"),
        "{stderr}"
    );

    let config = dir.path().join("kindgi.json");
    std::fs::write(
        &config,
        json!({"egress": {"allowPrivate": ["10.1.0.0/16", "nope"]}}).to_string(),
    )
    .unwrap();
    let o = std::process::Command::new(support::BIN)
        .args(["server", "--listen", "127.0.0.1:0", "--database", &db])
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("egress.allowPrivate[1]: \"nope\" is not a CIDR range"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_config_files_allow_list_lifts_the_rule() {
    let internal = Service::start("127.0.0.2", None).await;
    let dir = tempfile::tempdir().unwrap();
    let db = sqlite(&dir);
    let key = support::create_token(&db, "acme").key;
    let config = dir.path().join("kindgi.json");
    std::fs::write(
        &config,
        json!({"egress": {"allowPrivate": ["127.0.0.2/32"]}}).to_string(),
    )
    .unwrap();
    let server = Server::start_with(&db, &["--config", config.to_str().unwrap()], &[]);
    let api = Api::new(&server, &key);
    api.http_tool_and_flow("direct", &format!("http://127.0.0.2:{}/", internal.port))
        .await;
    let (run, _) = api.run("direct").await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["output"]["secret"], MARKER);
    server.stop();
}
