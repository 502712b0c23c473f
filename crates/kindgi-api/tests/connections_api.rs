//! `/v1/connections` over a loopback socket, on SQLite and PostgreSQL: add (a person's own, the
//! company's by an admin only), the same app and holder again keeps the id, field errors name
//! the field, list and get show no token and only what the caller may see, revoke (the
//! person's own; a company connection by an admin), the connect link, and no secrets key:
//! `503 secret-provider-unavailable`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyRole, NewToken, Principal};
use serde_json::{Value, json};

const TOKEN: &str = "ya29.api-access-token";
const REFRESH: &str = "1//api-refresh-token";

struct Server {
    url: String,
    http: reqwest::Client,
    admin: String,
    member: String,
    nobody: String,
    other: String,
    db: TestDatabase,
}

async fn key(
    state: &AppState,
    tenant: &str,
    principal: Option<Principal>,
    role: KeyRole,
) -> String {
    state
        .tokens
        .mint(&NewToken {
            tenant: tenant.into(),
            principal,
            role,
            capabilities: vec![],
            label: None,
            project_id: None,
            created_by: None,
            expires_at: None,
        })
        .await
        .unwrap()
        .key
}

async fn server(kind: DatabaseKind, sealed: bool) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let seal = sealed.then(|| SealKey::generate().0);
    let state = AppState::new(db.db.clone()).with_values(ValuesConfig::new("local", seal));
    let admin = state.tokens.create("acme", None).await.unwrap().key;
    let member = key(&state, "acme", Some(Principal::user("u2")), KeyRole::Member).await;
    let nobody = key(&state, "acme", None, KeyRole::Admin).await;
    let other = state.tokens.create("other", None).await.unwrap().key;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(kindgi_api::serve(
        listener,
        router(state),
        kindgi_serve::Limits::default(),
        kindgi_serve::CancellationToken::new(),
    ));
    Server {
        url,
        http: reqwest::Client::new(),
        admin,
        member,
        nobody,
        other,
        db,
    }
}

impl Server {
    async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        let mut req = match method {
            "GET" => self.http.get(url),
            _ => self.http.post(url),
        }
        .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        assert!(
            !text.contains(TOKEN) && !text.contains(REFRESH),
            "a token answered: {text}"
        );
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or_default()
}

fn body(app: &str, whose: &str) -> Value {
    json!({"app": app, "as": whose, "permissions": ["gmail.send"], "accessToken": TOKEN,
        "refreshToken": REFRESH, "expiresIn": 3600,
        "tokenUrl": "https://oauth2.example.com/token", "clientId": "client-1",
        "clientSecretName": "GOOGLE_CLIENT_SECRET"})
}

