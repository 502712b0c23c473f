//! The API on a real loopback socket (port 0) with a real HTTP client: register, stop the
//! server, reopen the database in a new server, read back — on SQLite and PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_api::{AppState, router, serve};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use serde_json::Value;
use support::{body, manifest};

async fn start(
    state: AppState,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let stop = kindgi_serve::CancellationToken::new();
    let cancel = stop.clone();
    tokio::spawn(async move {
        let _ = rx.await;
        cancel.cancel();
    });
    let task = tokio::spawn(async move {
        serve(
            listener,
            router(state),
            kindgi_serve::Limits::default(),
            stop,
        )
        .await;
        Ok::<(), std::io::Error>(())
    });
    (url, tx, task)
}

async fn persists_across_restart(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(t.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let (url, stop, task) = start(state).await;
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
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
    t.db.close().await;

    let db = t.reopen().await.unwrap();
    let (url, stop, task) = start(AppState::new(db.clone())).await;
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
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
    db.close().await;
    t.cleanup().await.unwrap();
}

both_stores!(persists_across_restart);
