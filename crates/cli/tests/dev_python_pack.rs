//! `kindgi dev` with the Python example pack (the official SDK, `kindgi==0.1.10`): the
//! guide's dry runs, a live run, and a pack service killed mid-call. Needs
//! `KINDGI_REFERENCE_PYTHON` (skipped without it, failed when `KINDGI_REQUIRE_REFERENCE=1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;
use std::time::{Duration, Instant};

#[test]
fn the_python_example_pack_runs_the_guides_dry_runs() {
    let Some(python) = reference_python("the_python_example_pack_runs_the_guides_dry_runs") else {
        return;
    };
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    let py = python.display().to_string();
    let dev = start_dev(tmp.path(), &[("KINDGI_PYTHON", &py)], &["--no-watch"]);
    guide_dry_runs(tmp.path());
    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--flow=my-pack.echo-flow",
            "--input={\"name\":\"Ada\"}",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let run = out.json();
    assert_eq!(run["dryRun"], false);
    assert_eq!(run["output"]["greeting"], "Hello, Ada!");
    // Live, the dev stand-in model answers (it is not the dry-run text).
    assert_ne!(run["output"]["reply"], "[dry-run: model call skipped]");
    // Ctrl-C: a clean stop too.
    let status = dev.stop_with("INT");
    assert!(status.success(), "{status}");
}

const SLOW_TOOL: &str = r#"
"""my-pack.slow: sleeps, so a test can kill the service mid-call."""
import time
from pydantic import BaseModel
from kindgi import ToolContext, tool

class Nothing(BaseModel):
    pass

class Done(BaseModel):
    done: bool

@tool(id="my-pack.slow", version="0.1.0", mutating=False)
def slow(_: Nothing, ctx: ToolContext) -> Done:
    """Sleeps a minute."""
    time.sleep(60)
    return Done(done=True)
"#;

const SLOW_FLOW: &str = r#"
from kindgi import Flow

slow_flow = Flow(
    id="my-pack.slow-flow",
    version="0.1.0",
    nodes=[{"id": "slow", "kind": "tool", "ref": "my-pack.slow"}],
    edges=[
        {"id": "e1", "from": "$start", "to": "slow"},
        {"id": "e2", "from": "slow", "to": "$end"},
    ],
)
"#;

#[test]
fn a_pack_service_killed_mid_call_fails_the_run_clearly_and_is_restarted() {
    let Some(python) =
        reference_python("a_pack_service_killed_mid_call_fails_the_run_clearly_and_is_restarted")
    else {
        return;
    };
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    std::fs::write(tmp.path().join("tools/slow.py"), SLOW_TOOL).unwrap();
    std::fs::write(tmp.path().join("flows/slow_flow.py"), SLOW_FLOW).unwrap();
    let py = python.display().to_string();
    let dev = start_dev(tmp.path(), &[("KINDGI_PYTHON", &py)], &["--no-watch"]);
    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--flow=my-pack.slow-flow",
            "--input={}",
            "--no-wait",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let id = out.json()["id"].as_str().unwrap().to_owned();
    // Give the call time to reach the service (the runtime stores the record's `running`
    // status and the step's journal entries lazily, so neither is a reliable signal here).
    std::thread::sleep(Duration::from_millis(2000));
    let pid = dev.pack_pid().expect("a pack service child");
    let killed_at = Instant::now();
    signal(pid, "KILL");
    let mut run = serde_json::Value::Null;
    while Instant::now() < killed_at + Duration::from_secs(20) {
        let got = kindgi_in(tmp.path(), &["runs", "get", &id]);
        run = serde_json::from_str(&got.stdout).unwrap_or_default();
        if run["status"] == "failed" {
            // `runs get` prints the run, whatever its status (only `runs start` exits 1).
            assert_eq!(got.code, 0);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        run["status"], "failed",
        "no hang: the run fails promptly; {run}"
    );
    let msg = run["failureMessage"].as_str().unwrap();
    assert!(msg.starts_with("pack-unreachable: "), "{msg}");
    assert!(msg.contains("my-pack.slow"), "names the tool: {msg}");
    assert!(
        msg.contains("may have run"),
        "says the call may have run: {msg}"
    );
    // The supervisor restarts the service; the pack serves again.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = kindgi_in(
            tmp.path(),
            &[
                "runs",
                "start",
                "--flow=my-pack.check-order",
                "--input={\"orderId\":\"ord_1001\"}",
            ],
        );
        if out.code == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never served again: {out:?}\n{}",
            dev.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = dev.stop();
    assert!(status.success(), "{status}");
}

#[test]
fn a_saved_change_is_rebuilt_reindexed_and_served() {
    let Some(python) = reference_python("a_saved_change_is_rebuilt_reindexed_and_served") else {
        return;
    };
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    let py = python.display().to_string();
    let dev = start_dev(tmp.path(), &[("KINDGI_PYTHON", &py)], &[]);
    let greet = |dir: &std::path::Path| {
        let out = kindgi_in(
            dir,
            &[
                "runs",
                "start",
                "--flow=my-pack.echo-flow",
                "--input={\"name\":\"Ada\"}",
                "--dry-run",
            ],
        );
        out.json()["output"]["greeting"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(greet(tmp.path()), "Hello, Ada!");
    let file = tmp.path().join("tools/greet.py");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("Hello, {person.name}!", "Hi, {person.name}!"),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if greet(tmp.path()) == "Hi, Ada!" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never reloaded:\n{}",
            dev.stderr()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        dev.stderr().contains("change detected: reloading"),
        "{}",
        dev.stderr()
    );
    let status = dev.stop();
    assert!(status.success(), "{status}");
}
