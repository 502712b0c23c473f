//! `/v1/runs` over a real runtime on a real database (SQLite and PostgreSQL), as
//! platform-api.md §3 and §15 cases 12–19, 21–32, 34–40 say: starts of flows and agents
//! with every refusal, the Run object, lists, reads, progress, cancel, resume, the journal
//! and the SSE streams.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use kindgi_api::testing::{TestClient, TestResponse};
use kindgi_api::{AppState, router};
use kindgi_runtime::{AgentSpec, Runtime};
use kindgi_spec::tool::EffectKind;
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use serde_json::{Value, json};

const REFUSAL: &str = "dry-run-effectful-tool: tool \"my-pack.add-order-note\" is not declared read-only (mutating: false), so it does not run in a dry run";
const UNKNOWN: &str = "7f0c8a9e-3b1d-4c55-9e2a-0d6b8f1e2a33";

fn tool(id: &str, read_only: bool, f: fn(Value) -> Result<Value, HandlerError>) -> Tool {
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
    b.handler(move |input: Value, _ctx| async move { f(input) })
        .build()
        .unwrap()
}

/// A read-only tool that runs until its run is cancelled.
fn hold_tool() -> Tool {
    Tool::define("acme.hold")
        .version("1.0.0")
        .description("waits for its cancellation")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|_input: Value, ctx: kindgi_tools::ToolContext| async move {
            ctx.signal.cancelled().await;
            Err::<Value, HandlerError>(HandlerError::msg("cancelled"))
        })
        .build()
        .unwrap()
}

fn one_node_flow(id: &str, tool: &str) -> Value {
    json!({
        "id": id, "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": tool}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    })
}

struct Env {
    db: TestDatabase,
    acme: TestClient,
    other: TestClient,
    anon: TestClient,
}

