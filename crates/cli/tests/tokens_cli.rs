//! `kindgi tokens`: `create|revoke --database` against a real SQLite file, our CLI's
//! `tokens create|list|get|revoke` against a real `kindgi server`, and the official CLI's
//! (case 111).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api_common;
mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use support::{BIN, Server};

#[test]
fn create_prints_a_fresh_key_once_and_revoke_works() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let db = db.to_str().unwrap();
    let run = |args: &[&str]| Command::new(BIN).args(args).output().unwrap();
    let a = run(&["tokens", "create", "--database", db, "--tenant", "acme"]);
    let b = run(&["tokens", "create", "--database", db, "--tenant", "acme"]);
    assert!(a.status.success() && b.status.success());
    let (ka, kb) = (
        String::from_utf8(a.stdout).unwrap(),
        String::from_utf8(b.stdout).unwrap(),
    );
    assert_eq!(ka.lines().count(), 1);
    assert_ne!(ka, kb, "keys are random");
    // The key itself is not stored.
    let raw = std::fs::read(dir.path().join("k.db")).unwrap_or_default();
    let wal = std::fs::read(dir.path().join("k.db-wal")).unwrap_or_default();
    let key = ka.trim().as_bytes();
    assert!(!raw.windows(key.len()).any(|w| w == key) && !wal.windows(key.len()).any(|w| w == key));
    // The key id is on stderr; revoking it works, an unknown id exits 1.
    let stderr = String::from_utf8(a.stderr).unwrap();
    let key_id = stderr.split_whitespace().nth(3).unwrap();
    assert_eq!(key_id.len(), 16, "{stderr}");
    assert!(
        run(&["tokens", "revoke", "--database", db, "--key-id", key_id])
            .status
            .success()
    );
    assert_eq!(
        run(&[
            "tokens",
            "revoke",
            "--database",
            db,
            "--key-id",
            "ffffffffffffffff"
        ])
        .status
        .code(),
        Some(1)
    );
    // Bad tenant names are usage errors.
    let bad = run(&[
        "tokens",
        "create",
        "--database",
        db,
        "--tenant",
        "no spaces",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tenant name"));
    assert_eq!(
        run(&["tokens", "create", "--database", db]).status.code(),
        Some(2),
        "--tenant is required"
    );
}

fn bootstrap(db: &str) -> String {
    support::create_token(db, "acme").key
}

/// Our CLI's `tokens create|list|get|revoke` against a real `kindgi server`.
#[test]
fn tokens_over_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let db = db.to_str().unwrap();
    let admin = bootstrap(db);
    let server = Server::start(db);
    let env = [
        ("KINDGI_API_URL", server.url.as_str()),
        ("KINDGI_API_TOKEN", admin.as_str()),
    ];
    let k =
        |args: &[&str], env: &[(&str, &str)]| api_common::kindgi(dir.path(), dir.path(), args, env);
    // A key for another person comes only from the operator (issue 19, finding 2) …
    let out = k(&["tokens", "create", "--for", "user:u1"], &env);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.starts_with("Error [auth]: "), "{}", out.stderr);
    let made = Command::new(BIN)
        .args(["tokens", "create", "--database", db, "--tenant", "acme"])
        .args(["--for", "user:u1"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let u1 = String::from_utf8(made.stdout).unwrap().trim().to_owned();
    let u1_env = [
        ("KINDGI_API_URL", server.url.as_str()),
        ("KINDGI_API_TOKEN", u1.as_str()),
    ];
    // … or from that person.
    let out = k(
        &[
            "tokens",
            "create",
            "--label",
            "ci",
            "--expires",
            "30d",
            "--role",
            "member",
        ],
        &u1_env,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let made = out.json();
    let id = made["meta"]["id"].as_str().unwrap().to_owned();
    let secret = made["secret"].as_str().unwrap().to_owned();
    assert_eq!(
        made["meta"]["principal"],
        serde_json::json!({"kind": "user", "id": "u1"})
    );
    assert_eq!(made["meta"]["label"], "ci");
    assert!(made["meta"]["expiresAt"].is_string());
    // u1's key sees only u1's keys; the admin's --for narrows.
    let mine = k(
        &["tokens", "list"],
        &[
            ("KINDGI_API_URL", &server.url),
            ("KINDGI_API_TOKEN", &secret),
        ],
    );
    assert_eq!(mine.code, 0, "{mine:?}");
    assert_eq!(mine.json()["data"].as_array().unwrap().len(), 2);
    assert_eq!(mine.json()["data"][0]["id"], Value::String(id.clone()));
    assert!(!mine.stdout.contains(&secret));
    let all = k(&["tokens", "list", "--for", "user:u1", "--table"], &env);
    assert_eq!(all.code, 0, "{all:?}");
    assert!(all.stdout.starts_with("ID"), "{}", all.stdout);
    assert_eq!(all.stdout.lines().count(), 3, "{}", all.stdout);
    let got = k(&["tokens", "get", &id], &env);
    assert_eq!(got.json()["id"], Value::String(id.clone()));
    // A member key cannot mint an admin key: `auth`.
    let out = k(
        &["tokens", "create", "--role", "admin"],
        &[
            ("KINDGI_API_URL", &server.url),
            ("KINDGI_API_TOKEN", &secret),
        ],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.starts_with("Error [auth]: "), "{}", out.stderr);
    let out = k(&["tokens", "revoke", &id], &env);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.json(),
        serde_json::json!({"tokenId": id, "revoked": true})
    );
    let out = k(
        &["tokens", "list"],
        &[
            ("KINDGI_API_URL", &server.url),
            ("KINDGI_API_TOKEN", &secret),
        ],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.starts_with("Error [auth]: "),
        "a revoked key: {}",
        out.stderr
    );
    let out = k(
        &["tokens", "get", "00000000-0000-4000-8000-000000000000"],
        &env,
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("Error [not-found]: No token with id "),
        "{}",
        out.stderr
    );
    let out = k(&["tokens", "create", "--for", "robot:x"], &env);
    assert_eq!(out.code, 2, "{out:?}");
}

/// `kindgi tokens revoke --created-by sa:<id>` revokes every key a service account minted
/// (issue 19, finding 2): the ones still live, once each; the others keep working.
#[test]
fn revoke_created_by_revokes_what_one_principal_minted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let db = db.to_str().unwrap();
    let admin = bootstrap(db);
    let server = Server::start(db);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = reqwest::Client::new();
    let call = |key: &str, path: &str, body: Option<Value>| {
        let req = match &body {
            Some(b) => http.post(format!("{}{path}", server.url)).json(b),
            None => http.get(format!("{}{path}", server.url)),
        };
        rt.block_on(async {
            let r = req.bearer_auth(key).send().await.unwrap();
            let status = r.status().as_u16();
            (status, r.json::<Value>().await.unwrap_or(Value::Null))
        })
    };
    let (status, bot) = call(
        &admin,
        "/v1/service-accounts",
        Some(serde_json::json!({"name": "bot", "grants": [{"kind": "tenant-admin"}]})),
    );
    assert_eq!(status, 201, "{bot}");
    let bot = bot["serviceAccountId"].as_str().unwrap().to_owned();
    let (_, made) = call(
        &admin,
        "/v1/tokens",
        Some(serde_json::json!({"for": {"kind": "service-account", "id": bot}, "role": "admin"})),
    );
    let bot_key = made["token"].as_str().unwrap().to_owned();
    let minted: Vec<String> = (0..3)
        .map(|_| {
            let (status, m) = call(&bot_key, "/v1/tokens", Some(serde_json::json!({})));
            assert_eq!(status, 201, "{m}");
            m["token"].as_str().unwrap().to_owned()
        })
        .collect();
    let (_, first) = call(
        &admin,
        &format!("/v1/tokens?createdBy=service_account:{bot}"),
        None,
    );
    let ids: Vec<Value> = first["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tokenId"].clone())
        .collect();
    assert_eq!(ids.len(), 3, "{first}");
    let env = [
        ("KINDGI_API_URL", server.url.as_str()),
        ("KINDGI_API_TOKEN", admin.as_str()),
    ];
    let by = format!("sa:{bot}");
    let out = api_common::kindgi(
        dir.path(),
        dir.path(),
        &["tokens", "revoke", "--created-by", &by],
        &env,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let answer = out.json();
    assert_eq!(answer["createdBy"], format!("service_account:{bot}"));
    let mut revoked = answer["revoked"].as_array().unwrap().clone();
    let mut want = ids.clone();
    revoked.sort_by_key(ToString::to_string);
    want.sort_by_key(ToString::to_string);
    assert_eq!(revoked, want);
    for key in &minted {
        let (status, body) = call(key, "/v1/tokens", None);
        assert_eq!(
            (status, &body["error"]["code"]),
            (401, &Value::from("auth-revoked"))
        );
    }
    // The minter's own key, and the admin's, still work; a second run revokes nothing.
    assert_eq!(call(&bot_key, "/v1/tokens", None).0, 200);
    let again = api_common::kindgi(
        dir.path(),
        dir.path(),
        &["tokens", "revoke", "--created-by", &by],
        &env,
    );
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(again.json()["revoked"], serde_json::json!([]));
    let bad = api_common::kindgi(
        dir.path(),
        dir.path(),
        &["tokens", "revoke", "--created-by", "robot:x"],
        &env,
    );
    assert_eq!(bad.code, 2, "{bad:?}");
}

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

