//! Shared setup: a migrated database of either kind, the API over it, and keys for two
//! tenants.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

pub mod gated;
pub mod openapi;

use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};

pub struct Env {
    pub db: TestDatabase,
    pub state: AppState,
    pub acme: TestClient,
    pub other: TestClient,
    pub anon: TestClient,
    pub acme_key: String,
    pub acme_key_id: String,
}

pub async fn env(kind: DatabaseKind) -> Env {
    let db = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(db.db.clone());
    let a = state.tokens.create("acme", None).await.unwrap();
    let o = state.tokens.create("other", None).await.unwrap();
    let app = router(state.clone());
    Env {
        acme: TestClient::new(app.clone(), Some(a.key.clone())),
        other: TestClient::new(app.clone(), Some(o.key)),
        anon: TestClient::new(app, None),
        acme_key: a.key,
        acme_key_id: a.key_id,
        db,
        state,
    }
}

/// An app served by the real server ([`kindgi_api::serve`]) on a free loopback port.
pub struct Served {
    pub url: String,
    stop: kindgi_serve::CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Served {
    /// Stops serving and waits until the server has let go of the port and its state.
    pub async fn stop(self) {
        self.stop.cancel();
        self.task.await.unwrap();
    }
}

/// Serves `app` on `127.0.0.1:0` with the default limits.
pub async fn serve_loopback(app: axum::Router) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = kindgi_serve::CancellationToken::new();
    let serving = stop.clone();
    let task = tokio::spawn(async move {
        kindgi_api::serve(listener, app, kindgi_serve::Limits::default(), serving).await;
    });
    Served { url, stop, task }
}

/// The Default project of tenant `acme` (the project every test body names).
pub fn acme_project() -> String {
    kindgi_api::projects::default_project_id("acme")
}

/// A valid manifest body for `POST /v1/tools` (tenant `acme`).
pub fn body(id: &str, version: &str) -> Value {
    json!({
        "projectId": acme_project(),
        "id": id,
        "description": "Look an order up",
        "version": version,
        "input": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"], "additionalProperties": false},
        "output": {"type": "object"},
        "effects": [{"kind": "reads", "resource": "orders"}],
        "mutating": false
    })
}

/// What the API serves back for [`body`]: the manifest in `OA:Tool` order, with
/// `projectId`.
pub fn manifest(id: &str, version: &str) -> Value {
    json!({
        "id": id,
        "projectId": acme_project(),
        "description": "Look an order up",
        "version": version,
        "input": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"], "additionalProperties": false},
        "output": {"type": "object"},
        "effects": [{"kind": "reads", "resource": "orders"}],
        "mutating": false
    })
}

/// Generate one `#[tokio::test]` per database kind from an `async fn(DatabaseKind)`.
#[macro_export]
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
