//! The registries on the official wire (platform-api.md §5, black-box cases 58–68): flows,
//! agents, tools, guardrails and the Default project, in process, on SQLite and PostgreSQL.
//! Every success and error body is checked against the official OpenAPI component schema.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use axum::http::{Method, StatusCode};
use kindgi_api::testing::{TestClient, TestResponse};
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use serde_json::{Value, json};
use support::openapi::{check, check_error};
use support::{acme_project, body, env};

/// Asserts an error envelope: status, code, message, request id; returns the body.
fn error(r: &TestResponse, status: StatusCode, code: &str, message: &str) -> Value {
    let v = r.json();
    assert_eq!(r.status, status, "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    assert_eq!(v["error"]["message"], message, "{v}");
    assert_eq!(
        r.header("x-request-id"),
        v["error"]["requestId"].as_str(),
        "{v}"
    );
    check_error(&v);
    v
}

fn ok(r: &TestResponse, status: StatusCode, component: &str) -> Value {
    let v = r.json();
    assert_eq!(r.status, status, "{v}");
    check(component, &v);
    v
}

fn flow(id: &str, version: &str) -> Value {
    json!({
        "projectId": acme_project(),
        "id": id,
        "version": version,
        "name": "Check an order",
        "nodes": [{"id": "lookup", "kind": "tool", "ref": "acme.lookup-order"}],
        "edges": [
            {"id": "e1", "from": "$start", "to": "lookup"},
            {"id": "e2", "from": "lookup", "to": "$end"}
        ]
    })
}

fn agent(id: &str, version: &str) -> Value {
    json!({
        "projectId": acme_project(),
        "id": id,
        "version": version,
        "name": "Helper",
        "instructions": "Answer briefly.",
        "capabilities": [{"kind": "llm-inference"}],
        "tools": [{"id": "acme.lookup-order", "version": "^1.0.0"}],
        "retrieval": [],
        "guardrails": []
    })
}

fn guardrail(id: &str) -> Value {
    json!({
        "projectId": acme_project(),
        "id": id,
        "kind": "zero-llm",
        "check": "max-tool-calls",
        "config": {"max": 3},
        "action": {"on-violation": "halt"},
        "severity": "error"
    })
}

/// Cases 58, 59, 60 and the flow's pins.
async fn flows_publish_and_read(kind: DatabaseKind) {
    let e = env(kind).await;
    // 58: no projectId.
    let mut b = flow("acme.check-order", "1.0.0");
    b.as_object_mut().unwrap().remove("projectId");
    let r = e.acme.post_json("/v1/flows", &b).await;
    error(
        &r,
        StatusCode::BAD_REQUEST,
        "bad-input",
        "`projectId` is required",
    );

    // The tool it runs, so the version is pinned.
    let r = e
        .acme
        .post_json("/v1/tools", &body("acme.lookup-order", "1.2.0"))
        .await;
    ok(&r, StatusCode::CREATED, "RegisterToolResult");

    // 59: publish, duplicate, invalid graph.
    let r = e
        .acme
        .post_json("/v1/flows", &flow("acme.check-order", "1.0.0"))
        .await;
    let v = ok(&r, StatusCode::CREATED, "PublishFlowResult");
    assert_eq!(v, json!({"flowId": "acme.check-order", "version": "1.0.0"}));
    let r = e
        .acme
        .post_json("/v1/flows", &flow("acme.check-order", "1.0.0"))
        .await;
    let v = error(
        &r,
        StatusCode::CONFLICT,
        "flow-already-registered",
        "Flow \"acme.check-order\" version \"1.0.0\" is already registered",
    );
    assert_eq!(
        v["error"]["details"],
        json!({"flowId": "acme.check-order", "version": "1.0.0"})
    );
    let mut bad = flow("acme.bad", "1.0.0");
    bad["edges"][1]["to"] = json!("nowhere");
    let r = e.acme.post_json("/v1/flows", &bad).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.json());
    let v = r.json();
    assert_eq!(v["error"]["code"], "validation-failed");
    let issues = v["error"]["details"]["issues"].as_array().unwrap();
    assert!(!issues.is_empty(), "{v}");
    assert!(
        issues
            .iter()
            .all(|i| i["path"].is_string() && i["message"].is_string())
    );
    check_error(&v);

    // The stored version: OA:Flow, with its project and pins.
    let r = e.acme.get("/v1/flows/acme.check-order").await;
    let v = ok(&r, StatusCode::OK, "Flow");
    assert_eq!(v["projectId"], acme_project());
    assert_eq!(
        v["pins"],
        json!({"tools": {"acme.lookup-order": "1.2.0"}, "agents": {}})
    );
    assert!(v["pinsDigest"].as_str().unwrap().starts_with("sha256:"));
    assert!(v.get("unregisteredAt").is_none());

    // `?projectId=` must name the tenant's project.
    let r = e
        .acme
        .get(&format!(
            "/v1/flows/acme.check-order?projectId={}",
            acme_project()
        ))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = e
        .acme
        .get("/v1/tools/acme.lookup-order?projectId=nope")
        .await;
    assert_eq!(r.error_code().as_deref(), Some("bad-input"));

    // 60: name is an id prefix; unknown id.
    e.acme
        .post_json("/v1/flows", &flow("other.flow", "1.0.0"))
        .await;
    e.acme
        .post_json("/v1/flows", &flow("acme.check-order", "1.1.0"))
        .await;
    let r = e.acme.get("/v1/flows?name=acme").await;
    let v = ok(&r, StatusCode::OK, "FlowCollectionPage");
    let ids: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["acme.check-order"]);
    assert_eq!(v["data"][0]["version"], "1.1.0");
    assert_eq!(v["hasMore"], false);
    assert!(v.get("nextCursor").is_none());
    let r = e.acme.get("/v1/flows/unknown").await;
    let v = error(
        &r,
        StatusCode::NOT_FOUND,
        "flow-not-found",
        "No flow registered with id \"unknown\"",
    );
    assert_eq!(v["error"]["details"], json!({"flowId": "unknown"}));

    // Pages: one id a page, the cursor walks them all.
    let r = e.acme.get("/v1/flows?limit=1").await;
    let p1 = ok(&r, StatusCode::OK, "FlowCollectionPage");
    assert_eq!(p1["hasMore"], true);
    let cursor = p1["nextCursor"].as_str().unwrap();
    let p2 = e
        .acme
        .get(&format!("/v1/flows?limit=1&cursor={cursor}"))
        .await
        .json();
    assert_eq!(p2["data"][0]["id"], "other.flow");
    assert_eq!(p2["hasMore"], false);
    // The scope triplet is checked on every list (case 1.8).
    for path in ["/v1/flows", "/v1/agents", "/v1/tools", "/v1/guardrails"] {
        let r = e.acme.get(&format!("{path}?scopeKind=project")).await;
        error(
            &r,
            StatusCode::BAD_REQUEST,
            "scope-invalid",
            "scope query parameters malformed: scopeKind='project' requires scopeId",
        );
    }
    let r = e.acme.get("/v1/flows?scopeKind=tenant").await;
    assert_eq!(r.status, StatusCode::OK);
    let r = e.acme.get("/v1/flows?cursor=%%%").await;
    error(
        &r,
        StatusCode::BAD_REQUEST,
        "bad-input",
        "`cursor` is malformed",
    );

    // Versions ascend; another tenant sees nothing.
    let r = e.acme.get("/v1/flows/acme.check-order/versions").await;
    let v = ok(&r, StatusCode::OK, "FlowCollectionPage");
    let versions: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.0.0", "1.1.0"]);
    let r = e.other.get("/v1/flows/acme.check-order").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    e.db.cleanup().await.unwrap();
}

