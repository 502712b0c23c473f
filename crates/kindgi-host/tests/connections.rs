//! Connections into tool calls, over the SQLite store (tokens sealed) and a real HTTP server
//! on loopback: an http-spec tool with `authorization: {kind: "connection"}` sends the run's
//! person's access token as `Authorization: Bearer`; a missing connection, a missing
//! permission, a revoked one, an expired one without refresh and a run without a person each
//! fail the call before anything is sent, naming the app and what to do; an expired token is
//! refreshed at a real OAuth 2 token endpoint (RFC 6749 §6, the client secret a tenant
//! secret), the new tokens stored; and no token ever appears in the run or its journal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-runtime/tests/support/resolve.rs"]
mod fixture;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use fixture::one_node_flow;
use kindgi_core::connection::{ConnectionHolder, ConnectionTokens, NewConnection, RefreshClient};
use kindgi_core::ports::ConnectionStore;
use kindgi_core::run::RunMeta;
use kindgi_runtime::{RunOptions, RunRecord, RunStatus, Runtime};
use kindgi_spec::ToolManifest;
use kindgi_store::DatabaseKind;
use kindgi_store::connections::ConnectionsStore;
use kindgi_store::seal::{SealKey, SecretValue};
use kindgi_store::testing::TestDatabase;
use kindgi_store::tools::StoreRegistry;
use kindgi_store::values::{SecretWrite, ValueKey, ValueScope, ValuesStore, WriteMode};
use kindgi_tools::registry::{RegisterOptions, ToolRegistry};
use serde_json::{Value, json};

const TOKEN: &str = "ya29.first-access-token";
const FRESH: &str = "ya29.refreshed-access-token";
const REFRESH: &str = "1//the-refresh-token";
const ROTATED: &str = "1//the-rotated-refresh-token";
const CLIENT_SECRET: &str = "client-secret-value";

/// What the loopback servers saw.
#[derive(Debug, Default)]
struct Seen {
    bearer: Mutex<Vec<String>>,
    grants: Mutex<Vec<String>>,
}

async fn mail(State(seen): State<Arc<Seen>>, headers: HeaderMap) -> axum::Json<Value> {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    seen.bearer.lock().unwrap().push(auth.clone());
    // Echoes the header: the run's output must show it masked.
    axum::Json(json!({"sent": true, "auth": auth}))
}

/// An RFC 6749 token endpoint: `grant_type=refresh_token` with the client's basic credential.
async fn token(
    State(seen): State<Arc<Seen>>,
    headers: HeaderMap,
    body: String,
) -> (StatusCode, axum::Json<Value>) {
    seen.grants.lock().unwrap().push(body.clone());
    let form: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let field = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let basic = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    use base64::Engine as _;
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("client-1:{CLIENT_SECRET}"))
    );
    if basic != expected {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_client"})),
        );
    }
    if field("grant_type").as_deref() != Some("refresh_token")
        || field("refresh_token").as_deref() != Some(REFRESH)
    {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(
                json!({"error": "invalid_grant", "error_description": "The refresh token is not valid."}),
            ),
        );
    }
    (
        StatusCode::OK,
        axum::Json(
            json!({"access_token": FRESH, "token_type": "Bearer", "expires_in": 3600, "refresh_token": ROTATED}),
        ),
    )
}

async fn servers() -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let app = Router::new()
        .route("/mail", get(mail))
        .route("/token", post(token))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}"), seen)
}

fn mail_tool(id: &str, base: &str, app: &str, whose: &str) -> ToolManifest {
    serde_json::from_value(json!({
        "id": id, "description": "sends a mail", "version": "1.0.0", "mutating": true,
        "input": {"type": "object"}, "output": {"type": "object"},
        "needsSpec": {"connections": {"mail": {"app": app, "permissions": ["gmail.send"], "as": whose}}},
        "spec": {"kind": "http", "method": "GET", "urlTemplate": format!("{base}/mail"),
            "authorization": {"kind": "connection", "connection": "mail"}},
    }))
    .unwrap()
}

