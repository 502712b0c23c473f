//! Projects as content scopes over real HTTP on SQLite and PostgreSQL (platform-api.md
//! §1.2, §1.6, §3, §5, §7, §10.1): a key minted with `projectId` starts, lists and reads runs of
//! its project only and names no other project anywhere (`403 key-project-mismatch`); it
//! mints only keys of its project; env values set under a project's scope are kept apart
//! and reach the tool calls of that project's runs; registrations stay tenant-wide except
//! for project keys; the operator is a person with a UUID, and `whoami` carries its
//! reviewer role.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kindgi_api::values_config::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use kindgi_store::values::ValuesStore;
use reqwest::StatusCode;
use serde_json::{Value, json};

struct Server {
    url: String,
    admin: String,
    http: reqwest::Client,
    _db: TestDatabase,
}

/// A tool answering the `REGION` env value its call was given.
fn region_tool() -> kindgi_tools::Tool {
    let needs: kindgi_spec::tool::TypedNeeds = serde_json::from_value(json!({
        "env": {"REGION": {"type": "string"}}
    }))
    .unwrap();
    kindgi_tools::Tool::define("acme.region")
        .version("1.0.0")
        .description("answers its REGION")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .needs_spec(needs)
        .handler(|_input: Value, ctx: kindgi_tools::ToolContext| async move {
            let region = ctx.env.as_ref().and_then(|e| e.get("REGION").cloned());
            Ok::<Value, kindgi_tools::HandlerError>(json!({ "region": region }))
        })
        .build()
        .unwrap()
}

