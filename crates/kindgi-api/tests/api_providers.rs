//! Model providers on the Platform API (`/v1/providers*`) over a real loopback socket, on
//! SQLite and PostgreSQL: register, list (paging, `?feature=`), get, check, capabilities,
//! unregister; a bad body is `400 invalid-provider` naming the field; an unknown adapter, a
//! `secret_ref` to a missing secret and a credential in `adapter_config` are
//! `422 provider-config-invalid` with `details.issues`; a second registration of an id is
//! `409 provider-already-registered`; another tenant sees none of it; no answer carries the
//! key. Then an agent run that the model router sends to a registered openai-compat provider
//! (a fake Chat Completions server on loopback): the key comes from the tenant secret
//! (`Authorization: Bearer <value>`), the model from the agent's `preferredModel`. And the
//! official CLI's `providers register|list|get|unregister` against this server (skipped
//! without the CLI, failed when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::{AppState, router, serve};
use kindgi_runtime::{AgentSpec, Runtime};
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use kindgi_store::values::ValuesStore;
use serde_json::{Value, json};

const KEY_VALUE: &str = "sk-provider-Xq81vLm2Zt";
const OPENAI: &str = "@kindgi/adapter-model-openai-compat";

struct Server {
    url: String,
    acme: String,
    other: String,
    http: reqwest::Client,
    stop: kindgi_serve::CancellationToken,
    _db: TestDatabase,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Server {
    async fn send(
        &self,
        key: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut r = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(key)
            .timeout(std::time::Duration::from_secs(30));
        if let Some(b) = body {
            r = r.json(b);
        }
        let r = r.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        assert!(
            !text.contains(KEY_VALUE),
            "an answer carries the key: {text}"
        );
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
    async fn get(&self, path: &str) -> (u16, Value) {
        self.send(&self.acme, reqwest::Method::GET, path, None)
            .await
    }
    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(&self.acme, reqwest::Method::POST, path, Some(body))
            .await
    }
}

async fn server(kind: DatabaseKind, agents: &[AgentSpec]) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let (seal, _) = SealKey::generate();
    let values = ValuesStore::with_key(db.db.clone(), Some(seal.clone())).serving("local");
    let rt = Runtime::over(db.db.ports())
        .call_values(Arc::new(values))
        .build();
    for a in agents {
        rt.agents().insert_for(Some("acme"), a.clone());
    }
    let state = AppState::new(db.db.clone()).with_values(ValuesConfig::new("local", Some(seal)));
    let acme = state.tokens.create("acme", None).await.unwrap().key;
    let other = state.tokens.create("other", None).await.unwrap().key;
    let app = router(state.with_runtime(rt));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = kindgi_serve::CancellationToken::new();
    let serving = stop.clone();
    tokio::spawn(async move {
        serve(listener, app, kindgi_serve::Limits::default(), serving).await;
    });
    Server {
        url,
        acme,
        other,
        http: reqwest::Client::new(),
        stop,
        _db: db,
    }
}

async fn set_secret(s: &Server, name: &str, value: &str) {
    let body = json!({"scope": {"kind": "tenant"}, "envName": "local", "name": name,
                      "value": value, "writeMode": "create-new"});
    let (status, answer) = s.post("/v1/secrets", &body).await;
    assert_eq!(status, 201, "{answer}");
}

fn model(name: &str, features: &[&str]) -> Value {
    json!({"name": name, "contextWindow": 128000, "features": features,
           "cost": {"promptUsdPer1kTokens": 0.5, "completionUsdPer1kTokens": 1.5}})
}

fn body(id: &str, base_url: &str) -> Value {
    json!({
        "metadata": {"id": id, "region": "unspecified", "defaultModel": "gpt-small",
                     "models": [model("gpt-small", &["tool-use"]), model("gpt-large", &["tool-use", "vision"])]},
        "adapter_id": OPENAI,
        "secret_ref": {"envName": "local", "name": "OPENAI_KEY"},
        "adapter_config": {"baseUrl": base_url}
    })
}