async fn env(kind: DatabaseKind) -> Env {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    rt.tools()
        .insert_tool(tool("my-pack.lookup-order", true, |i| {
            Ok(json!({"status": "shipped", "orderId": i["orderId"], "totalCents": 4200}))
        }));
    rt.tools()
        .insert_tool(tool("my-pack.add-order-note", false, |_| {
            Ok(json!({"noteId": "n1"}))
        }));
    rt.tools().insert_tool(hold_tool());
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
    rt.flows()
        .insert_json(&one_node_flow("acme.hold", "acme.hold").to_string())
        .unwrap();
    let mut greeter = AgentSpec::new("my-pack.greeter");
    greeter.version = "1.2.0".into();
    rt.agents().insert(greeter);
    let state = AppState::new(db.db.clone());
    let a = state.tokens.create("acme", None).await.unwrap();
    let o = state.tokens.create("other", None).await.unwrap();
    let app = router(state.with_runtime(rt.clone()));
    Env {
        db,
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
    start_refusals_have_the_reference_messages,
    waited_starts_answer_201_with_the_run,
    agent_turns_are_runs,
    no_wait_answers_202,
    runs_belong_to_their_tenant,
    get_progress_and_resume,
    lists_filter_and_page,
    journal_pages,
    cancel_ends_a_running_run,
    streams_frame_the_journal,
);

/// Asserts an envelope: status, code, message, and `requestId` = the `X-Request-Id` header.
fn assert_error(r: &TestResponse, status: u16, code: &str, message: Option<&str>) {
    let v = r.json();
    assert_eq!(r.status.as_u16(), status, "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    if let Some(m) = message {
        assert_eq!(v["error"]["message"], m, "{v}");
    }
    assert_eq!(
        v["error"]["requestId"].as_str(),
        r.header("x-request-id"),
        "{v}"
    );
}

async fn start(e: &Env, body: Value) -> TestResponse {
    e.acme.post_json("/v1/runs", &body).await
}

fn run_id(r: &TestResponse) -> String {
    r.json()["id"].as_str().unwrap().to_owned()
}

/// Cases 12–17 and 23.
async fn start_refusals_have_the_reference_messages(kind: DatabaseKind) {
    let e = env(kind).await;
    let flow = "my-pack.check-order";
    let no_project = format!("No project with id \"{UNKNOWN}\" in this tenant");
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (
            json!({"agent": "a", "flow": "f", "input": {}}),
            400,
            "bad-input",
            "Provide exactly one of `agent` or `flow`, not both",
        ),
        (
            json!({"input": {}}),
            400,
            "bad-input",
            "Request body must include `agent` or `flow`",
        ),
        (
            json!({"agent": "", "input": {}}),
            400,
            "bad-input",
            "Request body must include `agent` or `flow`",
        ),
        (
            json!({"agent": "a"}),
            400,
            "bad-input",
            "`input` is required",
        ),
        (
            json!({"flow": flow, "input": {}, "options": "x"}),
            400,
            "bad-input",
            "`options` must be an object when supplied",
        ),
        (
            json!({"flow": flow, "input": {}, "options": {"wait": "no"}}),
            400,
            "bad-input",
            "`options.wait` must be a boolean",
        ),
        (
            json!({"flow": flow, "flowVersion": 1, "input": {}}),
            400,
            "bad-input",
            "`flowVersion` must be a string",
        ),
        (
            json!({"flow": flow, "input": {}, "projectId": "support"}),
            400,
            "bad-input",
            "`projectId` must be a project id (a UUID)",
        ),
        (
            json!({"flow": flow, "input": {}, "projectId": UNKNOWN}),
            404,
            "project-not-found",
            &no_project,
        ),
        (
            json!({"flow": "my-pack.nope", "input": {}}),
            404,
            "flow-not-found",
            "No flow \"my-pack.nope\"",
        ),
        (
            json!({"flow": flow, "flowVersion": "9.9.9", "input": {}}),
            404,
            "flow-not-found",
            "No flow \"my-pack.check-order\" at version \"9.9.9\"",
        ),
        (
            json!({"agent": "my-pack.nope", "input": {"userMessage": "hi"}}),
            404,
            "agent-not-found",
            "No agent \"my-pack.nope\"",
        ),
    ];
    for (body, status, code, message) in cases {
        let r = start(&e, body.clone()).await;
        assert_error(&r, status, code, Some(message));
    }
    let r = start(&e, json!({"flow": flow, "input": {}, "projectId": UNKNOWN})).await;
    assert_eq!(r.json()["error"]["details"]["projectId"], UNKNOWN);
    // Segments: a bad key, nine entries, a duplicate key, a 257-character value.
    let seg = |k: &str, v: &str| json!({"key": k, "value": v});
    let long = "x".repeat(257);
    for segments in [
        json!([seg("Company", "acme")]),
        Value::Array((0..9).map(|i| seg(&format!("k{i}"), "v")).collect()),
        json!([seg("company", "a"), seg("company", "b")]),
        json!([seg("company", &long)]),
    ] {
        let r = start(
            &e,
            json!({"flow": flow, "input": {"orderId": "o"}, "segments": segments}),
        )
        .await;
        assert_error(&r, 400, "bad-input", None);
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("segments")
        );
    }
    // `input: null` passes validation (and then meets the flow's schema, a different 400).
    let r = start(&e, json!({"agent": "my-pack.greeter", "input": null})).await;
    assert_eq!(r.status, 201, "{}", r.json());
    let r = start(&e, json!({"flow": flow, "input": {"orderId": 5}})).await;
    assert_error(&r, 400, "validation-failed", None);
    // Case 23: unknown top-level fields are accepted.
    let r = start(
        &e,
        json!({"flow": flow, "input": {"orderId": "o"}, "bogus": 1}),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json());
    // Unparseable and non-object bodies.
    let r = e
        .acme
        .send(http::Method::POST, "/v1/runs", Some(b"{nope".to_vec()), &[])
        .await;
    assert_error(
        &r,
        400,
        "bad-input",
        Some("Request body must be valid JSON"),
    );
    let r = e
        .acme
        .send(http::Method::POST, "/v1/runs", Some(b"[1]".to_vec()), &[])
        .await;
    assert_error(&r, 400, "bad-input", Some("Request body must be an object"));
    e.db.cleanup().await.unwrap();
}

