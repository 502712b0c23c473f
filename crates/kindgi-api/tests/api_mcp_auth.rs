//! An MCP endpoint's `auth` (platform-api.md §6, `OA:MCPEndpointAuth`) end to end: `basic`,
//! `header` and `oauth2-client-credentials`, each against a REAL MCP server (the official
//! Python SDK's FastMCP, `tests/servers/bearer_mcp.py`) that refuses anything but the exact
//! header the scheme must send, over streamable HTTP and SSE; client credentials against a
//! real token endpoint on loopback (RFC 6749 §4.4, both client authentications), asked once
//! for a burst of connections; a refused token request is the sync error, naming the token
//! endpoint and never the secret. No answer and no stored record carries a secret or token.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-mcp/tests/support/mod.rs"]
mod mcp_support;
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::testing::{TestClient, TestResponse};
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};

const PASSWORD: &str = "app-password-Vq3xK8";
const API_KEY: &str = "api-key-Lm4pZ9w";
const CLIENT_SECRET: &str = "client-secret-Rt6yU1";
const ACCESS_TOKEN: &str = "access-token-Jb2nC7";

/// The guarded server; killed on drop.
struct Guarded {
    child: Child,
    port: u16,
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A FastMCP server over `mode` that wants `header: expect` on every request.
fn guarded(mode: &str, header: &str, expect: &str) -> Option<Guarded> {
    let py = mcp_support::python()?;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/bearer_mcp.py");
    let mut child = Command::new(py)
        .arg(script)
        .arg(mode)
        .env("MCP_TOKEN", ACCESS_TOKEN)
        .env("MCP_HEADER", header)
        .env("MCP_EXPECT", expect)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(port) = line.strip_prefix("PORT ") {
                let _ = tx.send(port.trim().parse::<u16>().unwrap());
            }
        }
    });
    let port = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the guarded MCP server did not report its port");
    Some(Guarded { child, port })
}

/// A token endpoint: answers `ACCESS_TOKEN` to `client_credentials` from client `kindgi`
/// with `CLIENT_SECRET` (Basic or in the form), `invalid_client` to anything else.
#[derive(Clone, Default)]
struct TokenEndpoint {
    asked: Arc<AtomicUsize>,
}

