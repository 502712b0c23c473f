//! The official CLI (PyPI `kindgi-cli` 0.1.10) against our API on a real loopback socket:
//! `tools|flows|agents publish` (which read `GET /v1/projects/default` first), `list`, `get`,
//! `versions`, `unregister` and `reinstate` work unchanged, and a read-only registry's refusal
//! reaches the user as the CLI prints it.
//!
//! The CLI is `bin/kindgi` beside `$KINDGI_REFERENCE_PYTHON` (see `.cache/reference.env`),
//! else the workspace's `.venv/bin/kindgi`; without it the test is skipped with a note, and
//! fails when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use kindgi_api::{AppState, router};
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};
use support::{body, serve_loopback};

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

/// Runs the CLI with `args` against `url`/`key` in an empty home and folder (a `--json`
/// anywhere goes last: the CLI takes global flags after the command).
async fn run(cli: &Path, home: &Path, url: &str, key: &str, args: &[&str]) -> Output {
    let mut cmd = tokio::process::Command::new(cli);
    cmd.args(args.iter().filter(|a| **a != "--json"));
    if args.contains(&"--json") {
        cmd.arg("--json");
    }
    cmd.current_dir(home)
        .env("HOME", home)
        .env("KINDGI_API_URL", url)
        .env("KINDGI_API_TOKEN", key)
        .env_remove("KINDGI_PROFILE")
        .kill_on_drop(true);
    cmd.output().await.unwrap()
}

fn json_out(o: &Output) -> Value {
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {text}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn the_official_cli_publishes_and_reads_the_registries() {
    let Some(cli) = official_cli() else { return };
    let t = TestDatabase::sqlite().await.unwrap();
    let state = AppState::new(t.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let served = serve_loopback(router(state.clone())).await;
    let url = served.url.clone();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    // Tools: the manifest without a project; the CLI asks for the Default project.
    let mut tool = body("acme.lookup-order", "1.0.0");
    tool.as_object_mut().unwrap().remove("projectId");
    let spec = format!("--manifest={tool}");
    let out = json_out(&run(&cli, h, &url, &key, &["tools", "publish", &spec, "--json"]).await);
    assert_eq!(out["toolId"], "acme.lookup-order", "{out}");
    let out = json_out(
        &run(
            &cli,
            h,
            &url,
            &key,
            &[
                "--json",
                "tools",
                "get-version",
                "acme.lookup-order",
                "1.0.0",
            ],
        )
        .await,
    );
    assert_eq!(out["mutating"], false, "{out}");

    // Flows: publish from a file, list, get, versions, unregister, reinstate.
    let flow = json!({
        "id": "acme.check-order", "version": "1.0.0", "name": "Check an order",
        "nodes": [{"id": "lookup", "kind": "tool", "ref": "acme.lookup-order"}],
        "edges": [{"id": "e1", "from": "$start", "to": "lookup"}, {"id": "e2", "from": "lookup", "to": "$end"}]
    });
    let file = h.join("flow.json");
    std::fs::write(&file, flow.to_string()).unwrap();
    let spec = format!("--spec=@{}", file.display());
    let out = json_out(&run(&cli, h, &url, &key, &["flows", "publish", &spec, "--json"]).await);
    assert_eq!(out["flowId"], "acme.check-order", "{out}");
    let out = json_out(&run(&cli, h, &url, &key, &["flows", "list", "--json"]).await);
    assert_eq!(out["data"][0]["id"], "acme.check-order", "{out}");
    let out = json_out(
        &run(
            &cli,
            h,
            &url,
            &key,
            &["flows", "get", "acme.check-order", "--json"],
        )
        .await,
    );
    assert_eq!(out["pins"]["tools"]["acme.lookup-order"], "1.0.0", "{out}");
    let out = json_out(
        &run(
            &cli,
            h,
            &url,
            &key,
            &["flows", "unregister", "acme.check-order", "1.0.0", "--json"],
        )
        .await,
    );
    assert_eq!(out["unregistered"], true, "{out}");
    let out = json_out(
        &run(
            &cli,
            h,
            &url,
            &key,
            &[
                "--json",
                "flows",
                "versions",
                "acme.check-order",
                "--include-unregistered",
            ],
        )
        .await,
    );
    assert!(out["data"][0]["unregisteredAt"].is_string(), "{out}");
    let out = json_out(
        &run(
            &cli,
            h,
            &url,
            &key,
            &["flows", "reinstate", "acme.check-order", "1.0.0", "--json"],
        )
        .await,
    );
    assert_eq!(out["wasTombstoned"], true, "{out}");

    // Agents.
    let agent = json!({
        "id": "acme.helper", "version": "1.0.0", "name": "Helper", "instructions": "Answer.",
        "capabilities": [{"kind": "llm-inference"}], "tools": [{"id": "acme.lookup-order", "version": "^1.0.0"}],
        "retrieval": [], "guardrails": []
    });
    let spec = format!("--spec={agent}");
    let out = json_out(&run(&cli, h, &url, &key, &["agents", "publish", &spec, "--json"]).await);
    assert_eq!(out["agentId"], "acme.helper", "{out}");
    let out = json_out(
        &run(
            &cli,
            h,
            &url,
            &key,
            &["agents", "get", "acme.helper", "--json"],
        )
        .await,
    );
    assert_eq!(out["version"], "1.0.0", "{out}");

    // A read-only registry: the refusal is the CLI's error, exit 1.
    let ro = state.clone().read_only_registry(true);
    let ro_served = serve_loopback(router(ro)).await;
    let ro_url = ro_served.url.clone();
    let spec = format!("--manifest={tool}");
    let o = run(&cli, h, &ro_url, &key, &["tools", "publish", &spec]).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("registry-read-only"), "{err}");
    served.stop().await;
    ro_served.stop().await;
    t.cleanup().await.unwrap();
}
