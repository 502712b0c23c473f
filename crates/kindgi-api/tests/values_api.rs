//! `/v1/env` and `/v1/secrets` on SQLite and PostgreSQL (platform-api.md §7, cases 73–76):
//! the envName and scope rules, revisions and conflicts, the served env, paging, secret
//! versions and revocation, the no-key answer — and that no response body ever carries a
//! secret value. The official CLI test drives the same routes over a loopback socket.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use axum::http::Method;
use kindgi_api::projects::{default_project_id, tenant_uuid};
use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::testing::{TestClient, TestResponse};
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};

const SECRET: &str = "sk_live_DO_NOT_LEAK_42";

struct Setup {
    db: TestDatabase,
    acme: TestClient,
    other: TestClient,
    keyless: TestClient,
    anon: TestClient,
}

async fn setup(kind: DatabaseKind) -> Setup {
    let db = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(db.db.clone());
    let a = state.tokens.create("acme", None).await.unwrap().key;
    let o = state.tokens.create("other", None).await.unwrap().key;
    let (seal, _) = SealKey::generate();
    let app = router(
        state
            .clone()
            .with_values(ValuesConfig::new("local", Some(seal))),
    );
    let keyless = router(state.with_values(ValuesConfig::new("local", None)));
    Setup {
        acme: TestClient::new(app.clone(), Some(a.clone())),
        other: TestClient::new(app.clone(), Some(o)),
        keyless: TestClient::new(keyless, Some(a)),
        anon: TestClient::new(app, None),
        db,
    }
}

async fn put(c: &TestClient, uri: &str, body: Value) -> TestResponse {
    c.send(Method::PUT, uri, Some(body.to_string().into_bytes()), &[])
        .await
}

async fn delete(c: &TestClient, uri: &str) -> TestResponse {
    c.send(Method::DELETE, uri, None, &[]).await
}

fn code(r: &TestResponse) -> String {
    r.error_code()
        .unwrap_or_else(|| format!("<{}: {}>", r.status, r.json()))
}

/// No answer may carry the secret value, in any form.
fn assert_no_secret(r: &TestResponse) {
    let text = String::from_utf8_lossy(&r.body);
    assert!(
        !text.contains(SECRET),
        "a response carried the secret: {text}"
    );
    assert!(
        !text.contains("DO_NOT_LEAK"),
        "a response carried the secret: {text}"
    );
}

async fn case_73_env_needs_env_name_and_scope(kind: DatabaseKind) {
    let s = setup(kind).await;
    let r = s.acme.get("/v1/env?scopeKind=tenant").await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (400, "env-name-required".into())
    );
    let r = s.acme.get("/v1/env?envName=Local&scopeKind=tenant").await;
    assert_eq!(code(&r), "env-name-required");
    let r = s.acme.get("/v1/env?envName=local").await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (400, "scope-kind-required".into())
    );
    for q in [
        "scopeKind=tenant&scopeId=x",
        "scopeKind=project",
        "scopeKind=planet",
        "scopeId=x",
        "scopeKind=tenant&inherit=maybe",
        "scopeKind=project&scopeId=not-a-uuid",
    ] {
        let r = s.acme.get(&format!("/v1/env?envName=local&{q}")).await;
        assert_eq!(
            (r.status.as_u16(), code(&r)),
            (400, "scope-invalid".into()),
            "{q}"
        );
        let msg = r.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            msg.starts_with("scope query parameters malformed: "),
            "{msg}"
        );
    }
    let unknown = "00000000-0000-4000-8000-000000000001";
    let r = s
        .acme
        .get(&format!(
            "/v1/env?envName=local&scopeKind=project&scopeId={unknown}"
        ))
        .await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (404, "project-not-found".into())
    );
    let r = s
        .acme
        .get(&format!(
            "/v1/env?envName=local&scopeKind=org&scopeId={unknown}"
        ))
        .await;
    assert_eq!((r.status.as_u16(), code(&r)), (404, "not-found".into()));
    let r = s.anon.get("/v1/env?envName=local&scopeKind=tenant").await;
    assert_eq!(r.status.as_u16(), 401);
    let r = s.acme.get("/v1/env?envName=local&scopeKind=tenant").await;
    assert_eq!(r.json(), json!({"data": [], "hasMore": false}));
    s.db.cleanup().await.unwrap();
}

