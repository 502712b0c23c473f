//! `kindgi runs` against a scripted loopback API: the official wire (cases 108, 109, 112),
//! usage errors (exit 2), network failures (exit 1) and `Error [<tag>]` printing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use api_common::*;
use serde_json::json;

const RUN: &str = "11111111-1111-4111-8111-111111111111";

fn run_json(status: &str, extra: serde_json::Value) -> String {
    let mut r = json!({"id": RUN, "tenantId": "acme", "flowId": "f", "flowVersion": "1.0.0", "status": status, "dryRun": false, "createdAt": "t", "updatedAt": "t"});
    if let (Some(o), Some(e)) = (r.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    r.to_string()
}

/// A server that starts a run `pending`, then answers `running` once, then `last`.
fn runs_server(last: &'static str, extra: serde_json::Value) -> Mock {
    let reads = Arc::new(AtomicUsize::new(0));
    Mock::start(move |s| match (s.method.as_str(), s.path.as_str()) {
        ("POST", "/v1/runs") => (201, run_json("pending", json!({}))),
        ("GET", p) if p == format!("/v1/runs/{RUN}") => {
            match reads.fetch_add(1, Ordering::SeqCst) {
                0 => (200, run_json("running", json!({}))),
                _ => (200, run_json(last, extra.clone())),
            }
        }
        _ => (404, envelope("route-not-found", "no")),
    })
}

fn run(m: &Mock, args: &[&str]) -> Out {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    kindgi(
        dir.path(),
        home.path(),
        args,
        &[("KINDGI_API_URL", &m.url), ("KINDGI_API_TOKEN", "tok")],
    )
}

#[test]
fn start_sends_wait_false_then_polls_and_prints_the_run() {
    let m = runs_server(
        "completed",
        json!({"output": {"reply": "hi", "warnings": [{"message": "careful"}]}}),
    );
    let out = run(
        &m,
        &[
            "runs",
            "start",
            "--agent=a.b",
            "--input={\"userMessage\":\"hi\"}",
            "--segment=company:acme",
            "--idempotency-key=k1",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["status"], "completed");
    assert_eq!(out.json()["output"]["reply"], "hi");
    assert!(out.stderr.contains("⚠ careful"), "{}", out.stderr);
    let seen = m.requests();
    let post = &seen[0];
    assert_eq!(post.method, "POST");
    assert_eq!(
        post.json(),
        json!({"agent": "a.b", "segments": [{"key": "company", "value": "acme"}], "input": {"userMessage": "hi"}, "options": {"wait": false}})
    );
    assert_eq!(post.header("idempotency-key"), Some("k1"));
    assert_eq!(post.header("authorization"), Some("Bearer tok"));
    assert_eq!(post.header("accept"), Some("application/json"));
    assert_eq!(
        post.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let gets: Vec<_> = seen[1..]
        .iter()
        .map(|s| (s.method.as_str(), s.path.as_str()))
        .collect();
    let path = format!("/v1/runs/{RUN}");
    assert_eq!(gets, vec![("GET", path.as_str()), ("GET", path.as_str())]);
}

#[test]
fn a_failed_run_is_printed_and_exits_1_with_its_failure() {
    let m = runs_server(
        "failed",
        json!({"failure": {"code": "budget-exceeded", "message": "over budget"}, "failureMessage": "x"}),
    );
    let out = run(
        &m,
        &[
            "runs",
            "start",
            "--flow=f",
            "--flow-version=1.0.0",
            "--input={}",
            "--dry-run",
        ],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.json()["status"], "failed");
    assert_eq!(out.stderr.trim(), "Error [budget-exceeded]: over budget");
    assert_eq!(
        m.requests()[0].json(),
        json!({"flow": "f", "flowVersion": "1.0.0", "input": {}, "options": {"wait": false, "dryRun": true}})
    );
    // --no-wait: one POST, no reads.
    let m = runs_server("completed", json!({}));
    let out = run(
        &m,
        &[
            "runs",
            "start",
            "--flow=f",
            "--input={}",
            "--no-wait",
            "--raw",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.lines().count(), 1, "raw is one line");
    assert_eq!(m.requests().len(), 1);
}

#[test]
fn resume_exits_by_what_the_run_waits_for() {
    let waiting = json!({"waitingFor": {"approvals": [{"approvalId": "ap1", "status": "pending", "requiredRole": "reviewer"}], "other": []}});
    let m = Mock::start(move |s| match s.path.as_str() {
        "/v1/runs/a" => (200, run_json("suspended", waiting.clone())),
        "/v1/runs/b" => (200, run_json("pending", json!({}))),
        "/v1/runs/c" => (200, run_json("completed", json!({}))),
        _ => (404, envelope("run-not-found", "No run with id x")),
    });
    let out = run(&m, &["runs", "resume", "a"]);
    assert_eq!(out.code, 3, "{out:?}");
    assert_eq!(out.json()["kind"], "approval");
    assert_eq!(out.json()["approvals"][0]["id"], "ap1");
    let out = run(&m, &["runs", "resume", "b"]);
    assert_eq!(out.code, 4, "{out:?}");
    assert_eq!(out.json()["waits"], json!([{"what": "queued"}]));
    let out = run(&m, &["runs", "resume", "c"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["kind"], "not-waiting");
    assert!(
        m.requests().iter().all(|s| s.method == "GET"),
        "resume never POSTs"
    );
}

#[test]
fn errors_print_their_tag() {
    let m = Mock::start(|s| {
        match (s.method.as_str(), s.path.as_str()) {
        ("GET", "/v1/runs/x") => (404, envelope("run-not-found", "No run with id x")),
        ("POST", "/v1/runs/x/cancel") => (409, envelope("run-already-terminal", "Cannot cancel run: already completed")),
        ("GET", "/v1/runs/y") => (502, "<html>bad gateway</html>".into()),
        ("GET", p) if p.starts_with("/v1/runs?") => (200, json!({"data": [{"id": "r1", "status": "completed", "agent": {"id": "a.b", "version": "1.0.0"}, "createdAt": "t"}], "hasMore": true, "nextCursor": "c2"}).to_string()),
        ("POST", "/v1/runs/z/cancel") => (200, run_json("cancelled", json!({}))),
        _ => (404, envelope("route-not-found", "no")),
    }
    });
    let out = run(&m, &["runs", "get", "x"]);
    assert_eq!(
        (out.code, out.stderr.trim()),
        (1, "Error [not-found]: No run with id x")
    );
    let out = run(&m, &["runs", "get", "x", "--verbose"]);
    assert!(
        out.stderr.contains("\"requestId\": \"req-1\""),
        "--verbose shows the envelope: {}",
        out.stderr
    );
    let out = run(&m, &["runs", "cancel", "x"]);
    assert_eq!(
        (out.code, out.stderr.trim()),
        (
            1,
            "Error [run-already-terminal]: Cannot cancel run: already completed"
        )
    );
    let out = run(&m, &["runs", "get", "y"]);
    assert_eq!(
        (out.code, out.stderr.trim()),
        (
            1,
            "Error [http-502]: HTTP 502 without recognizable error envelope"
        )
    );
    let out = run(&m, &["runs", "cancel", "z"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json(), json!({"ok": true, "runId": "z"}));
    let cancel = m
        .requests()
        .into_iter()
        .find(|s| s.path == "/v1/runs/z/cancel")
        .unwrap();
    assert_eq!(cancel.body, "{}");
    let out = run(&m, &["runs", "list", "--agent=a.b", "--limit=5", "--table"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.lines().nth(1).unwrap().contains("a.b@1.0.0"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stderr.trim(), "Next page: --cursor=c2");
    let list = m
        .requests()
        .into_iter()
        .find(|s| s.path.starts_with("/v1/runs?"))
        .unwrap();
    assert_eq!(list.path, "/v1/runs?limit=5&agentId=a.b");
}

/// `runs list --started-by --trigger` send our `startedBy` extension and `triggerId`; the
/// table shows each run's `startedBy`.
#[test]
fn list_filters_on_started_by_and_trigger_and_shows_started_by() {
    let trigger = "22222222-2222-4222-8222-222222222222";
    let m = Mock::start(|s| {
        match (s.method.as_str(), s.path.as_str()) {
        ("GET", p) if p.starts_with("/v1/runs?") => (
            200,
            json!({"data": [
                {"id": "r1", "status": "suspended", "flowId": "f", "startedBy": "schedule", "createdAt": "t"},
                {"id": "r2", "status": "completed", "flowId": "f", "createdAt": "t"}],
                "hasMore": false})
            .to_string(),
        ),
        _ => (404, envelope("route-not-found", "no")),
    }
    });
    let out = run(
        &m,
        &[
            "runs",
            "list",
            "--started-by=schedule,mail",
            &format!("--trigger={trigger}"),
            "--table",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].contains("STARTED BY"), "{}", out.stdout);
    assert!(lines[1].contains("schedule"), "{}", out.stdout);
    assert!(
        lines[2].trim_end().ends_with('-') || lines[2].contains(" - "),
        "{}",
        out.stdout
    );
    let list = m.requests().into_iter().next().unwrap();
    assert_eq!(
        list.path,
        format!("/v1/runs?triggerId={trigger}&startedBy=schedule%2Cmail")
    );
}

#[test]
fn usage_errors_exit_2_before_anything_is_sent() {
    let m = runs_server("completed", json!({}));
    for (args, what) in [
        (
            vec!["runs", "start", "--flow=x", "--input={bad"],
            "Error: --input is not valid JSON",
        ),
        (
            vec!["runs", "start", "--input={}"],
            "Error: --agent=<agent-id> or --flow=<flow-id> is required",
        ),
        (
            vec!["runs", "start", "--flow=x"],
            "Error: --input=<json|@file> is required",
        ),
        (
            vec!["runs", "start", "--flow=x", "--agent=y", "--input={}"],
            "Error: give --agent or --flow, not both",
        ),
        (
            vec!["runs", "start", "--flow=x", "--input=@nope.json"],
            "nope.json",
        ),
        (
            vec!["runs", "start", "--flow=x", "--input={}", "--segment=bad"],
            "--segment must be key:value",
        ),
        (vec!["runs", "get"], "Error: missing <run-id>"),
    ] {
        let out = run(&m, &args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains(what), "{args:?}: {}", out.stderr);
    }
    let out = run(&m, &["runs", "get"]);
    assert!(
        out.stderr.contains("Usage: kindgi runs get --help"),
        "{}",
        out.stderr
    );
    let out = run(&m, &["runs", "list", "--replays=never"]);
    assert_eq!(out.code, 2, "a bad enum flag: {out:?}");
    assert!(m.requests().is_empty());
}

#[test]
fn an_unreachable_api_is_a_network_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let url = format!("http://127.0.0.1:{port}");
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "abc", "--url", &url, "--token", "k"],
        &[],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("Error [network]: cannot reach the API"),
        "{}",
        out.stderr
    );
}
