//! The official CLI (PyPI `kindgi-cli`, `.venv/bin/kindgi`) against `kindgi server` for
//! families this runtime does not serve: `schedules list`, `memory facts list` and `people
//! list` show our `501 not-served` answer's message (the family and "not served by this
//! runtime"), not `route-not-found` and not a network failure (`fetch failed`). Fails, not
//! skips, under `KINDGI_REQUIRE_REFERENCE=1` when the official CLI is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use support::Server;

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

#[test]
fn the_official_cli_shows_our_not_served_answer() {
    let Some(cli) = official_cli() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db").display().to_string();
    let key = support::create_token(&db, "default").key;
    let server = Server::start(&db);
    for (args, family, prefix) in [
        (&["memory", "facts", "list"][..], "memory", "/v1/memory"),
        (&["people", "list"][..], "people", "/v1/identity/users"),
    ] {
        let out = Command::new(&cli)
            .args(args)
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .env("KINDGI_API_URL", &server.url)
            .env("KINDGI_API_TOKEN", &key)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        let want = format!(
            "The {family} family (`{prefix}`) is not served by this runtime; GET /v1/openapi.json lists what is"
        );
        assert!(stderr.contains(&want), "{args:?}: {stderr}");
        assert!(!stderr.contains("route-not-found"), "{args:?}: {stderr}");
        assert!(!stderr.contains("fetch failed"), "{args:?}: {stderr}");
    }
    // Our own answer, on the wire: 501 with the family's details; a path that is not
    // official stays route-not-found.
    let get = |path: &str| {
        let url = format!("{}{path}", server.url);
        let key = key.clone();
        tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(async move {
                let r = reqwest::Client::new()
                    .get(url)
                    .bearer_auth(key)
                    .send()
                    .await
                    .unwrap();
                let status = r.status().as_u16();
                (status, r.json::<serde_json::Value>().await.unwrap())
            })
    };
    let (status, body) = get("/v1/memory/facts/f_1/revisions");
    assert_eq!(status, 501, "{body}");
    assert_eq!(body["error"]["code"], "not-served", "{body}");
    assert_eq!(
        body["error"]["details"],
        serde_json::json!({"family": "memory", "method": "GET", "path": "/v1/memory/facts/{factId}/revisions"})
    );
    let (status, body) = get("/v1/memoryz");
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &serde_json::json!("route-not-found"))
    );
    server.stop();
}
