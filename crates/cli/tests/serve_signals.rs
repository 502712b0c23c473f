//! Stopping servers as processes: the real `kindgi server`, `kindgi dev` and Rust pack
//! service (`target/debug/conformance-pack`, built with `cargo build -p conformance-pack`)
//! get SIGTERM right after their `listening` line, 20 times each (`kindgi dev` 5), and must drain and exit 0
//! every time (the handlers are installed before binding); `kindgi server` with a half-sent
//! request open must still exit within its grace period.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::Duration;

use dev_common::kindgi;
use dev_common::spawn::{
    self, Watch, dev_command, dev_listening, exit_within, pack_command, pack_listening, repo_root,
    rest_of, server_command, server_listening, signal,
};

const TRIES: usize = 20;
/// `kindgi dev` checks its pack build and boots its pack service each time (~15 s a try), so it
/// gets fewer tries; before the fix 9 of 10 failed, so 5 still catch a regression.
const DEV_TRIES: usize = 5;

/// How long a process may take to print its `listening` line.
const LISTEN_WITHIN: Duration = Duration::from_secs(900);

/// Starts `cmd` and waits for its `listening` line on `watch`: the child, the address and
/// the later lines of both pipes.
fn spawn_until_listening(
    cmd: Command,
    watch: Watch,
    listening: fn(&str) -> Option<String>,
) -> (Child, String, mpsc::Receiver<String>) {
    let up = spawn::spawn_until_listening(cmd, watch, listening, LISTEN_WITHIN);
    (up.child, up.addr, up.lines)
}

#[test]
fn kindgi_server_exits_within_grace_with_a_half_sent_request_open() {
    let tmp = tempfile::tempdir().unwrap();
    let cmd = server_command(tmp.path().join("k.db"), &["--shutdown-grace-ms", "1000"]);
    let (mut child, addr, _lines) = spawn_until_listening(cmd, Watch::Stdout, server_listening);
    let mut half = TcpStream::connect(&addr).unwrap();
    half.write_all(b"POST /v1/tools HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"id\":")
        .unwrap();
    let mut slow_head = TcpStream::connect(&addr).unwrap();
    slow_head.write_all(b"GET /health HTTP/1.1\r\nHo").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(child.id(), "TERM");
    let status = exit_within(&mut child, Duration::from_secs(15))
        .expect("kindgi server did not exit within 15 s of SIGTERM with a half-sent request open");
    assert_eq!(status.code(), Some(0), "{status}");
}

#[test]
fn kindgi_server_drains_on_sigterm_right_after_listening() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db");
    for attempt in 0..TRIES {
        let (mut child, _, lines) =
            spawn_until_listening(server_command(&db, &[]), Watch::Stdout, server_listening);
        signal(child.id(), "TERM");
        let status = exit_within(&mut child, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("try {attempt}: no exit within 20 s of SIGTERM"));
        let rest = rest_of(&lines);
        assert_eq!(status.code(), Some(0), "try {attempt}: {status}; {rest:?}");
        assert!(
            rest.iter().any(|l| l == "kindgi server stopped"),
            "try {attempt}: no drain: {rest:?}"
        );
    }
}

#[test]
fn the_rust_pack_service_drains_on_sigterm_right_after_listening() {
    let fixture = repo_root().join("target/debug/conformance-pack");
    if !fixture.is_file() {
        kindgi_spec::testing::skip_without_reference(
            "the_rust_pack_service_drains_on_sigterm_right_after_listening",
            "target/debug/conformance-pack is not built (cargo build -p conformance-pack)",
        );
        return;
    }
    let index = repo_root().join("examples/conformance-pack/index.json");
    for attempt in 0..TRIES {
        let mut cmd = pack_command(&fixture, &index, "serve-signals-test-token", 0);
        cmd.args(["--host", "127.0.0.1"]);
        let (mut child, _, lines) = spawn_until_listening(cmd, Watch::Stderr, pack_listening);
        signal(child.id(), "TERM");
        let status = exit_within(&mut child, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("try {attempt}: no exit within 20 s of SIGTERM"));
        let rest = rest_of(&lines);
        assert_eq!(status.code(), Some(0), "try {attempt}: {status}; {rest:?}");
        assert!(
            rest.iter().any(|l| l.contains("\"stopped\"")),
            "try {attempt}: no drain: {rest:?}"
        );
    }
}

#[test]
fn kindgi_dev_drains_on_sigterm_right_after_listening() {
    let dir = repo_root().join("examples/my-pack");
    for attempt in 0..DEV_TRIES {
        let cmd = dev_command(&dir, &["--no-watch"]);
        let (mut child, _, lines) = spawn_until_listening(cmd, Watch::Stdout, dev_listening);
        signal(child.id(), "TERM");
        let status = exit_within(&mut child, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("try {attempt}: no exit within 30 s of SIGTERM"));
        let rest = rest_of(&lines);
        assert_eq!(status.code(), Some(0), "try {attempt}: {status}; {rest:?}");
        assert!(
            rest.iter().any(|l| l.contains("stopped")),
            "try {attempt}: no drain: {rest:?}"
        );
    }
}

/// Reads until the server closes `s` (or 10 s pass: `None`).
fn read_until_closed(s: &mut TcpStream) -> Option<String> {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(_) => return None,
        }
    }
    Some(String::from_utf8_lossy(&got).into_owned())
}

#[test]
fn kindgi_server_times_out_slow_heads_idle_connections_and_stalled_bodies() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("k.db");
    let created = Command::new(kindgi())
        .args(["tokens", "create", "--tenant", "acme", "--database"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(created.status.success(), "{created:?}");
    let key = String::from_utf8_lossy(&created.stdout).trim().to_owned();
    let cmd = server_command(
        &db,
        &[
            "--header-timeout-ms",
            "300",
            "--idle-timeout-ms",
            "300",
            "--body-timeout-ms",
            "300",
        ],
    );
    let (mut child, addr, _lines) = spawn_until_listening(cmd, Watch::Stdout, server_listening);

    let mut slow_head = TcpStream::connect(&addr).unwrap();
    slow_head.write_all(b"GET /health HTTP/1.1\r\nHo").unwrap();
    let mut idle = TcpStream::connect(&addr).unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut stalled = TcpStream::connect(&addr).unwrap();
    let head = format!(
        "POST /v1/tools HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nX-Request-Id: stalled-1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"id\":"
    );
    stalled.write_all(head.as_bytes()).unwrap();

    let head = read_until_closed(&mut slow_head).expect("a half-sent head kept its socket");
    assert_eq!(head, "", "a half-sent head is closed without an answer");
    let answer = read_until_closed(&mut idle).expect("an idle keep-alive connection stayed open");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    let answer = read_until_closed(&mut stalled).expect("a stalled body was never answered");
    assert!(
        answer.starts_with("HTTP/1.1 408 Request Timeout"),
        "{answer}"
    );
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(v["error"]["code"], "request-timeout", "{answer}");
    assert_eq!(v["error"]["requestId"], "stalled-1", "{answer}");
    assert_eq!(v["error"]["details"]["limitMs"], 300, "{answer}");

    signal(child.id(), "TERM");
    let status = exit_within(&mut child, Duration::from_secs(20)).expect("no exit after SIGTERM");
    assert_eq!(status.code(), Some(0), "{status}");
}
