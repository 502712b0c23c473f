//! The API on a real loopback socket (port 0) with a real HTTP client: register, stop the
//! server, reopen the database in a new server, read back — on SQLite and PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use serde_json::Value;
use support::{body, manifest, serve_loopback};

async fn persists_across_restart(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(t.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let served = serve_loopback(router(state)).await;
    let url = served.url.clone();
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{url}/v1/tools"))
        .bearer_auth(&key)
        .json(&body("acme.persist", "2.1.0"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let r = http
        .get(format!("{url}/v1/tools/acme.persist/versions/2.1.0"))
        .header("x-request-id", "sock-1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.headers()["x-request-id"], "sock-1");
    served.stop().await;
    t.db.close().await;

    let db = t.reopen().await.unwrap();
    let served = serve_loopback(router(AppState::new(db.clone()))).await;
    let url = served.url.clone();
    let r = http
        .get(format!("{url}/v1/tools/acme.persist/versions/2.1.0"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        manifest("acme.persist", "2.1.0")
    );
    served.stop().await;
    db.close().await;
    t.cleanup().await.unwrap();
}

both_stores!(persists_across_restart);
