//! A secret value never reaches the log: every secret route, its successes and its refusals,
//! run under a TRACE subscriber that captures everything written (sqlx's statements, the
//! API's errors), and the capture is searched for the value.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use axum::http::Method;
use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, router};
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use serde_json::json;

const SECRET: &str = "log-canary-Zq8pW3xv";

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_secret_value_is_logged() {
    let capture = Capture::default();
    let writer = capture.clone();
    // Global (this binary has one test), so `log` records (sqlx's statements) come too.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .try_init()
        .unwrap();

    let t = TestDatabase::sqlite().await.unwrap();
    let state = AppState::new(t.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let (seal, _) = SealKey::generate();
    let app = router(
        state
            .clone()
            .with_values(ValuesConfig::new("local", Some(seal))),
    );
    let keyless = router(state.with_values(ValuesConfig::new("local", None)));
    let c = TestClient::new(app, Some(key.clone()));
    let k = TestClient::new(keyless, Some(key));
    let body = |name: &str, mode: &str| json!({"scope": {"kind": "tenant"}, "envName": "local", "name": name, "value": SECRET, "writeMode": mode});
    let mut statuses = Vec::new();
    for (client, b) in [
        (&c, body("S", "create-new")),
        (&c, body("S", "create-new")),
        (&c, body("S", "add-version")),
        (&c, body("kindgi.s", "create-new")),
        (&c, body("bad name", "create-new")),
        (&c, body("S", "nope")),
        (&k, body("T", "create-new")),
    ] {
        let r = client.post_json("/v1/secrets", &b).await;
        statuses.push(r.status.as_u16());
    }
    let r = c
        .send(
            Method::POST,
            "/v1/secrets",
            Some(format!("{{\"value\":\"{SECRET}\"").into_bytes()),
            &[],
        )
        .await;
    statuses.push(r.status.as_u16());
    assert_eq!(statuses, [201, 409, 200, 400, 400, 400, 503, 400]);
    t.cleanup().await.unwrap();

    let logged = String::from_utf8_lossy(&capture.0.lock().unwrap()).into_owned();
    assert!(
        logged.contains("secret_versions"),
        "the capture saw no SQL: {logged}"
    );
    assert!(
        !logged.contains(SECRET),
        "a secret value was logged:\n{logged}"
    );
}
