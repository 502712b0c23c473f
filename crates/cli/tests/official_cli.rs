//! The official CLI (PyPI `kindgi-cli==0.1.10`, installed by `scripts/setup-reference`)
//! against this runtime, unchanged: seed 004's three commands verbatim, then `runs
//! get|list|journal|resume`, `flows list`, `agents list`, `tools list|get|get-version` — run in
//! the pack folder with no flags — against `kindgi dev` on the Rust, Python and TypeScript
//! example packs, and against `kindgi server` on SQLite and on PostgreSQL with a pack service
//! it reaches by URL (the CLI finds the server through `kindgi auth login`'s
//! `~/.kindgi/config.json`, the way a user points it at a deployment).
//!
//! Each test fails, not skips, under `KINDGI_REQUIRE_REFERENCE=1` when the official CLI is
//! missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use dev_common::*;
use kindgi_store::testing::{TestDatabase, postgres_test_url};
use serde_json::{Value, json};

/// The official CLI next to the reference Python (`.venv/bin/kindgi`), or `None` (skip).
fn official_cli(test: &str) -> Option<PathBuf> {
    let python = reference_python(test)?;
    let cli = python.with_file_name("kindgi");
    assert!(
        cli.exists(),
        "{test}: the official CLI is not at {} (run scripts/setup-reference)",
        cli.display()
    );
    Some(cli)
}

/// One run of the official CLI in `cwd` with `HOME=home` and no API environment variables.
fn official(cli: &Path, cwd: &Path, home: &Path, args: &[&str]) -> Out {
    let out = Command::new(cli)
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ids(page: &Value, key: &str) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("not a page: {page}"))
        .iter()
        .filter_map(|e| e[key].as_str().map(str::to_owned))
        .collect()
}

