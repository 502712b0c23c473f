//! `kindgi approvals list|get|complete` and `kindgi runs resume` — the official CLI
//! (`.venv/bin/kindgi`, PyPI `kindgi-cli==0.1.10`) unchanged, and ours, the same commands —
//! against our API on a loopback socket with a gated agent (SQLite): a turn started with
//! `runs start` parks on its approval; `runs resume` exits 3 naming it; the approval is
//! listed, read and approved; `runs resume` then exits 0; a second decision is `Error
//! [approval-already-decided]`; a run paused on a tool exits 4. HOME is a fresh directory.
//! The official CLI's test fails, not skips, under `KINDGI_REQUIRE_REFERENCE=1` when it
//! is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-api/tests/support/gated.rs"]
mod gated;

use std::path::PathBuf;

use gated::{AGENT, Server, server};
use kindgi_store::DatabaseKind;
use serde_json::Value;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

struct Cli {
    bin: PathBuf,
    home: tempfile::TempDir,
}

impl Cli {
    async fn run(&self, s: &Server, args: &[&str]) -> Out {
        let out = tokio::process::Command::new(&self.bin)
            .args(args)
            .current_dir(self.home.path())
            .env("HOME", self.home.path())
            .env("KINDGI_API_URL", &s.url)
            .env("KINDGI_API_TOKEN", &s.admin)
            .env("NO_COLOR", "1")
            .output()
            .await
            .unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs `args`, expects exit `code`, and reads stdout as JSON.
    async fn json(&self, s: &Server, args: &[&str], code: i32) -> Value {
        let out = self.run(s, args).await;
        assert_eq!(out.code, code, "{args:?}: {}\n{}", out.stdout, out.stderr);
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}\n{}", out.stdout, out.stderr))
    }
}

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

/// The whole story, the same for both CLIs.
async fn gated_run_approved_from_the_cli(bin: PathBuf) {
    let s = server(DatabaseKind::Sqlite).await;
    let cli = Cli {
        bin,
        home: tempfile::tempdir().unwrap(),
    };
    let input = r#"--input={"userMessage":"write it"}"#;
    let run = cli
        .json(
            &s,
            &["runs", "start", &format!("--agent={AGENT}"), input],
            0,
        )
        .await;
    assert_eq!(run["status"], "suspended", "{run}");
    let run_id = run["id"].as_str().unwrap().to_owned();

    // It waits on an approval: exit 3, naming it.
    let waits = cli.json(&s, &["runs", "resume", &run_id], 3).await;
    assert_eq!(waits["kind"], "approval", "{waits}");
    let approval = waits["approvals"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(waits["approvals"][0]["tool"]["id"], gated::GATED_TOOL);

    let page = cli.json(&s, &["approvals", "list"], 0).await;
    assert_eq!(page["data"][0]["id"], approval.as_str(), "{page}");
    let page = cli
        .json(&s, &["approvals", "list", "--status=pending,in_review"], 0)
        .await;
    assert_eq!(page["data"].as_array().unwrap().len(), 1, "{page}");
    let one = cli.json(&s, &["approvals", "get", &approval], 0).await;
    assert_eq!(one["status"], "pending");
    assert_eq!(one["provenanceRef"]["runId"], run_id.as_str());
    assert_eq!(s.writes(), 0);

    let done = cli
        .json(
            &s,
            &[
                "approvals",
                "complete",
                &approval,
                "--decision=approve",
                "--rationale=looks right",
            ],
            0,
        )
        .await;
    assert_eq!(done["kind"], "terminal", "{done}");
    assert_eq!(done["approval"]["status"], "approved");
    assert_eq!(done["resume"]["kind"], "ok");
    assert_eq!(s.writes(), 1);

    // Not waiting any more: exit 0.
    let waits = cli.json(&s, &["runs", "resume", &run_id], 0).await;
    assert_eq!(waits["kind"], "not-waiting", "{waits}");
    assert_eq!(waits["status"], "completed");

    // Decided already: the wire code, exit 1, nothing runs again.
    let out = cli
        .run(
            &s,
            &["approvals", "complete", &approval, "--decision=reject"],
        )
        .await;
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains("Error [approval-already-decided]"),
        "{}",
        out.stderr
    );
    assert_eq!(s.writes(), 1);
    let mine = cli
        .json(&s, &["approvals", "list", "--decided-by=me"], 0)
        .await;
    assert_eq!(mine["decidedBy"], "me", "{mine}");
    let out = cli
        .run(
            &s,
            &["approvals", "get", "00000000-0000-4000-8000-000000000000"],
        )
        .await;
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("Error [not-found]"), "{}", out.stderr);

    // Usage errors, worded and coded as the official CLI does.
    let out = cli.run(&s, &["approvals", "complete", &approval]).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("--decision=approve|reject|escalate|withdraw is required"),
        "{}",
        out.stderr
    );
    let out = cli.run(&s, &["approvals", "list", "--status=open"]).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("--status must be one of"),
        "{}",
        out.stderr
    );

    // A run paused on a tool waits on something else: exit 4.
    let (paused, _) = s.paused_run().await;
    let waits = cli.json(&s, &["runs", "resume", &paused], 4).await;
    assert_eq!(waits["kind"], "runtime", "{waits}");
    assert_eq!(waits["waits"][0]["what"], "tool-pause", "{waits}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_cli_approves_a_gated_run() {
    let Some(bin) = official_cli() else { return };
    gated_run_approved_from_the_cli(bin).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_cli_approves_a_gated_run() {
    gated_run_approved_from_the_cli(PathBuf::from(env!("CARGO_BIN_EXE_kindgi"))).await;
}
