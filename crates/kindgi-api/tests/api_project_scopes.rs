//! Project-scoped keys in the families beyond runs, over real HTTP on SQLite and PostgreSQL
//! (platform-api.md §1.2, §4, §5, §6, §11; docs/tokens.md): a key limited to project A
//! neither sees, decides nor changes project B's approvals, conversations (and their
//! turns), guardrails, flow and tool versions or MCP endpoints; it sees and changes its own; a
//! tenant-wide key sees both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_store::DatabaseKind;
use serde_json::{Value, json};
use support::gated::{AGENT, GATED_TOOL, Server, server};

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_default()
}

/// The ids of a page's rows (`field` of each).
fn ids(page: &Value, field: &str) -> Vec<String> {
    let mut out: Vec<String> = page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no page: {page}"))
        .iter()
        .filter_map(|r| r[field].as_str().map(str::to_owned))
        .collect();
    out.sort();
    out
}

fn sorted(mut v: Vec<&str>) -> Vec<String> {
    v.sort();
    v.into_iter().map(str::to_owned).collect()
}

/// Two projects of `acme` and a key of the operator's limited to each.
struct Projects {
    a: String,
    b: String,
    key_a: String,
}

async fn projects(s: &Server) -> Projects {
    let mut made = Vec::new();
    for slug in ["alpha", "beta"] {
        let (st, p) = s
            .post("/v1/projects", json!({"name": slug, "slug": slug}))
            .await;
        assert_eq!(st, 201, "{p}");
        made.push(p["id"].as_str().unwrap().to_owned());
    }
    let (st, t) = s.post("/v1/tokens", json!({"projectId": made[0]})).await;
    assert_eq!(st, 201, "{t}");
    assert_eq!(t["projectId"], json!(made[0]));
    Projects {
        b: made.pop().unwrap(),
        a: made.pop().unwrap(),
        key_a: t["token"].as_str().unwrap().to_owned(),
    }
}

/// `403 permission-denied` for a key limited to `limit`, naming `resource` and `action`.
fn assert_outside(st: u16, e: &Value, limit: &str, action: &str, resource: &str, what: &str) {
    assert_eq!((st, code(e)), (403, "permission-denied"), "{what}: {e}");
    assert_eq!(
        e["error"]["message"],
        json!(format!(
            "Permission denied: the API key is limited to project {limit}"
        )),
        "{what}"
    );
    assert_eq!(e["error"]["details"]["action"], action, "{what}: {e}");
    assert_eq!(e["error"]["details"]["resource"], resource, "{what}: {e}");
}

fn assert_mismatch(st: u16, e: &Value, what: &str) {
    assert_eq!((st, code(e)), (403, "key-project-mismatch"), "{what}: {e}");
}