async fn case_74_env_revisions_and_conflicts(kind: DatabaseKind) {
    let s = setup(kind).await;
    let uri = "/v1/env/X?envName=local&scopeKind=tenant";
    let r = put(&s.acme, uri, json!({"value": "v"})).await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.json());
    let first = r.json();
    assert_eq!(first["revision"], 1);
    assert_eq!(
        first["scope"],
        json!({"kind": "tenant", "tenantId": tenant_uuid("acme")})
    );
    assert_eq!(
        (
            first["envName"].clone(),
            first["name"].clone(),
            first["value"].clone()
        ),
        (json!("local"), json!("X"), json!("v"))
    );
    assert!(first["createdAt"].as_str().unwrap().ends_with('Z'));
    let r = put(
        &s.acme,
        uri,
        json!({"value": "w", "ifRevision": 1, "tags": {"team": "a"}}),
    )
    .await;
    assert_eq!(
        (r.json()["revision"].clone(), r.json()["tags"].clone()),
        (json!(2), json!({"team": "a"}))
    );
    let r = put(&s.acme, uri, json!({"value": "z", "ifRevision": 1})).await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (409, "env-write-conflict".into())
    );
    assert_eq!(r.json()["error"]["details"]["currentRevision"], 2);
    let r = put(&s.acme, uri, json!({"value": "v", "name": "Y"})).await;
    assert_eq!((r.status.as_u16(), code(&r)), (400, "bad-input".into()));
    let r = put(&s.acme, uri, json!({"value": "v", "envName": "prod"})).await;
    assert_eq!(code(&r), "env-name-mismatch");
    let r = put(
        &s.acme,
        uri,
        json!({"value": "v", "scope": {"kind": "project", "projectId": "p"}}),
    )
    .await;
    assert_eq!(code(&r), "scope-mismatch");
    let r = put(&s.acme, uri, json!({"value": "v", "scope": {"kind": "tenant", "tenantId": "acme"}, "name": "X", "envName": "local"})).await;
    assert_eq!(r.json()["revision"], 3);
    for bad in [
        json!({}),
        json!({"value": 1}),
        json!({"value": "v", "ifRevision": "1"}),
        json!({"value": "v", "tags": {"a": 1}}),
    ] {
        let r = put(&s.acme, uri, bad.clone()).await;
        assert_eq!(code(&r), "bad-input", "{bad}");
    }
    let r = s
        .acme
        .send(Method::PUT, uri, Some(b"{nope".to_vec()), &[])
        .await;
    assert_eq!(
        r.json()["error"]["message"],
        "Request body must be valid JSON"
    );
    // Another env than the served one.
    let r = put(
        &s.acme,
        "/v1/env/X?envName=prod&scopeKind=tenant",
        json!({"value": "v"}),
    )
    .await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (409, "env-not-served".into())
    );
    assert_eq!(
        r.json()["error"]["details"],
        json!({"envName": "prod", "servedEnv": "local"})
    );
    // Reads: the value back, another tenant sees nothing.
    let r = s.acme.get(uri).await;
    assert_eq!(r.json()["value"], "v");
    let r = s.other.get(uri).await;
    assert_eq!((r.status.as_u16(), code(&r)), (404, "env-not-found".into()));
    // The Default project is a scope of its own.
    let p = default_project_id("acme");
    let puri = format!("/v1/env/X?envName=local&scopeKind=project&scopeId={p}");
    let r = put(&s.acme, &puri, json!({"value": "pv"})).await;
    assert_eq!(
        r.json()["scope"],
        json!({"kind": "project", "tenantId": tenant_uuid("acme"), "projectId": p})
    );
    assert_eq!(s.acme.get(uri).await.json()["value"], "v");
    s.db.cleanup().await.unwrap();
}