/// One versioned kind, for the tombstone cycle: its path, error-code noun, message noun, id
/// field, item schema and page schema.
struct Cycle {
    base: &'static str,
    noun: &'static str,
    title: &'static str,
    field: &'static str,
    item: &'static str,
    page: &'static str,
}

/// The tombstone cycle (cases 61, 62, 63) on one kind; `publish` is a body of `id` at 1.0.0.
async fn tombstone_cycle(c: &TestClient, k: &Cycle, id: &str, publish: Value) {
    let Cycle {
        base,
        noun,
        title,
        field,
        item,
        page,
    } = *k;
    let r = c.post_json(base, &publish).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.json());
    // 61: unregister the only version.
    let r = c
        .post(&format!("{base}/{id}/versions/1.0.0/unregister"))
        .await;
    let v = r.json();
    assert_eq!(r.status, StatusCode::OK, "{v}");
    assert_eq!(
        v,
        json!({field: id, "version": "1.0.0", "unregistered": true})
    );
    let r = c.get(&format!("{base}/{id}")).await;
    let v = error(
        &r,
        StatusCode::GONE,
        &format!("{noun}-gone"),
        &format!(
            "{title} \"{id}\" has no active versions; reinstate a tombstoned version or publish a new one"
        ),
    );
    assert_eq!(v["error"]["details"], json!({field: id}));
    let r = c.get(&format!("{base}/{id}/versions")).await;
    let v = ok(&r, StatusCode::OK, page);
    assert_eq!(v["data"], json!([]));
    let r = c
        .get(&format!("{base}/{id}/versions?includeTombstoned=true"))
        .await;
    let v = ok(&r, StatusCode::OK, page);
    assert_eq!(v["data"][0]["version"], "1.0.0");
    let at = v["data"][0]["unregisteredAt"].as_str().unwrap();
    assert!(at.ends_with('Z'), "{v}");
    // Listed only with includeRetired, as its highest version.
    let listed = c.get(base).await.json();
    assert!(
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["id"] != id)
    );
    let r = c.get(&format!("{base}?includeRetired=true")).await;
    let v = ok(&r, StatusCode::OK, page.replace("Version", "").as_str());
    let retired = v["data"].as_array().unwrap().iter().find(|i| i["id"] == id);
    assert!(
        retired.is_some_and(|i| i["unregisteredAt"].is_string()),
        "{v}"
    );
    // An unregistered version is still readable by its number.
    let r = c.get(&format!("{base}/{id}/versions/1.0.0")).await;
    ok(&r, StatusCode::OK, item);
    // Unknown versions.
    let r = c.get(&format!("{base}/{id}/versions/9.9.9")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(
        r.error_code().as_deref(),
        Some(format!("{noun}-not-found").as_str())
    );
    let r = c
        .post(&format!("{base}/{id}/versions/9.9.9/unregister"))
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    check_error(&r.json());
    // 62: reinstate, again, latest.
    let r = c
        .post(&format!("{base}/{id}/versions/1.0.0/reinstate"))
        .await;
    assert_eq!(
        r.json(),
        json!({field: id, "version": "1.0.0", "wasTombstoned": true})
    );
    let r = c
        .post(&format!("{base}/{id}/versions/1.0.0/reinstate"))
        .await;
    assert_eq!(
        r.json(),
        json!({field: id, "version": "1.0.0", "wasTombstoned": false})
    );
    let r = c.get(&format!("{base}/{id}")).await;
    let v = ok(&r, StatusCode::OK, item);
    assert_eq!(v["version"], "1.0.0");
    assert!(v.get("unregisteredAt").is_none());
}