/// A gated turn of `AGENT` started with `key` (in `project` when given): its approval.
async fn gated_turn(s: &Server, key: &str, project: Option<&str>) -> (String, String) {
    let mut body = json!({"agent": AGENT, "input": {"userMessage": "write it"}});
    if let Some(p) = project {
        body["projectId"] = json!(p);
    }
    let (st, run) = s.call(key, "POST", "/v1/runs", Some(body)).await;
    assert_eq!(
        (st, run["status"].as_str()),
        (201, Some("suspended")),
        "{run}"
    );
    let id = run["id"].as_str().unwrap().to_owned();
    let (_, got) = s.get(&format!("/v1/runs/{id}")).await;
    let approval = got["waitingFor"]["approvals"][0]["approvalId"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval: {got}"))
        .to_owned();
    (id, approval)
}

async fn approvals_of_other_projects_are_invisible(kind: DatabaseKind) {
    let s = server(kind).await;
    let p = projects(&s).await;
    // The key's person reviews (a key limited to a project is no tenant admin).
    let operator = kindgi_store::tokens::operator_user_id("acme");
    let (st, r) = s
        .post(
            "/v1/approvals/reviewers",
            json!({"userId": operator, "role": "admin"}),
        )
        .await;
    assert_eq!(st, 201, "{r}");

    let (_, mine) = gated_turn(&s, &p.key_a, None).await;
    let (_, theirs) = gated_turn(&s, &s.admin, Some(&p.b)).await;
    let (_, defaults) = gated_turn(&s, &s.admin, None).await;

    // Lists: the key sees its project's; the tenant-wide key all three, or one project's.
    let (st, page) = s.call(&p.key_a, "GET", "/v1/approvals", None).await;
    assert_eq!(st, 200, "{page}");
    assert_eq!(ids(&page, "id"), vec![mine.clone()], "{page}");
    assert_eq!(page["data"][0]["projectId"], json!(p.a));
    assert_eq!(page["hasMore"], false);
    let (_, page) = s
        .call(&p.key_a, "GET", "/v1/approvals?limit=1&order=asc", None)
        .await;
    assert_eq!(ids(&page, "id"), vec![mine.clone()], "{page}");
    assert_eq!(page["hasMore"], false, "{page}");
    // Newer approvals of other projects than a page's first batch holds: the page still
    // finds the key's (oldest) one, and only it.
    for _ in 0..4 {
        gated_turn(&s, &s.admin, None).await;
    }
    let (_, page) = s.call(&p.key_a, "GET", "/v1/approvals?limit=1", None).await;
    assert_eq!(ids(&page, "id"), vec![mine.clone()], "{page}");
    assert_eq!(page["hasMore"], false, "{page}");
    let (_, page) = s
        .get(&format!(
            "/v1/approvals?limit=1&scopeKind=project&scopeId={}",
            p.a
        ))
        .await;
    assert_eq!(ids(&page, "id"), vec![mine.clone()], "{page}");
    let (_, page) = s.get("/v1/approvals").await;
    assert_eq!(page["data"].as_array().map(Vec::len), Some(7), "{page}");
    for id in [&mine, &theirs, &defaults] {
        assert!(ids(&page, "id").contains(id), "{page}");
    }
    let (_, page) = s
        .get(&format!("/v1/approvals?scopeKind=project&scopeId={}", p.b))
        .await;
    assert_eq!(ids(&page, "id"), vec![theirs.clone()], "{page}");
    let (st, e) = s
        .call(
            &p.key_a,
            "GET",
            &format!("/v1/approvals?scopeKind=project&scopeId={}", p.b),
            None,
        )
        .await;
    assert_mismatch(st, &e, "list naming B");

    // Another project's approval is as unknown as a missing one: read and decided alike.
    for other in [&theirs, &defaults] {
        let (st, e) = s
            .call(&p.key_a, "GET", &format!("/v1/approvals/{other}"), None)
            .await;
        assert_eq!((st, code(&e)), (404, "approval-not-found"), "{e}");
        assert_eq!(e["error"]["details"]["approvalId"], other.as_str());
        let (st, e) = s
            .call(
                &p.key_a,
                "POST",
                &format!("/v1/approvals/{other}/complete"),
                Some(json!({"decision": "approve"})),
            )
            .await;
        assert_eq!((st, code(&e)), (404, "approval-not-found"), "{e}");
    }
    assert_eq!(s.writes(), 0, "nothing was approved");
    let (_, still) = s.get(&format!("/v1/approvals/{theirs}")).await;
    assert_eq!(still["status"], "pending", "{still}");

    // Its own: read and decided.
    let (st, one) = s
        .call(&p.key_a, "GET", &format!("/v1/approvals/{mine}"), None)
        .await;
    assert_eq!(
        (st, one["id"].as_str()),
        (200, Some(mine.as_str())),
        "{one}"
    );
    let (st, done) = s
        .call(
            &p.key_a,
            "POST",
            &format!("/v1/approvals/{mine}/complete"),
            Some(json!({"decision": "approve"})),
        )
        .await;
    assert_eq!(st, 200, "{done}");
    assert_eq!(done["approval"]["status"], "approved");
    assert_eq!(s.writes(), 1);
    // The tenant-wide key decides another project's.
    let (st, done) = s
        .post(
            &format!("/v1/approvals/{theirs}/complete"),
            json!({"decision": "reject"}),
        )
        .await;
    assert_eq!(st, 200, "{done}");
}

/// Opens a conversation of `AGENT` with `key`, naming `project` when given.
async fn open(s: &Server, key: &str, project: Option<&str>) -> (u16, Value) {
    let mut body = json!({"agentId": AGENT, "agentVersion": "0.0.0"});
    if let Some(p) = project {
        body["projectId"] = json!(p);
    }
    s.call(key, "POST", "/v1/conversations", Some(body)).await
}

async fn conversations_stay_in_their_projects(kind: DatabaseKind) {
    let s = server(kind).await;
    let p = projects(&s).await;
    // Opened in the key's project without naming it; naming another is refused.
    let (st, mine) = open(&s, &p.key_a, None).await;
    assert_eq!(
        (st, mine["projectId"].as_str()),
        (201, Some(p.a.as_str())),
        "{mine}"
    );
    let (st, e) = open(&s, &p.key_a, Some(&p.b)).await;
    assert_mismatch(st, &e, "open in B");
    // The tenant-wide key opens in any project of the tenant; an unknown one is 400 here.
    let (st, theirs) = open(&s, &s.admin, Some(&p.b)).await;
    assert_eq!(
        (st, theirs["projectId"].as_str()),
        (201, Some(p.b.as_str())),
        "{theirs}"
    );
    let (st, e) = open(&s, &s.admin, Some("0b1c2d3e-0000-4000-8000-000000000000")).await;
    assert_eq!((st, code(&e)), (400, "bad-input"), "{e}");
    let (mine, theirs) = (
        mine["id"].as_str().unwrap().to_owned(),
        theirs["id"].as_str().unwrap().to_owned(),
    );

    let (_, page) = s.call(&p.key_a, "GET", "/v1/conversations", None).await;
    assert_eq!(ids(&page, "id"), vec![mine.clone()], "{page}");
    let (_, page) = s.get("/v1/conversations").await;
    assert_eq!(ids(&page, "id"), sorted(vec![&mine, &theirs]), "{page}");
    let (st, e) = s
        .call(
            &p.key_a,
            "GET",
            &format!("/v1/conversations?scopeKind=project&scopeId={}", p.b),
            None,
        )
        .await;
    assert_mismatch(st, &e, "list naming B");

    let resource = format!("conversation:{theirs}");
    for (method, path, action) in [
        ("GET", format!("/v1/conversations/{theirs}"), "read"),
        (
            "GET",
            format!("/v1/conversations/{theirs}/messages"),
            "read",
        ),
        ("POST", format!("/v1/conversations/{theirs}/close"), "write"),
        (
            "POST",
            format!("/v1/conversations/{theirs}/unregister"),
            "write",
        ),
    ] {
        let (st, e) = s.call(&p.key_a, method, &path, Some(json!({}))).await;
        assert_outside(st, &e, &p.a, action, &resource, &path);
    }
    // A turn into another project's conversation records nothing.
    let turn =
        |id: &str| json!({"agent": AGENT, "input": {"userMessage": "hi", "conversationId": id}});
    let (st, e) = s
        .call(&p.key_a, "POST", "/v1/runs", Some(turn(&theirs)))
        .await;
    assert_outside(st, &e, &p.a, "write", &resource, "turn");
    let (_, got) = s.get(&format!("/v1/conversations/{theirs}")).await;
    assert_eq!(
        (got["status"].as_str(), got["turnCount"].as_u64()),
        (Some("open"), Some(0)),
        "{got}"
    );
    // Nor does a tenant-wide turn in another project than the conversation's.
    let (st, e) = s.post("/v1/runs", turn(&theirs)).await;
    assert_eq!(
        (st, code(&e)),
        (409, "conversation-project-mismatch"),
        "{e}"
    );
    assert_eq!(e["error"]["details"]["conversationProjectId"], json!(p.b));
    assert_eq!(
        e["error"]["details"]["projectId"],
        json!(kindgi_api::projects::default_project_id("acme"))
    );
    let (_, got) = s.get(&format!("/v1/conversations/{theirs}")).await;
    assert_eq!(got["turnCount"], 0, "{got}");
    // In the conversation's project it is a turn (the gated agent parks on its approval).
    let mut in_b = turn(&theirs);
    in_b["projectId"] = json!(p.b);
    let (st, run) = s.post("/v1/runs", in_b).await;
    assert_eq!(
        (st, run["status"].as_str()),
        (201, Some("suspended")),
        "{run}"
    );

    // Its own: read, turned, closed.
    let (st, got) = s
        .call(&p.key_a, "GET", &format!("/v1/conversations/{mine}"), None)
        .await;
    assert_eq!(
        (st, got["id"].as_str()),
        (200, Some(mine.as_str())),
        "{got}"
    );
    let (st, run) = s
        .call(&p.key_a, "POST", "/v1/runs", Some(turn(&mine)))
        .await;
    assert_eq!(
        (st, run["projectId"].as_str()),
        (201, Some(p.a.as_str())),
        "{run}"
    );
    let (st, msgs) = s
        .call(
            &p.key_a,
            "GET",
            &format!("/v1/conversations/{mine}/messages"),
            None,
        )
        .await;
    assert_eq!(st, 200, "{msgs}");
    assert_eq!(msgs["data"][0]["content"], "hi", "{msgs}");
    let (st, closed) = s
        .call(
            &p.key_a,
            "POST",
            &format!("/v1/conversations/{mine}/close"),
            Some(json!({})),
        )
        .await;
    assert_eq!(
        (st, closed["status"].as_str()),
        (200, Some("closed")),
        "{closed}"
    );
}

fn guardrail(id: &str, project: &str) -> Value {
    json!({"id": id, "projectId": project, "kind": "zero-llm", "check": "must-cite",
           "config": {"minCitations": 1}, "action": {"on-violation": "halt"}})
}

async fn guardrails_stay_in_their_projects(kind: DatabaseKind) {
    let s = server(kind).await;
    let p = projects(&s).await;
    let (st, r) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/guardrails",
            Some(guardrail("acme.mine", &p.a)),
        )
        .await;
    assert_eq!(st, 201, "{r}");
    let (st, e) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/guardrails",
            Some(guardrail("acme.sneaky", &p.b)),
        )
        .await;
    assert_mismatch(st, &e, "register in B");
    let (st, r) = s
        .post("/v1/guardrails", guardrail("acme.theirs", &p.b))
        .await;
    assert_eq!(st, 201, "{r}");

    let (_, page) = s.call(&p.key_a, "GET", "/v1/guardrails", None).await;
    assert_eq!(ids(&page, "id"), vec!["acme.mine".to_owned()], "{page}");
    let (_, page) = s.get("/v1/guardrails").await;
    assert_eq!(
        ids(&page, "id"),
        sorted(vec!["acme.mine", "acme.theirs"]),
        "{page}"
    );
    for (method, path, action) in [
        ("GET", "/v1/guardrails/acme.theirs", "read"),
        ("GET", "/v1/guardrails/acme.theirs/outcomes", "read"),
        ("POST", "/v1/guardrails/acme.theirs/unregister", "write"),
    ] {
        let (st, e) = s.call(&p.key_a, method, path, Some(json!({}))).await;
        assert_outside(st, &e, &p.a, action, "guardrail:acme.theirs", path);
    }
    let (st, got) = s.get("/v1/guardrails/acme.theirs").await;
    assert_eq!(st, 200, "still registered: {got}");
    let (st, got) = s
        .call(&p.key_a, "GET", "/v1/guardrails/acme.mine", None)
        .await;
    assert_eq!(
        (st, got["projectId"].as_str()),
        (200, Some(p.a.as_str())),
        "{got}"
    );
    let (st, r) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/guardrails/acme.mine/unregister",
            Some(json!({})),
        )
        .await;
    assert_eq!((st, r["unregistered"].as_bool()), (200, Some(true)), "{r}");
}

