//! The cross-cutting `/v1` contract (platform-api.md §1, §2; §15 cases 1–11) on a real
//! loopback server with a real HTTP client, over SQLite and PostgreSQL: public routes,
//! every 401, unknown routes, request ids, trace context, `no-store`, the pre-auth 413, body
//! depth and parse errors, and `Idempotency-Key`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use reqwest::StatusCode;
use serde_json::{Value, json};

struct Env {
    db: TestDatabase,
    url: String,
    http: reqwest::Client,
    key: String,
    /// Another key of the same tenant (another caller).
    key2: String,
    revoked: String,
    expired: String,
}

fn tool(id: &str, hold: bool) -> Tool {
    Tool::define(id)
        .version("1.0.0")
        .description("test tool")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(
            move |input: Value, ctx: kindgi_tools::ToolContext| async move {
                if hold {
                    ctx.signal.cancelled().await;
                }
                Ok::<Value, HandlerError>(input)
            },
        )
        .build()
        .unwrap()
}

fn flow(id: &str, tool: &str) -> String {
    json!({
        "id": id, "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": tool}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    })
    .to_string()
}

async fn env(kind: DatabaseKind) -> Env {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    rt.tools().insert_tool(tool("acme.echo", false));
    rt.tools().insert_tool(tool("acme.hold", true));
    rt.flows()
        .insert_json(&flow("acme.echo", "acme.echo"))
        .unwrap();
    rt.flows()
        .insert_json(&flow("acme.hold", "acme.hold"))
        .unwrap();
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    // Another person of the same tenant (idempotency keys are per caller: `user:<id>`).
    let key2 = state
        .tokens
        .mint(&kindgi_store::tokens::NewToken {
            tenant: "acme".into(),
            principal: Some(kindgi_store::tokens::Principal {
                kind: kindgi_store::tokens::PrincipalKind::User,
                id: "someone-else".into(),
            }),
            role: kindgi_store::tokens::KeyRole::Admin,
            capabilities: Vec::new(),
            label: None,
            project_id: None,
            created_by: None,
            expires_at: None,
        })
        .await
        .unwrap()
        .key;
    let r = state.tokens.create("acme", None).await.unwrap();
    state.tokens.revoke(&r.key_id).await.unwrap();
    let past = chrono::Utc::now().timestamp_millis() - 60_000;
    let expired = state.tokens.create("acme", Some(past)).await.unwrap().key;
    let app = router(state.with_runtime(rt));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Env {
        db,
        url,
        http: reqwest::Client::new(),
        key,
        key2,
        revoked: r.key,
        expired,
    }
}

macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Postgres).await })*
        }
    };
}

both_stores!(
    public_routes_and_every_401,
    unknown_routes,
    request_ids_trace_and_no_store,
    bodies_are_bounded_and_parsed,
    idempotency_keys,
);

struct Answer {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// An envelope of `code` whose `requestId` is the `X-Request-Id` header.
    fn assert_error(&self, status: u16, code: &str, message: Option<&str>) {
        assert_eq!(self.status.as_u16(), status, "{}", self.body);
        assert_eq!(self.body["error"]["code"], code, "{}", self.body);
        if let Some(m) = message {
            assert_eq!(self.body["error"]["message"], m, "{}", self.body);
        }
        assert_eq!(
            self.body["error"]["requestId"].as_str(),
            self.header("x-request-id")
        );
    }
}

async fn answer(r: reqwest::RequestBuilder) -> Answer {
    let r = r.send().await.unwrap();
    let status = r.status();
    let headers = r.headers().clone();
    let bytes = r.bytes().await.unwrap();
    Answer {
        status,
        headers,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    }
}

impl Env {
    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.get(format!("{}{path}", self.url))
    }
    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.post(format!("{}{path}", self.url))
    }
}