/// Cases 19, 21 (a person's key), 22 and 25.
async fn waited_starts_answer_201_with_the_run(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .send(
            http::Method::POST,
            "/v1/runs",
            Some(json!({"flow": "my-pack.check-order", "input": {"orderId": "ord_1001"}, "options": {"dryRun": true}, "segments": [{"key": "company", "value": "acme"}]}).to_string().into_bytes()),
            &[("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")],
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json());
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
    assert_eq!(run["tenantId"], kindgi_api::projects::tenant_uuid("acme"));
    assert_eq!(run["startedBy"], "person");
    assert_eq!(run["traceId"], "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(
        run["segments"],
        json!([{"key": "company", "value": "acme"}])
    );
    assert_eq!(
        run["projectId"],
        kindgi_api::projects::default_project_id("acme")
    );
    assert!(run.get("input").is_none(), "OA:Run has no input: {run}");
    assert!(run.get("failure").is_none());
    let allowed = [
        "id",
        "tenantId",
        "projectId",
        "flowId",
        "flowVersion",
        "status",
        "dryRun",
        "createdAt",
        "updatedAt",
        "completedAt",
        "failureMessage",
        "failure",
        "output",
        "contentErasedAt",
        "parentRunId",
        "parentNodeId",
        "agent",
        "waitingFor",
        "trigger",
        "startedBy",
        "replayOf",
        "evalRunId",
        "versions",
        "segments",
        "traceId",
        "publicAccessToken",
        "publicAccessTokenExpiresAt",
    ];
    for k in run.as_object().unwrap().keys() {
        assert!(allowed.contains(&k.as_str()), "OA:Run does not allow {k}");
    }
    // Case 25: read back, the completed run has output, no waitingFor, no failure.
    let got = e
        .acme
        .get(&format!("/v1/runs/{}", run["id"].as_str().unwrap()))
        .await;
    assert_eq!(got.json()["output"], run["output"]);
    assert!(got.json().get("waitingFor").is_none());
    assert_eq!(
        got.json()["segments"],
        run["segments"],
        "stored and read back"
    );
    assert_eq!(got.json()["traceId"], run["traceId"]);
    // Case 22 and 19: a dry run reaching a mutating tool fails, and a failed run is a 201.
    let r = start(&e, json!({"flow": "my-pack.note-order", "input": {"orderId": "o"}, "options": {"dryRun": true}})).await;
    assert_eq!(r.status, 201);
    let run = r.json();
    assert_eq!(run["status"], "failed");
    assert_eq!(run["failureMessage"], REFUSAL);
    assert_eq!(
        run["failure"],
        json!({"code": "run-failed", "message": REFUSAL})
    );
    // An explicit version.
    let r = start(
        &e,
        json!({"flow": "my-pack.check-order", "flowVersion": "1.0.0", "input": {"orderId": "o"}}),
    )
    .await;
    assert_eq!(r.json()["flowVersion"], "1.0.0");
    assert_eq!(r.json()["dryRun"], false);
    e.db.cleanup().await.unwrap();
}