async fn server(kind: DatabaseKind) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let (seal, _) = SealKey::generate();
    let values = ValuesStore::with_key(db.db.clone(), Some(seal.clone())).serving("local");
    let rt = Runtime::over(db.db.ports())
        .call_values(Arc::new(values))
        .build();
    rt.tools().insert_tool(region_tool());
    let flow = json!({
        "id": "acme.region", "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "acme.region"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let state = AppState::new(db.db.clone()).with_values(ValuesConfig::new("local", Some(seal)));
    let admin = state.tokens.create("acme", None).await.unwrap().key;
    let app = router(state.with_runtime(rt));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Server {
        url,
        admin,
        http: reqwest::Client::new(),
        _db: db,
    }
}

impl Server {
    async fn call(
        &self,
        key: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self
            .http
            .request(method.parse().unwrap(), format!("{}{path}", self.url))
            .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        let text = r.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A project the admin creates; its id.
    async fn project(&self, slug: &str) -> String {
        let (st, p) = self
            .call(
                &self.admin,
                "POST",
                "/v1/projects",
                Some(json!({"name": slug, "slug": slug})),
            )
            .await;
        assert_eq!(st, StatusCode::CREATED, "{p}");
        p["id"].as_str().unwrap().to_owned()
    }

    /// A key of the admin's limited to `project`.
    async fn project_key(&self, project: &str) -> String {
        let (st, t) = self
            .call(
                &self.admin,
                "POST",
                "/v1/tokens",
                Some(json!({"projectId": project, "capabilities": ["env:write"]})),
            )
            .await;
        assert_eq!(st, StatusCode::CREATED, "{t}");
        assert_eq!(t["projectId"], json!(project), "{t}");
        t["token"].as_str().unwrap().to_owned()
    }

    /// Starts `acme.region` with `key` (waited), naming `project` when given.
    async fn run(&self, key: &str, project: Option<&str>) -> (StatusCode, Value) {
        let mut body = json!({"flow": "acme.region", "input": {}});
        if let Some(p) = project {
            body["projectId"] = json!(p);
        }
        self.call(key, "POST", "/v1/runs", Some(body)).await
    }
}

fn code(v: &Value) -> Option<&str> {
    v["error"]["code"].as_str()
}

async fn runs_stay_in_the_keys_project(kind: DatabaseKind) {
    let s = server(kind).await;
    let default_id = kindgi_api::projects::default_project_id("acme");
    let p = s.project("support").await;
    let key = s.project_key(&p).await;

    // A start without `projectId` runs in the key's project; naming its own is fine.
    let (st, mine) = s.run(&key, None).await;
    assert_eq!(st, StatusCode::CREATED, "{mine}");
    assert_eq!(mine["projectId"], json!(p), "{mine}");
    let (st, named) = s.run(&key, Some(&p)).await;
    assert_eq!(
        (st, named["projectId"].as_str()),
        (StatusCode::CREATED, Some(p.as_str()))
    );
    // Naming another project anywhere is refused before the route.
    let (st, e) = s.run(&key, Some(&default_id)).await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch")),
        "{e}"
    );
    assert_eq!(
        e["error"]["message"],
        json!(format!(
            "This API key is limited to project {p}; the request names project {default_id}"
        ))
    );
    assert_eq!(e["error"]["details"]["keyProjectId"], json!(p));
    assert_eq!(e["error"]["details"]["projectId"], json!(default_id));
    assert_eq!(e["error"]["details"]["action"], "write");
    let (st, e) = s
        .call(
            &key,
            "GET",
            &format!("/v1/runs?scopeKind=project&scopeId={default_id}"),
            None,
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch"))
    );
    assert_eq!(e["error"]["details"]["action"], "read");
    let (st, e) = s.call(&key, "GET", "/v1/projects/default", None).await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch"))
    );
    let (st, own) = s
        .call(&key, "GET", &format!("/v1/projects/{p}"), None)
        .await;
    assert_eq!(st, StatusCode::OK, "{own}");

    // The admin's run in the Default project is out of the key's reach.
    let (st, theirs) = s.run(&s.admin, None).await;
    assert_eq!(
        (st, theirs["projectId"].as_str()),
        (StatusCode::CREATED, Some(default_id.as_str()))
    );
    let theirs_id = theirs["id"].as_str().unwrap();
    for (method, path, action) in [
        ("GET", format!("/v1/runs/{theirs_id}"), "read"),
        ("GET", format!("/v1/runs/{theirs_id}/journal"), "read"),
        ("GET", format!("/v1/runs/{theirs_id}/progress"), "read"),
        ("POST", format!("/v1/runs/{theirs_id}/cancel"), "write"),
    ] {
        let (st, e) = s.call(&key, method, &path, Some(json!({}))).await;
        assert_eq!(
            (st, code(&e)),
            (StatusCode::FORBIDDEN, Some("permission-denied")),
            "{path}: {e}"
        );
        assert_eq!(
            e["error"]["message"],
            json!(format!(
                "Permission denied: the API key is limited to project {p}"
            ))
        );
        assert_eq!(e["error"]["details"]["action"], action);
        assert_eq!(
            e["error"]["details"]["resource"],
            json!(format!("project:{default_id}"))
        );
    }
    // A run that does not exist is still 404.
    let (st, e) = s
        .call(
            &key,
            "GET",
            "/v1/runs/7f0c8a9e-3b1d-4c55-9e2a-0d6b8f1e2a33",
            None,
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::NOT_FOUND, Some("run-not-found"))
    );
    let mine_id = mine["id"].as_str().unwrap();
    let (st, got) = s
        .call(&key, "GET", &format!("/v1/runs/{mine_id}"), None)
        .await;
    assert_eq!((st, got["id"].as_str()), (StatusCode::OK, Some(mine_id)));

    // Lists: the key sees its project's runs; the admin sees all.
    let ids = |page: &Value| -> Vec<String> {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["projectId"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let (st, page) = s.call(&key, "GET", "/v1/runs", None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(ids(&page), vec![p.clone(), p.clone()], "{page}");
    let (_, page) = s
        .call(
            &key,
            "GET",
            &format!("/v1/runs?scopeKind=project&scopeId={p}"),
            None,
        )
        .await;
    assert_eq!(ids(&page).len(), 2);
    let (_, page) = s.call(&s.admin, "GET", "/v1/runs", None).await;
    assert_eq!(ids(&page).len(), 3, "{page}");
}

async fn keys_mint_within_their_project(kind: DatabaseKind) {
    let s = server(kind).await;
    let default_id = kindgi_api::projects::default_project_id("acme");
    let p = s.project("support").await;
    // A project the tenant made is a project keys are minted for (not only the Default).
    let key = s.project_key(&p).await;
    let (st, e) = s
        .call(
            &s.admin,
            "POST",
            "/v1/tokens",
            Some(json!({"projectId": "00000000-0000-4000-8000-000000000000"})),
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::NOT_FOUND, Some("project-not-found"))
    );

    // The project key mints keys of its project only.
    let (st, e) = s.call(&key, "POST", "/v1/tokens", Some(json!({}))).await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch")),
        "{e}"
    );
    assert_eq!(
        e["error"]["message"],
        json!(format!(
            "Your key is limited to project {p}: a key it mints must be limited to it too"
        ))
    );
    let (st, e) = s
        .call(
            &key,
            "POST",
            "/v1/tokens",
            Some(json!({"projectId": default_id})),
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch"))
    );
    let (st, t) = s
        .call(
            &key,
            "POST",
            "/v1/tokens",
            Some(json!({"projectId": p, "capabilities": ["env:write"]})),
        )
        .await;
    assert_eq!(
        (st, t["projectId"].as_str()),
        (StatusCode::CREATED, Some(p.as_str())),
        "{t}"
    );
    // Never more than it holds: no admin key, no capability it lacks.
    let (st, e) = s
        .call(
            &key,
            "POST",
            "/v1/tokens",
            Some(json!({"projectId": p, "role": "admin"})),
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("role-exceeds-principal")),
        "{e}"
    );
    let (st, e) = s
        .call(
            &key,
            "POST",
            "/v1/tokens",
            Some(json!({"projectId": p, "capabilities": ["secrets:write"]})),
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("permission-denied")),
        "{e}"
    );
    // A project key is no tenant admin, whoever holds it.
    let (st, e) = s
        .call(
            &key,
            "POST",
            "/v1/service-accounts",
            Some(json!({"name": "bot"})),
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN, "{e}");
}

