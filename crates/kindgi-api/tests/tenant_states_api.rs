//! Suspended and closing tenants and suspended projects over the real API on SQLite and
//! PostgreSQL (platform-api.md §1.9, §3.1, §9.2 step 5; docs/tenancy.md): writes refused
//! `409 tenant-suspended|tenant-closing` while reads, deletes and cancels pass; a run start in
//! a suspended project `409 project-suspended`; the webhook receiver's step 5 (nothing
//! recorded); schedule fires `skipped` with the state's code, not counted; and `400
//! reference-out-of-scope` for a trigger naming a flow published in another project.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::{Method, StatusCode};
use kindgi_api::routes::hooks_state::WebhookSettings;
use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::testing::{TestClient, TestResponse};
use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_runtime::triggers::Schedules;
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::tenant_states::{Suspension, TenantStateStore, TenantStates};
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use serde_json::{Value, json};

fn echo_tool() -> Tool {
    Tool::define("acme.echo")
        .version("1.0.0")
        .description("echoes")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|input: Value, _ctx| async move { Ok::<Value, HandlerError>(input) })
        .build()
        .unwrap()
}

fn flow(id: &str) -> Value {
    json!({
        "id": id, "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "acme.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    })
}

struct Env {
    db: TestDatabase,
    acme: TestClient,
    public: TestClient,
    schedules: Schedules,
    states: TenantStateStore,
    default_project: String,
}

async fn env(kind: DatabaseKind) -> Env {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    rt.tools().insert_tool(echo_tool());
    rt.flows()
        .insert_json(&flow("acme.nightly").to_string())
        .unwrap();
    let (seal, _) = SealKey::generate();
    let state = AppState::new(db.db.clone())
        .with_runtime(rt)
        .with_values(ValuesConfig::new("local", Some(seal)))
        .with_webhook_settings(WebhookSettings {
            public_url: Some("https://hooks.example.test".into()),
            tenant_receives_per_minute: 12_000,
        });
    let key = state.tokens.create("acme", None).await.unwrap();
    let app = router(state.clone());
    Env {
        states: TenantStateStore::new(db.db.clone()),
        acme: TestClient::new(app.clone(), Some(key.key)),
        public: TestClient::new(app, None),
        schedules: state.schedules.clone(),
        default_project: kindgi_api::projects::default_project_id("acme"),
        db,
    }
}

fn suspended(reason: &str) -> Suspension {
    Suspension {
        at: 1,
        reason: Some(reason.into()),
    }
}

fn code(r: &TestResponse) -> (StatusCode, Option<String>) {
    (r.status, r.error_code())
}

