//! Issue 19, findings 1, 2 and the "binding a secret needs a right" half of 4, over a real
//! loopback socket on SQLite and PostgreSQL: no key is minted with more rights than its
//! minter holds (checked on the expanded set; "all" is the operator's recorded grant, never
//! an empty list); through the API a principal mints only for itself and a tenant admin also
//! for service accounts, never for another person; keys die with the service account that
//! minted them and are listed by `createdBy`; `decidedBy` names a person some key of theirs
//! vouches for; registering a tool or MCP endpoint that names a secret needs `secrets:use`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyRole, NewToken, Principal};
use serde_json::{Value, json};
use support::{Served, serve_loopback};

struct Server {
    url: String,
    http: reqwest::Client,
    state: AppState,
    /// The operator's key (`kindgi tokens create --database`): `user:<operator_user_id>`, every capability.
    admin: String,
}

impl Server {
    async fn send(&self, key: &str, method: &str, uri: &str, body: Option<Value>) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
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

    async fn mint(&self, key: &str, body: Value) -> (u16, Value) {
        self.send(key, "POST", "/v1/tokens", Some(body)).await
    }

    /// A key `key` mints with `body`, which must succeed.
    async fn minted(&self, key: &str, body: Value) -> String {
        let (status, r) = self.mint(key, body).await;
        assert_eq!(status, 201, "{r}");
        r["token"].as_str().unwrap().to_owned()
    }

    async fn write_secret(&self, key: &str) -> (u16, Value) {
        let body = json!({"scope": {"kind": "tenant"}, "envName": "local", "name": "S", "value": "s3cr3t", "writeMode": "create-new"});
        self.send(key, "POST", "/v1/secrets", Some(body)).await
    }

    async fn status(&self, key: &str) -> u16 {
        self.send(key, "GET", "/v1/tokens?limit=1", None).await.0
    }
}

async fn start(kind: DatabaseKind) -> (TestDatabase, Server, Served) {
    let db = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(db.db.clone());
    let admin = state.tokens.create("acme", None).await.unwrap().key;
    let (seal, _) = SealKey::generate();
    let app = router(
        state
            .clone()
            .with_values(ValuesConfig::new("local", Some(seal))),
    );
    let served = serve_loopback(app).await;
    let server = Server {
        url: served.url.clone(),
        http: reqwest::Client::new(),
        state,
        admin,
    };
    (db, server, served)
}

fn code(body: &Value) -> (&str, &str) {
    (
        body["error"]["code"].as_str().unwrap_or_default(),
        body["error"]["details"]["reason"]
            .as_str()
            .unwrap_or_default(),
    )
}