/// An agent subject runs one turn as a run with `flowId: "agent.turn"`.
async fn agent_turns_are_runs(kind: DatabaseKind) {
    let e = env(kind).await;
    // A conversation that does not exist is refused before any run (§3.1).
    let r = start(
        &e,
        json!({"agent": "my-pack.greeter", "input": {"userMessage": "hi", "conversationId": "c1"}}),
    )
    .await;
    assert_error(&r, 404, "conversation-not-found", None);
    let r = start(&e, json!({"agent": "my-pack.greeter", "input": {"userMessage": "hi"}, "options": {"dryRun": true}})).await;
    assert_eq!(r.status, 201, "{}", r.json());
    let run = r.json();
    assert_eq!(run["flowId"], "agent.turn");
    assert_eq!(run["flowVersion"], "1.2.0");
    assert_eq!(run["status"], "completed", "{run}");
    // Without a conversation, the turn gets one of its own.
    let conversation = run["agent"]["conversationId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(uuid::Uuid::parse_str(&conversation).is_ok(), "{run}");
    assert_eq!(
        run["agent"],
        json!({"id": "my-pack.greeter", "version": "1.2.0", "conversationId": conversation, "via": "latest"})
    );
    assert_eq!(
        run["output"]["text"], "[dry-run: model call skipped]",
        "{run}"
    );
    let r = start(&e, json!({"agent": "my-pack.greeter", "agentVersion": "1.2.0", "input": {"userMessage": "hi"}})).await;
    assert_eq!(r.status, 201, "{}", r.json());
    assert_eq!(r.json()["agent"]["via"], "explicit");
    let r = start(
        &e,
        json!({"agent": "my-pack.greeter", "agentVersion": "9.0.0", "input": {}}),
    )
    .await;
    assert_error(&r, 404, "agent-not-found", None);
    // Listed by agent.
    let l = e
        .acme
        .get("/v1/runs?agentId=my-pack.greeter&agentVersion=1.2.0")
        .await;
    assert_eq!(
        l.json()["data"].as_array().unwrap().len(),
        2,
        "{}",
        l.json()
    );
    let l = e.acme.get("/v1/runs?agentId=my-pack.other").await;
    assert_eq!(l.json()["data"], json!([]));
    e.db.cleanup().await.unwrap();
}

/// Case 18.
async fn no_wait_answers_202(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = start(
        &e,
        json!({"flow": "acme.hold", "input": {}, "options": {"wait": false}}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.json());
    let run = r.json();
    assert!(
        ["pending", "running"].contains(&run["status"].as_str().unwrap()),
        "{run}"
    );
    assert_eq!(run["dryRun"], false);
    let id = run_id(&r);
    assert!(uuid::Uuid::parse_str(&id).is_ok());
    let c = e
        .acme
        .post_json(&format!("/v1/runs/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(c.status, 200, "{}", c.json());
    e.db.cleanup().await.unwrap();
}

async fn runs_belong_to_their_tenant(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = start(
        &e,
        json!({"flow": "my-pack.check-order", "input": {"orderId": "o1"}}),
    )
    .await;
    let id = run_id(&r);
    for path in ["", "/journal", "/progress"] {
        let theirs = e.other.get(&format!("/v1/runs/{id}{path}")).await;
        assert_error(
            &theirs,
            404,
            "run-not-found",
            Some(&format!("No run with id {id}")),
        );
    }
    let c = e.other.post(&format!("/v1/runs/{id}/cancel")).await;
    assert_eq!(c.status, 404);
    assert!(
        e.other.get("/v1/runs").await.json()["data"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let anon = e.anon.get(&format!("/v1/runs/{id}")).await;
    assert_error(
        &anon,
        401,
        "auth-missing",
        Some("Authorization header is required"),
    );
    e.db.cleanup().await.unwrap();
}

/// Cases 24, 34 (resume, as we extend it) and 40 (progress).
async fn get_progress_and_resume(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e.acme.get("/v1/runs/not-a-uuid").await;
    assert_error(
        &r,
        400,
        "bad-input",
        Some("`runId` must be a run id (a UUID)"),
    );
    let r = e.acme.get(&format!("/v1/runs/{UNKNOWN}")).await;
    assert_error(
        &r,
        404,
        "run-not-found",
        Some(&format!("No run with id {UNKNOWN}")),
    );
    let r = start(
        &e,
        json!({"flow": "my-pack.check-order", "input": {"orderId": "o1"}}),
    )
    .await;
    let id = run_id(&r);
    let p = e.acme.get(&format!("/v1/runs/{id}/progress")).await;
    assert_eq!(p.status, 200);
    let keys: Vec<String> = p.json().as_object().unwrap().keys().cloned().collect();
    let mut keys = keys;
    keys.sort();
    assert_eq!(
        keys,
        [
            "completedAt",
            "createdAt",
            "flowId",
            "flowVersion",
            "id",
            "status",
            "updatedAt"
        ]
    );
    // Resume answers a pausing call (our extension, tests/waits_api.rs): a run that ended
    // has nothing to answer, an unknown one is not found, a body needs `waitpointId`.
    for (target, status, code) in [
        (id.as_str(), 409, "run-already-terminal"),
        (UNKNOWN, 404, "run-not-found"),
        ("x", 400, "bad-input"),
    ] {
        let r = e
            .acme
            .post_json(
                &format!("/v1/runs/{target}/resume"),
                &json!({"waitpointId": "w"}),
            )
            .await;
        assert_error(&r, status, code, None);
    }
    let r = e.acme.post(&format!("/v1/runs/{id}/resume")).await;
    assert_error(
        &r,
        400,
        "bad-input",
        Some("`waitpointId` is required: the wait token a pausing tool's call handed out"),
    );
    let f = e.acme.get("/v1/runs/failures").await;
    assert_error(&f, 501, "run-failures-not-supported", None);
    e.db.cleanup().await.unwrap();
}

/// Cases 26–31.
async fn lists_filter_and_page(kind: DatabaseKind) {
    let e = env(kind).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let r = start(
            &e,
            json!({"flow": "my-pack.check-order", "input": {"orderId": format!("o{i}")}}),
        )
        .await;
        ids.push(run_id(&r));
    }
    let r = start(
        &e,
        json!({"flow": "my-pack.note-order", "input": {}, "options": {"dryRun": true}}),
    )
    .await;
    assert_eq!(r.json()["status"], "failed");
    let r = e.acme.get("/v1/runs?status=done").await;
    assert_error(
        &r,
        400,
        "bad-input",
        Some(
            "Unknown `status` value(s): done. Expected one or more of: pending, running, suspended, completed, failed, cancelled",
        ),
    );
    let r = e
        .acme
        .get("/v1/runs?status=failed,cancelled&status=failed")
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["data"].as_array().unwrap().len(), 1);
    assert_eq!(r.json()["data"][0]["failure"]["code"], "run-failed");
    assert_eq!(
        e.acme.get("/v1/runs?limit=0").await.json()["data"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    assert_eq!(e.acme.get("/v1/runs?limit=500").await.status, 200);
    let r = e.acme.get("/v1/runs?cursor=zzz").await;
    assert_error(&r, 400, "bad-input", Some("`cursor` is malformed"));
    for q in [
        format!("topLevel=true&parentRunId={}", ids[0]),
        "agentVersion=1.0.0".into(),
        "triggerId=x".into(),
        "include=foo".into(),
        "replays=all".into(),
        "flowVersion=1.0.0".into(),
        "createdAfter=yesterday".into(),
    ] {
        let r = e.acme.get(&format!("/v1/runs?{q}")).await;
        assert_error(&r, 400, "bad-input", None);
    }
    let r = e
        .acme
        .get(&format!("/v1/runs?topLevel=true&parentRunId={}", ids[0]))
        .await;
    assert_eq!(
        r.json()["error"]["message"],
        "`parentRunId` and `topLevel=true` cannot be combined"
    );
    let r = e.acme.get("/v1/runs?agentVersion=1").await;
    assert_eq!(
        r.json()["error"]["message"],
        "`agentVersion` needs `agentId`"
    );
    for q in [
        "scopeKind=tenant&scopeId=x",
        "scopeKind=project",
        "scopeKind=planet",
    ] {
        let r = e.acme.get(&format!("/v1/runs?{q}")).await;
        assert_error(&r, 400, "scope-invalid", None);
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("scope query parameters malformed: ")
        );
    }
    let project = kindgi_api::projects::default_project_id("acme");
    let r = e
        .acme
        .get(&format!("/v1/runs?scopeKind=project&scopeId={project}"))
        .await;
    assert_eq!(r.json()["data"].as_array().unwrap().len(), 6);
    let r = e
        .acme
        .get(&format!("/v1/runs?scopeKind=project&scopeId={UNKNOWN}"))
        .await;
    assert!(r.json()["data"].as_array().unwrap().is_empty());
    // Case 31: no run was fired by this trigger.
    let r = e.acme.get(&format!("/v1/runs?triggerId={UNKNOWN}")).await;
    assert_eq!(r.status, 200);
    assert!(r.json()["data"].as_array().unwrap().is_empty());
    // Filters by flow.
    let r = e
        .acme
        .get("/v1/runs?flowId=my-pack.check-order&flowVersion=1.1.0")
        .await;
    assert_eq!(r.json()["data"].as_array().unwrap().len(), 5);
    // Case 30: pages of 2, createdAt desc then id desc, no repeats, no output by default.
    let mut seen: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let q = match &cursor {
            Some(c) => format!("/v1/runs?limit=2&cursor={c}"),
            None => "/v1/runs?limit=2".into(),
        };
        let page = e.acme.get(&q).await.json();
        for row in page["data"].as_array().unwrap() {
            assert!(row.get("output").is_none(), "{row}");
            seen.push(row.clone());
        }
        if page["hasMore"] == json!(false) {
            assert!(page.get("nextCursor").is_none(), "{page}");
            break;
        }
        cursor = Some(page["nextCursor"].as_str().unwrap().to_owned());
    }
    assert_eq!(seen.len(), 6);
    let keys: Vec<(String, String)> = seen
        .iter()
        .map(|r| {
            (
                r["createdAt"].as_str().unwrap().to_owned(),
                r["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    sorted.dedup();
    assert_eq!(keys, sorted, "createdAt desc, id desc, no repeats");
    let with = e
        .acme
        .get("/v1/runs?include=output&status=completed")
        .await
        .json();
    assert!(with["data"][0].get("output").is_some(), "{with}");
    e.db.cleanup().await.unwrap();
}

/// Cases 35 and 36.
async fn journal_pages(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = start(
        &e,
        json!({"flow": "my-pack.note-order", "input": {}, "options": {"dryRun": true}}),
    )
    .await;
    let id = run_id(&r);
    let j = e.acme.get(&format!("/v1/runs/{id}/journal")).await;
    assert_eq!(j.status, 200);
    let body = j.json();
    assert_eq!(body["hasMore"], false);
    assert!(body.get("nextCursor").is_none());
    let data = body["data"].as_array().unwrap().clone();
    let seqs: Vec<u64> = data
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    let mut sorted = seqs.clone();
    sorted.sort();
    assert_eq!(seqs, sorted);
    let kinds: Vec<&str> = data.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"run.started"));
    assert_eq!(kinds.last(), Some(&"run.failed"));
    for entry in &data {
        for k in entry.as_object().unwrap().keys() {
            assert!(
                ["sequence", "kind", "nodeId", "payload", "timestamp"].contains(&k.as_str()),
                "{entry}"
            );
        }
    }
    let since = e
        .acme
        .get(&format!("/v1/runs/{id}/journal?since=1"))
        .await
        .json();
    assert!(
        since["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["sequence"].as_u64().unwrap() > 1)
    );
    assert_eq!(since["data"].as_array().unwrap().len(), data.len() - 1);
    let ignored = e
        .acme
        .get(&format!("/v1/runs/{id}/journal?since=abc"))
        .await
        .json();
    assert_eq!(ignored["data"].as_array().unwrap().len(), data.len());
    let page = e
        .acme
        .get(&format!("/v1/runs/{id}/journal?limit=2"))
        .await
        .json();
    assert_eq!(page["data"].as_array().unwrap().len(), 2);
    assert_eq!(page["hasMore"], true);
    let last = page["data"][1]["sequence"].as_u64().unwrap();
    let cursor = page["nextCursor"].as_str().unwrap();
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&decoded).unwrap(),
        json!({"sequence": last})
    );
    let next = e
        .acme
        .get(&format!("/v1/runs/{id}/journal?limit=2&cursor={cursor}"))
        .await
        .json();
    assert_eq!(next["data"][0]["sequence"].as_u64().unwrap(), last + 1);
    for bad in ["0", "abc", "-1", "01"] {
        let r = e
            .acme
            .get(&format!("/v1/runs/{id}/journal?limit={bad}"))
            .await;
        assert_error(
            &r,
            400,
            "bad-input",
            Some("`limit` must be a whole number, 1 or more (a page holds at most 100)"),
        );
    }
    let r = e.acme.get(&format!("/v1/runs/{UNKNOWN}/journal")).await;
    assert_error(&r, 404, "run-not-found", None);
    e.db.cleanup().await.unwrap();
}

/// Case 32.
async fn cancel_ends_a_running_run(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = start(
        &e,
        json!({"flow": "acme.hold", "input": {}, "options": {"wait": false}}),
    )
    .await;
    let id = run_id(&r);
    let c = e
        .acme
        .post_json(&format!("/v1/runs/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(c.status, 200, "{}", c.json());
    assert_eq!(c.json()["status"], "cancelled");
    let j = e.acme.get(&format!("/v1/runs/{id}/journal")).await.json();
    let data = j["data"].as_array().unwrap();
    assert_eq!(data.last().unwrap()["kind"], "run.cancelled");
    // No body and no Content-Type works as well as `{}` (platform-api.md §12.3).
    let again = e.acme.post(&format!("/v1/runs/{id}/cancel")).await;
    assert_error(
        &again,
        409,
        "run-already-terminal",
        Some("Cannot cancel run: already cancelled"),
    );
    assert_eq!(again.json()["error"]["details"]["status"], "cancelled");
    let missing = e.acme.post(&format!("/v1/runs/{UNKNOWN}/cancel")).await;
    assert_error(&missing, 404, "run-not-found", None);
    e.db.cleanup().await.unwrap();
}

/// Parses SSE frames: `(id, event, data)`.
fn frames(body: &[u8]) -> Vec<(String, String, Value)> {
    let text = String::from_utf8_lossy(body);
    text.split("\n\n")
        .filter(|f| !f.trim().is_empty())
        .map(|f| {
            let lines: Vec<&str> = f.lines().collect();
            assert_eq!(lines.len(), 3, "a frame is id, event, data: {f:?}");
            let id = lines[0].strip_prefix("id: ").unwrap().to_owned();
            let event = lines[1].strip_prefix("event: ").unwrap().to_owned();
            let data = serde_json::from_str(lines[2].strip_prefix("data: ").unwrap()).unwrap();
            (id, event, data)
        })
        .collect()
}

/// Cases 37–40.
async fn streams_frame_the_journal(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = start(
        &e,
        json!({"flow": "my-pack.check-order", "input": {"orderId": "o"}}),
    )
    .await;
    let id = run_id(&r);
    let s = e.acme.get(&format!("/v1/runs/{id}/stream")).await;
    assert_eq!(s.status, 200);
    assert_eq!(
        s.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert_eq!(s.header("cache-control"), Some("no-store"));
    let f = frames(&s.body);
    let journal = e.acme.get(&format!("/v1/runs/{id}/journal")).await.json();
    let kinds: Vec<&str> = journal["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"edge.evaluated"),
        "the journal has entries the stream drops: {kinds:?}"
    );
    let events: Vec<&str> = f.iter().map(|(_, k, _)| k.as_str()).collect();
    assert_eq!(events.first(), Some(&"run.started"));
    assert_eq!(events.last(), Some(&"run.completed"));
    assert!(events.contains(&"run.step-started"), "{events:?}");
    assert!(events.iter().all(|k| k.starts_with("run.")), "{events:?}");
    for (fid, kind, data) in &f {
        assert_eq!(data["eventId"], fid.as_str());
        assert_eq!(data["kind"], kind.as_str());
        assert_eq!(data["runId"], id.as_str());
        assert_eq!(data["tenantId"], kindgi_api::projects::tenant_uuid("acme"));
        assert_eq!(*fid, format!("{id}:{}", data["sequence"]));
    }
    // Last-Event-Id: R:1 starts after sequence 1.
    let s = e
        .acme
        .send(
            http::Method::GET,
            &format!("/v1/runs/{id}/stream"),
            None,
            &[("last-event-id", &format!("{id}:1"))],
        )
        .await;
    let after = frames(&s.body);
    assert!(
        after
            .iter()
            .all(|(_, _, d)| d["sequence"].as_u64().unwrap() > 1)
    );
    assert_eq!(after.len(), f.len() - 1);
    // The progress stream has neither payload nor tenantId.
    let p = e.acme.get(&format!("/v1/runs/{id}/progress/stream")).await;
    for (_, _, d) in frames(&p.body) {
        assert!(
            d.get("payload").is_none() && d.get("tenantId").is_none(),
            "{d}"
        );
    }
    // Case 39: an unknown run is a JSON 404, no stream.
    let s = e.acme.get(&format!("/v1/runs/{UNKNOWN}/stream")).await;
    assert_error(&s, 404, "run-not-found", None);
    assert!(
        s.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    e.db.cleanup().await.unwrap();
}

// `/v1/flows` is served from the store now (the official wire): tests/registries.rs.

#[tokio::test]
async fn the_openapi_document_lists_the_run_routes() {
    let doc: Value = serde_json::from_str(kindgi_api::OPENAPI_JSON).unwrap();
    for path in [
        "/v1/runs",
        "/v1/runs/{runId}",
        "/v1/runs/{runId}/journal",
        "/v1/runs/{runId}/cancel",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} missing");
    }
    assert!(doc["components"]["schemas"].get("Run").is_some());
}
