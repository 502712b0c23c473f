//! Issue 12, API part: revocation takes effect at once (also when another pool — another
//! process — revokes), the tool routes refuse other media types with 415 while `POST
//! /v1/runs` parses any (as the reference does), and CPU-heavy run-input validation does not
//! stall `/health`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt as _;
use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::TokenStore;
use kindgi_tools::{HandlerError, Tool};
use serde_json::{Value, json};
use support::{body, env};
use tower::ServiceExt as _;

async fn revocation_by_another_pool(kind: DatabaseKind) {
    let e = env(kind).await;
    assert_eq!(e.acme.get("/v1/tools").await.status, StatusCode::OK);
    // Another connection pool on the same database, as `kindgi tokens revoke --database`
    // in another process would use.
    let other = e.db.reopen().await.unwrap();
    TokenStore::new(other.clone())
        .revoke(&e.acme_key_id)
        .await
        .unwrap();
    let r = e.acme.get("/v1/tools").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{:?}", r.body);
    assert_eq!(r.json()["error"]["code"], "auth-revoked");
    other.close().await;
    e.db.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_revocation_by_another_pool_takes_effect_at_once() {
    revocation_by_another_pool(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_revocation_by_another_pool_takes_effect_at_once() {
    revocation_by_another_pool(DatabaseKind::Postgres).await;
}

async fn send(
    app: &Router,
    key: &str,
    uri: &str,
    content_type: Option<&str>,
    body: &str,
) -> (StatusCode, Value) {
    let mut b = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header("authorization", format!("Bearer {key}"));
    if let Some(ct) = content_type {
        b = b.header("content-type", ct);
    }
    let r = app
        .clone()
        .oneshot(b.body(Body::from(body.to_owned())).unwrap())
        .await
        .unwrap();
    let status = r.status();
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn flow(id: &str, input_schema: Value) -> String {
    json!({
        "id": id, "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "acme.echo-tool"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}],
        "metadata": {"inputSchema": input_schema}
    })
    .to_string()
}

fn runs_app(db: &TestDatabase, flow_json: &str) -> (Router, AppState) {
    let state = AppState::new(db.db.clone());
    let rt = Runtime::over(db.db.ports()).build();
    let echo = Tool::define("acme.echo-tool")
        .version("1.0.0")
        .description("echo")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|input: Value, _ctx| async move { Ok::<Value, HandlerError>(input) })
        .build()
        .unwrap();
    rt.tools().insert_tool(echo);
    rt.flows().insert_json(flow_json).unwrap();
    let app = router(state.clone().with_runtime(rt.clone()));
    (app, state)
}

#[tokio::test]
async fn json_routes_need_application_json() {
    let db = TestDatabase::sqlite().await.unwrap();
    let (app, state) = runs_app(&db, &flow("acme.echo", json!({"type": "object"})));
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let tool = body("acme.t", "1.0.0").to_string();
    for ct in [
        None,
        Some("text/plain"),
        Some("application/jsonx"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let (status, v) = send(&app, &key, "/v1/tools", ct, &tool).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{ct:?}: {v}");
        assert_eq!(v["error"]["code"], "unsupported-media-type", "{v}");
        assert_eq!(
            v["error"]["message"],
            "Content-Type must be application/json"
        );
        assert!(v["error"]["requestId"].is_string(), "{v}");
        // The runs route parses the body whatever its media type (platform-api.md §1.4).
        let (status, v) = send(
            &app,
            &key,
            "/v1/runs",
            ct,
            r#"{"flow":"acme.echo","input":{}}"#,
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{ct:?}: {v}");
    }
    // Parameters and any case are fine.
    let (status, v) = send(
        &app,
        &key,
        "/v1/tools",
        Some("Application/JSON; charset=utf-8"),
        &tool,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let (status, v) = send(
        &app,
        &key,
        "/v1/runs",
        Some("application/json;charset=UTF-8"),
        r#"{"flow":"acme.echo","input":{}}"#,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    // Lifecycle POSTs take no body and no Content-Type (platform-api.md §12.3).
    let (status, v) = send(
        &app,
        &key,
        "/v1/tools/acme.t/versions/1.0.0/unregister",
        None,
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let (status, v) = send(
        &app,
        &key,
        "/v1/tools/acme.t/versions/1.0.0/reinstate",
        None,
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    db.cleanup().await.unwrap();
}

/// Four runs whose input takes seconds to validate (a backtracking pattern), on a server with
/// two async workers: `/health` still answers at once. Before the fix both workers were
/// busy validating and `/health` waited for them.
#[test]
fn health_answers_while_run_inputs_validate() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let db = TestDatabase::sqlite().await.unwrap();
        let schema = json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+\\1$"}}});
        let (app, state) = runs_app(&db, &flow("acme.slow", schema));
        let key = state.tokens.create("acme", None).await.unwrap().key;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let len: usize = std::env::var("KINDGI_TEST_BACKTRACK_LEN")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(19);
        let input = json!({"flow": "acme.slow", "input": {"s": format!("{}!", "a".repeat(len))}});
        let client = reqwest::Client::new();
        let started = Instant::now();
        // More expensive requests than async workers, so that without the fix every worker
        // is busy validating.
        let slow: Vec<_> = (0..4)
            .map(|_| {
                let (client, key, input) = (client.clone(), key.clone(), input.clone());
                tokio::spawn(async move {
                    let r = client
                        .post(format!("http://{addr}/v1/runs"))
                        .bearer_auth(key)
                        .json(&input)
                        .send()
                        .await
                        .unwrap();
                    (r.status(), started.elapsed())
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(150)).await;
        let asked = Instant::now();
        let health = tokio::time::timeout(
            Duration::from_secs(60),
            client.get(format!("http://{addr}/health")).send(),
        )
        .await
        .expect("/health answered within 60 s")
        .unwrap();
        let health_took = asked.elapsed();
        assert_eq!(health.status(), StatusCode::OK);
        let busy = slow.iter().any(|h| !h.is_finished());
        let mut took = Vec::new();
        for h in slow {
            took.push(h.await.unwrap());
        }
        eprintln!("/health took {health_took:?}; the expensive runs: {took:?}");
        assert!(
            busy,
            "the expensive requests ended before /health was asked ({took:?}); raise KINDGI_TEST_BACKTRACK_LEN"
        );
        assert!(
            health_took < Duration::from_secs(1),
            "/health took {health_took:?} while run inputs were validated: validation blocks the async workers"
        );
    });
}
