//! The official CLI (PyPI `kindgi-cli==0.1.10`, `.venv/bin/kindgi`) against our `/v1/runs`
//! on a loopback server (SQLite): `runs start` (it always sends `options.wait:false`, then
//! polls `GET /v1/runs/{id}`), a failed run's `Error [<failure.code>]`, `runs get`, `list`,
//! `journal`, `stream`, `cancel`, and a 404. Skipped without the CLI, failed when
//! `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set. Override the path with `KINDGI_OFFICIAL_CLI`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use serde_json::{Value, json};

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

fn tool(id: &str, read_only: bool) -> Tool {
    let b = Tool::define(id)
        .version("1.0.0")
        .description("test tool")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}));
    let b = if read_only {
        b.mutating(false)
    } else {
        b.effect(kindgi_spec::tool::EffectKind::Writes, "orders")
    };
    b.handler(|input: Value, _ctx| async move { Ok::<Value, HandlerError>(json!({"echo": input})) })
        .build()
        .unwrap()
}

struct Cli {
    bin: PathBuf,
    url: String,
    key: String,
    home: tempfile::TempDir,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Cli {
    async fn run(&self, args: &[&str]) -> Out {
        let out = tokio::process::Command::new(&self.bin)
            .args(args)
            .current_dir(self.home.path())
            .env("HOME", self.home.path())
            .env("KINDGI_API_URL", &self.url)
            .env("KINDGI_API_TOKEN", &self.key)
            .output()
            .await
            .unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    async fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args).await;
        assert_eq!(out.code, 0, "{args:?}: {}\n{}", out.stdout, out.stderr);
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", out.stdout))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_cli_drives_runs() {
    let Some(bin) = official_cli() else { return };
    let db = TestDatabase::sqlite().await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    rt.tools().insert_tool(tool("my-pack.lookup-order", true));
    rt.tools()
        .insert_tool(tool("my-pack.add-order-note", false));
    for (id, t) in [
        ("my-pack.check-order", "my-pack.lookup-order"),
        ("my-pack.note-order", "my-pack.add-order-note"),
    ] {
        let flow = json!({
            "id": id, "version": "1.0.0",
            "nodes": [{"id": "n", "kind": "tool", "ref": t}],
            "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
        });
        rt.flows().insert_json(&flow.to_string()).unwrap();
    }
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let app = router(state.with_runtime(rt));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let cli = Cli {
        bin,
        url,
        key,
        home: tempfile::tempdir().unwrap(),
    };

    let run = cli
        .json(&[
            "runs",
            "start",
            "--flow=my-pack.check-order",
            "--input={\"orderId\":\"o1\"}",
        ])
        .await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["output"], json!({"echo": {"orderId": "o1"}}));
    let id = run["id"].as_str().unwrap().to_owned();

    let failed = cli
        .run(&[
            "runs",
            "start",
            "--flow=my-pack.note-order",
            "--input={}",
            "--dry-run",
        ])
        .await;
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    assert!(
        failed.stderr.contains(
            "Error [run-failed]: dry-run-effectful-tool: tool \"my-pack.add-order-note\""
        ),
        "{}",
        failed.stderr
    );

    let got = cli.json(&["runs", "get", &id]).await;
    assert_eq!(got["id"], id.as_str());
    let list = cli.json(&["runs", "list", "--limit=1"]).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["hasMore"], true, "{list}");
    let journal = cli.json(&["runs", "journal", &id, "--limit=2"]).await;
    assert_eq!(journal["data"][0]["kind"], "run.started", "{journal}");
    assert_eq!(journal["hasMore"], true);
    let stream = cli.run(&["runs", "stream", &id]).await;
    assert_eq!(stream.code, 0, "{}", stream.stderr);
    assert!(stream.stdout.contains("run.completed"), "{}", stream.stdout);
    let cancel = cli.run(&["runs", "cancel", &id]).await;
    assert_eq!(cancel.code, 1);
    assert!(
        cancel
            .stderr
            .contains("Error [run-already-terminal]: Cannot cancel run: already completed"),
        "{}",
        cancel.stderr
    );
    let missing = cli
        .run(&["runs", "get", "7f0c8a9e-3b1d-4c55-9e2a-0d6b8f1e2a33"])
        .await;
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .stderr
            .contains("Error [not-found]: No run with id 7f0c8a9e-3b1d-4c55-9e2a-0d6b8f1e2a33"),
        "{}",
        missing.stderr
    );
    db.cleanup().await.unwrap();
}