async fn case_75_env_delete_and_paging(kind: DatabaseKind) {
    let s = setup(kind).await;
    let r = delete(&s.acme, "/v1/env/unknown?envName=local&scopeKind=tenant").await;
    assert_eq!(
        (r.status.as_u16(), r.json()),
        (200, json!({"deleted": false}))
    );
    for n in ["A", "B", "C", "D", "E"] {
        let r = put(
            &s.acme,
            &format!("/v1/env/{n}?envName=local&scopeKind=tenant"),
            json!({"value": n}),
        )
        .await;
        assert_eq!(r.status.as_u16(), 200);
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let c = cursor
            .as_ref()
            .map(|c| format!("&cursor={c}"))
            .unwrap_or_default();
        let page = s
            .acme
            .get(&format!(
                "/v1/env?envName=local&scopeKind=tenant&limit=2{c}"
            ))
            .await
            .json();
        for r in page["data"].as_array().unwrap() {
            seen.push(r["name"].as_str().unwrap().to_owned());
        }
        if page["hasMore"] == json!(false) {
            assert!(page.get("nextCursor").is_none());
            break;
        }
        cursor = Some(page["nextCursor"].as_str().unwrap().to_owned());
    }
    assert_eq!(seen, ["A", "B", "C", "D", "E"]);
    let r = s
        .acme
        .get("/v1/env?envName=local&scopeKind=tenant&cursor=zzz")
        .await;
    assert_eq!(r.json()["error"]["message"], "`cursor` is malformed");
    let r = s
        .acme
        .get("/v1/env?envName=local&scopeKind=tenant&namePrefix=C")
        .await;
    assert_eq!(r.json()["data"].as_array().unwrap().len(), 1);
    let r = delete(&s.acme, "/v1/env/A?envName=local&scopeKind=tenant").await;
    assert_eq!(r.json(), json!({"deleted": true}));
    s.db.cleanup().await.unwrap();
}

/// Scopes name the tenant by its UUID, as the rest of the wire; a request may name it by
/// the UUID (any case) or, as older clients do, by its name; another tenant's is refused.
async fn scopes_name_the_tenant_by_its_uuid(kind: DatabaseKind) {
    let s = setup(kind).await;
    let acme = tenant_uuid("acme");
    let uri = "/v1/env/X?envName=local&scopeKind=tenant";
    for (i, named) in [acme.clone(), acme.to_uppercase(), "acme".to_owned()]
        .iter()
        .enumerate()
    {
        let body = json!({"value": "v", "scope": {"kind": "tenant", "tenantId": named}});
        let r = put(&s.acme, uri, body).await;
        assert_eq!(r.status.as_u16(), 200, "{named}: {}", r.json());
        assert_eq!(r.json()["revision"], i + 1);
        assert_eq!(r.json()["scope"]["tenantId"], json!(acme));
    }
    for wrong in [tenant_uuid("other"), "other".to_owned(), String::new()] {
        let body = json!({"value": "v", "scope": {"kind": "tenant", "tenantId": wrong}});
        assert_eq!(
            code(&put(&s.acme, uri, body).await),
            "scope-mismatch",
            "{wrong}"
        );
    }
    let list = s.acme.get("/v1/env?envName=local&scopeKind=tenant").await;
    assert_eq!(list.json()["data"][0]["scope"]["tenantId"], json!(acme));
    // The other tenant sees its own UUID.
    let r = put(&s.other, uri, json!({"value": "o"})).await;
    assert_eq!(r.json()["scope"]["tenantId"], json!(tenant_uuid("other")));

    let mut body = secret_body("S", "create-new");
    body["scope"]["tenantId"] = json!(acme);
    let r = s.acme.post_json("/v1/secrets", &body).await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.json());
    assert_eq!(r.json()["record"]["scope"]["tenantId"], json!(acme));
    body["writeMode"] = json!("add-version");
    body["scope"]["tenantId"] = json!("acme");
    let r = s.acme.post_json("/v1/secrets", &body).await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.json());
    body["scope"]["tenantId"] = json!(tenant_uuid("other"));
    let r = s.acme.post_json("/v1/secrets", &body).await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (400, "scope-mismatch".into())
    );
    let q = "envName=local&scopeKind=tenant";
    let r = s.acme.get(&format!("/v1/secrets/S?{q}")).await;
    assert_eq!(r.json()["scope"]["tenantId"], json!(acme));
    let r = s.acme.get(&format!("/v1/secrets/S/versions?{q}")).await;
    assert_eq!(r.json()["data"][0]["scope"]["tenantId"], json!(acme));
    s.db.cleanup().await.unwrap();
}

