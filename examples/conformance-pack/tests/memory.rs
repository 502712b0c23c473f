//! Peak memory of the service (VmHWM of the fixture process) for 10 MiB bodies: one, then 32
//! at once, of dense small numbers (`[1,1,1,…]`, 5 million values — refused before parsing
//! since their parsed form would pass the per-call budget), then 32 at once of one 10 MiB
//! string (accepted and echoed). Prints the figures (`--nocapture`); asserts a generous bound
//! that the unbudgeted service passed many times over (443 MB for one dense body).
//!
//! ```sh
//! cargo test -p conformance-pack --test memory -- --nocapture
//! PACK_FIXTURE_BIN=target/release/conformance-pack cargo test -p conformance-pack --test memory -- --nocapture
//! ```
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::json;
use std::ffi::OsStr;

const TOKEN: &str = "memory-token-5b8e1f0c2d7a4e69";
const MIB: usize = 1024 * 1024;

/// VmHWM (peak resident set) of `pid`, in MiB.
fn peak_mib(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb / 1024
}

/// An echo call of `10 MiB - 1 KiB` whose input is `[1,1,1,…]`.
fn dense_body() -> Vec<u8> {
    let head = r#"{"v":2,"kind":"invoke","tool":{"id":"conformance.echo"},"ctx":{"tenantId":"t","runId":"r"},"input":[1"#;
    let mut body = head.as_bytes().to_vec();
    while body.len() + 4 < 10 * MIB - 1024 {
        body.extend_from_slice(b",1");
    }
    body.extend_from_slice(b"]}");
    body
}

/// An echo call whose message is one string, the whole body just under 10 MiB.
fn string_body() -> Vec<u8> {
    let message = "x".repeat(10 * MIB - 1024);
    json!({"v": 2, "kind": "invoke", "tool": {"id": "conformance.echo"},
        "ctx": {"tenantId": "t", "runId": "r"}, "input": {"message": message}})
    .to_string()
    .into_bytes()
}

/// Sends `body` from `n` connections at once; every answer's `code` (or `kind`).
fn at_once(port: u16, n: usize, body: &[u8]) -> Vec<String> {
    std::thread::scope(|s| {
        let calls: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(|| {
                    let (status, answer) = common::invoke(port, TOKEN, body);
                    let what = answer["code"].as_str().or(answer["kind"].as_str());
                    format!("{status} {}", what.unwrap_or("?"))
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    })
}

#[test]
fn peak_memory_stays_a_small_multiple_of_the_bodies() {
    let svc = common::start(
        "index.json",
        &[
            ("KINDGI_PACK_SERVICE_TOKEN", OsStr::new(TOKEN)),
            ("KINDGI_LOG_LEVEL", OsStr::new("warn")),
        ],
    );
    let pid = svc.child.id();
    let idle = peak_mib(pid);
    let dense = dense_body();
    let one = at_once(svc.port, 1, &dense);
    let after_one = peak_mib(pid);
    let many = at_once(svc.port, 32, &dense);
    let after_32 = peak_mib(pid);
    let strings = at_once(svc.port, 32, &string_body());
    let after_strings = peak_mib(pid);
    eprintln!(
        "VmHWM: idle {idle} MiB; 1 dense 10 MiB body {after_one} MiB; 32 at once {after_32} MiB; \
         then 32 × 10 MiB strings at once {after_strings} MiB"
    );
    assert!(one.iter().all(|a| a == "200 malformed-message"), "{one:?}");
    assert!(
        many.iter().all(|a| a == "200 malformed-message"),
        "{many:?}"
    );
    assert!(
        strings
            .iter()
            .all(|a| a == "200 result" || a == "503 overloaded"),
        "{strings:?}"
    );
    assert!(strings.iter().any(|a| a == "200 result"), "{strings:?}");
    // Generous bounds: the unbudgeted service took 443 MB for one dense body, 1.09 GB for 32.
    assert!(
        after_32 < 200,
        "32 dense bodies at once peaked at {after_32} MiB"
    );
    assert!(
        after_strings < 400,
        "32 string bodies at once peaked at {after_strings} MiB"
    );
}
