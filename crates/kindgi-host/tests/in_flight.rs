//! Runs whose pack call is in flight when they are cancelled or when the process stops, with
//! the real pieces: the conformance fixture's pack service (`target/debug/conformance-pack`,
//! built by `cargo build --workspace --bins`) supervised by [`Supervisor`], called through
//! [`PackServiceCaller`] and the real pack client, runs on a SQLite database.
//!
//! - A cancel mid-call ends the run `cancelled`; the step's journal entry says it was
//!   cancelled, never `pack-unreachable`.
//! - A graceful stop (`Runtime::shutdown`) mid-call leaves the run `running` with no terminal
//!   entry, and a new runtime on the same database resumes it to `completed` — as a crash
//!   would, never worse. The call is `conformance.hold`, held until the test creates its
//!   release file, so the stop always finds it in flight.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use kindgi_dev::prepare::{Prepared, read_index};
use kindgi_dev::supervisor::{ServiceSlot, Supervisor, SupervisorConfig};
use kindgi_pack_client::dispatch::PackServiceCaller;
use kindgi_runtime::{JournalKind, RunOptions, RunStatus, Runtime};
use kindgi_spec::ToolManifest;
use serde_json::{Value, json};
use support::repo_root;

fn fixture() -> Prepared {
    let exe = repo_root().join("target/debug/conformance-pack");
    assert!(
        exe.is_file(),
        "{} is not built (cargo build -p conformance-pack)",
        exe.display()
    );
    let index_path = repo_root().join("examples/conformance-pack/index.json");
    Prepared {
        program: exe,
        args: vec!["serve".into()],
        index: read_index(&index_path).unwrap(),
        index_path,
        module_root: None,
    }
}

/// The fixture's tool `id`, declared mutating here so that its `step.started` is stored
/// before the call goes out (the tests wait for it).
fn mutating_manifest(id: &str) -> ToolManifest {
    let tool = fixture()
        .index
        .tools
        .into_iter()
        .find(|t| t.id == id)
        .unwrap();
    let mut m = kindgi_pack_client::dispatch::manifest_of(&tool).unwrap();
    m.mutating = Some(true);
    m
}

/// A flow that sleeps `runInput.ms` (`conformance.sleep`).
const SLEEPY: &str = r#"{
  "id": "t.sleepy", "version": "1.0.0",
  "nodes": [{"id": "nap", "kind": "tool", "ref": "conformance.sleep",
             "inputMapping": {"ms": {"path": "runInput.ms"}}}],
  "edges": [{"id": "e1", "from": "$start", "to": "nap"}, {"id": "e2", "from": "nap", "to": "$end"}]
}"#;

/// A flow whose one call (`conformance.hold`) lasts until the file `runInput.release`
/// exists: the test decides when it ends, so no timing can end it early.
const HELD: &str = r#"{
  "id": "t.held", "version": "1.0.0",
  "nodes": [{"id": "hold", "kind": "tool", "ref": "conformance.hold",
             "inputMapping": {"release": {"path": "runInput.release"}}}],
  "edges": [{"id": "e1", "from": "$start", "to": "hold"}, {"id": "e2", "from": "hold", "to": "$end"}]
}"#;

struct Env {
    rt: Runtime,
    supervisor: Supervisor,
    db: kindgi_store::Database,
}

async fn env(db_path: &Path, dir: &Path) -> Env {
    let db = kindgi_store::Database::connect(&db_path.display().to_string())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let rt = Runtime::over(db.ports()).build();
    let slot = ServiceSlot::new();
    let caller = PackServiceCaller::new(slot.clone());
    let supervisor = Supervisor::start_with(fixture(), dir, slot, SupervisorConfig::default())
        .await
        .unwrap();
    rt.tools().insert_pack_tool(
        mutating_manifest("conformance.sleep"),
        "conformance",
        caller.clone(),
    );
    rt.tools()
        .insert_pack_tool(mutating_manifest("conformance.hold"), "conformance", caller);
    rt.flows().insert_json(SLEEPY).unwrap();
    rt.flows().insert_json(HELD).unwrap();
    Env { rt, supervisor, db }
}

