//! The supervisor's restart budget with a real child process (`/bin/sh`) that says it
//! listens and exits when the test asks it to (a `crash` file appears in its folder):
//! restarts are counted, the budget is whole again after the service ran healthy for the
//! reset window, and giving up says what to do — under `--no-watch`, restart `kindgi dev`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kindgi_dev::prepare::{Prepared, read_index};
use kindgi_dev::supervisor::{ServiceSlot, Supervisor, SupervisorConfig};

/// Writes its `listening` line, then exits 3 as soon as `./crash` exists (removing it).
const CHILD: &str = r#"echo '{"event":"listening","port":9,"message":"listening"}' >&2
while [ ! -e crash ]; do sleep 0.02; done
rm -f crash
exit 3"#;

fn child() -> Prepared {
    // Any valid index will do (the child ignores it); only the pack id shows.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap();
    let mut index = read_index(&root.join("examples/conformance-pack/index.json")).unwrap();
    index.pack_id = "crashy".into();
    Prepared {
        program: "/bin/sh".into(),
        // The supervisor appends `--index …`; they become the script's `$1…`.
        args: vec!["-c".into(), CHILD.into(), "crashy".into()],
        index_path: "index.json".into(),
        index,
        module_root: None,
    }
}

fn config(watching: bool) -> SupervisorConfig {
    SupervisorConfig {
        max_restarts: 2,
        restart_pause: Duration::from_millis(20),
        restart_reset: Duration::from_millis(600),
        watching,
        ..SupervisorConfig::default()
    }
}

/// The pid serving now, or why none does.
fn serving(slot: &ServiceSlot) -> Result<u32, String> {
    slot.get().map(|s| s.pid.unwrap_or(0))
}

/// Makes the child serving now exit, and waits until another one serves (its pid) or the
/// supervisor gave up (its reason).
async fn crash(dir: &Path, slot: &Arc<ServiceSlot>) -> Result<u32, String> {
    let before = serving(slot).expect("a child serves before the crash");
    std::fs::write(dir.join("crash"), "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match serving(slot) {
            Ok(pid) if pid != before => return Ok(pid),
            Err(why) if why.contains("times in a row") => return Err(why),
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "neither restarted nor gave up within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn the_restart_budget_is_whole_again_after_healthy_running() {
    let tmp = tempfile::tempdir().unwrap();
    let slot = ServiceSlot::new();
    let sup = Supervisor::start_with(child(), tmp.path(), slot.clone(), config(true))
        .await
        .unwrap();
    // Four crashes, each after longer up than the reset window: each is a first failure.
    for n in 1..=4 {
        tokio::time::sleep(Duration::from_millis(800)).await;
        let r = crash(tmp.path(), &slot).await;
        assert!(
            r.is_ok(),
            "crash {n} after healthy running was restarted: {r:?}"
        );
    }
    // Crashes in a row still run the budget out: the last restart counted one, so one more.
    assert!(crash(tmp.path(), &slot).await.is_ok());
    let why = crash(tmp.path(), &slot).await.unwrap_err();
    assert!(why.contains("restarted 2 times in a row"), "{why}");
    assert!(why.contains("save a file to reload it"), "{why}");
    sup.stop().await;
}

#[tokio::test]
async fn giving_up_under_no_watch_says_to_restart_kindgi_dev() {
    let tmp = tempfile::tempdir().unwrap();
    let slot = ServiceSlot::new();
    let sup = Supervisor::start_with(child(), tmp.path(), slot.clone(), config(false))
        .await
        .unwrap();
    assert!(crash(tmp.path(), &slot).await.is_ok());
    assert!(crash(tmp.path(), &slot).await.is_ok());
    let why = crash(tmp.path(), &slot).await.unwrap_err();
    assert!(!why.contains("save a file"), "{why}");
    assert!(why.contains("restart kindgi dev"), "{why}");
    assert!(why.contains("\"crashy\""), "names the pack: {why}");
    sup.stop().await;
}