/// Seed 004's three dry runs, verbatim, then the everyday read commands.
fn seed_004_and_reads(cli: &Path, dir: &Path, home: &Path) {
    let run = |args: &[&str]| official(cli, dir, home, args);

    let out = run(&[
        "runs",
        "start",
        "--flow=my-pack.check-order",
        "--input={\"orderId\":\"ord_1001\"}",
        "--dry-run",
    ]);
    assert_eq!(out.code, 0, "check-order: {out:?}");
    let checked = out.json();
    assert_eq!(checked["status"], "completed", "{checked}");
    assert_eq!(checked["dryRun"], true);
    assert_eq!(
        checked["output"],
        json!({"status": "shipped", "orderId": "ord_1001", "totalCents": 4200})
    );

    let out = run(&[
        "runs",
        "start",
        "--flow=my-pack.note-order",
        "--input={\"orderId\":\"ord_1001\",\"text\":\"Customer called\"}",
        "--dry-run",
    ]);
    assert_eq!(out.code, 1, "note-order: {out:?}");
    let noted = out.json();
    assert_eq!(noted["status"], "failed", "{noted}");
    assert_eq!(noted["dryRun"], true);
    assert_eq!(noted["failureMessage"], NOTE_REFUSAL);
    assert!(
        out.stderr
            .contains(&format!("Error [run-failed]: {NOTE_REFUSAL}")),
        "{out:?}"
    );

    let out = run(&[
        "runs",
        "start",
        "--flow=my-pack.echo-flow",
        "--input={\"name\":\"Ada\"}",
        "--dry-run",
    ]);
    assert_eq!(out.code, 0, "echo-flow: {out:?}");
    let echoed = out.json();
    assert_eq!(echoed["status"], "completed", "{echoed}");
    assert_eq!(
        echoed["output"],
        json!({"reply": "[dry-run: model call skipped]", "greeting": "Hello, Ada!"})
    );

    let id = checked["id"].as_str().unwrap();
    let out = run(&["runs", "get", id]);
    assert_eq!(out.code, 0, "runs get: {out:?}");
    assert_eq!(out.json()["id"], id);
    assert_eq!(out.json()["output"]["orderId"], "ord_1001");

    let out = run(&["runs", "list"]);
    assert_eq!(out.code, 0, "runs list: {out:?}");
    let listed = ids(&out.json(), "id");
    for r in [&checked, &noted, &echoed] {
        assert!(
            listed.contains(&r["id"].as_str().unwrap().to_owned()),
            "{listed:?}"
        );
    }

    let noted_id = noted["id"].as_str().unwrap();
    let out = run(&["runs", "journal", noted_id]);
    assert_eq!(out.code, 0, "runs journal: {out:?}");
    let journal = out.json();
    assert_eq!(journal["hasMore"], false);
    let kinds: Vec<(String, String)> = journal["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or("").to_owned(),
                e["nodeId"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(kinds.first().map(|k| k.0.as_str()), Some("run.started"));
    assert!(
        kinds.contains(&("step.completed".into(), "lookup".into())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("step.failed".into(), "note".into())),
        "{kinds:?}"
    );
    assert!(
        !kinds.contains(&("step.completed".into(), "note".into())),
        "{kinds:?}"
    );

    let out = run(&["runs", "resume", id]);
    assert_eq!(out.code, 0, "runs resume of a completed run: {out:?}");
    assert_eq!(out.json()["kind"], "not-waiting", "{out:?}");

    let out = run(&["flows", "list"]);
    assert_eq!(out.code, 0, "flows list: {out:?}");
    let flows = ids(&out.json(), "id");
    for f in [
        "my-pack.check-order",
        "my-pack.note-order",
        "my-pack.echo-flow",
    ] {
        assert!(flows.contains(&f.to_owned()), "{flows:?}");
    }

    let out = run(&["agents", "list"]);
    assert_eq!(out.code, 0, "agents list: {out:?}");
    assert!(
        ids(&out.json(), "id").contains(&"my-pack.echo-agent".to_owned()),
        "{out:?}"
    );

    let out = run(&["tools", "list"]);
    assert_eq!(out.code, 0, "tools list: {out:?}");
    let tools = out.json();
    let tool_ids = ids(&tools, "id");
    for t in ["my-pack.lookup-order", "my-pack.add-order-note"] {
        assert!(tool_ids.contains(&t.to_owned()), "{tools}");
    }
    let out = run(&["tools", "get", "my-pack.lookup-order"]);
    assert_eq!(out.code, 0, "tools get: {out:?}");
    let tool = out.json();
    assert_eq!(tool["id"], "my-pack.lookup-order", "{tool}");
    let version = tool["version"]
        .as_str()
        .or_else(|| tool["latestVersion"].as_str())
        .unwrap_or_else(|| panic!("no version in {tool}"))
        .to_owned();
    let out = run(&["tools", "get-version", "my-pack.lookup-order", &version]);
    assert_eq!(out.code, 0, "tools get-version: {out:?}");
    let got = out.json();
    assert_eq!(got["version"], version.as_str(), "{got}");
    assert_eq!(got["mutating"], false, "{got}");

    let out = run(&["runs", "get", "00000000-0000-4000-8000-000000000000"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("Error [not-found]"), "{out:?}");
}

/// `kindgi dev` in `dir`, then the official CLI there with no flags.
fn dev_case(cli: &Path, dir: &Path, envs: &[(&str, &str)]) {
    let home = tempfile::tempdir().unwrap();
    let dev = start_dev(dir, envs, &["--no-watch", "--reset"]);
    seed_004_and_reads(cli, dir, home.path());
    assert!(dev.stop().success());
}

#[test]
fn official_cli_against_dev_on_the_rust_pack() {
    let Some(cli) = official_cli("official_cli_against_dev_on_the_rust_pack") else {
        return;
    };
    // In place: the example is a workspace member (a copy would not build).
    dev_case(&cli, &repo_root().join("examples/my-pack"), &[]);
}

#[test]
fn official_cli_against_dev_on_the_python_pack() {
    let Some(python) = reference_python("official_cli_against_dev_on_the_python_pack") else {
        return;
    };
    let cli = official_cli("official_cli_against_dev_on_the_python_pack").unwrap();
    let py = python.display().to_string();
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    dev_case(&cli, tmp.path(), &[("KINDGI_PYTHON", &py)]);
}

#[test]
fn official_cli_against_dev_on_the_typescript_pack() {
    let Some(cli) = official_cli("official_cli_against_dev_on_the_typescript_pack") else {
        return;
    };
    let Some(r) = ts_reference("official_cli_against_dev_on_the_typescript_pack") else {
        return;
    };
    let tmp = ts_pack(&r);
    let node = r.node.display().to_string();
    dev_case(&cli, tmp.path(), &[("KINDGI_NODE", &node)]);
}

/// The Rust example's pack service (with `token`) on a free port, and its index.
fn start_pack_service(dir: &Path, token: &str) -> (support::PackService, PathBuf) {
    let exe = support::built("my-pack");
    let index = dir.join("index.json");
    let st = Command::new(&exe)
        .args(["index", "--out"])
        .arg(&index)
        .status()
        .unwrap();
    assert!(st.success(), "my-pack index");
    (support::PackService::start(&exe, &index, token, 0), index)
}

/// `kindgi server` over `database`, running the pack by its URL.
fn start_server(database: &str, pack: &support::PackService, index: &Path) -> support::Server {
    let url = pack.url();
    let index = index.display().to_string();
    support::Server::start_with(
        database,
        &[
            "--pack-url",
            &url,
            "--pack-token-env",
            "MY_PACK_TOKEN",
            "--pack-index",
            &index,
        ],
        &[("MY_PACK_TOKEN", "pack-secret-token")],
    )
}

fn server_case(database: &str, dir: &Path, cli: &Path) {
    let (pack, index) = start_pack_service(dir, "pack-secret-token");
    let server = start_server(database, &pack, &index);
    let key = kindgi_in(
        dir,
        &[
            "tokens",
            "create",
            "--database",
            database,
            "--tenant",
            "default",
        ],
    );
    assert_eq!(key.code, 0, "{key:?}");
    let token = key.stdout.trim().to_owned();
    assert!(!token.is_empty(), "{key:?}");
    let home = tempfile::tempdir().unwrap();
    let login = official(
        cli,
        dir,
        home.path(),
        &["auth", "login", "--url", &server.url, "--token", &token],
    );
    assert_eq!(login.code, 0, "auth login: {login:?}");
    seed_004_and_reads(cli, dir, home.path());
}

#[test]
fn official_cli_against_server_on_sqlite_with_a_pack_by_url() {
    let Some(cli) = official_cli("official_cli_against_server_on_sqlite_with_a_pack_by_url") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kindgi.db").display().to_string();
    server_case(&db, dir.path(), &cli);
}

#[test]
fn official_cli_against_server_on_postgres_with_a_pack_by_url() {
    let Some(cli) = official_cli("official_cli_against_server_on_postgres_with_a_pack_by_url")
    else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = rt.block_on(TestDatabase::postgres()).unwrap();
    let schema = t.schema().unwrap().to_owned();
    let base = postgres_test_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
    let dir = tempfile::tempdir().unwrap();
    server_case(&url, dir.path(), &cli);
    rt.block_on(t.cleanup()).unwrap();
}