async fn env_values_are_kept_per_project(kind: DatabaseKind) {
    let s = server(kind).await;
    let default_id = kindgi_api::projects::default_project_id("acme");
    let p = s.project("support").await;
    let put = |scope: String, value: &str| {
        (
            format!("/v1/env/REGION?envName=local&{scope}"),
            json!({ "value": value }),
        )
    };
    for (scope, value) in [
        ("scopeKind=tenant".to_owned(), "tenant"),
        (format!("scopeKind=project&scopeId={p}"), "support"),
    ] {
        let (path, body) = put(scope, value);
        let (st, r) = s.call(&s.admin, "PUT", &path, Some(body)).await;
        assert_eq!(st, StatusCode::OK, "{r}");
    }
    let (st, r) = s
        .call(
            &s.admin,
            "GET",
            &format!("/v1/env/REGION?envName=local&scopeKind=project&scopeId={p}"),
            None,
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{r}");
    assert_eq!(
        (r["value"].as_str(), r["scope"]["projectId"].as_str()),
        (Some("support"), Some(p.as_str()))
    );
    let (st, e) = s
        .call(
            &s.admin,
            "GET",
            &format!("/v1/env/REGION?envName=local&scopeKind=project&scopeId={default_id}"),
            None,
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::NOT_FOUND, Some("env-not-found")),
        "{e}"
    );
    let (st, e) = s
        .call(
            &s.admin,
            "GET",
            "/v1/env/REGION?envName=local&scopeKind=project&scopeId=00000000-0000-4000-8000-000000000000",
            None,
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::NOT_FOUND, Some("project-not-found"))
    );

    // A project key writes its project's values, and no other scope's project.
    let key = s.project_key(&p).await;
    let (path, body) = put(format!("scopeKind=project&scopeId={default_id}"), "x");
    let (st, e) = s.call(&key, "PUT", &path, Some(body)).await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch"))
    );

    // Each run's tool calls read their project's value first, then the tenant's.
    let (st, run) = s.run(&s.admin, Some(&p)).await;
    assert_eq!(st, StatusCode::CREATED, "{run}");
    assert_eq!(run["output"]["region"], "support", "{run}");
    let (_, run) = s.run(&s.admin, None).await;
    assert_eq!(run["output"]["region"], "tenant", "{run}");
}