/// Cases 61–63 for flows, agents and tools.
async fn tombstones(kind: DatabaseKind) {
    let e = env(kind).await;
    tombstone_cycle(
        &e.acme,
        &Cycle {
            base: "/v1/flows",
            noun: "flow",
            title: "Flow",
            field: "flowId",
            item: "Flow",
            page: "FlowCollectionPage",
        },
        "acme.f",
        flow("acme.f", "1.0.0"),
    )
    .await;
    tombstone_cycle(
        &e.acme,
        &Cycle {
            base: "/v1/agents",
            noun: "agent",
            title: "Agent",
            field: "agentId",
            item: "Agent",
            page: "AgentCollectionPage",
        },
        "acme.a",
        agent("acme.a", "1.0.0"),
    )
    .await;
    tombstone_cycle(
        &e.acme,
        &Cycle {
            base: "/v1/tools",
            noun: "tool",
            title: "Tool",
            field: "toolId",
            item: "Tool",
            page: "ToolVersionCollectionPage",
        },
        "acme.t",
        body("acme.t", "1.0.0"),
    )
    .await;
    e.db.cleanup().await.unwrap();
}

/// Case 64 and the agent's shape.
async fn agents_publish(kind: DatabaseKind) {
    let e = env(kind).await;
    e.acme
        .post_json("/v1/tools", &body("acme.lookup-order", "1.4.0"))
        .await;
    let r = e
        .acme
        .post_json("/v1/agents", &agent("acme.helper", "1.0.0"))
        .await;
    let v = ok(&r, StatusCode::CREATED, "PublishAgentResult");
    assert_eq!(v, json!({"agentId": "acme.helper", "version": "1.0.0"}));
    let r = e.acme.get("/v1/agents/acme.helper").await;
    let v = ok(&r, StatusCode::OK, "Agent");
    assert_eq!(v["projectId"], acme_project());
    assert_eq!(
        v["pins"],
        json!({"tools": {"acme.lookup-order": "1.4.0"}, "prompts": {}, "settings": {}})
    );
    // A bare-string tool.
    let mut bad = agent("acme.bad", "1.0.0");
    bad["tools"] = json!(["acme.lookup-order"]);
    let r = e.acme.post_json("/v1/agents", &bad).await;
    let v = error(
        &r,
        StatusCode::BAD_REQUEST,
        "validation-failed",
        "Agent definition is not valid: /tools/0: must be object",
    );
    assert_eq!(v["error"]["details"]["issues"][0]["path"], "/tools/0");
    // Duplicate: names the next free version.
    e.acme
        .post_json("/v1/agents", &agent("acme.helper", "1.3.0"))
        .await;
    let r = e
        .acme
        .post_json("/v1/agents", &agent("acme.helper", "1.0.0"))
        .await;
    let v = error(
        &r,
        StatusCode::CONFLICT,
        "agent-already-registered",
        "Agent \"acme.helper\" version \"1.0.0\" is already registered, and versions never change; publish it as 1.3.1, the next free version",
    );
    assert_eq!(
        v["error"]["details"],
        json!({"agentId": "acme.helper", "version": "1.0.0", "nextFreeVersion": "1.3.1"})
    );
    e.db.cleanup().await.unwrap();
}