fn issue_paths(answer: &Value) -> Vec<String> {
    answer["error"]["details"]["issues"]
        .as_array()
        .unwrap_or_else(|| panic!("no issues: {answer}"))
        .iter()
        .map(|i| i["path"].as_str().unwrap().to_owned())
        .collect()
}

async fn the_registry_routes(kind: DatabaseKind) {
    let s = server(kind, &[]).await;
    set_secret(&s, "OPENAI_KEY", KEY_VALUE).await;

    // Bad bodies: 400 naming the field.
    for (bad, path) in [
        (json!({"adapter_id": OPENAI}), "/metadata"),
        (
            json!({"metadata": {"id": "p", "region": "Bad Region", "models": [model("m", &[])]}, "adapter_id": OPENAI}),
            "/metadata/region",
        ),
        (
            json!({"metadata": {"id": "p", "region": "eu", "models": []}, "adapter_id": OPENAI}),
            "/metadata/models",
        ),
        (
            json!({"metadata": {"id": "p", "region": "eu", "models": [model("m", &["telepathy"])]}, "adapter_id": OPENAI}),
            "/metadata/models/0/features/0",
        ),
        (
            json!({"metadata": {"id": "p", "region": "eu", "models": [model("m", &[]), model("m", &[])]}, "adapter_id": OPENAI}),
            "/metadata/models/1/name",
        ),
        (
            json!({"metadata": {"id": "p", "region": "eu", "models": [model("m", &[])]}, "adapter_id": OPENAI, "apiKey": "x"}),
            "/apiKey",
        ),
        (
            json!({"metadata": {"id": "p", "region": "eu", "models": [model("m", &[])]}}),
            "/adapter_id",
        ),
    ] {
        let (status, answer) = s.post("/v1/providers", &bad).await;
        assert_eq!(status, 400, "{bad}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid-provider", "{answer}");
        assert_eq!(answer["error"]["details"]["path"], path, "{answer}");
    }

    // Refused by the adapter or this runtime: 422 with the issues.
    let mut unknown = body("p", "http://127.0.0.1:9/v1");
    unknown["adapter_id"] = json!("@kindgi/adapter-model-nope");
    let (status, answer) = s.post("/v1/providers", &unknown).await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (422, Some("provider-config-invalid")),
        "{answer}"
    );
    assert_eq!(issue_paths(&answer), ["/adapter_id"]);

    let mut missing = body("p", "http://127.0.0.1:9/v1");
    missing["secret_ref"]["name"] = json!("NO_SUCH_KEY");
    let (status, answer) = s.post("/v1/providers", &missing).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(issue_paths(&answer), ["/secret_ref"]);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("NO_SUCH_KEY"),
        "{answer}"
    );

    let mut credential = body("p", "http://127.0.0.1:9/v1");
    credential["adapter_config"]["apiKey"] = json!("sk-inline");
    let (status, answer) = s.post("/v1/providers", &credential).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(issue_paths(&answer), ["/adapter_config/apiKey"]);
    assert!(
        answer.to_string().contains("credentials go in secret_ref"),
        "{answer}"
    );

    let mut bad_url = body("p", "ftp://example.com");
    bad_url["send_traceparent"] = json!(true);
    let (status, answer) = s.post("/v1/providers", &bad_url).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(issue_paths(&answer), ["/adapter_config/baseUrl"]);

    // Register, then the same id again.
    let (status, answer) = s
        .post(
            "/v1/providers",
            &body("openai-main", "http://127.0.0.1:9/v1"),
        )
        .await;
    assert_eq!(
        (status, answer.clone()),
        (201, json!({"providerId": "openai-main"})),
        "{answer}"
    );
    let (status, answer) = s
        .post(
            "/v1/providers",
            &body("openai-main", "http://127.0.0.1:9/v1"),
        )
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (409, Some("provider-already-registered")),
        "{answer}"
    );
    let mut local = body("local-llm", "http://127.0.0.1:9/v1");
    local["metadata"]["models"] = json!([model("llama", &[])]);
    local["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("defaultModel");
    local.as_object_mut().unwrap().remove("secret_ref");
    let (status, answer) = s.post("/v1/providers", &local).await;
    assert_eq!(status, 201, "{answer}");

    // Get, list, paging, ?feature=.
    let (status, got) = s.get("/v1/providers/openai-main").await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(
        got,
        body("openai-main", "")["metadata"],
        "the metadata as registered"
    );
    let (_, page) = s.get("/v1/providers?limit=1").await;
    assert_eq!(page["data"][0]["id"], "local-llm", "{page}");
    assert_eq!(page["hasMore"], true);
    let cursor = page["nextCursor"].as_str().unwrap().to_owned();
    let (_, page) = s
        .get(&format!("/v1/providers?limit=1&cursor={cursor}"))
        .await;
    assert_eq!(page["data"][0]["id"], "openai-main", "{page}");
    assert_eq!(page["hasMore"], false);
    let (_, page) = s.get("/v1/providers?feature=vision").await;
    let ids: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["openai-main"], "{page}");

    // Check: the adapter's static check, the secret by name only.
    let (status, check) = s.get("/v1/providers/openai-main/check").await;
    assert_eq!(status, 200, "{check}");
    assert_eq!(
        check,
        json!({"providerId": "openai-main", "adapterId": OPENAI, "checked": true, "issues": [],
                             "secretRef": {"envName": "local", "name": "OPENAI_KEY"}})
    );

    // Capabilities: one descriptor per feature of its models.
    let (status, caps) = s.get("/v1/providers/openai-main/capabilities").await;
    assert_eq!(status, 200, "{caps}");
    let data = caps["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "{caps}");
    assert_eq!(data[0]["id"], "feature:tool-use");
    assert_eq!(
        data[0]["providers"],
        json!([{"providerId": "openai-main", "models": ["gpt-small", "gpt-large"]}])
    );
    assert_eq!(data[1]["feature"], "vision");
    assert_eq!(data[1]["kind"], "llm-inference");
    assert!(data[1]["description"].is_string());

    // Another tenant sees none of it.
    let (status, answer) = s
        .send(
            &s.other,
            reqwest::Method::GET,
            "/v1/providers/openai-main",
            None,
        )
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (404, Some("provider-not-found")),
        "{answer}"
    );
    let (_, page) = s
        .send(&s.other, reqwest::Method::GET, "/v1/providers", None)
        .await;
    assert_eq!(page["data"], json!([]), "{page}");
    let (status, _) = s
        .send(
            &s.other,
            reqwest::Method::POST,
            "/v1/providers/openai-main/unregister",
            Some(&json!({})),
        )
        .await;
    assert_eq!(status, 404);

    // Unregister: gone from get, list, check and capabilities; the id is free again.
    let (status, answer) = s
        .post("/v1/providers/openai-main/unregister", &json!({}))
        .await;
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"providerId": "openai-main", "unregistered": true})
        )
    );
    for path in [
        "/v1/providers/openai-main",
        "/v1/providers/openai-main/check",
        "/v1/providers/openai-main/capabilities",
    ] {
        let (status, answer) = s.get(path).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (404, Some("provider-not-found")),
            "{path}: {answer}"
        );
    }
    let (status, _) = s
        .post("/v1/providers/openai-main/unregister", &json!({}))
        .await;
    assert_eq!(status, 404, "already unregistered");
    let (_, page) = s.get("/v1/providers").await;
    assert_eq!(page["data"].as_array().unwrap().len(), 1, "{page}");
    let (status, _) = s
        .post(
            "/v1/providers",
            &body("openai-main", "http://127.0.0.1:9/v1"),
        )
        .await;
    assert_eq!(status, 201, "registers again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_routes_on_sqlite() {
    the_registry_routes(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_routes_on_postgres() {
    the_registry_routes(DatabaseKind::Postgres).await;
}

/// A Chat Completions server keeping each request's headers and body.
#[derive(Clone, Default)]
struct Fake {
    seen: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
}

async fn chat(State(f): State<Fake>, headers: HeaderMap, Json(body): Json<Value>) -> Json<Value> {
    f.seen.lock().unwrap().push((headers, body));
    Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-large",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Shipped yesterday."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}
    }))
}