fn flow(id: &str, project: &str) -> Value {
    json!({
        "id": id, "version": "1.0.0", "projectId": project,
        "nodes": [{"id": "n", "kind": "tool", "ref": GATED_TOOL}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    })
}

async fn registry_versions_change_in_their_projects_only(kind: DatabaseKind) {
    let s = server(kind).await;
    let p = projects(&s).await;
    let (st, r) = s
        .call(&p.key_a, "POST", "/v1/flows", Some(flow("acme.mine", &p.a)))
        .await;
    assert_eq!(st, 201, "{r}");
    let (st, r) = s.post("/v1/flows", flow("acme.theirs", &p.b)).await;
    assert_eq!(st, 201, "{r}");
    for verb in ["unregister", "reinstate"] {
        let path = format!("/v1/flows/acme.theirs/versions/1.0.0/{verb}");
        let (st, e) = s.call(&p.key_a, "POST", &path, Some(json!({}))).await;
        assert_outside(st, &e, &p.a, "write", "flow:acme.theirs", &path);
    }
    let (st, got) = s.get("/v1/flows/acme.theirs").await;
    assert_eq!(st, 200, "still active: {got}");
    let (_, page) = s.get("/v1/flows").await;
    assert_eq!(
        ids(&page, "id"),
        sorted(vec!["acme.mine", "acme.theirs"]),
        "{page}"
    );
    let (_, page) = s.call(&p.key_a, "GET", "/v1/flows", None).await;
    assert_eq!(ids(&page, "id"), vec!["acme.mine".to_owned()], "{page}");
    // Its own change; an unknown version is still 404.
    let (st, r) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/flows/acme.mine/versions/1.0.0/unregister",
            Some(json!({})),
        )
        .await;
    assert_eq!((st, r["unregistered"].as_bool()), (200, Some(true)), "{r}");
    let (st, r) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/flows/acme.mine/versions/1.0.0/reinstate",
            Some(json!({})),
        )
        .await;
    assert_eq!((st, r["wasTombstoned"].as_bool()), (200, Some(true)), "{r}");
    let (st, e) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/flows/acme.mine/versions/9.9.9/unregister",
            Some(json!({})),
        )
        .await;
    assert_eq!((st, code(&e)), (404, "flow-not-found"), "{e}");

    // Tools alike: another project's versions are neither read nor changed.
    let tool = |id: &str, project: &str| {
        let mut b = support::body(id, "1.0.0");
        b["projectId"] = json!(project);
        b
    };
    let (st, r) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/tools",
            Some(tool("acme.my-tool", &p.a)),
        )
        .await;
    assert_eq!(st, 201, "{r}");
    let (st, r) = s.post("/v1/tools", tool("acme.their-tool", &p.b)).await;
    assert_eq!(st, 201, "{r}");
    for (path, action) in [
        ("/v1/tools/acme.their-tool/versions", "read"),
        ("/v1/tools/acme.their-tool/versions/1.0.0", "read"),
        (
            "/v1/tools/acme.their-tool/versions/1.0.0/unregister",
            "write",
        ),
        (
            "/v1/tools/acme.their-tool/versions/1.0.0/reinstate",
            "write",
        ),
    ] {
        let method = if action == "read" { "GET" } else { "POST" };
        let (st, e) = s.call(&p.key_a, method, path, Some(json!({}))).await;
        assert_outside(st, &e, &p.a, action, "tool:acme.their-tool", path);
    }
    let (st, got) = s.get("/v1/tools/acme.their-tool/versions/1.0.0").await;
    assert_eq!((st, got.get("unregisteredAt")), (200, None), "{got}");
    let (st, r) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/tools/acme.my-tool/versions/1.0.0/unregister",
            Some(json!({})),
        )
        .await;
    assert_eq!((st, r["unregistered"].as_bool()), (200, Some(true)), "{r}");
    let (st, page) = s
        .call(
            &p.key_a,
            "GET",
            "/v1/tools/acme.my-tool/versions?includeTombstoned=true",
            None,
        )
        .await;
    assert_eq!(
        (st, page["data"].as_array().map(Vec::len)),
        (200, Some(1)),
        "{page}"
    );
}