async fn registrations_are_tenant_wide_but_not_for_project_keys(kind: DatabaseKind) {
    let s = server(kind).await;
    let default_id = kindgi_api::projects::default_project_id("acme");
    let p = s.project("support").await;
    let flow = |id: &str, project: &str| {
        json!({
            "id": id, "version": "1.0.0", "projectId": project,
            "nodes": [{"id": "n", "kind": "tool", "ref": "acme.region"}],
            "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
        })
    };
    for (id, project) in [("acme.in-support", &p), ("acme.in-default", &default_id)] {
        let (st, r) = s
            .call(&s.admin, "POST", "/v1/flows", Some(flow(id, project)))
            .await;
        assert_eq!(st, StatusCode::CREATED, "{r}");
    }
    // Every tenant key reads every project's items; `?projectId=` names any stored project.
    let (_, page) = s.call(&s.admin, "GET", "/v1/flows", None).await;
    assert_eq!(page["data"].as_array().unwrap().len(), 2, "{page}");
    let (st, f) = s
        .call(
            &s.admin,
            "GET",
            &format!("/v1/flows/acme.in-support?projectId={p}"),
            None,
        )
        .await;
    assert_eq!(
        (st, f["projectId"].as_str()),
        (StatusCode::OK, Some(p.as_str())),
        "{f}"
    );
    let (st, e) = s
        .call(
            &s.admin,
            "GET",
            "/v1/flows/acme.in-support?projectId=00000000-0000-4000-8000-000000000000",
            None,
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::NOT_FOUND, Some("project-not-found"))
    );

    // A project key: its project's items only.
    let key = s.project_key(&p).await;
    let (_, page) = s.call(&key, "GET", "/v1/flows", None).await;
    let ids: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert_eq!(ids, vec!["acme.in-support"], "{page}");
    let (st, _) = s.call(&key, "GET", "/v1/flows/acme.in-support", None).await;
    assert_eq!(st, StatusCode::OK);
    for path in [
        "/v1/flows/acme.in-default",
        "/v1/flows/acme.in-default/versions",
        "/v1/flows/acme.in-default/versions/1.0.0",
    ] {
        let (st, e) = s.call(&key, "GET", path, None).await;
        assert_eq!(
            (st, code(&e)),
            (StatusCode::FORBIDDEN, Some("permission-denied")),
            "{path}: {e}"
        );
        assert_eq!(e["error"]["details"]["resource"], "flow:acme.in-default");
    }
    // It publishes into its project only.
    let (st, e) = s
        .call(
            &key,
            "POST",
            "/v1/flows",
            Some(flow("acme.other", &default_id)),
        )
        .await;
    assert_eq!(
        (st, code(&e)),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch"))
    );
}

async fn the_operator_is_a_uuid_person_and_a_reviewer(kind: DatabaseKind) {
    let s = server(kind).await;
    let operator = kindgi_store::tokens::operator_user_id("acme");
    assert!(uuid::Uuid::parse_str(&operator).is_ok());
    assert_eq!(operator, kindgi_store::tokens::operator_user_id("acme"));
    let (st, me) = s.call(&s.admin, "GET", "/v1/identity/whoami", None).await;
    assert_eq!(st, StatusCode::OK, "{me}");
    assert_eq!(me["userId"], json!(operator));
    assert_eq!(me["actor"], json!(format!("user:{operator}")));
    // The operator is put on the roster as `admin` with its key.
    assert_eq!(me["reviewerRole"], "admin", "{me}");
    // A key limited to a project says so; a key of a person off the roster has no role.
    let p = s.project("support").await;
    let key = s.project_key(&p).await;
    let (_, me) = s.call(&key, "GET", "/v1/identity/whoami", None).await;
    assert_eq!(
        (me["projectId"].as_str(), me["reviewerRole"].as_str()),
        (Some(p.as_str()), Some("admin"))
    );
    let (st, sa) = s
        .call(
            &s.admin,
            "POST",
            "/v1/service-accounts",
            Some(json!({"name": "bot"})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{sa}");
    let (st, t) = s
        .call(
            &s.admin,
            "POST",
            "/v1/tokens",
            Some(json!({"for": {"kind": "service-account", "id": sa["serviceAccountId"]}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let (_, me) = s
        .call(
            t["token"].as_str().unwrap(),
            "GET",
            "/v1/identity/whoami",
            None,
        )
        .await;
    assert!(me.get("reviewerRole").is_none(), "{me}");
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

both!(runs_stay_in_the_keys_project);
both!(keys_mint_within_their_project);
both!(env_values_are_kept_per_project);
both!(registrations_are_tenant_wide_but_not_for_project_keys);
both!(the_operator_is_a_uuid_person_and_a_reviewer);