async fn fake() -> (String, Fake) {
    let fake = Fake::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), fake)
}

async fn an_agent_turn_calls_the_registered_provider(kind: DatabaseKind) {
    let agent = AgentSpec::from_value(json!({
        "id": "acme.support", "version": "1.0.0", "instructions": "Answer briefly.",
        "preferredProvider": "openai-main", "preferredModel": "gpt-large"
    }))
    .unwrap();
    let plain = AgentSpec::new("acme.plain").with_version("1.0.0");
    let s = server(kind, &[agent, plain]).await;
    let (base, fake) = fake().await;

    // No provider registered yet: the host's model (dev-echo) answers, as before.
    let (status, run) = s
        .post(
            "/v1/runs",
            &json!({"agent": "acme.plain", "input": {"userMessage": "hi"}}),
        )
        .await;
    assert_eq!(status, 201, "{run}");
    assert_eq!(run["output"]["providerId"], "dev-echo", "{run}");

    set_secret(&s, "OPENAI_KEY", KEY_VALUE).await;
    let (status, answer) = s.post("/v1/providers", &body("openai-main", &base)).await;
    assert_eq!(status, 201, "{answer}");
    let (status, run) = s
        .post(
            "/v1/runs",
            &json!({"agent": "acme.support", "input": {"userMessage": "Where is ord_1001?"}}),
        )
        .await;
    assert_eq!(status, 201, "{run}");
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["output"]["text"], "Shipped yesterday.", "{run}");
    assert_eq!(run["output"]["providerId"], "openai-main", "{run}");
    assert_eq!(run["output"]["model"], "gpt-large", "{run}");
    assert!(run["output"].get("warnings").is_none(), "{run}");

    // An agent that names no model gets the provider's defaultModel.
    let (status, run) = s
        .post(
            "/v1/runs",
            &json!({"agent": "acme.plain", "input": {"userMessage": "hi"}}),
        )
        .await;
    assert_eq!(status, 201, "{run}");
    assert_eq!(
        (
            run["output"]["providerId"].as_str(),
            run["output"]["model"].as_str()
        ),
        (Some("openai-main"), Some("gpt-small")),
        "{run}"
    );

    let seen = fake.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "one model call per turn");
    let auth = seen[0].0.get("authorization").and_then(|v| v.to_str().ok());
    assert_eq!(
        auth,
        Some(format!("Bearer {KEY_VALUE}").as_str()),
        "the key from the tenant secret"
    );
    assert_eq!(
        seen[0].1["model"], "gpt-large",
        "the agent's preferredModel"
    );
    assert_eq!(
        seen[1].1["model"], "gpt-small",
        "the provider's defaultModel"
    );
    // The key is in no stored run data either.
    let (_, journal) = s
        .get(&format!("/v1/runs/{}/journal", run["id"].as_str().unwrap()))
        .await;
    assert!(!journal.to_string().contains(KEY_VALUE));

    // A provider whose key's secret is gone fails the turn naming provider, adapter, setting.
    let (status, _) = s
        .send(
            &s.acme,
            reqwest::Method::DELETE,
            "/v1/secrets/OPENAI_KEY?envName=local&scopeKind=tenant&hard=true",
            None,
        )
        .await;
    assert!(status < 300, "{status}");
    let (_, run) = s
        .post(
            "/v1/runs",
            &json!({"agent": "acme.support", "input": {"userMessage": "again"}}),
        )
        .await;
    assert_eq!(run["status"], "failed", "{run}");
    let why = run["failureMessage"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let why = if why.is_empty() { run.to_string() } else { why };
    assert!(
        why.contains("openai-main") && why.contains(OPENAI) && why.contains("/secret_ref"),
        "{why}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_turn_calls_the_registered_provider_on_sqlite() {
    an_agent_turn_calls_the_registered_provider(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_turn_calls_the_registered_provider_on_postgres() {
    an_agent_turn_calls_the_registered_provider(DatabaseKind::Postgres).await;
}

/// `POST /v1/runs` for `agent`, with an incoming `traceparent` when given.
async fn run_traced(s: &Server, agent: &str, traceparent: Option<&str>) -> Value {
    let mut r = s
        .http
        .post(format!("{}/v1/runs", s.url))
        .bearer_auth(&s.acme)
        .json(&json!({"agent": agent, "input": {"userMessage": "hi"}}));
    if let Some(tp) = traceparent {
        r = r.header("traceparent", tp);
    }
    let r = r.send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let run: Value = r.json().await.unwrap();
    assert_eq!(run["status"], "completed", "{run}");
    run
}

async fn send_traceparent_carries_the_runs_trace(kind: DatabaseKind) {
    let traced = AgentSpec::from_value(json!({
        "id": "acme.traced", "version": "1.0.0", "instructions": "Answer.", "preferredProvider": "traced"
    }))
    .unwrap();
    let quiet = AgentSpec::from_value(json!({
        "id": "acme.quiet", "version": "1.0.0", "instructions": "Answer.", "preferredProvider": "quiet"
    }))
    .unwrap();
    let s = server(kind, &[traced, quiet]).await;
    let (base, fake) = fake().await;
    set_secret(&s, "OPENAI_KEY", KEY_VALUE).await;
    let mut opted = body("traced", &base);
    opted["send_traceparent"] = json!(true);
    let (status, answer) = s.post("/v1/providers", &opted).await;
    assert_eq!(status, 201, "{answer}");
    let (status, answer) = s.post("/v1/providers", &body("quiet", &base)).await;
    assert_eq!(status, 201, "{answer}");

    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let incoming = format!("00-{trace}-00f067aa0ba902b7-01");
    let run = run_traced(&s, "acme.traced", Some(&incoming)).await;
    assert_eq!(run["output"]["providerId"], "traced", "{run}");
    run_traced(&s, "acme.quiet", Some(&incoming)).await;
    // A run started without one has a trace of its own, and the provider gets that.
    let own = run_traced(&s, "acme.traced", None).await;
    let own_trace = own["traceId"]
        .as_str()
        .unwrap_or_else(|| panic!("{own}"))
        .to_owned();

    let seen = fake.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "one model call per turn");
    let header = |i: usize| {
        seen[i]
            .0
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let sent = header(0).expect("the opted-in provider gets a traceparent");
    let parts: Vec<&str> = sent.split('-').collect();
    assert_eq!(parts.len(), 4, "{sent}");
    assert_eq!(
        (parts[0], parts[1], parts[3]),
        ("00", trace, "01"),
        "{sent}"
    );
    assert_eq!(parts[2].len(), 16, "{sent}");
    assert_ne!(parts[2], "00f067aa0ba902b7", "a span of its own");
    assert_eq!(
        header(1),
        None,
        "a provider registered without it gets none"
    );
    let third = header(2).expect("a traceparent on every call");
    assert!(
        third.starts_with(&format!("00-{own_trace}-")),
        "{third} vs {own_trace}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_traceparent_carries_the_runs_trace_on_sqlite() {
    send_traceparent_carries_the_runs_trace(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_traceparent_carries_the_runs_trace_on_postgres() {
    send_traceparent_carries_the_runs_trace(DatabaseKind::Postgres).await;
}

fn tool_body(id: &str, secret: &str) -> Value {
    json!({
        "projectId": kindgi_api::projects::default_project_id("acme"),
        "id": id, "description": "Look an order up", "version": "1.0.0",
        "input": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"], "additionalProperties": false},
        "output": {"type": "object"},
        "effects": [{"kind": "reads", "resource": "orders"}],
        "mutating": false,
        "needsSpec": {"secrets": {secret: {"type": "string"}}}
    })
}

fn mcp_body(id: &str, secret: &str) -> Value {
    json!({"endpointId": id, "name": "Orders", "transport": "streamable-http",
           "config": {"transport": "streamable-http", "url": "http://127.0.0.1:9/mcp"},
           "secretRef": {"envName": "local", "name": secret}, "scopeKind": "tenant"})
}

async fn a_provider_key_is_its_providers_own(kind: DatabaseKind) {
    let s = server(kind, &[]).await;
    for name in ["SHARED_KEY", "MCP_KEY", "OPENAI_KEY"] {
        set_secret(&s, name, KEY_VALUE).await;
    }
    let (status, answer) = s
        .post("/v1/tools", &tool_body("acme.orders", "SHARED_KEY"))
        .await;
    assert_eq!(status, 201, "{answer}");
    let (status, answer) = s
        .post("/v1/tools", &tool_body("acme.refunds", "SHARED_KEY"))
        .await;
    assert_eq!(status, 201, "{answer}");
    let (status, answer) = s
        .post("/v1/mcp/endpoints", &mcp_body("orders-mcp", "MCP_KEY"))
        .await;
    assert_eq!(status, 201, "{answer}");

    // A secret a tool already uses: 409, naming every user; nothing stored.
    let mut shared = body("shared", "http://127.0.0.1:9/v1");
    shared["secret_ref"] = json!({"envName": "local", "name": "SHARED_KEY"});
    let (status, answer) = s.post("/v1/providers", &shared).await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "provider-key-in-use", "{answer}");
    assert_eq!(
        answer["error"]["details"],
        json!({"providerId": "shared", "secret": "SHARED_KEY", "usedBy": [
            {"kind": "tool", "id": "acme.orders", "version": "1.0.0"},
            {"kind": "tool", "id": "acme.refunds", "version": "1.0.0"}]}),
        "{answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"SHARED_KEY\"")
            && message.contains("tool \"acme.orders\" and 1 more")
            && message.contains("Store the provider's key under its own name"),
        "{message}"
    );
    let (status, _) = s.get("/v1/providers/shared").await;
    assert_eq!(status, 404, "nothing is stored");

    // One an MCP endpoint uses.
    let mut mcp = body("via-mcp", "http://127.0.0.1:9/v1");
    mcp["secret_ref"] = json!({"envName": "local", "name": "MCP_KEY"});
    let (status, answer) = s.post("/v1/providers", &mcp).await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(
        answer["error"]["details"]["usedBy"],
        json!([{"kind": "mcp-endpoint", "id": "orders-mcp"}]),
        "{answer}"
    );

    // A key of its own registers, and from then on tools and endpoints can't name it.
    let (status, answer) = s
        .post("/v1/providers", &body("own", "http://127.0.0.1:9/v1"))
        .await;
    assert_eq!(status, 201, "{answer}");
    let (status, answer) = s
        .post("/v1/tools", &tool_body("acme.llm", "OPENAI_KEY"))
        .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], "provider-key-refused", "{answer}");
    assert_eq!(
        answer["error"]["details"],
        json!({"secret": "OPENAI_KEY", "providerId": "own"})
    );
    let (status, answer) = s
        .post("/v1/mcp/endpoints", &mcp_body("llm-mcp", "OPENAI_KEY"))
        .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], "provider-key-refused", "{answer}");
    let (status, _) = s.get("/v1/mcp/endpoints/llm-mcp").await;
    assert_eq!(status, 404, "nothing is stored");
    // Another tenant's provider keys are not this one's concern.
    let (status, answer) = s
        .send(
            &s.other,
            reqwest::Method::POST,
            "/v1/tools",
            Some(&{
                let mut t = tool_body("other.llm", "OPENAI_KEY");
                t["projectId"] = json!(kindgi_api::projects::default_project_id("other"));
                t
            }),
        )
        .await;
    assert_eq!(status, 201, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_key_is_its_providers_own_on_sqlite() {
    a_provider_key_is_its_providers_own(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_key_is_its_providers_own_on_postgres() {
    a_provider_key_is_its_providers_own(DatabaseKind::Postgres).await;
}

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

async fn cli(
    bin: &PathBuf,
    s: &Server,
    home: &std::path::Path,
    args: &[&str],
) -> (i32, String, String) {
    let out = tokio::process::Command::new(bin)
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("KINDGI_API_URL", &s.url)
        .env("KINDGI_API_TOKEN", &s.acme)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stdout.contains(KEY_VALUE) && !stderr.contains(KEY_VALUE));
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

async fn cli_json(bin: &PathBuf, s: &Server, home: &std::path::Path, args: &[&str]) -> Value {
    let (code, stdout, stderr) = cli(bin, s, home, args).await;
    assert_eq!(code, 0, "{args:?}: {stdout}\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_cli_registers_lists_and_gets_providers() {
    let Some(bin) = official_cli() else { return };
    let s = server(DatabaseKind::Sqlite, &[]).await;
    set_secret(&s, "OPENAI_KEY", KEY_VALUE).await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let spec = body("openai-main", "http://127.0.0.1:9/v1").to_string();
    let registered = cli_json(
        &bin,
        &s,
        h,
        &["providers", "register", &format!("--spec={spec}"), "--json"],
    )
    .await;
    assert_eq!(registered["providerId"], "openai-main", "{registered}");

    let file = h.join("local.json");
    let mut local = body("local-llm", "http://127.0.0.1:9/v1");
    local.as_object_mut().unwrap().remove("secret_ref");
    std::fs::write(&file, local.to_string()).unwrap();
    let registered = cli_json(
        &bin,
        &s,
        h,
        &[
            "providers",
            "register",
            &format!("--spec=@{}", file.display()),
            "--json",
        ],
    )
    .await;
    assert_eq!(registered["providerId"], "local-llm", "{registered}");

    let list = cli_json(&bin, &s, h, &["providers", "list", "--json"]).await;
    let text = list.to_string();
    assert!(
        text.contains("openai-main") && text.contains("local-llm"),
        "{list}"
    );
    let list = cli_json(&bin, &s, h, &["providers", "list", "--limit=1", "--json"]).await;
    assert!(
        list.to_string().contains("local-llm") && !list.to_string().contains("openai-main"),
        "{list}"
    );

    let got = cli_json(&bin, &s, h, &["providers", "get", "openai-main", "--json"]).await;
    assert_eq!(got["id"], "openai-main", "{got}");
    assert_eq!(got["defaultModel"], "gpt-small", "{got}");

    let (code, stdout, stderr) = cli(
        &bin,
        &s,
        h,
        &["providers", "register", &format!("--spec={spec}"), "--json"],
    )
    .await;
    assert_ne!(code, 0, "{stdout}");
    assert!(
        format!("{stdout}{stderr}").contains("provider-already-registered"),
        "{stdout}\n{stderr}"
    );

    let gone = cli_json(
        &bin,
        &s,
        h,
        &["providers", "unregister", "local-llm", "--json"],
    )
    .await;
    assert_eq!(gone["unregistered"], true, "{gone}");
    let (code, stdout, stderr) =
        cli(&bin, &s, h, &["providers", "get", "local-llm", "--json"]).await;
    assert_ne!(code, 0, "{stdout}");
    // The official CLI prints not-found codes under its `not-found` tag, with our message.
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains("not-found") && said.contains("No model provider with id \"local-llm\""),
        "{said}"
    );
}