/// Cases 65, 66.
async fn tools_wire(kind: DatabaseKind) {
    let e = env(kind).await;
    let mut b = body("acme.pay", "1.0.0");
    b["mutating"] = json!(true);
    b["needsApprovalWhenUnattended"] = json!(true);
    b["needsSpec"] = json!({"secrets": {"PAYMENTS_KEY": {"type": "string"}}});
    let r = e.acme.post_json("/v1/tools", &b).await;
    let v = ok(&r, StatusCode::CREATED, "RegisterToolResult");
    assert_eq!(v, json!({"toolId": "acme.pay"}));
    let r = e.acme.get("/v1/tools/acme.pay/versions/1.0.0").await;
    let v = ok(&r, StatusCode::OK, "Tool");
    assert_eq!(v["needsSpec"], b["needsSpec"]);
    assert_eq!(v["mutating"], true);
    assert_eq!(v["needsApprovalWhenUnattended"], true);
    assert_eq!(v["projectId"], acme_project());
    let r = e.acme.get("/v1/tools").await;
    ok(&r, StatusCode::OK, "ToolCollectionPage");
    let r = e.acme.get("/v1/tools/acme.pay/versions").await;
    ok(&r, StatusCode::OK, "ToolVersionCollectionPage");

    // 66: a provider's key, in needsSpec and in an HTTP spec.
    let mut k = body("acme.llm", "1.0.0");
    k["needsSpec"] = json!({"secrets": {"OPENAI_API_KEY": {"type": "string"}}});
    let r = e.acme.post_json("/v1/tools", &k).await;
    let v = error(
        &r,
        StatusCode::BAD_REQUEST,
        "provider-key-refused",
        "`OPENAI_API_KEY` is the key of model provider \"openai\": a tool never gets a model provider's key. If it needs to call a model itself, store the key under its own name (the same value is fine) and use that name",
    );
    assert_eq!(
        v["error"]["details"],
        json!({"secret": "OPENAI_API_KEY", "providerId": "openai"})
    );
    let mut m = body("acme.meta", "1.0.0");
    m["metadata"] = json!({"owner": "team", "kindgi.x": 1});
    let r = e.acme.post_json("/v1/tools", &m).await;
    let v = error(
        &r,
        StatusCode::BAD_REQUEST,
        "validation-failed",
        "metadata \"kindgi.x\": keys under \"kindgi.\" are the runtime's own; a published tool can't set them",
    );
    assert_eq!(
        v["error"]["details"]["issues"][0]["path"],
        "/metadata/kindgi.x"
    );
    assert_eq!(
        e.acme.get("/v1/tools/acme.meta").await.status,
        StatusCode::NOT_FOUND
    );
    e.db.cleanup().await.unwrap();
}

