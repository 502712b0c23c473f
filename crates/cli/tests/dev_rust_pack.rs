//! `kindgi dev examples/my-pack` end to end: the real binary builds the Rust example pack
//! (one `cargo build` in the shared target dir), supervises its service and serves the API;
//! the real `kindgi runs` talks to it through `.kindgirc.json`.
//!
//! One test function: the pack folder is shared (its `.kindgi/` state and discovery file),
//! so the scenarios run one after another.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;
use std::time::{Duration, Instant};

#[test]
fn the_rust_example_pack_runs_the_guides_dry_runs_and_survives_its_service_dying() {
    let dir = repo_root().join("examples/my-pack");
    let dev = start_dev(&dir, &[], &["--no-watch", "--reset"]);
    let rc = dir.join(".kindgirc.json");
    assert!(rc.is_file(), "the discovery file is written");

    // The guide's three dry runs, exactly.
    guide_dry_runs(&dir);

    // From a folder below the pack, nothing is found: like the official CLI, `kindgi`
    // reads `.kindgirc.json` in the current folder only, and says how to point it.
    let below = dir.join("src");
    let lost = kindgi_in(&below, &["runs", "list"]);
    assert_eq!(lost.code, 1, "{lost:?}");
    assert!(lost.stderr.contains("API URL not configured"), "{lost:?}");
    // A live run of check-order, in the pack folder.
    let out = kindgi_in(
        &dir,
        &[
            "runs",
            "start",
            "--flow=my-pack.check-order",
            "--input={\"orderId\":\"ord_1001\"}",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let run = out.json();
    assert_eq!(run["status"], "completed");
    assert_eq!(run["dryRun"], false);
    assert_eq!(run["output"]["totalCents"], 4200);
    let id = run["id"].as_str().unwrap().to_owned();
    let got = kindgi_in(&dir, &["runs", "get", &id]);
    assert_eq!(got.code, 0);
    assert_eq!(got.json(), run, "runs get prints the same record");

    // A live note-order does run the mutating tool.
    let out = kindgi_in(
        &dir,
        &[
            "runs",
            "start",
            "--flow=my-pack.note-order",
            "--input={\"orderId\":\"ord_1001\",\"text\":\"Customer called\"}",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["output"]["orderId"], "ord_1001");

    // A tool failure in the pack fails the run with the pack's code and message.
    let out = kindgi_in(
        &dir,
        &[
            "runs",
            "start",
            "--flow=my-pack.check-order",
            "--input={\"orderId\":\"ord_nope\"}",
        ],
    );
    assert_eq!(out.code, 1, "{out:?}");
    let msg = out.json()["failureMessage"].as_str().unwrap().to_owned();
    assert!(
        msg.contains("no order \\\"ord_nope\\\"") || msg.contains("no order \"ord_nope\""),
        "{msg}"
    );
    assert!(
        out.stderr.starts_with("Error [run-failed]: "),
        "{}",
        out.stderr
    );

    // Refusals before a run exists: exit 1 with the API's code.
    let out = kindgi_in(
        &dir,
        &["runs", "start", "--flow=my-pack.nope", "--input={}"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        // 404 codes print as `not-found`, as the official CLI does.
        out.stderr.contains("Error [not-found]"),
        "{}",
        out.stderr
    );
    let out = kindgi_in(
        &dir,
        &["runs", "get", "7f0c8a9e-3b1d-4c55-9e2a-0d6b8f1e2a33"],
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("Error [not-found]"), "{}", out.stderr);

    // --no-wait prints the run as started.
    let out = kindgi_in(
        &dir,
        &[
            "runs",
            "start",
            "--flow=my-pack.check-order",
            "--input={\"orderId\":\"ord_1001\"}",
            "--dry-run",
            "--no-wait",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        ["pending", "running", "completed"].contains(&out.json()["status"].as_str().unwrap()),
        "{}",
        out.stdout
    );

    // Kill the pack service: the supervisor restarts it and runs work again.
    let pid = dev
        .pack_pid()
        .expect("the pack service is a child of kindgi dev");
    signal(pid, "KILL");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = dev.pack_pid();
        if now.is_some() && now != Some(pid) {
            break;
        }
        assert!(Instant::now() < deadline, "no restart:\n{}", dev.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut ok = false;
    while Instant::now() < deadline {
        let out = kindgi_in(
            &dir,
            &[
                "runs",
                "start",
                "--flow=my-pack.check-order",
                "--input={\"orderId\":\"ord_1001\"}",
                "--dry-run",
            ],
        );
        if out.code == 0 {
            ok = true;
            break;
        }
        // While the new child boots, a call is refused as unavailable (it did not run).
        assert!(out.stdout.contains("pack-unreachable"), "{out:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(ok, "runs work again after the restart:\n{}", dev.stderr());
    assert!(
        dev.stderr().contains("restarting it in 500 ms"),
        "{}",
        dev.stderr()
    );

    let status = dev.stop();
    assert!(status.success(), "SIGTERM → exit 0, got {status}");
    assert!(!rc.exists(), "the discovery file is removed on exit");
}
