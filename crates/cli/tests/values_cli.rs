//! `kindgi env list|set|unset --scope` and `kindgi secrets list|get|set|revoke` against a
//! real `kindgi server` on loopback (SQLite in a temp dir): values round-trip, a secret's
//! value is never printed back, and misuse is a usage error (exit 2).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api_common;
mod support;

use std::os::unix::fs::PermissionsExt as _;

use support::Server;

/// base64 of 32 bytes: the server's secrets key.
const SECRETS_KEY: &str = "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=";
const SECRET: &str = "s3cr3t-value-never-echoed";

#[test]
fn env_and_secrets_over_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db").display().to_string();
    let key = support::create_token(&db, "default").key;
    let server = Server::start_with(&db, &[], &[("KINDGI_SECRETS_KEY", SECRETS_KEY)]);
    let env = [
        ("KINDGI_API_URL", server.url.as_str()),
        ("KINDGI_API_TOKEN", key.as_str()),
    ];
    let k = |args: &[&str]| api_common::kindgi(dir.path(), dir.path(), args, &env);

    // env: set, refuse to overwrite without --force, list, unset (twice: idempotent).
    let out = k(&at(&["env", "set", "REGION", "eu"]));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["value"], "eu");
    let out = k(&at(&["env", "set", "REGION", "us"]));
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    let out = k(&at(&["env", "set", "REGION", "us", "--force"]));
    assert_eq!(out.code, 0, "{out:?}");
    let out = k(&at(&["env", "list"]));
    assert_eq!(out.code, 0, "{out:?}");
    let data = out.json()["data"].clone();
    assert_eq!(data[0]["name"], "REGION", "{data}");
    assert_eq!(data[0]["value"], "us", "{data}");
    for _ in 0..2 {
        let out = k(&at(&["env", "unset", "REGION"]));
        assert_eq!(out.code, 0, "{out:?}");
    }
    assert_eq!(
        k(&at(&["env", "list"])).json()["data"],
        serde_json::json!([])
    );
    let out = k(&["env", "list", "--env", "local"]);
    assert_eq!(out.code, 2, "--scope is required: {out:?}");
    assert!(out.stderr.contains("--scope"), "{}", out.stderr);

    // secrets: set from a 0600 file, get/list metadata only, revoke.
    let file = dir.path().join("value.txt");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let f = file.to_str().unwrap();
    let out = k(&at(&["secrets", "set", "api-token", "--from-file", f]));
    assert_eq!(out.code, 2, "a readable file is refused: {out:?}");
    assert!(out.stderr.contains("chmod 600"), "{}", out.stderr);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = k(&at(&["secrets", "set", "api-token", "--from-file", f]));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stdout.contains(SECRET), "{}", out.stdout);
    let out = k(&at(&["secrets", "get", "api-token"]));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["name"], "api-token");
    assert!(!out.stdout.contains(SECRET), "{}", out.stdout);
    let out = k(&at(&["secrets", "list"]));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["data"][0]["name"], "api-token");
    assert!(!out.stdout.contains(SECRET), "{}", out.stdout);
    let out = k(&at(&["secrets", "set", "api-token", "--from-file", f]));
    assert_eq!(
        out.code, 1,
        "create-new refuses an existing secret: {out:?}"
    );
    let out = k(&at(&[
        "secrets",
        "revoke",
        "api-token",
        "--reason",
        "leaked",
    ]));
    assert_eq!(out.code, 0, "{out:?}");
    let out = k(&at(&["secrets", "list"]));
    assert_eq!(out.json()["data"], serde_json::json!([]), "{out:?}");
    let out = k(&at(&["secrets", "get", "nope"]));
    assert_eq!(out.code, 1, "{out:?}");
    let out = k(&["secrets", "list", "--env", "local", "--scope", "team:x"]);
    assert_eq!(out.code, 2, "{out:?}");
}

/// `head` at the tenant scope under env `local`.
fn at<'a>(head: &[&'a str]) -> Vec<&'a str> {
    [head, &["--env", "local", "--scope", "tenant"][..]].concat()
}
