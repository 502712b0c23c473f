//! The real `kindgi server` on a SQLite file, killed with SIGKILL: idempotency keys in flight
//! at the kill are never stuck — a retry after the restart answers the original success if
//! the write committed, or does the write now (issue 12, finding 6). And `kindgi tokens
//! revoke` in another process takes effect on the server's next request (finding 18).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::{BIN, Server};

/// A key of tenant `acme` and its id.
fn create_token(database: &str) -> (String, String) {
    let t = support::create_token(database, "acme");
    (t.key, t.key_id)
}

fn manifest(i: usize) -> Value {
    json!({
        "projectId": kindgi_api::projects::default_project_id("acme"), "id": format!("acme.burst-{i}"), "description": "burst",
        "version": "1.0.0",
        "input": {"type": "object", "properties": {"orderId": {"type": "string"}}},
        "output": {"type": "object"}, "mutating": false
    })
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    key: &str,
    i: usize,
) -> reqwest::Result<(u16, String, bool)> {
    let r = client
        .post(format!("{url}/v1/tools"))
        .bearer_auth(key)
        .header("idempotency-key", format!("burst-{i}"))
        .json(&manifest(i))
        .send()
        .await?;
    let status = r.status().as_u16();
    let replay = r.headers().get("x-idempotent-replay").is_some();
    Ok((status, r.text().await?, replay))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idempotency_keys_survive_kill_9_mid_burst() {
    const BURST: usize = 80;
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("kindgi.db");
    let database = database.to_str().unwrap().to_owned();
    let server = Server::start(&database);
    let (key, _) = create_token(&database);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();

    // The burst; the server is killed once a few answers are in, so others are mid-way.
    let answered = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..BURST)
        .map(|i| {
            let (client, url, key, answered) = (
                client.clone(),
                server.url.clone(),
                key.clone(),
                answered.clone(),
            );
            tokio::spawn(async move {
                let r = post(&client, &url, &key, i).await.ok();
                answered.fetch_add(1, Ordering::SeqCst);
                r
            })
        })
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while answered.load(Ordering::SeqCst) < 8 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no answers from the burst"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    server.kill9();
    let mut first: BTreeMap<usize, (u16, String)> = BTreeMap::new();
    for (i, t) in tasks.into_iter().enumerate() {
        if let Some((status, body, _)) = t.await.unwrap() {
            first.insert(i, (status, body));
        }
    }
    assert!(
        first.len() < BURST,
        "the kill landed after the burst; nothing was tested"
    );

    // Restart and retry every key at once.
    let server = Server::start(&database);
    let mut replays = 0;
    for i in 0..BURST {
        let (status, body, replay) = post(&client, &server.url, &key, i).await.unwrap();
        let want = json!({"toolId": format!("acme.burst-{i}")});
        assert_eq!(status, 201, "key burst-{i} after the restart: {body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            want,
            "key burst-{i}"
        );
        if let Some((s, b)) = first.get(&i) {
            assert_eq!(
                (*s, b),
                (201, &body),
                "key burst-{i}: the replay is the original answer"
            );
            assert!(replay, "key burst-{i} answered before the kill is a replay");
        }
        replays += usize::from(replay);
        // And it is really there.
        let r = client
            .get(format!(
                "{}/v1/tools/acme.burst-{i}/versions/1.0.0",
                server.url
            ))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "acme.burst-{i} is registered");
    }
    eprintln!(
        "{} of {BURST} answered before the kill; {replays} replayed after the restart",
        first.len()
    );
}

#[tokio::test]
async fn tokens_revoke_in_another_process_takes_effect_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("kindgi.db");
    let database = database.to_str().unwrap().to_owned();
    let server = Server::start(&database);
    let (key, key_id) = create_token(&database);
    let client = reqwest::Client::new();
    let get = || {
        client
            .get(format!("{}/v1/tools", server.url))
            .bearer_auth(&key)
            .send()
    };
    assert_eq!(get().await.unwrap().status().as_u16(), 200);
    let o = Command::new(BIN)
        .args([
            "tokens",
            "revoke",
            "--database",
            &database,
            "--key-id",
            &key_id,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = get().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], "auth-revoked", "{v}");
}