/// Finding 1, the scenario: an admin key holding only `env:write` mints
/// `{"role":"admin"}` and `"capabilities":[]`; neither new key writes a secret or mints
/// `secrets:revoke:hard`.
async fn a_minted_key_never_holds_more_than_its_minter(kind: DatabaseKind) {
    let (db, s, stop) = start(kind).await;
    // `ops` gets a key from the operator, then mints the key for itself.
    let ops = s
        .state
        .tokens
        .create_for_user("acme", "ops", None)
        .await
        .unwrap()
        .key;
    let env_only = s
        .minted(
            &ops,
            json!({"for": {"kind": "user", "id": "ops"}, "role": "admin", "capabilities": ["env:write"]}),
        )
        .await;
    let (status, body) = s.write_secret(&env_only).await;
    assert_eq!(
        (status, code(&body).0),
        (403, "permission-denied"),
        "{body}"
    );
    for ask in [
        json!({"role": "admin"}),
        json!({"role": "admin", "capabilities": []}),
    ] {
        let (status, made) = s.mint(&env_only, ask.clone()).await;
        assert_eq!(status, 201, "{made}");
        assert_eq!(made["capabilities"], json!([]), "{ask}: {made}");
        let new = made["token"].as_str().unwrap();
        let (status, body) = s.write_secret(new).await;
        assert_eq!(
            (status, body["error"]["message"].as_str()),
            (
                403,
                Some(
                    "Bearer token is missing the `secrets:write` capability required for this route."
                )
            ),
            "{ask}: an empty list is not every capability: {body}"
        );
        let (status, body) = s
            .mint(new, json!({"capabilities": ["secrets:revoke:hard"]}))
            .await;
        assert_eq!(
            (status, code(&body)),
            (403, ("permission-denied", "capability-not-held")),
            "{ask}: {body}"
        );
        // Nor can it pass on what its minter held but it does not.
        let (status, body) = s.mint(new, json!({"capabilities": ["env:write"]})).await;
        assert_eq!(
            (status, code(&body).1),
            (403, "capability-not-held"),
            "{body}"
        );
    }
    // What the minter holds it may pass on; what it lacks it may not.
    let (status, body) = s
        .mint(&env_only, json!({"capabilities": ["secrets:write"]}))
        .await;
    assert_eq!(
        (status, code(&body).1),
        (403, "capability-not-held"),
        "{body}"
    );
    let (status, _) = s
        .mint(&env_only, json!({"capabilities": ["env:write"]}))
        .await;
    assert_eq!(status, 201);
    // The operator's key holds every capability, recorded and listed, and still works.
    assert_eq!(s.write_secret(&s.admin).await.0, 201);
    let (_, mine) = s
        .send(
            &s.admin,
            "GET",
            &format!(
                "/v1/tokens?principal=user:{}",
                kindgi_store::tokens::operator_user_id("acme")
            ),
            None,
        )
        .await;
    assert_eq!(
        mine["data"][0]["capabilities"],
        json!(kindgi_store::tokens::RUNTIME_CAPABILITIES),
        "{mine}"
    );
    // An admin key the operator's key mints with no list holds nothing either.
    let second = s.minted(&s.admin, json!({"role": "admin"})).await;
    assert_eq!(s.write_secret(&second).await.0, 403);
    stop.stop().await;
    db.cleanup().await.unwrap();
}