/// Cases 1–3.
async fn public_routes_and_every_401(kind: DatabaseKind) {
    let e = env(kind).await;
    let h = answer(e.get("/health")).await;
    assert_eq!(h.status, 200);
    assert_eq!(h.body, json!({"ok": true}));
    assert!(
        h.header("cache-control").is_none(),
        "no no-store on /health"
    );
    let doc = answer(e.get("/v1/openapi.json")).await;
    assert_eq!(doc.status, 200);
    assert!(doc.body["paths"].get("/v1/runs").is_some());
    let cases: Vec<(Option<String>, &str, &str)> = vec![
        (None, "auth-missing", "Authorization header is required"),
        (
            Some(String::new()),
            "auth-missing",
            "Authorization header is required",
        ),
        (
            Some("Basic x".into()),
            "auth-missing",
            "Authorization header must be \"Bearer <token>\"",
        ),
        (
            Some("Bearer   ".into()),
            "auth-missing",
            "Bearer token is empty",
        ),
        (
            Some("Bearer kgi_bt_nobody".into()),
            "auth-missing",
            "Bearer token is not recognized",
        ),
        (
            Some(format!("Bearer {}", e.revoked)),
            "auth-revoked",
            "Bearer token has been revoked",
        ),
        (
            Some(format!("Bearer {}", e.expired)),
            "auth-expired",
            "Bearer token has expired",
        ),
    ];
    for (header, code, message) in cases {
        let mut r = e.get("/v1/runs");
        if let Some(h) = &header {
            r = r.header("authorization", h);
        }
        let a = answer(r).await;
        a.assert_error(401, code, Some(message));
        assert!(a.header("www-authenticate").is_none());
    }
    // The scheme in any case, the token trimmed.
    let a = answer(
        e.get("/v1/runs")
            .header("authorization", format!("bEaReR  {} ", e.key)),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    e.db.cleanup().await.unwrap();
}

/// Case 4.
async fn unknown_routes(kind: DatabaseKind) {
    let e = env(kind).await;
    answer(e.get("/v1/nope"))
        .await
        .assert_error(401, "auth-missing", None);
    let a = answer(e.get("/v1/nope").bearer_auth(&e.key)).await;
    a.assert_error(404, "route-not-found", None);
    assert!(
        a.body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("No route registered for GET /v1/nope.")
    );
    let a = answer(e.get("/v1/runs/").bearer_auth(&e.key)).await;
    a.assert_error(404, "route-not-found", None);
    assert!(a.header("location").is_none(), "no redirect");
    let a = answer(
        e.http
            .delete(format!("{}/v1/runs", e.url))
            .bearer_auth(&e.key),
    )
    .await;
    a.assert_error(404, "route-not-found", None);
    e.db.cleanup().await.unwrap();
}

/// Cases 5 and 6.
async fn request_ids_trace_and_no_store(kind: DatabaseKind) {
    let e = env(kind).await;
    let a = answer(
        e.get("/v1/runs")
            .bearer_auth(&e.key)
            .header("x-request-id", "abc-123"),
    )
    .await;
    assert_eq!(a.header("x-request-id"), Some("abc-123"));
    assert_eq!(a.header("cache-control"), Some("no-store"));
    let a = answer(e.get("/v1/runs/x").bearer_auth(&e.key)).await;
    let id = a.header("x-request-id").unwrap();
    let uuid = id.strip_prefix("req-").unwrap();
    assert_eq!(uuid::Uuid::parse_str(uuid).unwrap().get_version_num(), 4);
    assert_eq!(a.body["error"]["requestId"], id);
    assert_eq!(a.header("cache-control"), Some("no-store"), "errors too");
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let a = answer(
        e.get("/v1/runs")
            .bearer_auth(&e.key)
            .header("traceparent", format!("00-{trace}-b7ad6b7169203331-01")),
    )
    .await;
    let tr = a.header("traceresponse").unwrap().to_owned();
    let parts: Vec<&str> = tr.split('-').collect();
    assert_eq!((parts[0], parts[1], parts[3]), ("00", trace, "01"));
    assert_eq!(parts[2].len(), 16);
    assert_ne!(parts[2], "b7ad6b7169203331", "a new span");
    let a = answer(e.get("/health")).await;
    assert!(a.header("traceresponse").is_some_and(|t| t.len() == 55));
    // The start records the trace; SSE answers carry no-store too.
    let run = answer(
        e.post("/v1/runs")
            .bearer_auth(&e.key)
            .header("traceparent", format!("00-{trace}-b7ad6b7169203331-01"))
            .json(&json!({"flow": "acme.echo", "input": {}})),
    )
    .await;
    assert_eq!(run.body["traceId"], trace);
    let id = run.body["id"].as_str().unwrap();
    let s = e
        .get(&format!("/v1/runs/{id}/stream"))
        .bearer_auth(&e.key)
        .send()
        .await
        .unwrap();
    assert_eq!(s.headers()["cache-control"], "no-store");
    assert_eq!(
        s.headers()["content-type"],
        "text/event-stream; charset=utf-8"
    );
    let text = s.text().await.unwrap();
    assert!(text.contains("event: run.completed"), "{text}");
    e.db.cleanup().await.unwrap();
}

/// Cases 7 and 8.
async fn bodies_are_bounded_and_parsed(kind: DatabaseKind) {
    let e = env(kind).await;
    let big = vec![b' '; 11 * 1024 * 1024];
    let a = answer(
        e.post("/v1/runs")
            .header("content-type", "application/json")
            .body(big),
    )
    .await;
    a.assert_error(
        413,
        "request-too-large",
        Some("The request body is over the limit of 10485760 bytes"),
    );
    assert_eq!(a.body["error"]["details"]["maxBytes"], 10485760);
    assert!(
        a.header("cache-control").is_none(),
        "the pre-auth 413 has no no-store"
    );
    let deep = format!("{{\"flow\":{}1{}}}", "[".repeat(200), "]".repeat(200));
    let a = answer(
        e.post("/v1/runs")
            .bearer_auth(&e.key)
            .header("content-type", "application/json")
            .body(deep),
    )
    .await;
    a.assert_error(400, "bad-input", None);
    assert_eq!(a.body["error"]["details"]["maxDepth"], 128);
    let a = answer(e.post("/v1/runs").bearer_auth(&e.key).body("{nope")).await;
    a.assert_error(400, "bad-input", Some("Request body must be valid JSON"));
    let a = answer(e.post("/v1/runs").bearer_auth(&e.key).body("\"x\"")).await;
    a.assert_error(400, "bad-input", Some("Request body must be an object"));
    e.db.cleanup().await.unwrap();
}

async fn count_runs(e: &Env, flow: &str) -> usize {
    let a = answer(
        e.get(&format!("/v1/runs?flowId={flow}&limit=100"))
            .bearer_auth(&e.key),
    )
    .await;
    a.body["data"].as_array().unwrap().len()
}

/// Cases 9–11.
async fn idempotency_keys(kind: DatabaseKind) {
    let e = env(kind).await;
    let body = json!({"flow": "acme.echo", "input": {"n": 1}}).to_string();
    let send = |key: &str, who: &str, body: &str| {
        e.post("/v1/runs")
            .bearer_auth(who)
            .header("idempotency-key", key)
            .header("content-type", "application/json")
            .body(body.to_owned())
    };
    let first = answer(send("k1", &e.key, &body)).await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert!(first.header("x-idempotent-replay").is_none());
    let second = answer(send("k1", &e.key, &body)).await;
    assert_eq!(second.status, 201);
    assert_eq!(second.body, first.body);
    assert_eq!(second.header("x-idempotent-replay"), Some("true"));
    assert_eq!(count_runs(&e, "acme.echo").await, 1, "one run created");
    let other = json!({"flow": "acme.echo", "input": {"n": 2}}).to_string();
    answer(send("k1", &e.key, &other)).await.assert_error(
        409,
        "idempotency-key-body-mismatch",
        None,
    );
    // Case 11: a 4xx is not stored; another caller's same key runs on its own.
    let bad = answer(send("k2", &e.key, "{\"flow\": \"acme.echo\"}")).await;
    bad.assert_error(400, "bad-input", Some("`input` is required"));
    assert_eq!(answer(send("k2", &e.key, &body)).await.status, 201);
    let theirs = answer(send("k1", &e.key2, &body)).await;
    assert_eq!(theirs.status, 201);
    assert!(theirs.header("x-idempotent-replay").is_none());
    assert_ne!(theirs.body["id"], first.body["id"]);
    // Case 10, in flight: the first request is still waiting for its run.
    let hold = json!({"flow": "acme.hold", "input": {}}).to_string();
    let waiting = tokio::spawn(answer(send("k3", &e.key, &hold)));
    while count_runs(&e, "acme.hold").await == 0 {
        tokio::task::yield_now().await;
    }
    let busy = answer(send("k3", &e.key, &hold)).await;
    busy.assert_error(409, "idempotency-key-in-flight", None);
    assert_eq!(busy.header("retry-after"), Some("5"));
    let runs = answer(e.get("/v1/runs?flowId=acme.hold").bearer_auth(&e.key)).await;
    let id = runs.body["data"][0]["id"].as_str().unwrap().to_owned();
    let c = answer(e.post(&format!("/v1/runs/{id}/cancel")).bearer_auth(&e.key)).await;
    assert_eq!(c.status, 200, "{}", c.body);
    let done = waiting.await.unwrap();
    assert_eq!(done.status, 201);
    assert_eq!(done.body["status"], "cancelled");
    e.db.cleanup().await.unwrap();
}