/// Waits until the step's `step.started` is stored (the call is about to go out), then a
/// little longer so the call is in the service's hands.
async fn wait_for_call(rt: &Runtime, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let j = rt.journal(id, None, None).await.unwrap();
        if j.iter().any(|e| e.kind == JournalKind::StepStarted) {
            break;
        }
        assert!(Instant::now() < deadline, "the step never started: {j:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
}

fn text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_mid_pack_call_ends_it_cancelled_not_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let e = env(&tmp.path().join("dev.db"), tmp.path()).await;
    // Several runs, so the outcome does not hang on which of two ready branches a select
    // happened to poll first.
    for _ in 0..3 {
        let run =
            e.rt.start_run(
                "t.sleepy",
                None,
                json!({"ms": 30_000}),
                RunOptions::default(),
            )
            .await
            .unwrap();
        wait_for_call(&e.rt, &run.id).await;
        let cancelled = tokio::time::timeout(Duration::from_secs(10), e.rt.cancel_run(&run.id))
            .await
            .expect("the cancel answers within 10 s, not never")
            .unwrap();
        assert_eq!(
            cancelled.status,
            RunStatus::Cancelled,
            "{}",
            text(&cancelled)
        );
        assert_eq!(cancelled.failure_message, None);
        let stored = e.rt.get_run(&run.id).await.unwrap();
        assert_eq!(stored.status, RunStatus::Cancelled);
        let j = e.rt.journal(&run.id, None, None).await.unwrap();
        let all = text(&j);
        assert!(!all.contains("pack-unreachable"), "{all}");
        let step = j
            .iter()
            .find(|x| x.kind == JournalKind::StepFailed && x.node_id.as_deref() == Some("nap"))
            .unwrap_or_else(|| panic!("the in-flight step's end is journaled: {all}"));
        let p = step.payload.clone().unwrap_or(Value::Null);
        assert_eq!(p["reason"], "cancelled", "{all}");
        assert!(
            p["message"].as_str().unwrap().starts_with("cancelled: "),
            "{all}"
        );
        assert_eq!(j.last().unwrap().kind, JournalKind::RunCancelled, "{all}");
    }
    e.supervisor.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_mid_pack_call_leaves_the_run_to_resume_as_a_crash_would() {
    let tmp = tempfile::tempdir().unwrap();
    let db_path = tmp.path().join("dev.db");
    let release = tmp.path().join("release");
    let e = env(&db_path, tmp.path()).await;
    let run =
        e.rt.start_run(
            "t.held",
            None,
            json!({"release": release.display().to_string()}),
            RunOptions::default(),
        )
        .await
        .unwrap();
    wait_for_call(&e.rt, &run.id).await;
    // The call is held until the release file exists, so it is in flight whenever the stop
    // comes, however slowly this machine runs.
    let left = tokio::time::timeout(
        Duration::from_secs(10),
        e.rt.shutdown(Duration::from_secs(5)),
    )
    .await
    .expect("the stop finishes within 10 s, not never");
    assert_eq!(left, vec![run.id.clone()]);
    // What the process leaves behind: `running`, no terminal entry, no failed step.
    let stored = e.rt.get_run(&run.id).await.unwrap();
    assert_eq!(stored.status, RunStatus::Running, "{}", text(&stored));
    assert_eq!(stored.failure_message, None);
    let j = e.rt.journal(&run.id, None, None).await.unwrap();
    let all = text(&j);
    assert!(
        !j.iter().any(|x| matches!(
            x.kind,
            JournalKind::StepFailed
                | JournalKind::RunFailed
                | JournalKind::RunCancelled
                | JournalKind::RunCompleted
        )),
        "{all}"
    );
    e.supervisor.stop().await;
    e.db.close().await;

    // The next start resumes it.
    let e = env(&db_path, tmp.path()).await;
    let resumed = e.rt.recover().await.unwrap();
    assert_eq!(resumed, vec![run.id.clone()]);
    // The resumed run calls again; releasing that call lets it complete.
    std::fs::write(&release, b"").unwrap();
    let done = tokio::time::timeout(Duration::from_secs(20), e.rt.wait_for_run(&run.id))
        .await
        .expect("the resumed run ends within 20 s")
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed, "{}", text(&done));
    assert_eq!(done.output, Some(json!({"released": true})));
    e.supervisor.stop().await;
}