async fn new_project(e: &Env, slug: &str) -> String {
    let r = e
        .acme
        .post_json("/v1/projects", &json!({"name": slug, "slug": slug}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    r.json()["id"].as_str().unwrap().to_owned()
}

fn start_body(project: &str) -> Value {
    json!({"flow": "acme.nightly", "input": {}, "projectId": project, "options": {"wait": false}})
}

// Writes refused by one middleware; reads, deletes and cancels pass; the tenant shows its
// state; restoring lets writes through again; closing wins and stays.
async fn writes_refused(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e.acme.get("/v1/tenant").await;
    assert!(r.json().get("state").is_none(), "active: absent");
    let r = e
        .acme
        .post_json("/v1/schedules", &json!({"flowId": "acme.nightly", "flowVersion": "1.0.0", "config": {"cronExpression": "0 3 * * *"}}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let schedule = r.json()["scheduleId"].as_str().unwrap().to_owned();

    e.states
        .set_tenant_suspended("acme", Some(&suspended("unpaid")))
        .await
        .unwrap();
    assert_eq!(e.acme.get("/v1/tenant").await.json()["state"], "suspended");
    for r in [
        e.acme
            .post_json("/v1/runs", &start_body(&e.default_project))
            .await,
        e.acme
            .post_json("/v1/projects", &json!({"name": "x", "slug": "x"}))
            .await,
        e.acme
            .send(
                Method::PATCH,
                "/v1/tenant",
                Some(br#"{"name":"New"}"#.to_vec()),
                &[],
            )
            .await,
        e.acme
            .post(&format!("/v1/schedules/{schedule}/pause"))
            .await,
    ] {
        assert_eq!(
            code(&r),
            (StatusCode::CONFLICT, Some("tenant-suspended".into())),
            "{:?}",
            r.json()
        );
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("suspended"),
            "{:?}",
            r.json()
        );
    }
    // Reads and deletes pass.
    assert_eq!(e.acme.get("/v1/schedules").await.status, StatusCode::OK);
    assert_eq!(
        e.acme
            .get(&format!("/v1/schedules/{schedule}"))
            .await
            .status,
        StatusCode::OK
    );
    let r = e
        .acme
        .post(&format!("/v1/schedules/{schedule}/unregister"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());

    // Restored: writes go through.
    e.states.set_tenant_suspended("acme", None).await.unwrap();
    let r = e
        .acme
        .post_json("/v1/projects", &json!({"name": "y", "slug": "y"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());

    // Closing: the same, with its own code, and it wins over a suspension.
    e.states
        .set_tenant_suspended("acme", Some(&suspended("x")))
        .await
        .unwrap();
    e.states.close_tenant("acme", 2).await.unwrap();
    assert_eq!(e.acme.get("/v1/tenant").await.json()["state"], "closing");
    let r = e
        .acme
        .post_json("/v1/runs", &start_body(&e.default_project))
        .await;
    assert_eq!(
        code(&r),
        (StatusCode::CONFLICT, Some("tenant-closing".into()))
    );
    assert_eq!(r.json()["error"]["details"]["state"], "closing");
    assert_eq!(e.acme.get("/v1/projects").await.status, StatusCode::OK);
    e.db.cleanup().await.unwrap();
}

// A run start in a suspended project: `409 project-suspended`; another project runs.
async fn runs_in_a_suspended_project(kind: DatabaseKind) {
    let e = env(kind).await;
    let ops = new_project(&e, "ops").await;
    e.states
        .set_project_suspended("acme", &ops, Some(&suspended("abuse")))
        .await
        .unwrap();
    let r = e.acme.post_json("/v1/runs", &start_body(&ops)).await;
    assert_eq!(
        code(&r),
        (StatusCode::CONFLICT, Some("project-suspended".into())),
        "{:?}",
        r.json()
    );
    assert_eq!(r.json()["error"]["details"]["projectId"], json!(ops));
    let page = e.acme.get("/v1/runs").await.json();
    assert_eq!(page["data"], json!([]), "no run was made");
    // The rest of the tenant is untouched: the Default project runs, other writes pass.
    let r = e
        .acme
        .post_json("/v1/runs", &start_body(&e.default_project))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{:?}", r.json());
    let r = e
        .acme
        .send(
            Method::PATCH,
            &format!("/v1/projects/{ops}"),
            Some(br#"{"name":"Ops"}"#.to_vec()),
            &[],
        )
        .await;
    assert!(r.status.is_success(), "{:?}", r.json());
    // Restored, it runs.
    e.states
        .set_project_suspended("acme", &ops, None)
        .await
        .unwrap();
    let r = e.acme.post_json("/v1/runs", &start_body(&ops)).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{:?}", r.json());
    e.db.cleanup().await.unwrap();
}

async fn fires_of(e: &Env, path: &str) -> Vec<Value> {
    let r = e.acme.get(path).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    r.json()["data"].as_array().unwrap().clone()
}

// A suspended project's or tenant's schedule fires are `skipped` with the state's code,
// not counted toward the auto-pause; restored, it fires again.
async fn schedule_fires_skipped(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json("/v1/schedules", &json!({"flowId": "acme.nightly", "flowVersion": "1.0.0", "config": {"cronExpression": "* * * * *"}}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let id = r.json()["scheduleId"].as_str().unwrap().to_owned();
    let next = r.json()["nextFireAt"].as_str().unwrap().to_owned();
    let mut at = chrono::DateTime::parse_from_rfc3339(&next)
        .unwrap()
        .timestamp_millis();
    e.states
        .set_project_suspended("acme", &e.default_project, Some(&suspended("p")))
        .await
        .unwrap();
    // More fires than the auto-pause's five: none counts.
    for n in 0..6 {
        assert_eq!(e.schedules.tick(at).await.unwrap(), 1, "fire {n}");
        at += 60_000;
    }
    e.states
        .set_tenant_suspended("acme", Some(&suspended("t")))
        .await
        .unwrap();
    assert_eq!(e.schedules.tick(at).await.unwrap(), 1);
    at += 60_000;
    let fires = fires_of(&e, &format!("/v1/schedules/{id}/fires")).await;
    assert_eq!(fires.len(), 7, "{fires:?}");
    assert!(fires.iter().all(|f| f["outcome"] == "skipped"), "{fires:?}");
    assert!(fires.iter().all(|f| f.get("runId").is_none()), "{fires:?}");
    assert_eq!(fires[0]["detail"], "tenant-suspended", "{fires:?}");
    assert_eq!(fires[1]["detail"], "project-suspended", "{fires:?}");
    let s = e.acme.get(&format!("/v1/schedules/{id}")).await.json();
    assert_eq!(s["status"], "active", "skips never pause it: {s}");

    // Restored, it fires a run again.
    e.states.set_tenant_suspended("acme", None).await.unwrap();
    e.states
        .set_project_suspended("acme", &e.default_project, None)
        .await
        .unwrap();
    assert_eq!(e.schedules.tick(at).await.unwrap(), 1);
    let fires = fires_of(&e, &format!("/v1/schedules/{id}/fires")).await;
    assert_eq!(fires[0]["outcome"], "started", "{fires:?}");
    e.db.cleanup().await.unwrap();
}

fn hmac(key: &[u8], data: &[u8]) -> String {
    hex::encode(ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key),
        data,
    ))
}

async fn deliver(e: &Env, path: &str, n: u32) -> TestResponse {
    let body = format!("{{\"n\":{n}}}");
    let sig = hmac(b"k", body.as_bytes());
    e.public
        .send(
            Method::POST,
            path,
            Some(body.into_bytes()),
            &[("x-kindgi-signature", sig.as_str())],
        )
        .await
}

// The receiver's step 5: suspended → `202 {"skipped"}`, closing → `409`, nothing recorded.
async fn webhook_step_five(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json(
            "/v1/secrets?envName=local",
            &json!({"scope": {"kind": "tenant"}, "envName": "local", "name": "K", "value": "k", "writeMode": "create-new"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let r = e
        .acme
        .post_json(
            "/v1/webhooks",
            &json!({"flowId": "acme.nightly", "flowVersion": "1.0.0", "hmacSecretName": "K"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let t = r.json();
    let id = t["triggerId"].as_str().unwrap().to_owned();
    let path = format!(
        "/v1/hooks/{}/{}",
        kindgi_api::projects::tenant_uuid("acme"),
        t["webhookId"].as_str().unwrap()
    );
    let fires = format!("/v1/webhooks/{id}/fires");

    e.states
        .set_project_suspended("acme", &e.default_project, Some(&suspended("p")))
        .await
        .unwrap();
    let r = deliver(&e, &path, 1).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(r.json(), json!({"skipped": "project-suspended"}));
    e.states
        .set_tenant_suspended("acme", Some(&suspended("t")))
        .await
        .unwrap();
    let r = deliver(&e, &path, 2).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(r.json(), json!({"skipped": "tenant-suspended"}));
    // An unsigned delivery learns nothing of the state.
    let r = e
        .public
        .send(Method::POST, &path, Some(b"{}".to_vec()), &[])
        .await;
    assert_eq!(
        code(&r),
        (StatusCode::UNAUTHORIZED, Some("webhook-refused".into()))
    );
    assert!(
        fires_of(&e, &fires)
            .await
            .iter()
            .all(|f| f["outcome"] == "refused"),
        "nothing recorded for the skipped ones"
    );
    let recorded = fires_of(&e, &fires).await.len();
    assert_eq!(recorded, 1, "only the unsigned refusal");

    e.states.close_tenant("acme", 3).await.unwrap();
    let r = deliver(&e, &path, 3).await;
    assert_eq!(
        code(&r),
        (StatusCode::CONFLICT, Some("tenant-closing".into()))
    );
    assert_eq!(fires_of(&e, &fires).await.len(), recorded);
    e.db.cleanup().await.unwrap();
}

// A trigger (schedule, webhook, mail) naming a flow published in another project: `400
// reference-out-of-scope`.
async fn out_of_scope_targets(kind: DatabaseKind) {
    let e = env(kind).await;
    let ops = new_project(&e, "ops").await;
    let mut published = flow("acme.published");
    published["projectId"] = json!(ops);
    let r = e.acme.post_json("/v1/flows", &published).await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let schedule = json!({"flowId": "acme.published", "flowVersion": "1.0.0", "config": {"cronExpression": "0 3 * * *"}});

    // In the Default project: out of scope, at `/target`.
    let r = e.acme.post_json("/v1/schedules", &schedule).await;
    assert_eq!(
        code(&r),
        (
            StatusCode::BAD_REQUEST,
            Some("reference-out-of-scope".into())
        ),
        "{:?}",
        r.json()
    );
    let issue = &r.json()["error"]["details"]["issues"][0];
    assert_eq!(issue["path"], "/target");
    assert_eq!(issue["kind"], "flow");
    assert_eq!(issue["id"], "acme.published");
    assert!(issue["message"].as_str().unwrap().contains(&ops), "{issue}");
    let r = e
        .acme
        .post_json(
            "/v1/webhooks",
            &json!({"flowId": "acme.published", "flowVersion": "1.0.0", "hmacSecretName": "K"}),
        )
        .await;
    assert_eq!(
        code(&r),
        (
            StatusCode::BAD_REQUEST,
            Some("reference-out-of-scope".into())
        ),
        "{:?}",
        r.json()
    );
    assert_eq!(r.json()["error"]["details"]["issues"][0]["path"], "/flowId");
    let r = e
        .acme
        .post_json(
            "/v1/mail-triggers",
            &json!({"address": "support@acme.test", "flowId": "acme.published", "flowVersion": "1.0.0",
                "senders": [{"address": "ada@example.test", "userId": "ada"}],
                "mailbox": {"app": "google", "whose": "company"}}),
        )
        .await;
    assert_eq!(
        code(&r),
        (
            StatusCode::BAD_REQUEST,
            Some("reference-out-of-scope".into())
        ),
        "{:?}",
        r.json()
    );
    assert_eq!(r.json()["error"]["details"]["issues"][0]["path"], "/target");
    assert_eq!(
        fires_of(&e, "/v1/schedules").await.len(),
        0,
        "nothing registered"
    );

    // In its own project the scope check passes (what's left is the runtime's own lookup).
    let mut in_ops = schedule.clone();
    in_ops["projectId"] = json!(ops);
    let r = e.acme.post_json("/v1/schedules", &in_ops).await;
    assert_ne!(r.error_code().as_deref(), Some("reference-out-of-scope"));
    // A pack's flow (no project) is every project's.
    let mut pack = json!({"flowId": "acme.nightly", "flowVersion": "1.0.0", "config": {"cronExpression": "0 3 * * *"}});
    pack["projectId"] = json!(ops);
    let r = e.acme.post_json("/v1/schedules", &pack).await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    e.db.cleanup().await.unwrap();
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
    writes_refused,
    runs_in_a_suspended_project,
    schedule_fires_skipped,
    webhook_step_five,
    out_of_scope_targets,
);