fn secret_body(name: &str, mode: &str) -> Value {
    json!({"scope": {"kind": "tenant"}, "envName": "local", "name": name, "value": SECRET, "writeMode": mode})
}

async fn case_76_secrets_versions_and_no_values(kind: DatabaseKind) {
    let s = setup(kind).await;
    let r = s
        .acme
        .post_json("/v1/secrets", &secret_body("STRIPE_KEY", "create-new"))
        .await;
    assert_eq!(r.status.as_u16(), 201, "{}", r.json());
    assert_no_secret(&r);
    assert_eq!(r.json()["versionId"], 1);
    assert_eq!(r.json()["record"]["currentVersion"], 1);
    assert_eq!(
        r.json()["record"]["scope"],
        json!({"kind": "tenant", "tenantId": tenant_uuid("acme")})
    );
    let r = s
        .acme
        .post_json("/v1/secrets", &secret_body("STRIPE_KEY", "create-new"))
        .await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (409, "secret-write-conflict".into())
    );
    assert_no_secret(&r);
    let r = s
        .acme
        .post_json("/v1/secrets", &secret_body("STRIPE_KEY", "add-version"))
        .await;
    assert_eq!(
        (r.status.as_u16(), r.json()["versionId"].clone()),
        (200, json!(2))
    );
    let mut stale = secret_body("STRIPE_KEY", "add-version");
    stale["ifVersion"] = json!(1);
    let r = s.acme.post_json("/v1/secrets", &stale).await;
    assert_eq!(code(&r), "secret-write-conflict");
    assert_eq!(r.json()["error"]["details"]["currentVersion"], 2);
    let r = s
        .acme
        .post_json("/v1/secrets", &secret_body("kindgi.x", "create-new"))
        .await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (400, "reserved-name-prefix".into())
    );
    for bad in [".x", "a..b", "a b", "-x", &"n".repeat(256)] {
        let r = s
            .acme
            .post_json("/v1/secrets", &secret_body(bad, "create-new"))
            .await;
        assert_eq!(code(&r), "secret-name-invalid", "{bad}");
        assert_no_secret(&r);
    }
    let mut big = secret_body("BIG", "create-new");
    big["value"] = json!("x".repeat(64 * 1024 + 1));
    let r = s.acme.post_json("/v1/secrets", &big).await;
    assert_eq!(
        (code(&r), r.json()["error"]["details"]["maxBytes"].clone()),
        ("secret-value-too-large".into(), json!(65536))
    );
    let mut other_env = secret_body("S", "create-new");
    other_env["envName"] = json!("prod");
    assert_eq!(
        code(&s.acme.post_json("/v1/secrets", &other_env).await),
        "env-not-served"
    );
    let mut no_scope = secret_body("S", "create-new");
    no_scope.as_object_mut().unwrap().remove("scope");
    assert_eq!(
        code(&s.acme.post_json("/v1/secrets", &no_scope).await),
        "scope-kind-required"
    );
    let mut bad_mode = secret_body("S", "overwrite");
    bad_mode["writeMode"] = json!("overwrite");
    assert_eq!(
        code(&s.acme.post_json("/v1/secrets", &bad_mode).await),
        "bad-input"
    );
    // Every read is metadata only.
    let q = "envName=local&scopeKind=tenant";
    for uri in [
        format!("/v1/secrets?{q}"),
        format!("/v1/secrets/STRIPE_KEY?{q}"),
        format!("/v1/secrets/STRIPE_KEY/versions?{q}"),
        format!("/v1/secrets/STRIPE_KEY/versions/2?{q}"),
    ] {
        let r = s.acme.get(&uri).await;
        assert_eq!(r.status.as_u16(), 200, "{uri}: {}", r.json());
        assert_no_secret(&r);
    }
    let list = s.acme.get(&format!("/v1/secrets?{q}")).await.json();
    assert_eq!(list["data"][0]["name"], "STRIPE_KEY");
    assert!(list["data"][0].get("value").is_none());
    let v = s
        .acme
        .get(&format!("/v1/secrets/STRIPE_KEY/versions/2?{q}"))
        .await
        .json();
    assert_eq!(
        (v["versionId"].clone(), v["value"].clone()),
        (json!(2), Value::Null)
    );
    let versions = s
        .acme
        .get(&format!("/v1/secrets/STRIPE_KEY/versions?{q}&limit=1"))
        .await
        .json();
    assert_eq!(
        (
            versions["data"][0]["versionId"].clone(),
            versions["hasMore"].clone()
        ),
        (json!(1), json!(true))
    );
    let r = s
        .acme
        .get(&format!("/v1/secrets/STRIPE_KEY/versions/9?{q}"))
        .await;
    assert_eq!(code(&r), "secret-version-not-found");
    let r = s
        .acme
        .get(&format!("/v1/secrets/STRIPE_KEY/versions/zero?{q}"))
        .await;
    assert_eq!(code(&r), "bad-input");
    let r = s.other.get(&format!("/v1/secrets/STRIPE_KEY?{q}")).await;
    assert_eq!(code(&r), "secret-not-found");
    let r = s
        .acme
        .post_json(&format!("/v1/secrets/STRIPE_KEY/rotate?{q}"), &json!({}))
        .await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (501, "secret-operation-unsupported".into())
    );
    // Revocation.
    let r = delete(
        &s.acme,
        &format!("/v1/secrets/STRIPE_KEY?{q}&reason=leaked"),
    )
    .await;
    assert_eq!(r.json(), json!({"revoked": true, "hard": false}));
    let r = delete(&s.acme, &format!("/v1/secrets/STRIPE_KEY?{q}&hard=true")).await;
    assert_eq!(r.json(), json!({"revoked": true, "hard": true}));
    let r = delete(&s.acme, &format!("/v1/secrets/NOPE?{q}")).await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (404, "secret-not-found".into())
    );
    let list = s.acme.get(&format!("/v1/secrets?{q}")).await.json();
    assert_eq!(list["data"], json!([]));
    let list = s
        .acme
        .get(&format!("/v1/secrets?{q}&includeRevoked=true"))
        .await
        .json();
    assert_eq!(list["data"][0]["revokeReason"], "leaked");
    assert!(list["data"][0]["revokedAt"].is_string());
    s.db.cleanup().await.unwrap();
}

