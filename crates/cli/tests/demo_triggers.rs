//! `scripts/demo-triggers` end to end, on a copy of the Python example pack (the official
//! SDK, `kindgi==0.1.10`; skipped without `KINDGI_REFERENCE_PYTHON`, failed when
//! `KINDGI_REQUIRE_REFERENCE=1`): the script registers a schedule and a webhook trigger with
//! our CLI, fires the schedule with `run-now`, posts a WooCommerce-signed delivery, and must
//! exit 0 with both runs completed — each printed with its trigger, `startedBy` and output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use std::process::{Command, Stdio};
use std::time::Duration;

use dev_common::spawn::{BIN, exit_within};
use dev_common::{copy_pack, reference_python, repo_root};
use serde_json::{Value, json};

/// The runs `$ kindgi runs get <id>` printed, in order: the JSON after each such line, up to
/// the next blank line.
fn runs_printed(stdout: &str) -> Vec<Value> {
    let mut runs = Vec::new();
    let mut lines = stdout.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("$ kindgi runs get ") {
            let text: Vec<&str> = lines.by_ref().take_while(|l| !l.is_empty()).collect();
            runs.push(
                serde_json::from_str(&text.join("\n"))
                    .unwrap_or_else(|e| panic!("{e}: {}", text.join("\n"))),
            );
        }
    }
    runs
}

#[test]
fn demo_triggers_runs_a_schedule_and_a_signed_webhook_to_completion() {
    let Some(python) =
        reference_python("demo_triggers_runs_a_schedule_and_a_signed_webhook_to_completion")
    else {
        return;
    };
    let pack = copy_pack(&repo_root().join("examples/my-pack-python"));
    let logs = tempfile::tempdir().unwrap();
    let (stdout_path, stderr_path) = (logs.path().join("out"), logs.path().join("err"));
    let mut child = Command::new(repo_root().join("scripts/demo-triggers"))
        .arg(pack.path())
        .env("KINDGI_BIN", BIN)
        .env("KINDGI_PYTHON", &python)
        .env("HOME", logs.path())
        // Pointing elsewhere: the script must not follow them (it uses the pack's dev runtime).
        .env("KINDGI_API_URL", "http://127.0.0.1:9")
        .env("KINDGI_API_TOKEN", "kgi_not_this_one")
        .env_remove("KINDGI_PUBLIC_URL")
        .env_remove("KINDGI_MODEL")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    // The script bounds each of its own waits; this bounds the whole (a cold pack start included).
    let status = exit_within(&mut child, Duration::from_secs(600));
    let stdout = std::fs::read_to_string(&stdout_path).unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    let status =
        status.unwrap_or_else(|| panic!("still running after 10 minutes:\n{stdout}\n{stderr}"));
    assert!(status.success(), "{status}\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("\nschedule run: completed; webhook run: completed\n"),
        "{stdout}"
    );

    let runs = runs_printed(&stdout);
    assert_eq!(runs.len(), 2, "{stdout}");
    let (scheduled, hooked) = (&runs[0], &runs[1]);
    assert_eq!(scheduled["flowId"], "my-pack.nightly-digest", "{scheduled}");
    assert_eq!(scheduled["status"], "completed", "{scheduled}");
    assert_eq!(scheduled["startedBy"], "schedule", "{scheduled}");
    assert_eq!(scheduled["trigger"]["kind"], "schedule", "{scheduled}");
    assert_eq!(
        scheduled["output"],
        json!({"orders": 2, "byStatus": {"shipped": 1, "processing": 1}, "totalCents": 5499})
    );
    assert_eq!(hooked["flowId"], "my-pack.webhook-order", "{hooked}");
    assert_eq!(hooked["status"], "completed", "{hooked}");
    assert_eq!(hooked["startedBy"], "webhook", "{hooked}");
    assert_eq!(hooked["trigger"]["kind"], "webhook", "{hooked}");
    assert_eq!(
        hooked["output"],
        json!({"status": "processing", "orderId": "ord_1002", "totalCents": 1299})
    );

    // The tables of `runs list --trigger=<id> --table`: one row each, its trigger's run.
    for run in [scheduled, hooked] {
        let trigger = run["trigger"]["triggerId"].as_str().unwrap();
        let id = run["id"].as_str().unwrap();
        let listed = stdout
            .split(&format!("$ kindgi runs list --trigger={trigger} --table\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no table for {trigger}:\n{stdout}"));
        let rows: Vec<&str> = listed
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        assert_eq!(rows.len(), 1, "{listed}");
        assert!(
            rows[0].starts_with(id) && rows[0].contains("completed"),
            "{rows:?}"
        );
    }
    // The delivery was accepted as a new fire (202), and the schedule was fired by hand.
    assert!(stdout.contains("\n202 {\"fireId\":"), "{stdout}");
    assert!(stdout.contains("\"manual\": true"), "{stdout}");
    // kindgi dev was stopped: nothing is left listening at the address it printed.
    let url = stdout
        .lines()
        .find_map(|l| l.strip_prefix("kindgi dev: listening on "))
        .unwrap();
    let addr = url.trim_start_matches("http://");
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "{addr} still listens"
    );
}
