//! The Rust pack SDK's log bridge (`kindgi_pack::log_tracing::RecordLayer`, installed by
//! `serve`): a `tracing` event inside a handler reaches the service's stderr as a pack
//! protocol record (reference §7.5) — the fixed five first (`time`, `level`, `severity`,
//! `subsystem: "pack"`, `message`), then the event's `target` and its fields as JSON values —
//! filtered by `KINDGI_LOG_LEVEL` like the service's own records, and redacted the same way:
//! a secret-looking field's value and a bearer token or URL password in free text are never
//! written; a field named like a record key (`level`, `event`) is kept as `field.<name>`. The fixture's `conformance.log-probe` logs, the test reads the child's stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{Value, json};
use std::ffi::OsStr;
use std::time::{Duration, Instant};

const TOKEN: &str = "log-token-3b7e9d1c0a5f4e2b8c6d";

/// The secret values the probe logs; none may appear on stderr.
const SECRETS: [&str; 4] = ["tok-live-91c3", "sk-live-77aa", "pw-31f0", "hunter2-5d1e"];

/// Calls the probe; the stderr records once the probe's warn record is there.
fn probe(env: &[(&str, &OsStr)]) -> (Vec<Value>, Vec<String>) {
    let mut with_token = vec![("KINDGI_PACK_SERVICE_TOKEN", OsStr::new(TOKEN))];
    with_token.extend_from_slice(env);
    let svc = common::start("index.extras.json", &with_token);
    let body = json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.log-probe"},
        "input": {}, "ctx": {"tenantId": "t", "runId": "r"}});
    let (status, answer) = common::invoke(svc.port, TOKEN, body.to_string().as_bytes());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["output"], json!({"ok": true}), "{answer}");
    // The records are written before the answer; the reader thread may still be behind.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let lines = svc.lines();
        let records: Vec<Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        if records.iter().any(|r| r["message"] == "slow upstream") {
            return (records, lines);
        }
        assert!(Instant::now() < deadline, "no probe records: {lines:#?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn find<'a>(records: &'a [Value], message: &str) -> Option<&'a Value> {
    records.iter().find(|r| r["message"] == message)
}

#[test]
fn a_handlers_tracing_events_are_records_with_their_fields() {
    let (records, lines) = probe(&[]);
    let info = find(&records, "looked up ord_1001 for Ada").expect("the info record");
    let keys: Vec<&str> = info
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "time",
            "level",
            "severity",
            "subsystem",
            "message",
            "target",
            "order",
            "count",
            "delta",
            "ratio",
            "fresh",
            "shape",
            "api_token",
            "note"
        ],
        "{info}"
    );
    let time = info["time"].as_str().unwrap();
    assert!(
        time.len() == 24 && time.ends_with('Z') && time.as_bytes()[19] == b'.',
        "RFC 3339 with milliseconds: {time}"
    );
    assert_eq!(info["level"], "info");
    assert_eq!(info["severity"], "INFO");
    assert_eq!(info["subsystem"], "pack");
    assert_eq!(info["target"], "conformance_pack::extras::log_probe");
    assert_eq!(info["order"], "ord_1001");
    assert_eq!(info["count"], 3);
    assert_eq!(info["delta"], -2);
    assert_eq!(info["ratio"], 0.5);
    assert_eq!(info["fresh"], true);
    assert_eq!(info["shape"], "(\"a\", 1)");
    // Redacted the way every record is: a secret-looking key, then bearer tokens and URL
    // passwords in free text.
    assert_eq!(info["api_token"], "[redacted]");
    assert_eq!(
        info["note"],
        "sent with Bearer [redacted] to https://u:[redacted]@example.com/x"
    );
    // Not a service event: a supervisor reads only records with a string `event`.
    assert!(info.get("event").is_none(), "{info}");

    let warn = find(&records, "slow upstream").unwrap();
    assert_eq!(warn["level"], "warn");
    assert_eq!(warn["severity"], "WARNING");
    assert_eq!(warn["password"], "[redacted]");
    // A field named like a record key keeps its value under `field.<name>`, and the line is
    // no service event.
    assert_eq!(warn["field.level"], "spoofed");
    assert_eq!(warn["field.event"], "listening");
    assert!(warn.get("event").is_none(), "{warn}");
    // The default level is info: the debug event is not written.
    assert!(find(&records, "a debug event").is_none(), "{lines:#?}");
    for secret in SECRETS {
        assert!(
            !lines.iter().any(|l| l.contains(secret)),
            "{secret} on stderr: {lines:#?}"
        );
    }
}

#[test]
fn the_log_level_variables_filter_tracing_events_too() {
    let (records, _) = probe(&[("KINDGI_LOG_LEVELS", OsStr::new("pack=debug"))]);
    let debug = find(&records, "a debug event").expect("the debug record");
    assert_eq!(debug["level"], "debug");
    assert_eq!(debug["severity"], "DEBUG");
    assert_eq!(debug["detail"], "only at debug");

    let (records, lines) = probe(&[("KINDGI_LOG_LEVEL", OsStr::new("warn"))]);
    assert!(
        find(&records, "looked up ord_1001 for Ada").is_none(),
        "{lines:#?}"
    );
    assert_eq!(find(&records, "slow upstream").unwrap()["level"], "warn");
}