/// An HTTP endpoint nothing answers at (its sync fails; the registration stands).
fn endpoint(id: &str, scope: Value) -> Value {
    let mut body = json!({"endpointId": id, "name": id, "transport": "streamable-http",
        "config": {"transport": "streamable-http", "url": "http://127.0.0.1:9/mcp"}});
    for (k, v) in scope.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn mcp_endpoints_stay_in_their_projects(kind: DatabaseKind) {
    let s = server(kind).await;
    let p = projects(&s).await;
    let in_a = json!({"scopeKind": "project", "scopeId": p.a});
    let in_b = json!({"scopeKind": "project", "scopeId": p.b});
    let tenant = json!({"scopeKind": "tenant"});
    let (st, r) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/mcp/endpoints",
            Some(endpoint("mine", in_a.clone())),
        )
        .await;
    assert_eq!(st, 201, "{r}");
    let (st, e) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/mcp/endpoints",
            Some(endpoint("sneaky", in_b.clone())),
        )
        .await;
    assert_mismatch(st, &e, "register in B");
    let (st, e) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/mcp/endpoints",
            Some(endpoint("wide", tenant.clone())),
        )
        .await;
    let tenant_resource = format!("tenant:{}", kindgi_api::projects::tenant_uuid("acme"));
    assert_outside(
        st,
        &e,
        &p.a,
        "write",
        &tenant_resource,
        "register tenant-wide",
    );
    for (id, scope) in [("theirs", in_b), ("shared", tenant)] {
        let (st, r) = s.post("/v1/mcp/endpoints", endpoint(id, scope)).await;
        assert_eq!(st, 201, "{r}");
    }
    // The tenant admin registers in any stored project; an unknown one is scope-invalid.
    let (st, e) = s
        .post(
            "/v1/mcp/endpoints",
            endpoint(
                "lost",
                json!({"scopeKind": "project", "scopeId": "0b1c2d3e-0000-4000-8000-000000000000"}),
            ),
        )
        .await;
    assert_eq!((st, code(&e)), (400, "scope-invalid"), "{e}");

    let (_, page) = s.call(&p.key_a, "GET", "/v1/mcp/endpoints", None).await;
    assert_eq!(ids(&page, "endpointId"), vec!["mine".to_owned()], "{page}");
    let (_, page) = s
        .call(
            &p.key_a,
            "GET",
            &format!("/v1/mcp/endpoints?scopeKind=project&scopeId={}", p.a),
            None,
        )
        .await;
    assert_eq!(ids(&page, "endpointId"), vec!["mine".to_owned()], "{page}");
    let (_, page) = s.get("/v1/mcp/endpoints").await;
    assert_eq!(
        ids(&page, "endpointId"),
        sorted(vec!["mine", "shared", "theirs"]),
        "{page}"
    );
    let (_, page) = s
        .get(&format!(
            "/v1/mcp/endpoints?scopeKind=project&scopeId={}&inherit=false",
            p.b
        ))
        .await;
    assert_eq!(
        ids(&page, "endpointId"),
        vec!["theirs".to_owned()],
        "{page}"
    );

    for other in ["theirs", "shared"] {
        let resource = format!("mcp_endpoint:{other}");
        for (method, path, action) in [
            ("GET", format!("/v1/mcp/endpoints/{other}"), "read"),
            (
                "GET",
                format!("/v1/mcp/endpoints/{other}/resources"),
                "read",
            ),
            ("GET", format!("/v1/mcp/endpoints/{other}/prompts"), "read"),
            (
                "POST",
                format!("/v1/mcp/endpoints/{other}/unregister"),
                "write",
            ),
        ] {
            let (st, e) = s.call(&p.key_a, method, &path, Some(json!({}))).await;
            assert_outside(st, &e, &p.a, action, &resource, &path);
        }
        let (st, got) = s.get(&format!("/v1/mcp/endpoints/{other}")).await;
        assert_eq!(st, 200, "still registered: {got}");
    }
    let (st, got) = s
        .call(&p.key_a, "GET", "/v1/mcp/endpoints/mine", None)
        .await;
    // (A read serves the registration without its scope: the lists above placed it.)
    assert_eq!(
        (st, got["endpointId"].as_str()),
        (200, Some("mine")),
        "{got}"
    );
    let (st, r) = s
        .call(
            &p.key_a,
            "POST",
            "/v1/mcp/endpoints/mine/unregister",
            Some(json!({})),
        )
        .await;
    assert_eq!((st, r["unregistered"].as_bool()), (200, Some(true)), "{r}");
}

macro_rules! both {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name(kindgi_store::DatabaseKind::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name(kindgi_store::DatabaseKind::Postgres).await;
            }
        }
    };
}

both!(approvals_of_other_projects_are_invisible);
both!(conversations_stay_in_their_projects);
both!(guardrails_stay_in_their_projects);
both!(registry_versions_change_in_their_projects_only);
both!(mcp_endpoints_stay_in_their_projects);