async fn add_list_get_revoke(kind: DatabaseKind) {
    let s = server(kind, true).await;
    // The admin's own person connection.
    let (status, mine) = s
        .call(
            &s.admin,
            "POST",
            "/v1/connections",
            Some(body("google", "person")),
        )
        .await;
    assert_eq!(status, 201, "{mine}");
    assert_eq!(mine["app"], "google");
    assert_eq!(mine["as"], "person");
    assert_eq!(
        mine["userId"],
        kindgi_store::tokens::operator_user_id("acme")
    );
    assert_eq!(mine["status"], "active");
    assert_eq!(mine["refreshable"], true);
    assert_eq!(mine["clientSecretName"], "GOOGLE_CLIENT_SECRET");
    assert!(mine.get("accessToken").is_none() && mine.get("refreshToken").is_none());
    // Again: same id.
    let (status, again) = s
        .call(
            &s.admin,
            "POST",
            "/v1/connections",
            Some(body("google", "person")),
        )
        .await;
    assert_eq!((status, &again["id"]), (201, &mine["id"]));
    // A member's own, and a company one (admin only).
    let (status, theirs) = s
        .call(
            &s.member,
            "POST",
            "/v1/connections",
            Some(body("google", "person")),
        )
        .await;
    assert_eq!(status, 201, "{theirs}");
    assert_eq!(theirs["userId"], "u2");
    assert_ne!(theirs["id"], mine["id"]);
    let (status, e) = s
        .call(
            &s.member,
            "POST",
            "/v1/connections",
            Some(body("slack", "company")),
        )
        .await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    let (status, company) = s
        .call(
            &s.admin,
            "POST",
            "/v1/connections",
            Some(body("slack", "company")),
        )
        .await;
    assert_eq!(status, 201, "{company}");
    assert!(company.get("userId").is_none());
    // A key with no person cannot add a person's connection.
    let (status, e) = s
        .call(
            &s.nobody,
            "POST",
            "/v1/connections",
            Some(body("google", "person")),
        )
        .await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");

    // Lists: the admin sees all three; the member their own and the company's.
    let (_, all) = s.call(&s.admin, "GET", "/v1/connections", None).await;
    assert_eq!(all["data"].as_array().unwrap().len(), 3, "{all}");
    let (_, seen) = s.call(&s.member, "GET", "/v1/connections", None).await;
    let apps: Vec<&str> = seen["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["app"].as_str().unwrap())
        .collect();
    assert_eq!(apps, ["google", "slack"], "{seen}");
    assert_eq!(seen["data"][0]["userId"], "u2");
    let (_, p1) = s
        .call(&s.admin, "GET", "/v1/connections?limit=2", None)
        .await;
    assert_eq!(p1["hasMore"], true, "{p1}");
    let cursor = p1["nextCursor"].as_str().unwrap();
    let (_, p2) = s
        .call(
            &s.admin,
            "GET",
            &format!("/v1/connections?limit=2&cursor={cursor}"),
            None,
        )
        .await;
    assert_eq!(p2["data"].as_array().unwrap().len(), 1, "{p2}");
    let (_, people) = s
        .call(
            &s.admin,
            "GET",
            "/v1/connections?as=person&app=google",
            None,
        )
        .await;
    assert_eq!(people["data"].as_array().unwrap().len(), 2, "{people}");
    let (_, none) = s.call(&s.other, "GET", "/v1/connections", None).await;
    assert_eq!(
        none["data"].as_array().unwrap().len(),
        0,
        "another tenant sees none"
    );

    // Get: the member cannot see the admin's own.
    let id = mine["id"].as_str().unwrap();
    let (status, got) = s
        .call(&s.admin, "GET", &format!("/v1/connections/{id}"), None)
        .await;
    assert_eq!((status, &got["id"]), (200, &mine["id"]));
    let (status, e) = s
        .call(&s.member, "GET", &format!("/v1/connections/{id}"), None)
        .await;
    assert_eq!((status, code(&e)), (404, "connection-not-found"), "{e}");
    let (status, e) = s
        .call(&s.admin, "GET", "/v1/connections/not-a-uuid", None)
        .await;
    assert_eq!((status, code(&e)), (404, "connection-not-found"), "{e}");

    // Revoke: the member not the company's; the admin yes.
    let cid = company["id"].as_str().unwrap();
    let (status, e) = s
        .call(
            &s.member,
            "POST",
            &format!("/v1/connections/{cid}/revoke"),
            Some(json!({})),
        )
        .await;
    assert_eq!((status, code(&e)), (403, "permission-denied"), "{e}");
    let (status, r) = s
        .call(
            &s.admin,
            "POST",
            &format!("/v1/connections/{cid}/revoke"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "revoked");
    assert!(r["revokedAt"].is_string());
    let tid = theirs["id"].as_str().unwrap();
    let (status, r) = s
        .call(
            &s.member,
            "POST",
            &format!("/v1/connections/{tid}/revoke"),
            Some(json!({})),
        )
        .await;
    assert_eq!((status, &r["status"]), (200, &json!("revoked")), "{r}");

    // The connect link: what to send.
    let (status, c) = s
        .call(
            &s.member,
            "GET",
            "/v1/connections/connect?app=google&permissions=gmail.send,gmail.read",
            None,
        )
        .await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["request"]["path"], "/v1/connections");
    assert_eq!(c["permissions"], json!(["gmail.send", "gmail.read"]));
    assert_eq!(
        c["cli"],
        "kindgi connections add --app=google --as=person --permission=gmail.send --permission=gmail.read --access-token-stdin"
    );
    s.db.cleanup().await.unwrap();
}

async fn bad_input_names_the_field(kind: DatabaseKind) {
    let s = server(kind, true).await;
    let cases = [
        (
            json!({"as": "person", "permissions": [], "accessToken": TOKEN}),
            "app",
        ),
        (
            json!({"app": "Google!", "as": "person", "permissions": [], "accessToken": TOKEN}),
            "app",
        ),
        (
            json!({"app": "google", "as": "team", "permissions": [], "accessToken": TOKEN}),
            "as",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": "gmail.send", "accessToken": TOKEN}),
            "permissions",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": [""], "accessToken": TOKEN}),
            "permissions",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": []}),
            "accessToken",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": [], "accessToken": "x".repeat(20_000)}),
            "accessToken",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": [], "accessToken": TOKEN, "expiresAt": "tomorrow"}),
            "expiresAt",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": [], "accessToken": TOKEN, "expiresIn": -5}),
            "expiresIn",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": [], "accessToken": TOKEN, "clientId": "c"}),
            "tokenUrl",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": [], "accessToken": TOKEN, "tokenUrl": "https://x.example/t"}),
            "clientId",
        ),
        (
            json!({"app": "google", "as": "person", "permissions": [], "accessToken": TOKEN, "tokenUrl": "ftp://x.example/t", "clientId": "c"}),
            "tokenUrl",
        ),
    ];
    for (b, field) in cases {
        let (status, e) = s
            .call(&s.admin, "POST", "/v1/connections", Some(b.clone()))
            .await;
        assert_eq!((status, code(&e)), (400, "bad-input"), "{b}: {e}");
        assert_eq!(e["error"]["details"]["field"], field, "{b}: {e}");
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("`{field}`")),
            "{e}"
        );
    }
    let (status, e) = s
        .call(&s.admin, "GET", "/v1/connections?as=team", None)
        .await;
    assert_eq!((status, code(&e)), (400, "bad-input"), "{e}");
    let (status, e) = s
        .call(&s.admin, "GET", "/v1/connections/connect", None)
        .await;
    assert_eq!((status, code(&e)), (400, "bad-input"), "{e}");
    s.db.cleanup().await.unwrap();
}

async fn no_key_no_connections(kind: DatabaseKind) {
    let s = server(kind, false).await;
    let (status, e) = s
        .call(
            &s.admin,
            "POST",
            "/v1/connections",
            Some(body("google", "person")),
        )
        .await;
    assert_eq!(
        (status, code(&e)),
        (503, "secret-provider-unavailable"),
        "{e}"
    );
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("KINDGI_SECRETS_KEY"),
        "{e}"
    );
    let (status, page) = s.call(&s.admin, "GET", "/v1/connections", None).await;
    assert_eq!(status, 200, "{page}");
    s.db.cleanup().await.unwrap();
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite { $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Sqlite).await })* }
        mod postgres { $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Postgres).await })* }
    };
}

both!(
    add_list_get_revoke,
    bad_input_names_the_field,
    no_key_no_connections
);