async fn secret_writes_without_a_key_say_how_to_set_one(kind: DatabaseKind) {
    let s = setup(kind).await;
    let r = s
        .keyless
        .post_json("/v1/secrets", &secret_body("S", "create-new"))
        .await;
    assert_eq!(
        (r.status.as_u16(), code(&r)),
        (503, "secret-provider-unavailable".into())
    );
    let msg = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        msg.contains("KINDGI_SECRETS_KEY") && msg.contains("KINDGI_SECRETS_KEY_FILE"),
        "{msg}"
    );
    assert_no_secret(&r);
    // Reads need no key.
    let r = s
        .keyless
        .get("/v1/secrets?envName=local&scopeKind=tenant")
        .await;
    assert_eq!(r.status.as_u16(), 200);
    s.db.cleanup().await.unwrap();
}

async fn secrets_page_in_name_order(kind: DatabaseKind) {
    let s = setup(kind).await;
    for n in ["b", "a", "c", "app.1"] {
        let r = s
            .acme
            .post_json("/v1/secrets", &secret_body(n, "create-new"))
            .await;
        assert_eq!(r.status.as_u16(), 201);
    }
    let q = "envName=local&scopeKind=tenant";
    let p1 = s.acme.get(&format!("/v1/secrets?{q}&limit=2")).await.json();
    let names: Vec<_> = p1["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].clone())
        .collect();
    assert_eq!(names, [json!("a"), json!("app.1")]);
    let c = p1["nextCursor"].as_str().unwrap();
    let p2 = s
        .acme
        .get(&format!("/v1/secrets?{q}&limit=2&cursor={c}"))
        .await
        .json();
    let names: Vec<_> = p2["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].clone())
        .collect();
    assert_eq!(
        (names, p2["hasMore"].clone()),
        (vec![json!("b"), json!("c")], json!(false))
    );
    // A secrets cursor is not an env cursor.
    let r = s.acme.get(&format!("/v1/env?{q}&cursor={c}")).await;
    assert_eq!(code(&r), "bad-input");
    let p = s
        .acme
        .get(&format!("/v1/secrets?{q}&namePrefix=app."))
        .await
        .json();
    assert_eq!(p["data"].as_array().unwrap().len(), 1);
    s.db.cleanup().await.unwrap();
}

async fn secret_writes_replay_under_an_idempotency_key(kind: DatabaseKind) {
    let s = setup(kind).await;
    let body = secret_body("IDEM", "add-version").to_string().into_bytes();
    let h = [("idempotency-key", "k-1")];
    let first = s
        .acme
        .send(Method::POST, "/v1/secrets", Some(body.clone()), &h)
        .await;
    let second = s
        .acme
        .send(Method::POST, "/v1/secrets", Some(body), &h)
        .await;
    assert_eq!((first.status.as_u16(), second.status.as_u16()), (200, 200));
    assert_eq!(first.body, second.body);
    assert_eq!(second.header("x-idempotent-replay"), Some("true"));
    assert_no_secret(&second);
    // One version was written, not two.
    let r = s
        .acme
        .get("/v1/secrets/IDEM?envName=local&scopeKind=tenant")
        .await;
    assert_eq!(r.json()["currentVersion"], 1);
    s.db.cleanup().await.unwrap();
}

#[test]
fn configuration_and_writes_print_no_key_or_value() {
    let (seal, _) = SealKey::generate();
    let config = ValuesConfig::new("local", Some(seal));
    assert!(format!("{config:?}").contains("SealKey(<redacted>)"));
    let write = kindgi_store::values::SecretWrite {
        value: kindgi_store::seal::SecretValue::new(SECRET.into()),
        mode: kindgi_store::values::WriteMode::CreateNew,
        tags: None,
        rotation_due_at: None,
        if_version: None,
    };
    assert!(!format!("{write:?}").contains(SECRET));
}

both_stores!(
    secret_writes_replay_under_an_idempotency_key,
    case_73_env_needs_env_name_and_scope,
    case_74_env_revisions_and_conflicts,
    case_75_env_delete_and_paging,
    case_76_secrets_versions_and_no_values,
    secret_writes_without_a_key_say_how_to_set_one,
    secrets_page_in_name_order,
    scopes_name_the_tenant_by_its_uuid,
);
