//! `kindgi auth whoami`, `projects …`, `tenant …`, `guardrails …` and `conversations …`
//! against a real `kindgi server` on loopback (SQLite in a temp dir): each does what the
//! official CLI's command of the same name does, and — when the official CLI is installed —
//! prints the same JSON for the same reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api_common;
mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::Server;

/// POST `body` to `path` with `key` (fixtures the CLI has no command for).
fn post(url: &str, key: &str, path: &str, body: Value) -> (u16, Value) {
    let url = format!("{url}{path}");
    let key = key.to_owned();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let r = reqwest::Client::new()
                .post(url)
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            (status, r.json().await.unwrap_or(Value::Null))
        })
}

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

#[test]
fn families_over_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db").display().to_string();
    let key = support::create_token(&db, "default").key;
    let server = Server::start(&db);
    let env = [
        ("KINDGI_API_URL", server.url.as_str()),
        ("KINDGI_API_TOKEN", key.as_str()),
    ];
    let k = |args: &[&str]| api_common::kindgi(dir.path(), dir.path(), args, &env);

    // auth whoami: the key checked, where the address and key came from.
    let out = k(&["auth", "whoami"]);
    assert_eq!(out.code, 0, "{out:?}");
    let who = out.json();
    assert_eq!(who["ok"], true);
    assert_eq!(who["apiUrl"], server.url.as_str());
    assert_eq!(
        (&who["apiUrlSource"], &who["tokenSource"]),
        (&json!("env"), &json!("env"))
    );
    assert!(who["identity"]["tenantId"].is_string(), "{who}");
    let out = k(&["auth", "whoami", "--token", "kgi_wrong"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("whoami failed: HTTP 401 (the token is wrong"),
        "{}",
        out.stderr
    );

    // projects: create (slug from the name), get, list, get-default, rename / update.
    let out = k(&["projects", "create", "--name=Support bot"]);
    assert_eq!(out.code, 0, "{out:?}");
    let made = out.json();
    let id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(made["slug"], "support-bot", "{made}");
    assert_eq!(k(&["projects", "get", &id]).json(), made);
    let listed = k(&["projects", "list"]).json();
    assert!(
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == id.as_str()),
        "{listed}"
    );
    let default = k(&["projects", "get-default"]).json();
    assert!(default["id"].is_string(), "{default}");
    let out = k(&["projects", "rename", &id, "--name=Help desk"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["name"], "Help desk");
    let out = k(&["projects", "update", &id, "--slug=help-desk"]);
    assert_eq!(out.json()["slug"], "help-desk", "{out:?}");
    let out = k(&["projects", "create"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("--name=<name> is required"),
        "{}",
        out.stderr
    );
    let out = k(&["projects", "rename", &id]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("Give --name, --slug, or both"),
        "{}",
        out.stderr
    );
    let out = k(&["projects", "create", "--name=x", "--slug=-bad"]);
    assert_eq!(out.code, 2, "{out:?}");
    let out = k(&["projects", "get", "00000000-0000-4000-8000-000000000000"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.starts_with("Error [project-not-found]: "),
        "{}",
        out.stderr
    );

    // tenant: get, rename (update), refusals.
    let tenant = k(&["tenant", "get"]).json();
    assert!(tenant["id"].is_string(), "{tenant}");
    let out = k(&["tenant", "rename", "--name=Acme"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["name"], "Acme");
    assert_eq!(out.json()["id"], tenant["id"]);
    let out = k(&["tenant", "update", "--slug=acme"]);
    assert_eq!(out.json()["slug"], "acme", "{out:?}");
    assert_eq!(k(&["tenant", "rename"]).code, 2);
    assert_eq!(k(&["tenant", "rename", "--slug=a--b"]).code, 2);

    // guardrails: register from a file (the Default project's), list (--table), get, unregister.
    let spec = dir.path().join("g.json");
    std::fs::write(
        &spec,
        json!({"id": "acme.few-calls", "kind": "zero-llm", "check": "max-tool-calls",
               "config": {"max": 3}, "action": {"on-violation": "halt"}, "severity": "error"})
        .to_string(),
    )
    .unwrap();
    let out = k(&[
        "guardrails",
        "register",
        &format!("--spec=@{}", spec.display()),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["guardrailId"], "acme.few-calls");
    let out = k(&["guardrails", "list", "--table"]);
    assert!(out.stdout.starts_with("ID"), "{out:?}");
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(
        rows.contains(&vec![
            "acme.few-calls",
            "zero-llm",
            "max-tool-calls",
            "halt",
            "error"
        ]),
        "{}",
        out.stdout
    );
    assert_eq!(
        k(&["guardrails", "get", "acme.few-calls"]).json()["check"],
        "max-tool-calls"
    );
    assert_eq!(k(&["guardrails", "register"]).code, 2);
    let out = k(&["guardrails", "unregister", "acme.few-calls"]);
    assert_eq!(out.json()["unregistered"], true, "{out:?}");
    let out = k(&["guardrails", "get", "acme.few-calls"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.starts_with("Error [not-found]: "),
        "{}",
        out.stderr
    );

    // conversations: an agent to talk to, then open, list, get, messages, close, unregister.
    let tool = support::repo_root().join("examples/tools/orders-lookup.json");
    let out = k(&["tools", "register", tool.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    let project = default["id"].as_str().unwrap();
    let (status, answer) = post(
        &server.url,
        &key,
        "/v1/agents",
        json!({
            "projectId": project, "id": "acme.helper", "version": "1.0.0", "name": "Helper",
            "instructions": "Answer briefly.", "capabilities": [{"kind": "llm-inference"}],
            "tools": [{"id": "acme.orders-lookup", "version": "^1.0.0"}],
            "retrieval": [], "guardrails": []
        }),
    );
    assert_eq!(status, 201, "{answer}");
    let out = k(&[
        "conversations",
        "open",
        "acme.helper",
        "1.0.0",
        "--title=Orders",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let conversation = out.json();
    let cid = conversation["id"].as_str().unwrap().to_owned();
    assert_eq!(conversation["title"], "Orders");
    let page = k(&["conversations", "list", "--status=open"]).json();
    assert_eq!(page["data"][0]["id"], cid.as_str(), "{page}");
    assert_eq!(
        k(&["conversations", "get", &cid]).json()["id"],
        cid.as_str()
    );
    assert_eq!(
        k(&["conversations", "messages", &cid]).json()["data"],
        json!([])
    );
    assert_eq!(
        k(&["conversations", "close", &cid]).json()["status"],
        "closed"
    );
    let out = k(&["conversations", "list", "--status=shut"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("--status must be one of open, closed, got \"shut\""),
        "{}",
        out.stderr
    );
    assert_eq!(k(&["conversations", "open", "acme.helper"]).code, 2);
    let out = k(&["conversations", "unregister", &cid]);
    assert_eq!(out.code, 1, "{out:?}");

    // The same reads print the same JSON as the official CLI's.
    if let Some(cli) = official_cli() {
        for args in [
            &["projects", "list"][..],
            &["projects", "get-default"][..],
            &["projects", "get", &id][..],
            &["tenant", "get"][..],
            &["guardrails", "list"][..],
            &["conversations", "list"][..],
            &["conversations", "get", &cid][..],
        ] {
            let theirs = Command::new(&cli)
                .args(args)
                .current_dir(dir.path())
                .env("HOME", dir.path())
                .env("KINDGI_API_URL", &server.url)
                .env("KINDGI_API_TOKEN", &key)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(
                theirs.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&theirs.stderr)
            );
            let theirs: Value = serde_json::from_slice(&theirs.stdout).unwrap();
            assert_eq!(k(args).json(), theirs, "{args:?}");
        }
    }
    server.stop();
}
