//! Capabilities on `/v1/env` and `/v1/secrets` (platform-api.md §1.2, case 74), over a real
//! loopback socket on SQLite and PostgreSQL: a key holds what its list names and nothing
//! else; the operator's key (the bootstrap key, its all-capabilities grant recorded) holds
//! every capability this runtime checks, and no other; an admin key minted through the API
//! holds only its list, an empty one included.
//! Reads need no capability.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};
use support::{Served, serve_loopback};

const ENV: &str = "/v1/env/X?envName=local&scopeKind=tenant";
const SECRET: &str = "/v1/secrets/S?envName=local&scopeKind=tenant";

struct Server {
    url: String,
    http: reqwest::Client,
    admin: String,
}

impl Server {
    async fn send(
        &self,
        key: &str,
        method: reqwest::Method,
        uri: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{uri}", self.url))
            .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A key minted over the wire by the bootstrap key.
    async fn mint(&self, body: Value) -> String {
        let (status, r) = self
            .send(&self.admin, reqwest::Method::POST, "/v1/tokens", Some(body))
            .await;
        assert_eq!(status, 201, "{r}");
        r["token"].as_str().unwrap().to_owned()
    }

    async fn put_env(&self, key: &str) -> (u16, Value) {
        self.send(key, reqwest::Method::PUT, ENV, Some(json!({"value": "v"})))
            .await
    }

    async fn delete_env(&self, key: &str) -> (u16, Value) {
        self.send(key, reqwest::Method::DELETE, ENV, None).await
    }

    async fn write_secret(&self, key: &str, mode: &str) -> (u16, Value) {
        let body = json!({"scope": {"kind": "tenant"}, "envName": "local", "name": "S", "value": "s3cr3t", "writeMode": mode});
        self.send(key, reqwest::Method::POST, "/v1/secrets", Some(body))
            .await
    }

    async fn revoke_secret(&self, key: &str, hard: bool) -> (u16, Value) {
        let uri = if hard {
            format!("{SECRET}&hard=true")
        } else {
            SECRET.to_owned()
        };
        self.send(key, reqwest::Method::DELETE, &uri, None).await
    }

    async fn rotate_secret(&self, key: &str) -> (u16, Value) {
        self.send(
            key,
            reqwest::Method::POST,
            "/v1/secrets/S/rotate",
            Some(json!({})),
        )
        .await
    }
}

async fn start(kind: DatabaseKind) -> (TestDatabase, Server, Served) {
    let db = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(db.db.clone());
    let admin = state.tokens.create("acme", None).await.unwrap().key;
    let (seal, _) = SealKey::generate();
    let app = router(state.with_values(ValuesConfig::new("local", Some(seal))));
    let served = serve_loopback(app).await;
    let server = Server {
        url: served.url.clone(),
        http: reqwest::Client::new(),
        admin,
    };
    (db, server, served)
}

/// The refusal of a route needing `cap`, exactly as the reference words it.
fn assert_refused(answer: (u16, Value), cap: &str) {
    let (status, body) = answer;
    let message =
        format!("Bearer token is missing the `{cap}` capability required for this route.");
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "permission-denied", "{body}");
    assert_eq!(body["error"]["message"], message.as_str());
    assert_eq!(body["error"]["details"]["action"], "admin");
    assert_eq!(body["error"]["details"]["reason"], message.as_str());
    assert_eq!(
        body["error"]["details"]["resource"],
        format!("tenant:{}", kindgi_api::projects::tenant_uuid("acme"))
    );
}