async fn token(
    State(t): State<TokenEndpoint>,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    t.asked.fetch_add(1, Ordering::SeqCst);
    let form: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let field = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let basic = format!("Basic {}", BASE64.encode(format!("kindgi:{CLIENT_SECRET}")));
    let by_basic = headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(&basic);
    let by_post =
        field("client_id") == Some("kindgi") && field("client_secret") == Some(CLIENT_SECRET);
    let scoped = field("scope") == Some("mcp:tools") && field("audience") == Some("inventory");
    if field("grant_type") != Some("client_credentials") || !(by_basic || by_post) || !scoped {
        let answer = json!({"error": "invalid_client", "error_description": "who are you?"});
        return (StatusCode::UNAUTHORIZED, axum::Json(answer)).into_response();
    }
    axum::Json(json!({"access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 3600}))
        .into_response()
}

async fn token_endpoint() -> (String, TokenEndpoint) {
    let t = TokenEndpoint::default();
    let app = axum::Router::new()
        .route("/oauth/token", post(token))
        .with_state(t.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/oauth/token"), t)
}

/// Every answer a test saw, to check none carries a credential.
#[derive(Default)]
struct Answers(Vec<String>);

impl Answers {
    fn keep(&mut self, r: &TestResponse) -> Value {
        self.0.push(String::from_utf8_lossy(&r.body).into_owned());
        r.json()
    }

    fn assert_clean(&self) {
        for a in &self.0 {
            for secret in [PASSWORD, API_KEY, CLIENT_SECRET, ACCESS_TOKEN] {
                assert!(!a.contains(secret), "an answer carries a credential: {a}");
            }
        }
    }
}

fn secret_ref(name: &str) -> Value {
    json!({"envName": "local", "name": name})
}

fn endpoint(id: &str, transport: &str, url: &str, auth: Value) -> Value {
    json!({"endpointId": id, "name": id, "transport": transport,
           "config": {"transport": transport, "url": url},
           "auth": auth, "scopeKind": "tenant"})
}

async fn set_secret(c: &TestClient, name: &str, value: &str, seen: &mut Answers) {
    let body = json!({"scope": {"kind": "tenant"}, "envName": "local", "name": name,
                      "value": value, "writeMode": "create-new"});
    let r = c.post_json("/v1/secrets", &body).await;
    assert_eq!(r.status.as_u16(), 201, "{}", seen.keep(&r));
}

/// Registers `body` and returns the endpoint as read back.
async fn register(c: &TestClient, body: &Value, seen: &mut Answers) -> Value {
    let r = c.post_json("/v1/mcp/endpoints", body).await;
    assert_eq!(r.status.as_u16(), 201, "{}", seen.keep(&r));
    let id = body["endpointId"].as_str().unwrap();
    seen.keep(&c.get(&format!("/v1/mcp/endpoints/{id}")).await)
}

async fn endpoints_sign_in_with_their_auth(kind: DatabaseKind) {
    let basic_header = format!("Basic {}", BASE64.encode(format!("wp-user:{PASSWORD}")));
    let (Some(basic_http), Some(basic_sse), Some(header_http), Some(oauth_http)) = (
        guarded("streamable-http", "authorization", &basic_header),
        guarded("sse", "authorization", &basic_header),
        guarded("streamable-http", "x-api-key", &format!("Key {API_KEY}")),
        guarded(
            "streamable-http",
            "authorization",
            &format!("Bearer {ACCESS_TOKEN}"),
        ),
    ) else {
        return;
    };
    let db = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let (seal, _) = SealKey::generate();
    let app = router(state.with_values(ValuesConfig::new("local", Some(seal))));
    let acme = TestClient::new(app, Some(key));
    let mut seen = Answers::default();
    for (name, value) in [
        ("WP_PASSWORD", PASSWORD),
        ("API_KEY", API_KEY),
        ("CLIENT_SECRET", CLIENT_SECRET),
    ] {
        set_secret(&acme, name, value, &mut seen).await;
    }
    let url = |g: &Guarded, path: &str| format!("http://127.0.0.1:{}/{path}", g.port);

    // basic, over both HTTP transports.
    let basic =
        json!({"scheme": "basic", "username": "wp-user", "secretRef": secret_ref("WP_PASSWORD")});
    let got = register(
        &acme,
        &endpoint(
            "wp",
            "streamable-http",
            &url(&basic_http, "mcp"),
            basic.clone(),
        ),
        &mut seen,
    )
    .await;
    assert_eq!(got["toolIds"], json!(["wp.add"]), "{got}");
    let got = register(
        &acme,
        &endpoint("wp-sse", "http-sse", &url(&basic_sse, "sse"), basic),
        &mut seen,
    )
    .await;
    assert_eq!(got["toolIds"], json!(["wp-sse.add"]), "{got}");
    let r = acme.get("/v1/mcp/endpoints/wp-sse/prompts").await;
    assert_eq!(r.status.as_u16(), 200, "{}", seen.keep(&r));

    // header, with its prefix.
    let header = json!({"scheme": "header", "headers": [
        {"name": "X-Api-Key", "prefix": "Key ", "secretRef": secret_ref("API_KEY")}]});
    let got = register(
        &acme,
        &endpoint(
            "keyed",
            "streamable-http",
            &url(&header_http, "mcp"),
            header,
        ),
        &mut seen,
    )
    .await;
    assert_eq!(got["toolIds"], json!(["keyed.add"]), "{got}");

    // oauth2-client-credentials, both client authentications; the token is asked for once
    // per client for the sync and the proxy requests after it.
    let (token_url, asked) = token_endpoint().await;
    for (id, client_auth) in [
        ("inv", "client_secret_basic"),
        ("inv-post", "client_secret_post"),
    ] {
        let before = asked.asked.load(Ordering::SeqCst);
        let oauth = json!({"scheme": "oauth2-client-credentials", "tokenUrl": token_url,
                           "clientId": "kindgi", "secretRef": secret_ref("CLIENT_SECRET"),
                           "scope": "mcp:tools", "audience": "inventory", "clientAuth": client_auth});
        let got = register(
            &acme,
            &endpoint(id, "streamable-http", &url(&oauth_http, "mcp"), oauth),
            &mut seen,
        )
        .await;
        assert_eq!(got["toolIds"], json!([format!("{id}.add")]), "{got}");
        for _ in 0..3 {
            let r = acme.get(&format!("/v1/mcp/endpoints/{id}/prompts")).await;
            assert_eq!(r.status.as_u16(), 200, "{}", seen.keep(&r));
        }
        assert_eq!(
            asked.asked.load(Ordering::SeqCst),
            before + 1,
            "{client_auth}"
        );
    }

    // A client the token endpoint refuses: no tools, and the reason names the endpoint.
    set_secret(&acme, "WRONG_SECRET", "not-the-secret-Qp0", &mut seen).await;
    let wrong = json!({"scheme": "oauth2-client-credentials", "tokenUrl": token_url,
                       "clientId": "kindgi", "secretRef": secret_ref("WRONG_SECRET"),
                       "scope": "mcp:tools", "audience": "inventory"});
    let got = register(
        &acme,
        &endpoint(
            "refused",
            "streamable-http",
            &url(&oauth_http, "mcp"),
            wrong,
        ),
        &mut seen,
    )
    .await;
    assert_eq!(got["toolIds"], json!([]), "{got}");
    let why = got["syncError"].as_str().unwrap_or_default();
    assert!(
        why.contains(&token_url)
            && why.contains("invalid_client")
            && !why.contains("not-the-secret"),
        "{got}"
    );

    // A missing secret names itself and the scheme.
    let missing =
        json!({"scheme": "basic", "username": "wp-user", "secretRef": secret_ref("NOPE")});
    let got = register(
        &acme,
        &endpoint(
            "missing",
            "streamable-http",
            &url(&basic_http, "mcp"),
            missing,
        ),
        &mut seen,
    )
    .await;
    let why = got["syncError"].as_str().unwrap_or_default();
    assert!(
        why.contains("\"NOPE\"") && why.contains("auth (basic)"),
        "{got}"
    );

    seen.keep(&acme.get("/v1/mcp/endpoints").await);
    seen.assert_clean();
    let rows = kindgi_store::mcp_endpoints::McpEndpointStore::new(db.db.clone())
        .all_active()
        .await
        .unwrap();
    for row in rows {
        let text = row.body.to_string() + row.sync_error.as_deref().unwrap_or_default();
        for secret in [PASSWORD, API_KEY, CLIENT_SECRET, ACCESS_TOKEN] {
            assert!(!text.contains(secret), "{text}");
        }
    }
    db.cleanup().await.unwrap();
}

both_stores!(endpoints_sign_in_with_their_auth);
