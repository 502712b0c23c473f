//! `kindgi server`'s operator caps on open run streams and on unwritten answer bytes:
//! `--max-streams-per-key`, `--max-streams-per-tenant`, `--max-streams`,
//! `--body-budget-bytes` and the same keys under `limits` in `--config`. With a key's cap at
//! 1, that key's second stream is `429 rate-limit-exceeded` with `Retry-After` while another
//! key of the tenant still streams; caps that cannot hold together stop the server with exit
//! code 2 and a message naming the flag or the file's key.
//!
//! Design: a run stays running (so its stream stays open) because its one http tool calls a
//! loopback service that accepts and never answers; the server allows exactly that address
//! (`--allow-private-egress 127.0.0.2/32`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::Server;
use tokio::io::AsyncReadExt;

/// A service on 127.0.0.2 that reads each request and never answers; its port.
async fn silent_service() -> u16 {
    let listener = tokio::net::TcpListener::bind(("127.0.0.2", 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 8192];
                while matches!(s.read(&mut buf).await, Ok(n) if n > 0) {}
            });
        }
    });
    port
}

async fn post(http: &reqwest::Client, url: &str, key: &str, body: Value) -> (u16, Value) {
    let r = http
        .post(url)
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Registers tenant `acme`'s http tool calling the silent service and a flow calling it,
/// and starts a run of it: the run's id (the run stays running).
async fn hanging_run(server: &Server, key: &str, port: u16) -> String {
    let http = reqwest::Client::new();
    let project = kindgi_api::projects::default_project_id("acme");
    let tool = json!({
        "projectId": project, "id": "acme.hang", "version": "1.0.0",
        "description": "never answered", "mutating": false,
        "input": {"type": "object"}, "output": {},
        "spec": {"kind": "http", "method": "GET",
                 "urlTemplate": format!("http://127.0.0.2:{port}/")},
    });
    let (status, v) = post(&http, &format!("{}/v1/tools", server.url), key, tool).await;
    assert_eq!(status, 201, "{v}");
    let flow = json!({
        "projectId": project, "id": "acme.run-hang", "version": "1.0.0", "name": "hang",
        "nodes": [{"id": "call", "kind": "tool", "ref": "acme.hang"}],
        "edges": [{"id": "e1", "from": "$start", "to": "call"},
                  {"id": "e2", "from": "call", "to": "$end"}],
    });
    let (status, v) = post(&http, &format!("{}/v1/flows", server.url), key, flow).await;
    assert_eq!(status, 201, "{v}");
    let (status, run) = post(
        &http,
        &format!("{}/v1/runs", server.url),
        key,
        json!({"flow": "acme.run-hang", "input": {}, "options": {"wait": false}}),
    )
    .await;
    assert!(status == 201 || status == 202, "{status} {run}");
    run["id"].as_str().unwrap().to_owned()
}

async fn open_stream(server: &Server, key: &str, run: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(format!("{}/v1/runs/{run}/stream", server.url))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

/// Under a per-key cap of 1 (however the server was given it): the key's second stream is
/// refused, another key of the tenant streams, and a closed stream gives its slot back.
async fn one_stream_per_key(server: &Server, keys: (&str, &str), port: u16) {
    let (first, second) = keys;
    let run = hanging_run(server, first, port).await;
    let held = open_stream(server, first, &run).await;
    assert_eq!(held.status(), 200);

    let refused = open_stream(server, first, &run).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "5");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate-limit-exceeded", "{body}");
    assert_eq!(
        body["error"]["details"],
        json!({"limit": "streams-per-key", "max": 1}),
        "{body}"
    );

    let other = open_stream(server, second, &run).await;
    assert_eq!(other.status(), 200, "the cap is per key");

    drop(held);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let again = open_stream(server, first, &run).await;
        if again.status() == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a closed stream never gave its slot back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_streams_per_key_1_refuses_a_keys_second_stream() {
    let port = silent_service().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kindgi.db").display().to_string();
    let a = support::create_token(&db, "acme").key;
    let b = support::create_token(&db, "acme").key;
    let server = Server::start_with(
        &db,
        &[
            "--max-streams-per-key",
            "1",
            "--allow-private-egress",
            "127.0.0.2/32",
        ],
        &[],
    );
    one_stream_per_key(&server, (&a, &b), port).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_config_files_limits_set_the_caps_too() {
    let port = silent_service().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kindgi.db").display().to_string();
    let a = support::create_token(&db, "acme").key;
    let b = support::create_token(&db, "acme").key;
    let config = dir.path().join("kindgi.json");
    std::fs::write(
        &config,
        json!({"egress": {"allowPrivate": ["127.0.0.2/32"]},
               "limits": {"maxStreamsPerKey": 1, "maxStreamsPerTenant": 2, "maxStreams": 4,
                          "bodyBudgetBytes": 1048576}})
        .to_string(),
    )
    .unwrap();
    let server = Server::start_with(&db, &["--config", config.to_str().unwrap()], &[]);
    one_stream_per_key(&server, (&a, &b), port).await;
}

/// `kindgi server ARGS` that must not start: its stderr (exit code 2, nothing on stdout).
fn refused(db: &str, args: &[&str]) -> String {
    let o = std::process::Command::new(support::BIN)
        .args(["server", "--listen", "127.0.0.1:0", "--database", db])
        .args(args)
        .env_remove("KINDGI_MAX_STREAMS_PER_KEY")
        .env_remove("KINDGI_MAX_STREAMS_PER_TENANT")
        .env_remove("KINDGI_MAX_STREAMS")
        .env_remove("KINDGI_BODY_BUDGET_BYTES")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(o.stdout.is_empty(), "it listened: {stderr}");
    stderr
}

#[test]
fn caps_that_cannot_hold_stop_the_server_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kindgi.db").display().to_string();
    let stderr = refused(&db, &["--max-streams-per-key", "0"]);
    assert!(
        stderr.contains("--max-streams-per-key 0: a stream cap must be at least 1"),
        "{stderr}"
    );
    let stderr = refused(&db, &["--max-streams-per-key", "100"]);
    assert!(
        stderr.contains(
            "--max-streams-per-key 100 is more than --max-streams-per-tenant 64 (the default)"
        ),
        "{stderr}"
    );
    let stderr = refused(
        &db,
        &["--max-streams-per-tenant", "10", "--max-streams", "5"],
    );
    assert!(
        stderr.contains("--max-streams-per-tenant 10 is more than --max-streams 5"),
        "{stderr}"
    );
    let stderr = refused(&db, &["--body-budget-bytes", "100"]);
    assert!(
        stderr.contains("--body-budget-bytes 100: the body budget must be at least 1024 bytes"),
        "{stderr}"
    );

    let config = dir.path().join("kindgi.json");
    std::fs::write(
        &config,
        json!({"limits": {"maxStreamsPerTenant": 500}}).to_string(),
    )
    .unwrap();
    let stderr = refused(&db, &["--config", config.to_str().unwrap()]);
    assert!(
        stderr.contains(&format!(
            "limits.maxStreamsPerTenant 500 in {} is more than --max-streams 256 (the default)",
            config.display()
        )),
        "{stderr}"
    );
    // A flag wins over the file's key: the same file starts with a smaller cap given.
    let server = Server::start_with(
        &db,
        &[
            "--config",
            config.to_str().unwrap(),
            "--max-streams-per-tenant",
            "32",
        ],
        &[],
    );
    drop(server);

    let o = std::process::Command::new(support::BIN)
        .args(["server", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for flag in [
        "--max-streams-per-key <N>",
        "--max-streams-per-tenant <N>",
        "--max-streams <N>",
        "--body-budget-bytes <BYTES>",
    ] {
        assert!(help.contains(flag), "{flag} in --help:\n{help}");
    }
}