/// Finding 2: nobody mints a key for another person through the API; a tenant admin
/// (a service account's key included) mints for service accounts; keys die with the
/// service account that minted them, and are listed by `createdBy`.
async fn no_key_is_minted_for_someone_else(kind: DatabaseKind) {
    let (db, s, stop) = start(kind).await;
    // The impersonation, by the operator's own key: refused, naming the rule.
    let (status, body) = s
        .mint(
            &s.admin,
            json!({"for": {"kind": "user", "id": "ceo"}, "role": "admin"}),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (403, ("permission-denied", "person-key-from-someone-else")),
        "{body}"
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("user:ceo") && message.contains("kindgi tokens create --database"),
        "{message}"
    );
    let (status, body) = s
        .mint(&s.admin, json!({"for": {"kind": "user", "id": "ops"}, "role": "admin", "capabilities": ["env:write"]}))
        .await;
    assert_eq!(
        (status, code(&body).1),
        (403, "person-key-from-someone-else")
    );
    // A service account with `tenant-admin`, and one member account.
    let (status, bot) = s
        .send(
            &s.admin,
            "POST",
            "/v1/service-accounts",
            Some(json!({"name": "ops-bot", "grants": [{"kind": "tenant-admin"}]})),
        )
        .await;
    assert_eq!(status, 201, "{bot}");
    let bot = bot["serviceAccountId"].as_str().unwrap().to_owned();
    let (_, ci) = s
        .send(
            &s.admin,
            "POST",
            "/v1/service-accounts",
            Some(json!({"name": "ci", "grants": [{"kind": "tenant-member"}]})),
        )
        .await;
    let ci = ci["serviceAccountId"].as_str().unwrap().to_owned();
    let bot_key = s
        .minted(
            &s.admin,
            json!({"for": {"kind": "service-account", "id": bot}, "role": "admin"}),
        )
        .await;
    // A service account's key mints no person's key, the operator's person's included.
    for user in ["ceo", "admin"] {
        let (status, body) = s
            .mint(
                &bot_key,
                json!({"for": {"kind": "user", "id": user}, "role": "admin"}),
            )
            .await;
        assert_eq!(
            (status, code(&body).1),
            (403, "person-key-from-someone-else"),
            "{body}"
        );
    }
    // It mints for itself, and (a tenant admin) for another service account.
    let by_bot_self = s.minted(&bot_key, json!({"label": "self"})).await;
    let by_bot_ci = s
        .minted(
            &bot_key,
            json!({"for": {"kind": "service-account", "id": ci}}),
        )
        .await;
    let (status, body) = s
        .mint(
            &by_bot_ci,
            json!({"for": {"kind": "service-account", "id": bot}}),
        )
        .await;
    assert_eq!((status, code(&body).1), (403, "not-tenant-admin"), "{body}");
    // A person's member key mints for itself only.
    let u2 = s
        .state
        .tokens
        .mint(&NewToken {
            tenant: "acme".into(),
            principal: Some(Principal::user("u2")),
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
    let (status, body) = s
        .mint(&u2, json!({"for": {"kind": "service-account", "id": ci}}))
        .await;
    assert_eq!((status, code(&body).1), (403, "not-tenant-admin"), "{body}");
    assert_eq!(s.mint(&u2, json!({})).await.0, 201);
    // `createdBy` lists by minter (both spellings of a service account's actor).
    let by = format!("service_account:{bot}");
    let (status, page) = s
        .send(&s.admin, "GET", &format!("/v1/tokens?createdBy={by}"), None)
        .await;
    assert_eq!(status, 200, "{page}");
    let rows = page["data"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{page}");
    assert!(rows.iter().all(|r| r["createdBy"] == by.as_str()));
    let (_, same) = s
        .send(
            &s.admin,
            "GET",
            &format!("/v1/tokens?createdBy=service-account:{bot}"),
            None,
        )
        .await;
    assert_eq!(same["data"], page["data"]);
    let (status, body) = s
        .send(&s.admin, "GET", "/v1/tokens?createdBy=robot:x", None)
        .await;
    assert_eq!(
        (status, body["error"]["details"]["field"].as_str()),
        (400, Some("createdBy"))
    );
    let (status, _) = s
        .send(&u2, "GET", &format!("/v1/tokens?createdBy={by}"), None)
        .await;
    assert_eq!(
        status, 403,
        "only a tenant admin lists what someone else minted"
    );
    // Unregistering the service account revokes its keys and the keys it minted.
    assert_eq!(s.status(&by_bot_ci).await, 200);
    let (status, _) = s
        .send(
            &s.admin,
            "POST",
            &format!("/v1/service-accounts/{bot}/unregister"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    for key in [&bot_key, &by_bot_self, &by_bot_ci] {
        let (status, body) = s.send(key, "GET", "/v1/tokens?limit=1", None).await;
        assert_eq!((status, code(&body).0), (401, "auth-revoked"), "{body}");
    }
    assert_eq!(s.status(&s.admin).await, 200);
    stop.stop().await;
    db.cleanup().await.unwrap();
}

/// `decidedBy` names a person some key of theirs vouches for: a person's key someone else
/// minted (as was possible before) decides nothing, and the next migration revokes it.
async fn an_invented_person_decides_nothing(kind: DatabaseKind) {
    let s = support::gated::server(kind).await;
    let (_, approval) = s.gated_turn().await;
    let ceo = s
        .state
        .tokens
        .mint(&NewToken {
            tenant: "acme".into(),
            principal: Some(Principal::user("ceo")),
            role: KeyRole::Admin,
            capabilities: vec![],
            label: None,
            project_id: None,
            created_by: Some("service_account:gone".into()),
            expires_at: None,
        })
        .await
        .unwrap()
        .key;
    let path = format!("/v1/approvals/{approval}/complete");
    let decide = json!({"decision": "approve", "rationale": "as the ceo"});
    let (status, body) = s.call(&ceo, "POST", &path, Some(decide.clone())).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "permission-denied");
    s.db.db.migrate().await.unwrap();
    let fresh = AppState::new(s.db.db.clone());
    assert_eq!(
        fresh.authenticate(&ceo).await.unwrap(),
        kindgi_store::tokens::KeyStatus::Revoked,
        "the migration revokes a person's key someone else minted"
    );
    let (status, done) = s.post(&path, decide).await;
    assert_eq!(status, 200, "{done}");
    let (_, one) = s.get(&format!("/v1/approvals/{approval}")).await;
    assert_eq!(
        one["decision"]["decidedBy"],
        format!("user:{}", kindgi_store::tokens::operator_user_id("acme")),
        "{one}"
    );
}

/// Finding 4's second half: naming a secret in a tool or MCP endpoint needs `secrets:use`
/// or a tenant admin.
async fn binding_a_secret_needs_a_right(kind: DatabaseKind) {
    let (db, s, stop) = start(kind).await;
    let member = s.minted(&s.admin, json!({})).await;
    let user = s
        .minted(&s.admin, json!({"capabilities": ["secrets:use"]}))
        .await;
    let mut http_tool = support::body("acme.send", "1.0.0");
    http_tool["spec"] = json!({"kind": "http", "method": "GET", "urlTemplate": "http://127.0.0.2:9/x",
        "authorization": {"kind": "bearer", "secretRef": {"envName": "local", "name": "STRIPE_KEY"}}});
    let mut needs_tool = support::body("acme.needs", "1.0.0");
    needs_tool["needsSpec"] = json!({"secrets": {"GITHUB_TOKEN": {"type": "string"}}});
    for (tool, secret) in [(&http_tool, "STRIPE_KEY"), (&needs_tool, "GITHUB_TOKEN")] {
        let (status, body) = s
            .send(&member, "POST", "/v1/tools", Some(tool.clone()))
            .await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "permission-denied");
        assert_eq!(body["error"]["details"]["capability"], "secrets:use");
        assert_eq!(body["error"]["details"]["secret"], secret);
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`secrets:use`") && message.contains(secret),
            "{message}"
        );
    }
    // A tool naming no secret needs nothing.
    let plain = support::body("acme.plain", "1.0.0");
    let (status, body) = s.send(&member, "POST", "/v1/tools", Some(plain)).await;
    assert_eq!(status, 201, "{body}");
    // `secrets:use` or a tenant admin binds it.
    let (status, body) = s
        .send(&user, "POST", "/v1/tools", Some(needs_tool.clone()))
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = s
        .send(&s.admin, "POST", "/v1/tools", Some(http_tool.clone()))
        .await;
    assert_eq!(status, 201, "{body}");
    // An MCP endpoint authenticating with a secret, likewise.
    let endpoint = json!({"endpointId": "crm", "name": "CRM", "transport": "streamable-http",
        "config": {"transport": "streamable-http", "url": "http://127.0.0.2:9/mcp"}, "scopeKind": "tenant",
        "secretRef": {"envName": "local", "name": "CRM_TOKEN"}});
    let (status, body) = s
        .send(&member, "POST", "/v1/mcp/endpoints", Some(endpoint.clone()))
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["details"]["secret"], "CRM_TOKEN");
    let (status, body) = s
        .send(&user, "POST", "/v1/mcp/endpoints", Some(endpoint))
        .await;
    assert_eq!(status, 201, "{body}");
    stop.stop().await;
    db.cleanup().await.unwrap();
}

both_stores!(
    a_minted_key_never_holds_more_than_its_minter,
    no_key_is_minted_for_someone_else,
    an_invented_person_decides_nothing,
    binding_a_secret_needs_a_right
);
