//! `/v1/tokens` and `/v1/service-accounts` on both databases: platform-api.md §15 cases
//! 100–106, and a service account's key starting work and stopping when it is unregistered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use axum::http::{Method, StatusCode};
use kindgi_api::testing::TestClient;
use kindgi_store::DatabaseKind;
use kindgi_store::tokens::{KeyRole, NewToken, Principal};
use serde_json::{Value, json};

use support::env;

fn client(e: &support::Env, key: &str) -> TestClient {
    TestClient::new(e.acme.app.clone(), Some(key.to_owned()))
}

async fn person_key(e: &support::Env, user: &str, caps: &[&str]) -> String {
    e.state
        .tokens
        .mint(&NewToken {
            tenant: "acme".into(),
            principal: Some(Principal::user(user)),
            role: KeyRole::Member,
            capabilities: caps.iter().map(|c| (*c).to_owned()).collect(),
            label: None,
            project_id: None,
            created_by: None,
            expires_at: None,
        })
        .await
        .unwrap()
        .key
}

/// Cases 100, 101 and 103.
async fn mint_list_get_revoke(kind: DatabaseKind) {
    let e = env(kind).await;
    let tok = client(&e, &person_key(&e, "u1", &[]).await);
    // 100: no body, no Content-Type.
    let r = tok.post("/v1/tokens").await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let minted = r.json();
    let secret = minted["token"].as_str().unwrap().to_owned();
    let id = minted["tokenId"].as_str().unwrap().to_owned();
    assert_eq!(minted["role"], "member");
    assert_eq!(minted["capabilities"], json!([]));
    assert_eq!(minted["principal"], json!({"kind": "user", "id": "u1"}));
    assert_eq!(minted["createdBy"], "user:u1");
    assert!(uuid::Uuid::parse_str(&id).is_ok());
    let list = tok.get("/v1/tokens").await;
    assert_eq!(list.status, StatusCode::OK);
    let data = list.json()["data"].as_array().unwrap().clone();
    assert_eq!(data.len(), 2, "u1's two keys only: {data:?}");
    assert_eq!(data[0]["tokenId"], json!(id), "newest first");
    assert_eq!(list.json()["hasMore"], false);
    assert!(!String::from_utf8_lossy(&list.body).contains(&secret));
    let got = tok.get(&format!("/v1/tokens/{id}")).await;
    assert_eq!(got.status, StatusCode::OK);
    assert!(got.json().get("token").is_none());
    assert_eq!(got.json()["tokenId"], json!(id));
    assert!(got.json().get("lastUsedAt").is_none(), "not used yet");
    // The new key works, and pages.
    let new = client(&e, &secret);
    let page = new.get("/v1/tokens?limit=1").await.json();
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    assert_eq!(page["hasMore"], true);
    let cursor = page["nextCursor"].as_str().unwrap();
    let page2 = new
        .get(&format!("/v1/tokens?limit=1&cursor={cursor}"))
        .await
        .json();
    assert_eq!(page2["hasMore"], false);
    let used = tok.get(&format!("/v1/tokens/{id}")).await.json();
    assert!(used["lastUsedAt"].is_string(), "used now: {used}");
    assert_ne!(page2["data"][0]["tokenId"], page["data"][0]["tokenId"]);

    // 101: a mint under an Idempotency-Key is never replayed.
    let h = [("idempotency-key", "mint-1")];
    let first = tok
        .send(Method::POST, "/v1/tokens", Some(b"{}".to_vec()), &h)
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    let again = tok
        .send(Method::POST, "/v1/tokens", Some(b"{}".to_vec()), &h)
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(
        again.error_code().as_deref(),
        Some("idempotency-key-replay-withheld")
    );
    assert_eq!(again.json()["error"]["details"]["status"], 201);
    assert!(again.json()["error"]["details"]["at"].is_string());
    let first_secret = first.json()["token"].as_str().unwrap().to_owned();
    assert!(!String::from_utf8_lossy(&again.body).contains(&first_secret));

    // 103.
    let u = "00000000-0000-4000-8000-000000000000";
    let r = tok.get(&format!("/v1/tokens/{u}")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.error_code().as_deref(), Some("not-found"));
    assert_eq!(
        r.json()["error"]["message"],
        format!("No token with id {u}")
    );
    // Someone else's key is not found either.
    let other_person = client(&e, &person_key(&e, "u2", &[]).await);
    assert_eq!(
        other_person.get(&format!("/v1/tokens/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        other_person
            .post(&format!("/v1/tokens/{id}/revoke"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let r = tok
        .post_json(&format!("/v1/tokens/{id}/revoke"), &json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json(), json!({"tokenId": id, "revoked": true}));
    let r = new.get("/v1/tokens").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.error_code().as_deref(), Some("auth-revoked"));
    // Still listed, with revokedAt.
    let data = tok.get("/v1/tokens").await.json()["data"].clone();
    let row = data
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tokenId"] == json!(id))
        .unwrap()
        .clone();
    assert!(row["revokedAt"].is_string());
    // The tenant admin sees everyone's keys, and can narrow to one principal.
    let all = e.acme.get("/v1/tokens?limit=100").await.json();
    assert!(all["data"].as_array().unwrap().len() >= 5);
    let u2 = e.acme.get("/v1/tokens?principal=user:u2").await.json();
    assert_eq!(u2["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        tok.get("/v1/tokens?principal=user:u2").await.status,
        StatusCode::FORBIDDEN
    );
    e.db.cleanup().await.unwrap();
}

/// Case 102 and the other mint refusals.
async fn mint_refusals(kind: DatabaseKind) {
    let e = env(kind).await;
    let tok = client(&e, &person_key(&e, "u1", &["env:write"]).await);
    let code =
        |r: &kindgi_api::testing::TestResponse| (r.status, r.error_code().unwrap_or_default());
    let r = tok.post_json("/v1/tokens", &json!({"role": "owner"})).await;
    assert_eq!(code(&r), (StatusCode::BAD_REQUEST, "bad-input".into()));
    let r = tok
        .post_json("/v1/tokens", &json!({"capabilities": ["secrets:write"]}))
        .await;
    assert_eq!(
        code(&r),
        (StatusCode::FORBIDDEN, "permission-denied".into())
    );
    let r = tok
        .post_json("/v1/tokens", &json!({"for": {"kind": "robot", "id": "x"}}))
        .await;
    assert_eq!(code(&r), (StatusCode::BAD_REQUEST, "bad-input".into()));
    let r = tok
        .post_json("/v1/tokens", &json!({"capabilities": ["system:all"]}))
        .await;
    assert_eq!(
        code(&r),
        (StatusCode::FORBIDDEN, "capability-not-mintable".into())
    );
    let r = tok.post_json("/v1/tokens", &json!({"role": "admin"})).await;
    assert_eq!(
        code(&r),
        (StatusCode::FORBIDDEN, "role-exceeds-principal".into())
    );
    let r = tok
        .post_json("/v1/tokens", &json!({"for": {"kind": "user", "id": "u9"}}))
        .await;
    assert_eq!(
        code(&r),
        (StatusCode::FORBIDDEN, "permission-denied".into())
    );
    let r = tok
        .post_json("/v1/tokens", &json!({"expiresAt": "tomorrow"}))
        .await;
    assert_eq!(code(&r), (StatusCode::BAD_REQUEST, "bad-input".into()));
    let r = tok
        .post_json("/v1/tokens", &json!({"projectId": "nope"}))
        .await;
    assert_eq!(code(&r), (StatusCode::BAD_REQUEST, "bad-input".into()));
    let r = tok
        .post_json(
            "/v1/tokens",
            &json!({"projectId": "00000000-0000-4000-8000-000000000000"}),
        )
        .await;
    assert_eq!(
        code(&r),
        (StatusCode::NOT_FOUND, "project-not-found".into())
    );
    let r = tok
        .send(Method::POST, "/v1/tokens", Some(b"{nope".to_vec()), &[])
        .await;
    assert_eq!(code(&r), (StatusCode::BAD_REQUEST, "bad-input".into()));
    // What the caller holds, it may pass on; with a label and an expiry.
    let r = tok
        .post_json("/v1/tokens", &json!({"capabilities": ["env:write"], "label": "ci", "expiresAt": "2999-01-01T00:00:00Z"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    assert_eq!(r.json()["capabilities"], json!(["env:write"]));
    assert_eq!(r.json()["expiresAt"], "2999-01-01T00:00:00.000Z");
    // A key that expires mints only keys that expire no later.
    let short = client(&e, r.json()["token"].as_str().unwrap());
    let r = short.post("/v1/tokens").await;
    assert_eq!(
        code(&r),
        (StatusCode::FORBIDDEN, "token-expiry-exceeds-minter".into())
    );
    assert_eq!(
        r.json()["error"]["details"]["latestExpiresAt"],
        "2999-01-01T00:00:00.000Z"
    );
    // for a service account that does not exist.
    let r = e
        .acme
        .post_json(
            "/v1/tokens",
            &json!({"for": {"kind": "service-account", "id": "nope"}}),
        )
        .await;
    assert_eq!(
        code(&r),
        (StatusCode::NOT_FOUND, "principal-not-found".into())
    );
    e.db.cleanup().await.unwrap();
}

/// Case 104: a key that is its own service account and no admin may not manage keys.
async fn no_keys_of_its_own(kind: DatabaseKind) {
    let e = env(kind).await;
    let key = e
        .state
        .tokens
        .mint(&NewToken {
            tenant: "acme".into(),
            principal: None,
            role: KeyRole::Member,
            capabilities: vec![],
            label: None,
            project_id: None,
            created_by: None,
            expires_at: None,
        })
        .await
        .unwrap()
        .key;
    let c = client(&e, &key);
    let r = c.get("/v1/tokens").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.error_code().as_deref(), Some("permission-denied"));
    assert_eq!(
        r.json()["error"]["message"],
        "Managing API keys needs a tenant admin"
    );
    assert_eq!(c.post("/v1/tokens").await.status, StatusCode::FORBIDDEN);
    assert_eq!(
        e.anon.get("/v1/tokens").await.status,
        StatusCode::UNAUTHORIZED
    );
    e.db.cleanup().await.unwrap();
}

/// Cases 105 and 106, and a service account's keys.
async fn service_accounts(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json("/v1/service-accounts", &json!({"name": "Bad Name"}))
        .await;
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (StatusCode::BAD_REQUEST, Some("bad-input"))
    );
    let r = e
        .acme
        .post_json(
            "/v1/service-accounts",
            &json!({"name": "acme-ci", "description": "CI", "grants": [{"kind": "tenant-member"}]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let sa = r.json();
    let id = sa["serviceAccountId"].as_str().unwrap().to_owned();
    assert_eq!(sa["grants"], json!([{"kind": "tenant-member"}]));
    assert_eq!(
        sa["createdBy"],
        format!("user:{}", kindgi_store::tokens::operator_user_id("acme"))
    );
    assert!(sa.get("unregisteredAt").is_none());
    let r = e
        .acme
        .post_json("/v1/service-accounts", &json!({"name": "acme-ci"}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(
        r.error_code().as_deref(),
        Some("service-account-name-taken")
    );
    let person = client(&e, &person_key(&e, "u1", &[]).await);
    let r = person
        .post_json("/v1/service-accounts", &json!({"name": "mine"}))
        .await;
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (StatusCode::FORBIDDEN, Some("permission-denied"))
    );
    assert_eq!(
        person.get("/v1/service-accounts").await.status,
        StatusCode::FORBIDDEN
    );
    // Another tenant does not see it.
    assert_eq!(
        e.other
            .get(&format!("/v1/service-accounts/{id}"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let r = e.acme.get("/v1/service-accounts/nope").await;
    assert_eq!(r.error_code().as_deref(), Some("service-account-not-found"));

    // 106: grants.
    let project = e.acme.get("/v1/projects/default").await.json()["id"]
        .as_str()
        .map(str::to_owned);
    let project = project.unwrap_or_else(|| kindgi_api::projects::default_project_id("acme"));
    let grant = format!("/v1/service-accounts/{id}/grant");
    let r = e
        .acme
        .post_json(
            &grant,
            &json!({"kind": "project", "projectId": project, "role": "member"}),
        )
        .await;
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (StatusCode::BAD_REQUEST, Some("bad-input"))
    );
    let r = e
        .acme
        .post_json(
            &grant,
            &json!({"kind": "project", "projectId": project, "role": "editor"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    assert_eq!(
        r.json()["grants"],
        json!([{"kind": "tenant-member"}, {"kind": "project", "projectId": project, "role": "editor"}])
    );
    let r = e
        .acme
        .post_json(
            &format!("/v1/service-accounts/{id}/ungrant"),
            &json!({"kind": "tenant-member"}),
        )
        .await;
    assert_eq!(
        r.json()["grants"],
        json!([{"kind": "project", "projectId": project, "role": "editor"}])
    );

    // Its key: minted by the admin, works, is `key` for runs, stops when unregistered.
    let r = e
        .acme
        .post_json(
            "/v1/tokens",
            &json!({"for": {"kind": "service-account", "id": id}, "label": "ci"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    assert_eq!(
        r.json()["principal"],
        json!({"kind": "service-account", "id": id})
    );
    let sa_key = r.json()["token"].as_str().unwrap().to_owned();
    let r = e
        .acme
        .post_json(
            "/v1/tokens",
            &json!({"for": {"kind": "service-account", "id": id}, "role": "admin"}),
        )
        .await;
    assert_eq!(r.error_code().as_deref(), Some("role-exceeds-principal"));
    assert_eq!(
        e.state.authenticate(&sa_key).await.unwrap().started_by(),
        Some("key")
    );
    let sa_client = client(&e, &sa_key);
    let mine = sa_client.get("/v1/tokens").await;
    assert_eq!(mine.status, StatusCode::OK);
    assert_eq!(mine.json()["data"].as_array().unwrap().len(), 1);
    let r = e
        .acme
        .post(&format!("/v1/service-accounts/{id}/unregister"))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.json()["unregisteredAt"].is_string());
    assert_eq!(r.json()["grants"], json!([]));
    let r = sa_client.get("/v1/tokens").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = e
        .acme
        .post_json(&grant, &json!({"kind": "tenant-admin"}))
        .await;
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (StatusCode::CONFLICT, Some("service-account-unregistered"))
    );
    // Lists: oldest first, unregistered only when asked.
    let list = e.acme.get("/v1/service-accounts").await.json();
    assert_eq!(list["data"], json!([]));
    let list = e
        .acme
        .get("/v1/service-accounts?includeUnregistered=true")
        .await
        .json();
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    let _: &Value = &list;
    // The name is free again.
    let r = e
        .acme
        .post_json("/v1/service-accounts", &json!({"name": "acme-ci"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    e.db.cleanup().await.unwrap();
}

both_stores!(
    mint_list_get_revoke,
    mint_refusals,
    no_keys_of_its_own,
    service_accounts
);
