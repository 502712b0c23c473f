//! `/v1/runs` and `/v1/flows` over a real runtime on a real database (SQLite and
//! PostgreSQL): the guide's dry runs, tenancy, long polls, journal, cancel, and every
//! refusal with its envelope.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, flows, router_with, runs};
use kindgi_runtime::Runtime;
use kindgi_spec::tool::EffectKind;
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use serde_json::{Value, json};

const REFUSAL: &str = "dry-run-effectful-tool: tool \"my-pack.add-order-note\" is not declared read-only (mutating: false), so it does not run in a dry run";

fn tool(
    id: &str,
    read_only: bool,
    f: impl Fn(Value) -> Result<Value, HandlerError> + Send + Sync + Clone + 'static,
) -> Tool {
    let mut b = Tool::define(id)
        .version("1.0.0")
        .description("test tool")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}));
    b = if read_only {
        b.mutating(false)
    } else {
        b.effect(EffectKind::Writes, "orders")
    };
    b.handler(move |input: Value, _ctx| {
        let f = f.clone();
        async move { f(input) }
    })
    .build()
    .unwrap()
}

struct Env {
    _db: TestDatabase,
    acme: TestClient,
    other: TestClient,
    anon: TestClient,
}

async fn env(kind: DatabaseKind) -> Env {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::with_database(db.db.clone()).build();
    rt.tools()
        .insert_tool(tool("my-pack.lookup-order", true, |i| {
            Ok(json!({"status": "shipped", "orderId": i["orderId"], "totalCents": 4200}))
        }));
    rt.tools()
        .insert_tool(tool("my-pack.add-order-note", false, |_| {
            Ok(json!({"noteId": "n1"}))
        }));
    let check = json!({
        "id": "my-pack.check-order", "version": "1.0.0", "name": "Check an order",
        "nodes": [{"id": "lookup", "kind": "tool", "ref": "my-pack.lookup-order"}],
        "edges": [{"id": "e1", "from": "$start", "to": "lookup"}, {"id": "e2", "from": "lookup", "to": "$end"}],
        "metadata": {"inputSchema": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]}}
    });
    let note = json!({
        "id": "my-pack.note-order", "version": "1.0.0",
        "nodes": [
            {"id": "lookup", "kind": "tool", "ref": "my-pack.lookup-order"},
            {"id": "note", "kind": "tool", "ref": "my-pack.add-order-note"}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "lookup"},
            {"id": "e2", "from": "lookup", "to": "note"},
            {"id": "e3", "from": "note", "to": "$end"}
        ]
    });
    rt.flows().insert_json(&check.to_string()).unwrap();
    let mut v2 = check.clone();
    v2["version"] = json!("1.1.0");
    rt.flows().insert_json(&v2.to_string()).unwrap();
    rt.flows().insert_json(&note.to_string()).unwrap();
    let state = AppState::new(db.db.clone());
    let a = state.tokens.create("acme", None).await.unwrap();
    let o = state.tokens.create("other", None).await.unwrap();
    let app = router_with(
        state,
        runs::routes(rt.clone()).merge(flows::routes(rt.clone())),
    );
    Env {
        _db: db,
        acme: TestClient::new(app.clone(), Some(a.key)),
        other: TestClient::new(app.clone(), Some(o.key)),
        anon: TestClient::new(app, None),
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
    dry_runs_follow_the_guide,
    runs_belong_to_their_tenant,
    refusals_use_the_error_envelope,
    journal_and_cancel,
);

async fn dry_runs_follow_the_guide(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json(
            "/v1/runs",
            &json!({"flowId": "my-pack.check-order", "input": {"orderId": "ord_1001"}, "dryRun": true, "wait": true}),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.json());
    let run = r.json();
    assert_eq!(run["status"], "completed");
    assert_eq!(run["dryRun"], true);
    assert_eq!(
        run["flowVersion"], "1.1.0",
        "the highest version by default"
    );
    assert_eq!(
        run["output"],
        json!({"status": "shipped", "orderId": "ord_1001", "totalCents": 4200})
    );
    assert_eq!(run["tenantId"], "acme");

    let r = e
        .acme
        .post_json(
            "/v1/runs",
            &json!({"flowId": "my-pack.note-order", "input": {"orderId": "ord_1001", "text": "Customer called"}, "dryRun": true, "waitMs": 10000}),
        )
        .await;
    assert_eq!(r.status, 201);
    let run = r.json();
    assert_eq!(run["status"], "failed");
    assert_eq!(run["failureMessage"], REFUSAL);

    // An explicit version.
    let r = e
        .acme
        .post_json(
            "/v1/runs",
            &json!({"flowId": "my-pack.check-order", "flowVersion": "1.0.0", "input": {"orderId": "o"}, "wait": true}),
        )
        .await;
    assert_eq!(r.json()["flowVersion"], "1.0.0");
    assert_eq!(r.json()["dryRun"], false);
}