async fn keys_without_a_capability_are_refused(kind: DatabaseKind) {
    let (db, s, stop) = start(kind).await;
    // Case 74 and the rest of §1.2's list: a key minted with no list holds nothing.
    let none = s.mint(json!({})).await;
    assert_refused(s.put_env(&none).await, "env:write");
    assert_refused(s.delete_env(&none).await, "env:write");
    assert_refused(s.write_secret(&none, "create-new").await, "secrets:write");
    assert_refused(s.revoke_secret(&none, false).await, "secrets:revoke");
    assert_refused(s.revoke_secret(&none, true).await, "secrets:revoke:hard");
    assert_refused(s.rotate_secret(&none).await, "secrets:rotate");
    // Reads need none.
    let (status, _) = s
        .send(
            &none,
            reqwest::Method::GET,
            "/v1/env?envName=local&scopeKind=tenant",
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = s
        .send(
            &none,
            reqwest::Method::GET,
            "/v1/secrets?envName=local&scopeKind=tenant",
            None,
        )
        .await;
    assert_eq!(status, 200);

    // Each capability opens its own routes and no other.
    let env = s.mint(json!({"capabilities": ["env:write"]})).await;
    let (status, body) = s.put_env(&env).await;
    assert_eq!(
        (status, body["revision"].clone()),
        (200, json!(1)),
        "{body}"
    );
    let (status, body) = s.put_env(&env).await;
    assert_eq!(
        (status, body["revision"].clone()),
        (200, json!(2)),
        "{body}"
    );
    assert_refused(s.write_secret(&env, "create-new").await, "secrets:write");
    assert_eq!(s.delete_env(&env).await, (200, json!({"deleted": true})));

    let write = s.mint(json!({"capabilities": ["secrets:write"]})).await;
    let (status, body) = s.write_secret(&write, "create-new").await;
    assert_eq!(
        (status, body["versionId"].clone()),
        (201, json!(1)),
        "{body}"
    );
    assert_refused(s.put_env(&write).await, "env:write");
    assert_refused(s.revoke_secret(&write, false).await, "secrets:revoke");

    let rotate = s.mint(json!({"capabilities": ["secrets:rotate"]})).await;
    let (status, body) = s.rotate_secret(&rotate).await;
    // Past the capability, this runtime does not rotate.
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (501, json!("secret-operation-unsupported"))
    );

    let soft = s.mint(json!({"capabilities": ["secrets:revoke"]})).await;
    assert_refused(s.revoke_secret(&soft, true).await, "secrets:revoke:hard");
    assert_eq!(
        s.revoke_secret(&soft, false).await,
        (200, json!({"revoked": true, "hard": false}))
    );
    let hard = s
        .mint(json!({"capabilities": ["secrets:revoke:hard"]}))
        .await;
    assert_refused(s.revoke_secret(&hard, false).await, "secrets:revoke");
    let (status, body) = s.revoke_secret(&hard, true).await;
    assert_eq!((status, body["hard"].clone()), (200, json!(true)), "{body}");
    stop.stop().await;
    db.cleanup().await.unwrap();
}

async fn only_the_operators_key_holds_every_capability(kind: DatabaseKind) {
    let (db, s, stop) = start(kind).await;
    // The bootstrap key: a tenant admin's, no list.
    let admin = s.admin.clone();
    assert_eq!(s.put_env(&admin).await.0, 200);
    assert_eq!(s.write_secret(&admin, "create-new").await.0, 201);
    assert_eq!(s.revoke_secret(&admin, false).await.0, 200);
    assert_eq!(s.write_secret(&admin, "create-new").await.0, 201);
    assert_eq!(s.revoke_secret(&admin, true).await.0, 200);
    assert_eq!(s.rotate_secret(&admin).await.0, 501);
    // An admin key minted with no list holds nothing (issue 19, finding 1): "every
    // capability" is the operator's recorded grant, never an empty list.
    let second = s.mint(json!({"role": "admin"})).await;
    assert_refused(s.put_env(&second).await, "env:write");
    // An admin key that names a list holds only that list.
    let listed = s
        .mint(json!({"role": "admin", "capabilities": ["env:write"]}))
        .await;
    assert_eq!(s.put_env(&listed).await.0, 200);
    assert_refused(s.write_secret(&listed, "create-new").await, "secrets:write");
    // A member key with no list holds nothing, and so cannot grant anything.
    let member = s.mint(json!({"role": "member"})).await;
    assert_refused(s.put_env(&member).await, "env:write");
    let (status, body) = s
        .send(
            &member,
            reqwest::Method::POST,
            "/v1/tokens",
            Some(json!({"capabilities": ["env:write"]})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (403, json!("permission-denied"))
    );
    // The bootstrap key holds the capabilities this runtime checks, and no others.
    let (status, body) = s
        .send(
            &admin,
            reqwest::Method::POST,
            "/v1/tokens",
            Some(json!({"capabilities": ["x"]})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (403, json!("permission-denied"))
    );
    let every = json!(kindgi_store::tokens::RUNTIME_CAPABILITIES);
    let (status, body) = s
        .send(
            &admin,
            reqwest::Method::POST,
            "/v1/tokens",
            Some(json!({"capabilities": every})),
        )
        .await;
    assert_eq!(
        (status, body["capabilities"].clone()),
        (201, every),
        "{body}"
    );
    // No key holds a system capability.
    let (status, body) = s
        .send(
            &admin,
            reqwest::Method::POST,
            "/v1/tokens",
            Some(json!({"capabilities": ["system:all"]})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (403, json!("capability-not-mintable"))
    );
    stop.stop().await;
    db.cleanup().await.unwrap();
}

both_stores!(
    keys_without_a_capability_are_refused,
    only_the_operators_key_holds_every_capability
);