/// Case 68 and the guardrail routes.
async fn guardrails(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json("/v1/guardrails", &guardrail("acme.few-calls"))
        .await;
    let v = ok(&r, StatusCode::CREATED, "RegisterGuardrailResult");
    assert_eq!(v, json!({"guardrailId": "acme.few-calls"}));
    let r = e.acme.get("/v1/guardrails/acme.few-calls").await;
    let v = ok(&r, StatusCode::OK, "Guardrail");
    assert_eq!(v["config"], json!({"max": 3}));
    assert_eq!(v["projectId"], acme_project());
    let r = e.acme.get("/v1/guardrails").await;
    let v = ok(&r, StatusCode::OK, "GuardrailCollectionPage");
    assert_eq!(v["data"].as_array().unwrap().len(), 1);
    let r = e
        .acme
        .post_json("/v1/guardrails", &guardrail("acme.few-calls"))
        .await;
    error(
        &r,
        StatusCode::CONFLICT,
        "guardrail-already-registered",
        "Guardrail \"acme.few-calls\" is already registered",
    );
    // 68: a config the built-in check's schema refuses.
    let mut bad = guardrail("acme.bad");
    bad["config"] = json!({"max": -1, "extra": true});
    let r = e.acme.post_json("/v1/guardrails", &bad).await;
    let v = error(
        &r,
        StatusCode::UNPROCESSABLE_ENTITY,
        "guardrail-config-invalid",
        "Guardrail \"acme.bad\" doesn't fit check \"max-tool-calls\": config must NOT have additional properties (and 1 more).",
    );
    let issues = v["error"]["details"]["issues"].as_array().unwrap();
    assert!(issues.iter().any(|i| i["path"] == "/config/max"), "{v}");
    // A pack check's own configSchema.
    let mut pack = guardrail("acme.pack");
    pack["check"] = json!("acme.checks.length");
    pack["configSchema"] = json!({"type": "object", "properties": {"maxChars": {"type": "integer", "exclusiveMinimum": 0}}});
    pack["config"] = json!({"maxChars": 0});
    let r = e.acme.post_json("/v1/guardrails", &pack).await;
    let v = error(
        &r,
        StatusCode::UNPROCESSABLE_ENTITY,
        "guardrail-config-invalid",
        "Guardrail \"acme.pack\" doesn't fit check \"acme.checks.length\": config.maxChars must be > 0.",
    );
    assert_eq!(
        v["error"]["details"]["issues"],
        json!([{"path": "/config/maxChars", "message": "config.maxChars must be > 0."}])
    );
    // Not a guardrail at all.
    let mut shape = guardrail("acme.shape");
    shape.as_object_mut().unwrap().remove("action");
    let r = e.acme.post_json("/v1/guardrails", &shape).await;
    assert_eq!(r.error_code().as_deref(), Some("validation-failed"));
    // Outcomes, unregister.
    let r = e.acme.get("/v1/guardrails/acme.few-calls/outcomes").await;
    error(
        &r,
        StatusCode::NOT_IMPLEMENTED,
        "guardrail-outcomes-not-supported",
        "This deployment doesn't record guardrail outcomes.",
    );
    let r = e
        .acme
        .post("/v1/guardrails/acme.few-calls/unregister")
        .await;
    let v = ok(&r, StatusCode::OK, "UnregisterGuardrailResult");
    assert_eq!(
        v,
        json!({"guardrailId": "acme.few-calls", "unregistered": true})
    );
    let r = e.acme.get("/v1/guardrails/acme.few-calls").await;
    error(
        &r,
        StatusCode::NOT_FOUND,
        "guardrail-not-found",
        "No guardrail registered with id \"acme.few-calls\"",
    );
    let r = e
        .acme
        .post("/v1/guardrails/acme.few-calls/unregister")
        .await;
    error(
        &r,
        StatusCode::NOT_FOUND,
        "guardrail-not-found",
        "No guardrail \"acme.few-calls\" to unregister",
    );
    e.db.cleanup().await.unwrap();
}