fn by(actor: Option<&str>) -> RunOptions {
    RunOptions {
        wait: true,
        tenant_id: Some("acme".into()),
        meta: RunMeta {
            // A person's run is attended; any other is not (docs/unattended.md).
            started_by: Some(match actor {
                Some(a) if a.starts_with("user:") => kindgi_core::StartedBy::Person,
                _ => kindgi_core::StartedBy::Key,
            }),
            started_by_actor: actor.map(str::to_owned),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn connection(
    holder: ConnectionHolder,
    permissions: &[&str],
    tokens: ConnectionTokens,
) -> NewConnection {
    NewConnection {
        tenant: "acme".into(),
        app: "google".into(),
        holder,
        permissions: permissions.iter().map(|p| p.to_string()).collect(),
        tokens,
        refresh: None,
        created_by: Some("user:u1".into()),
        now: kindgi_core::now_millis(),
    }
}

fn tokens(access: &str, refresh: Option<&str>, expires_at: Option<i64>) -> ConnectionTokens {
    ConnectionTokens {
        access_token: access.into(),
        refresh_token: refresh.map(str::to_owned),
        expires_at,
    }
}

struct Fixture {
    tdb: TestDatabase,
    rt: Runtime,
    store: ConnectionsStore,
    seen: Arc<Seen>,
    base: String,
}

async fn fixture() -> Fixture {
    let tdb = TestDatabase::new(DatabaseKind::Sqlite).await.unwrap();
    let (key, _) = SealKey::generate();
    let registry = Arc::new(StoreRegistry::new(tdb.db.clone()));
    let (base, seen) = servers().await;
    for m in [
        mail_tool("t.mail", &base, "google", "person"),
        mail_tool("t.company-mail", &base, "slack", "company"),
    ] {
        registry
            .register("acme", &m, RegisterOptions::default())
            .await
            .unwrap();
    }
    let values = ValuesStore::with_key(tdb.db.clone(), Some(key.clone()));
    values
        .secret_set(
            &ValueKey {
                tenant: "acme".into(),
                scope: ValueScope::Tenant,
                env_name: "local".into(),
                name: "GOOGLE_CLIENT_SECRET".into(),
            },
            &SecretWrite {
                value: SecretValue::new(CLIENT_SECRET.into()),
                mode: WriteMode::CreateNew,
                tags: None,
                rotation_due_at: None,
                if_version: None,
            },
        )
        .await
        .unwrap();
    let rt = Runtime::over(tdb.db.ports_sealed(Some(key.clone())))
        .registry(registry)
        .call_values(Arc::new(values))
        .build();
    for (flow, tool) in [("f.mail", "t.mail"), ("f.company", "t.company-mail")] {
        rt.flows()
            .insert_json(&one_node_flow(flow, "1.0.0", "tool", tool))
            .unwrap();
    }
    let store = ConnectionsStore::new(tdb.db.clone(), Some(key));
    Fixture {
        tdb,
        rt,
        store,
        seen,
        base,
    }
}

impl Fixture {
    async fn run(&self, flow: &str, actor: Option<&str>) -> RunRecord {
        let run = self
            .rt
            .start_run(flow, None, json!({}), by(actor))
            .await
            .unwrap();
        // Nothing about a token in the run or its journal.
        let journal = self.rt.journal(&run.id, None, None).await.unwrap();
        let text = serde_json::to_string(&journal).unwrap() + &serde_json::to_string(&run).unwrap();
        for t in [
            TOKEN,
            FRESH,
            REFRESH,
            ROTATED,
            CLIENT_SECRET,
            "the-refresh-token",
        ] {
            assert!(!text.contains(t), "{t} leaked: {text}");
        }
        run
    }

    fn failure(run: &RunRecord) -> String {
        assert_eq!(run.status, RunStatus::Failed, "{run:?}");
        run.failure_message.clone().unwrap()
    }

    fn calls(&self) -> usize {
        self.seen.bearer.lock().unwrap().len()
    }
}

const HOWTO: &str = "the run's person connects it with `kindgi connections add --app=google --as=person --permission=gmail.send --access-token-stdin` (POST /v1/connections)";

#[tokio::test]
async fn the_persons_token_is_sent_as_bearer_and_never_recorded() {
    let f = fixture().await;
    let u1 = ConnectionHolder::Person("u1".into());
    // Not connected yet.
    let run = f.run("f.mail", Some("user:u1")).await;
    assert_eq!(
        Fixture::failure(&run),
        format!(
            "precondition-failed: Tool \"t.mail\" was not run: connection-missing: tool \"t.mail\" acts with the run's person's connection to \"google\" (its connection \"mail\"), and the run's person (user \"u1\") has not connected \"google\": {HOWTO}"
        )
    );
    // Connected without the permission.
    f.store
        .add(&connection(
            u1.clone(),
            &["gmail.read"],
            tokens(TOKEN, None, None),
        ))
        .await
        .unwrap();
    let run = f.run("f.mail", Some("user:u1")).await;
    let m = Fixture::failure(&run);
    assert!(m.contains("connection-permission-missing: tool \"t.mail\" needs permission \"gmail.send\" of \"google\""), "{m}");
    assert!(m.contains("connect it again granting them"), "{m}");
    assert_eq!(f.calls(), 0, "nothing sent");
    // Connected with it: the token is sent, and the echo is masked in the output.
    f.store
        .add(&connection(
            u1.clone(),
            &["gmail.send", "gmail.read"],
            tokens(TOKEN, None, None),
        ))
        .await
        .unwrap();
    let run = f.run("f.mail", Some("user:u1")).await;
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(
        run.output,
        Some(json!({"sent": true, "auth": "Bearer ***"}))
    );
    assert_eq!(
        f.seen.bearer.lock().unwrap().as_slice(),
        [format!("Bearer {TOKEN}")]
    );
    // Another person has not connected it.
    let run = f.run("f.mail", Some("user:u2")).await;
    assert!(
        Fixture::failure(&run)
            .contains("the run's person (user \"u2\") has not connected \"google\"")
    );
    // A run no person started cannot use a person's connection: its flow step is refused
    // before it resolves one (the unattended rule).
    let run = f.run("f.mail", Some("service_account:sa1")).await;
    let m = Fixture::failure(&run);
    assert!(
        m.contains("unattended-approval-required")
            && m.contains("a person's (needsSpec.connections, as: person)"),
        "{m}"
    );
    // Revoked: fails naming the app and how to connect again.
    let (record, _) = f
        .store
        .resolve("acme", "google", &u1)
        .await
        .unwrap()
        .unwrap();
    f.store
        .revoke("acme", &record.id, kindgi_core::now_millis())
        .await
        .unwrap();
    let run = f.run("f.mail", Some("user:u1")).await;
    assert_eq!(
        Fixture::failure(&run),
        format!(
            "precondition-failed: Tool \"t.mail\" was not run: connection-revoked: tool \"t.mail\" acts with the run's person's connection to \"google\" (its connection \"mail\"), which was revoked: {HOWTO}"
        )
    );
    assert_eq!(f.calls(), 1);
    f.tdb.cleanup().await.unwrap();
}

#[tokio::test]
async fn an_expired_token_is_refreshed_at_the_token_endpoint_and_stored() {
    let f = fixture().await;
    let u1 = ConnectionHolder::Person("u1".into());
    let past = kindgi_core::now_millis() - 1000;
    let mut c = connection(
        u1.clone(),
        &["gmail.send"],
        tokens(TOKEN, Some(REFRESH), Some(past)),
    );
    c.refresh = Some(RefreshClient {
        token_url: format!("{}/token", f.base),
        client_id: "client-1".into(),
        client_secret_name: Some("GOOGLE_CLIENT_SECRET".into()),
    });
    f.store.add(&c).await.unwrap();
    let run = f.run("f.mail", Some("user:u1")).await;
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(
        f.seen.bearer.lock().unwrap().as_slice(),
        [format!("Bearer {FRESH}")]
    );
    let grants = f.seen.grants.lock().unwrap().clone();
    assert_eq!(grants.len(), 1);
    assert!(grants[0].contains("grant_type=refresh_token"), "{grants:?}");
    // The new tokens are stored: the next call uses them without a refresh.
    let (record, stored) = f
        .store
        .resolve("acme", "google", &u1)
        .await
        .unwrap()
        .unwrap();
    let stored = stored.unwrap();
    assert_eq!(stored.access_token, FRESH);
    assert_eq!(stored.refresh_token.as_deref(), Some(ROTATED));
    assert!(record.expires_at.unwrap() > kindgi_core::now_millis() + 3_000_000);
    let run = f.run("f.mail", Some("user:u1")).await;
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(f.seen.grants.lock().unwrap().len(), 1);

    // A refresh the endpoint refuses fails the call with its OAuth error, no token in it.
    let mut bad = connection(
        u1.clone(),
        &["gmail.send"],
        tokens(TOKEN, Some("1//wrong"), Some(past)),
    );
    bad.refresh = c.refresh.clone();
    f.store.add(&bad).await.unwrap();
    let run = f.run("f.mail", Some("user:u1")).await;
    let m = Fixture::failure(&run);
    assert!(m.contains("connection-refresh-failed: tool \"t.mail\" acts with the run's person's connection to \"google\""), "{m}");
    assert!(
        m.contains("`invalid_grant` (The refresh token is not valid.)"),
        "{m}"
    );
    assert!(m.contains("connect it again: the run's person connects it with `kindgi connections add --app=google"), "{m}");
    assert!(!m.contains("1//wrong"), "{m}");

    // Expired without a refresh token: expired, connect again.
    f.store
        .add(&connection(
            u1.clone(),
            &["gmail.send"],
            tokens(TOKEN, None, Some(past)),
        ))
        .await
        .unwrap();
    let run = f.run("f.mail", Some("user:u1")).await;
    let m = Fixture::failure(&run);
    assert!(m.contains("connection-expired: tool \"t.mail\" acts with the run's person's connection to \"google\""), "{m}");
    assert!(m.contains("cannot be refreshed"), "{m}");
    assert_eq!(f.calls(), 2);
    f.tdb.cleanup().await.unwrap();
}

#[tokio::test]
async fn a_company_connection_is_the_tenants_whoever_runs() {
    let f = fixture().await;
    let run = f.run("f.company", None).await;
    let m = Fixture::failure(&run);
    assert!(m.contains("connection-missing: tool \"t.company-mail\" acts with the company's connection to \"slack\""), "{m}");
    assert!(
        m.contains(
            "a tenant admin connects it with `kindgi connections add --app=slack --as=company"
        ),
        "{m}"
    );
    let mut c = connection(
        ConnectionHolder::Company,
        &["gmail.send"],
        tokens(TOKEN, None, None),
    );
    c.app = "slack".into();
    f.store.add(&c).await.unwrap();
    let run = f.run("f.company", None).await;
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(
        f.seen.bearer.lock().unwrap().as_slice(),
        [format!("Bearer {TOKEN}")]
    );
    f.tdb.cleanup().await.unwrap();
}