async fn runs_belong_to_their_tenant(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json(
            "/v1/runs",
            &json!({"flowId": "my-pack.check-order", "input": {"orderId": "o1"}}),
        )
        .await;
    assert_eq!(r.status, 201);
    let id = r.json()["id"].as_str().unwrap().to_owned();
    // Long poll: returns when the run ends, well before the bound.
    let t = Instant::now();
    let got = e.acme.get(&format!("/v1/runs/{id}?waitMs=20000")).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json()["status"], "completed");
    assert!(t.elapsed() < Duration::from_secs(10));
    let theirs = e.other.get(&format!("/v1/runs/{id}")).await;
    assert_eq!(theirs.status, 404);
    assert_eq!(theirs.error_code().as_deref(), Some("run-not-found"));
    let j = e.other.get(&format!("/v1/runs/{id}/journal")).await;
    assert_eq!(j.status, 404);
    let c = e.other.post(&format!("/v1/runs/{id}/cancel")).await;
    assert_eq!(c.status, 404);
    let anon = e.anon.get(&format!("/v1/runs/{id}")).await;
    assert_eq!(anon.status, 401);
    assert_eq!(anon.error_code().as_deref(), Some("auth-missing"));
    assert_eq!(e.anon.get("/v1/flows").await.status, 401);
}

async fn refusals_use_the_error_envelope(kind: DatabaseKind) {
    let e = env(kind).await;
    let cases = [
        (json!({"input": {}}), 400, "bad-input", "flowId"),
        (
            json!({"flowId": 3, "input": {}}),
            400,
            "bad-input",
            "flowId",
        ),
        (
            json!({"flowId": "my-pack.check-order", "input": {"orderId": "o"}, "dryRun": "yes"}),
            400,
            "bad-input",
            "dryRun",
        ),
        (
            json!({"flowId": "my-pack.check-order", "input": {}, "bogus": 1}),
            400,
            "bad-input",
            "bogus",
        ),
        (
            json!({"flowId": "my-pack.nope", "input": {}}),
            404,
            "flow-not-found",
            "my-pack.nope",
        ),
        (
            json!({"flowId": "my-pack.check-order", "flowVersion": "9.9.9", "input": {}}),
            404,
            "flow-not-found",
            "9.9.9",
        ),
        (
            json!({"flowId": "my-pack.check-order", "input": {"orderId": 5}}),
            400,
            "input-validation-failed",
            "orderId",
        ),
    ];
    for (body, status, code, mentions) in cases {
        let r = e.acme.post_json("/v1/runs", &body).await;
        assert_eq!(r.status, status, "{body}: {:?}", r.json());
        assert_eq!(r.error_code().as_deref(), Some(code), "{body}");
        let env = r.json();
        assert!(env.to_string().contains(mentions), "{body}: {env}");
        assert!(env["error"]["requestId"].as_str().is_some());
        let msg = env["error"]["message"].as_str().unwrap();
        assert!(
            !msg.starts_with(code),
            "the message does not repeat the code: {msg}"
        );
    }
    let r = e
        .acme
        .send(http::Method::POST, "/v1/runs", Some(b"{nope".to_vec()), &[])
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code().as_deref(), Some("bad-input"));
    let r = e.acme.get("/v1/runs/abc?waitMs=soon").await;
    assert_eq!(r.status, 400);
}

async fn journal_and_cancel(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json(
            "/v1/runs",
            &json!({"flowId": "my-pack.note-order", "input": {}, "dryRun": true, "wait": true}),
        )
        .await;
    let id = r.json()["id"].as_str().unwrap().to_owned();
    let j = e.acme.get(&format!("/v1/runs/{id}/journal")).await;
    assert_eq!(j.status, 200);
    let body = j.json();
    assert_eq!(body["runId"], id.as_str());
    let kinds: Vec<&str> = body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"run.started"));
    assert_eq!(kinds.last(), Some(&"run.failed"));
    assert!(kinds.contains(&"step.failed"));
    // Paging.
    let j = e
        .acme
        .get(&format!("/v1/runs/{id}/journal?after=1&limit=2"))
        .await;
    let page = j.json()["entries"].as_array().unwrap().clone();
    assert_eq!(page.len(), 2);
    assert_eq!(page[0]["sequence"], 2);
    let bad = e.acme.get(&format!("/v1/runs/{id}/journal?limit=0")).await;
    assert_eq!(bad.status, 400);
    // A finished run cannot be cancelled.
    let c = e.acme.post(&format!("/v1/runs/{id}/cancel")).await;
    assert_eq!(c.status, 409);
    assert_eq!(c.error_code().as_deref(), Some("run-already-terminal"));
    let missing = e.acme.post("/v1/runs/nope/cancel").await;
    assert_eq!(missing.status, 404);
}

// `/v1/flows` is served from the store now (the official wire): tests/registries.rs.

#[tokio::test]
async fn the_openapi_document_lists_the_run_and_flow_routes() {
    let doc: Value = serde_json::from_str(kindgi_api::OPENAPI_JSON).unwrap();
    for path in [
        "/v1/runs",
        "/v1/runs/{runId}",
        "/v1/runs/{runId}/journal",
        "/v1/runs/{runId}/cancel",
        "/v1/flows",
        "/v1/flows/{flowId}",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} missing");
    }
    assert!(doc["components"]["schemas"].get("Run").is_some());
}