/// Case 67: a read-only registry refuses every write and serves what the host put in.
async fn read_only(kind: DatabaseKind) {
    let e = env(kind).await;
    let state: AppState = e.state.clone().read_only_registry(true);
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let c = TestClient::new(router(state.clone()), Some(key));
    // What `kindgi dev` serves: the pack's items, with no project.
    let pack_flow = json!({
        "id": "my-pack.check", "version": "0.1.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "my-pack.t"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    });
    let defs = &state.definitions;
    defs.put_flow("acme", &pack_flow, "pack:test")
        .await
        .unwrap();
    // Idempotent for the identical definition; another one under the version is refused.
    defs.put_flow("acme", &pack_flow, "pack:test")
        .await
        .unwrap();
    let mut edited = pack_flow.clone();
    edited["name"] = json!("Edited");
    assert!(defs.put_flow("acme", &edited, "pack:test").await.is_err());

    for (path, b) in [
        ("/v1/tools", body("acme.x", "1.0.0")),
        ("/v1/flows", flow("acme.x", "1.0.0")),
        ("/v1/agents", agent("acme.x", "1.0.0")),
        ("/v1/guardrails", guardrail("acme.x")),
    ] {
        let r = c.post_json(path, &b).await;
        error(
            &r,
            StatusCode::CONFLICT,
            "registry-read-only",
            kindgi_api::state::READ_ONLY_REASON,
        );
    }
    for path in [
        "/v1/flows/my-pack.check/versions/0.1.0/unregister",
        "/v1/flows/my-pack.check/versions/0.1.0/reinstate",
        "/v1/agents/a/versions/1.0.0/unregister",
        "/v1/tools/acme.x/versions/1.0.0/reinstate",
        "/v1/guardrails/g/unregister",
    ] {
        let r = c.post(path).await;
        assert_eq!(
            r.error_code().as_deref(),
            Some("registry-read-only"),
            "{path}"
        );
    }
    // A body is not even read: a wrong media type is still read-only.
    let r = c
        .send(
            Method::POST,
            "/v1/flows",
            None,
            &[("content-type", "text/plain")],
        )
        .await;
    assert_eq!(r.error_code().as_deref(), Some("registry-read-only"));
    // Unauthenticated is still 401.
    let anon = TestClient::new(router(state.clone()), None);
    assert_eq!(
        anon.post_json("/v1/flows", &flow("acme.x", "1.0.0"))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    // GETs serve the host's items.
    let r = c.get("/v1/flows/my-pack.check").await;
    let v = ok(&r, StatusCode::OK, "Flow");
    assert!(v.get("projectId").is_none());
    let r = c.get("/v1/flows").await;
    let v = ok(&r, StatusCode::OK, "FlowCollectionPage");
    assert_eq!(v["data"][0]["id"], "my-pack.check");
    // The runtime's view of the same store.
    let got = defs.get_flow("acme", "my-pack.check", None).await.unwrap();
    assert_eq!(got.unwrap().definition().unwrap(), pack_flow);
    assert_eq!(
        defs.list_ids("acme", kindgi_store::definitions::DefinitionKind::Flow)
            .await
            .unwrap(),
        vec![("my-pack.check".to_owned(), vec!["0.1.0".to_owned()])]
    );
    // A reload clears what the source served.
    assert_eq!(defs.remove_source("acme", "pack:test").await.unwrap(), 1);
    assert_eq!(
        c.get("/v1/flows/my-pack.check").await.status,
        StatusCode::NOT_FOUND
    );
    e.db.cleanup().await.unwrap();
}

/// `GET /v1/projects/default` and the project checks of a publish.
async fn projects(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e.acme.get("/v1/projects/default").await;
    let v = ok(&r, StatusCode::OK, "Project");
    assert_eq!(v["id"], acme_project());
    assert_eq!(v["isDefault"], true);
    assert_eq!(
        e.anon.get("/v1/projects/default").await.status,
        StatusCode::UNAUTHORIZED
    );
    for (path, mut b) in [
        ("/v1/flows", flow("acme.p", "1.0.0")),
        ("/v1/agents", agent("acme.p", "1.0.0")),
        ("/v1/guardrails", guardrail("acme.p")),
    ] {
        b["projectId"] = json!("not-a-uuid");
        let r = e.acme.post_json(path, &b).await;
        error(
            &r,
            StatusCode::BAD_REQUEST,
            "bad-input",
            "`projectId` must be a project id (a UUID)",
        );
        // Another tenant's project is not this tenant's.
        b["projectId"] = json!(acme_project());
        let r = e.other.post_json(path, &b).await;
        assert_eq!(
            r.error_code().as_deref(),
            Some("project-not-found"),
            "{path}"
        );
    }
    e.db.cleanup().await.unwrap();
}

/// A publish retried with its `Idempotency-Key` replays the first answer.
async fn idempotent_publish(kind: DatabaseKind) {
    let e = env(kind).await;
    let b = flow("acme.idem", "1.0.0").to_string().into_bytes();
    let send = || {
        e.acme.send(
            Method::POST,
            "/v1/flows",
            Some(b.clone()),
            &[("idempotency-key", "pub-1")],
        )
    };
    let first = send().await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.json());
    let again = send().await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.json());
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("x-idempotent-replay"), Some("true"));
    e.db.cleanup().await.unwrap();
}