/// Case 111: the official CLI (PyPI kindgi-cli) mints, lists and revokes keys on our server.
#[test]
fn the_official_cli_manages_keys_on_our_server() {
    let Some(cli) = official_cli() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let db = db.to_str().unwrap();
    let admin = bootstrap(db);
    let server = Server::start(db);
    let run = |args: &[&str]| {
        let o = Command::new(&cli)
            .args(args)
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .env("KINDGI_API_URL", &server.url)
            .env("KINDGI_API_TOKEN", &admin)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = run(&["tokens", "create", "--label", "ci", "--capability", "x"]);
    assert_eq!(code, 1, "a capability the admin lacks: {stdout} {stderr}");
    assert!(stderr.contains("Error [auth]"), "{stderr}");
    let (code, stdout, stderr) = run(&["tokens", "create", "--label", "ci", "--expires", "12h"]);
    assert_eq!(code, 0, "{stdout} {stderr}");
    let made: Value = serde_json::from_str(&stdout).unwrap();
    let id = made["meta"]["id"].as_str().unwrap().to_owned();
    let secret = made["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("kgi_"));
    assert_eq!(made["meta"]["label"], "ci");
    let (code, stdout, stderr) = run(&["tokens", "list"]);
    assert_eq!(code, 0, "{stdout} {stderr}");
    assert!(
        stdout.contains(&id) && !stdout.contains(&secret),
        "{stdout}"
    );
    let (code, stdout, stderr) = run(&["tokens", "revoke", &id]);
    assert_eq!(code, 0, "{stdout} {stderr}");
    let revoked: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(revoked["revoked"], true);
    let (code, stdout, _) = run(&["tokens", "get", &id]);
    assert_eq!(code, 0);
    assert!(serde_json::from_str::<Value>(&stdout).unwrap()["revokedAt"].is_string());
}
