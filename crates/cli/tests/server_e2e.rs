//! The real `kindgi` binary end to end: `server` on a free port, `tokens create`,
//! `tools register|list|get`, SIGTERM shutdown, restart on the same database — on SQLite and
//! PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output};

use kindgi_store::testing::{TestDatabase, postgres_test_url};
use serde_json::{Value, json};
use support::{BIN, Server};

fn kindgi(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("KINDGI_API_TOKEN")
        .env_remove("KINDGI_API_URL")
        .output()
        .unwrap()
}

fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn round_trip(database: &str) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(database);
    assert!(
        server
            .listening_line
            .starts_with("kindgi server listening on http://127.0.0.1:"),
        "first line: {:?}",
        server.listening_line
    );
    let token = support::create_token(database, "acme").key;
    let api = ["--api", &server.url, "--token", &token];

    let manifest = json!({
        "id": "acme.lookup-order", "description": "Look an order up", "version": "1.0.0",
        "input": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]},
        "output": {"type": "object"}, "mutating": false
    });
    let file = dir.path().join("tool.json");
    std::fs::write(&file, manifest.to_string()).unwrap();
    let file = file.to_str().unwrap();

    let o = kindgi(&[&["tools", "register", file][..], &api].concat());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(stdout_json(&o), json!({"toolId": "acme.lookup-order"}));

    // Again: the API's 409 envelope, exit 1.
    let o = kindgi(&[&["tools", "register", file][..], &api].concat());
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with("Error [tool-already-registered]: "),
        "{stderr}"
    );

    let o = kindgi(&[&["tools", "list"][..], &api].concat());
    assert_eq!(o.status.code(), Some(0));
    let page = stdout_json(&o);
    // The tool as registered, with the server's own fields (`projectId`, the official shape).
    let served = page["data"][0].clone();
    for (k, v) in manifest.as_object().unwrap() {
        assert_eq!(&served[k], v, "{k} in {served}");
    }
    assert_eq!(page["hasMore"], false);

    let o = kindgi(
        &[
            &["tools", "get", "acme.lookup-order", "--version", "1.0.0"][..],
            &api,
        ]
        .concat(),
    );
    assert_eq!(stdout_json(&o), served);
    let o = kindgi(&[&["tools", "get", "acme.nope"][..], &api].concat());
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.starts_with("Error [not-found]: "), "{stderr}");

    // Environment variables instead of flags.
    let o = Command::new(BIN)
        .args(["tools", "get", "acme.lookup-order"])
        .env("KINDGI_API_URL", &server.url)
        .env("KINDGI_API_TOKEN", &token)
        .output()
        .unwrap();
    assert_eq!(stdout_json(&o)["version"], "1.0.0");

    // Restart on the same database: the tool and the key survive.
    server.stop();
    let server = Server::start(database);
    let api = ["--api", &server.url, "--token", &token];
    let o = kindgi(
        &[
            &["tools", "get", "acme.lookup-order", "--version", "1.0.0"][..],
            &api,
        ]
        .concat(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(stdout_json(&o)["id"], manifest["id"]);
    server.stop();
}

#[test]
fn sqlite_server_round_trip_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kindgi.db");
    round_trip(db.to_str().unwrap());
}

#[test]
fn postgres_server_round_trip_and_restart() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = rt.block_on(TestDatabase::postgres()).unwrap();
    let schema = t.schema().unwrap().to_owned();
    let base = postgres_test_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
    round_trip(&url);
    rt.block_on(t.cleanup()).unwrap();
}

#[test]
fn server_refuses_bad_arguments() {
    let o = kindgi(&[
        "server",
        "--listen",
        "not-an-address",
        "--database",
        "sqlite::memory:",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot listen on not-an-address"));
    let o = kindgi(&[
        "server",
        "--listen",
        "127.0.0.1:0",
        "--database",
        "mysql://x/y",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not supported"));
}