/// Our `/v1/openapi.json` describes every registry route with the official operation.
#[tokio::test]
async fn the_openapi_document_describes_the_registries() {
    let doc: Value = serde_json::from_str(kindgi_api::OPENAPI_JSON).unwrap();
    for (path, method, op) in [
        ("/v1/projects/default", "get", "projects.getDefault"),
        ("/v1/tools", "post", "tools.register"),
        ("/v1/flows", "post", "flows.publish"),
        (
            "/v1/flows/{flowId}/versions/{version}/reinstate",
            "post",
            "flows.reinstateVersion",
        ),
        ("/v1/agents", "get", "agents.list"),
        (
            "/v1/agents/{agentId}/versions/{version}/unregister",
            "post",
            "agents.unregister",
        ),
        (
            "/v1/guardrails/{guardrailId}/outcomes",
            "get",
            "guardrails.outcomes",
        ),
    ] {
        assert_eq!(doc["paths"][path][method]["operationId"], op, "{path}");
    }
    // Every schema a path names is in the document.
    let text = doc.to_string();
    for name in text.split("#/components/schemas/").skip(1) {
        let name: String = name
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        assert!(
            doc["components"]["schemas"].get(&name).is_some(),
            "{name} missing"
        );
    }
}

/// The schema checks can fail: an extra field, a missing one, a bad time.
#[test]
fn schema_checks_bite() {
    use support::openapi::is_valid;
    if is_valid("Flow", &json!({})).is_none() {
        return;
    }
    let f = json!({"id": "a", "version": "1.0.0", "nodes": [], "edges": []});
    assert_eq!(is_valid("Flow", &f), Some(true));
    let mut extra = f.clone();
    extra["output"] = json!({});
    assert_eq!(is_valid("Flow", &extra), Some(false));
    assert_eq!(is_valid("Flow", &json!({"id": "a"})), Some(false));
    let mut at = f.clone();
    at["unregisteredAt"] = json!(1234);
    assert_eq!(is_valid("Flow", &at), Some(false));
    assert_eq!(
        is_valid(
            "RegisterToolResult",
            &json!({"toolId": "a", "version": "1.0.0"})
        ),
        Some(false)
    );
}

both_stores!(
    flows_publish_and_read,
    tombstones,
    agents_publish,
    tools_wire,
    guardrails,
    read_only,
    projects,
    idempotent_publish,
);
