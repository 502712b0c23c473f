//! The README's gated run, end to end: `kindgi dev examples/my-pack` (the Rust SDK pack)
//! and the real `kindgi` CLI in the pack folder.
//!
//! - `my-pack.support-agent` (approval gates on) parks on its mutating `my-pack.send-reply`;
//!   `kindgi runs resume` exits 3 naming the approval; `kindgi approvals complete
//!   --decision=approve` runs the call once and the run completes; a reject gives the model
//!   `{status: "rejected"}` and the run still completes, the tool not called.
//! - The before-tool guardrail `my-pack.no-card-numbers` (a Rust SDK check over
//!   `check-invoke`) refuses a reply carrying a card number before anyone is asked.
//! - `my-pack.review-order` parks on the pausing `my-pack.request-review`: the tool hands
//!   its link to the outbox file; an answer that does not match the output schema is refused
//!   and the run keeps waiting; a valid one becomes the run's output; a second answer is 409.
//!
//! One test function: the pack folder's `.kindgi/` state and discovery file are shared.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// `kindgi runs start --agent=my-pack.support-agent` with `message`.
fn support_turn(dir: &Path, message: &str) -> Value {
    let input = json!({"userMessage": message}).to_string();
    let out = kindgi_in(
        dir,
        &[
            "runs",
            "start",
            "--agent=my-pack.support-agent",
            &format!("--input={input}"),
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    out.json()
}

/// The one approval a suspended run waits for.
fn waited_approval(run: &Value) -> String {
    assert_eq!(run["status"], "suspended", "{run}");
    let approvals = run["waitingFor"]["approvals"].as_array().unwrap();
    assert_eq!(approvals.len(), 1, "{run}");
    assert_eq!(approvals[0]["title"], "HITL review: my-pack.send-reply");
    approvals[0]["approvalId"].as_str().unwrap().to_owned()
}

/// `POST <link>` with `body` and the dev key: `(status, body)`.
fn post(link: &str, token: &str, body: &Value) -> (u16, Value) {
    let rest = link.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let body = body.to_string();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status: u16 = raw[9..12].parse().unwrap();
    let body = raw.split_once("\r\n\r\n").map(|x| x.1).unwrap_or_default();
    // The server may answer chunked: take the JSON object within.
    let json = body
        .find('{')
        .and_then(|a| body.rfind('}').map(|b| &body[a..=b]))
        .map(|j| serde_json::from_str(j).unwrap())
        .unwrap_or(Value::Null);
    (status, json)
}

/// Waits for the first line of the outbox file.
fn outbox_line(path: &Path) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Some(line) = text.lines().next()
        {
            return serde_json::from_str(line).unwrap();
        }
        assert!(Instant::now() < deadline, "nothing reached the outbox");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_readme_gated_run_and_the_example_pause_work_from_the_cli() {
    let dir = repo_root().join("examples/my-pack");
    let tmp = tempfile::tempdir().unwrap();
    let outbox = tmp.path().join("outbox.jsonl");
    let outbox_env = outbox.to_str().unwrap();
    let dev = start_dev(
        &dir,
        &[("MY_PACK_REVIEW_OUTBOX", outbox_env)],
        &["--no-watch", "--reset"],
    );

    // Gated: parks, resume says so (exit 3), approve runs it once.
    let run = support_turn(&dir, "Your order ord_1001 has shipped.");
    let approval = waited_approval(&run);
    let id = run["id"].as_str().unwrap().to_owned();
    let out = kindgi_in(&dir, &["runs", "resume", &id]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(out.stdout.contains(&approval), "{out:?}");
    let out = kindgi_in(&dir, &["approvals", "list", "--status=pending"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains(&approval), "{out:?}");
    let out = kindgi_in(
        &dir,
        &[
            "approvals",
            "complete",
            &approval,
            "--decision=approve",
            "--rationale=reads fine",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let out = kindgi_in(&dir, &["runs", "get", &id]);
    let done = out.json();
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["output"]["text"].as_str().unwrap_or_default();
    assert!(text.contains("\"sent\":true"), "{done}");
    assert!(text.contains("Your order ord_1001 has shipped."), "{done}");
    let out = kindgi_in(&dir, &["runs", "resume", &id]);
    assert_eq!(out.code, 0, "{out:?}");
    // Decided once: a second decision is refused.
    let again = kindgi_in(
        &dir,
        &["approvals", "complete", &approval, "--decision=reject"],
    );
    assert_eq!(again.code, 1, "{again:?}");

    // Rejected: the model is told, the run completes, nothing was sent.
    let run = support_turn(&dir, "We will refund you.");
    let approval = waited_approval(&run);
    let out = kindgi_in(
        &dir,
        &[
            "approvals",
            "complete",
            &approval,
            "--decision=reject",
            "--rationale=no promises",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let done = kindgi_in(&dir, &["runs", "get", run["id"].as_str().unwrap()]).json();
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["output"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("rejected") && text.contains("no promises"),
        "{done}"
    );
    assert!(!text.contains("\"sent\":true"), "{done}");

    // The before-tool guardrail refuses a card number before anyone is asked.
    let run = support_turn(&dir, "Your card 4111 1111 1111 1111 is on file.");
    assert_eq!(run["status"], "completed", "no approval was asked: {run}");
    let text = run["output"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("refused") && text.contains("card number"),
        "{run}"
    );
    assert!(!text.contains("\"sent\":true"), "{run}");

    // The pausing tool: the run waits for the reviewers' system's answer at the link.
    let input = json!({"orderId": "ord_1001", "note": "big refund"}).to_string();
    let out = kindgi_in(
        &dir,
        &[
            "runs",
            "start",
            "--flow=my-pack.review-order",
            &format!("--input={input}"),
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let run = out.json();
    assert_eq!(run["status"], "suspended", "{run}");
    let id = run["id"].as_str().unwrap().to_owned();
    let out = kindgi_in(&dir, &["runs", "resume", &id]);
    assert_eq!(out.code, 4, "a pause is not an approval: {out:?}");
    let request = outbox_line(&outbox);
    assert_eq!(request["orderId"], "ord_1001");
    let link = request["link"].as_str().unwrap();
    let rc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".kindgirc.json")).unwrap())
            .unwrap();
    let token = rc["token"].as_str().unwrap();
    let (status, body) = post(link, token, &json!({"value": {"approved": "yes"}}));
    assert_eq!(
        status, 400,
        "an answer off the output schema is refused: {body}"
    );
    let still = kindgi_in(&dir, &["runs", "get", &id]).json();
    assert_eq!(still["status"], "suspended", "{still}");
    let (status, body) = post(
        link,
        token,
        &json!({"value": {"approved": true, "reviewer": "ada"}}),
    );
    assert!(status == 200 || status == 202, "{status} {body}");
    let done = kindgi_in(&dir, &["runs", "get", &id]).json();
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"]["approved"], true, "{done}");
    assert_eq!(done["output"]["reviewer"], "ada", "{done}");
    let (status, body) = post(link, token, &json!({"value": {"approved": false}}));
    assert_eq!(status, 409, "single use: {body}");

    let status = dev.stop();
    assert!(status.success(), "{status}");
}
