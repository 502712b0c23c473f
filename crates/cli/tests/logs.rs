//! The `kindgi` binary's log (issue 19, finding 8), read from the stderr of the real
//! `kindgi server`: the database file-mode tightening warning; a 500's cause, on a line that
//! names the answer's request id; `KINDGI_LOG_FORMAT=json` lines that parse; `KINDGI_LOG`
//! filtering; the API key never in the log, even at `debug`; a one-shot command's stderr
//! left clean.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{BIN, Server, create_token};

const TIGHTENED: &str = "database file was readable by other users; its mode is now 600";

/// A SQLite database made by `kindgi tokens create`, then opened to everyone (0644); the key.
fn loose_database(dir: &std::path::Path) -> (String, String) {
    let db = dir.join("k.db").display().to_string();
    let key = create_token(&db, "default").key;
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    (db, key)
}

/// `GET path` with `key`; the status, the `x-request-id` and the body.
fn get(base: &str, path: &str, key: &str) -> (u16, String, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("x-request-id: "))
        .unwrap_or_default()
        .trim()
        .to_owned();
    (status, id, body.to_owned())
}

/// Waits until the server's stderr holds `needle` (at most 10 s); the stderr.
fn stderr_with(server: &Server, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let err = server.stderr();
        if err.contains(needle) || Instant::now() > deadline {
            return err;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Drops the runs table under the running server, so reading a run is a store failure.
fn break_runs_table(db: &str) {
    let script = format!(
        "import sqlite3; c = sqlite3.connect({db:?}); c.execute('DROP TABLE runs'); c.commit()"
    );
    let status = Command::new("python3")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn the_server_logs_the_file_mode_warning_and_a_500s_cause_with_its_request_id() {
    let dir = tempfile::tempdir().unwrap();
    let (db, key) = loose_database(dir.path());
    let server = Server::start_with(&db, &[], &[("KINDGI_LOG", ""), ("KINDGI_LOG_FORMAT", "")]);
    let err = stderr_with(&server, TIGHTENED);
    assert!(err.contains(TIGHTENED) && err.contains(" WARN "), "{err}");
    assert!(err.contains("k.db"), "names the file: {err}");
    break_runs_table(&db);
    let (status, id, body) = get(
        &server.url,
        "/v1/runs/0b8e2f1c-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
        &key,
    );
    assert_eq!(status, 500, "{body}");
    assert!(id.starts_with("req-"), "{id}");
    let err = stderr_with(&server, &id);
    let line = err
        .lines()
        .find(|l| l.contains("internal error"))
        .unwrap_or_else(|| panic!("no internal error line: {err}"));
    assert!(line.contains(&format!("request_id={id}")), "{line}");
    assert!(line.contains("runs"), "the cause names what failed: {line}");
    assert!(!err.contains(&key), "the key is never logged: {err}");
    server.stop();
}

#[test]
fn json_lines_parse_and_carry_the_request_id_and_kindgi_log_filters() {
    let dir = tempfile::tempdir().unwrap();
    let (db, key) = loose_database(dir.path());
    let server = Server::start_with(
        &db,
        &[],
        &[("KINDGI_LOG", "debug"), ("KINDGI_LOG_FORMAT", "json")],
    );
    stderr_with(&server, TIGHTENED);
    break_runs_table(&db);
    let (status, id, _) = get(
        &server.url,
        "/v1/runs/0b8e2f1c-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
        &key,
    );
    assert_eq!(status, 500);
    let err = stderr_with(&server, "internal error");
    let lines: Vec<Value> = err
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let warn = lines
        .iter()
        .find(|l| l["message"] == TIGHTENED)
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(warn["level"], "WARN");
    let internal = lines
        .iter()
        .find(|l| l["message"] == "internal error")
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(internal["level"], "ERROR");
    assert_eq!(internal["span"]["request_id"], id.as_str(), "{internal}");
    // Even at debug, the key (or its Authorization header) is in no line.
    assert!(!err.contains(&key), "the key is never logged");
    assert!(!err.to_ascii_lowercase().contains("bearer"), "{err}");
    server.stop();

    // KINDGI_LOG=error: the warning is filtered out.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let quiet = Server::start_with(&db, &[], &[("KINDGI_LOG", "error")]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!quiet.stderr().contains(TIGHTENED), "{}", quiet.stderr());
    quiet.stop();
    let mode = std::fs::metadata(&db).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "tightened all the same");
}

#[test]
fn a_bad_kindgi_log_is_named_and_a_one_shot_commands_stderr_stays_clean() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db").display().to_string();
    let out = Command::new(BIN)
        .args(["tokens", "create", "--database", &db, "--tenant", "default"])
        .env("KINDGI_LOG", "kindgi=loud")
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KINDGI_LOG=\"kindgi=loud\" is not a log filter"),
        "{err}"
    );
    // No KINDGI_LOG: `warn`, so a one-shot command's stderr holds no progress chatter.
    let fresh = dir.path().join("fresh.db").display().to_string();
    let out = Command::new(BIN)
        .args([
            "tokens",
            "create",
            "--database",
            &fresh,
            "--tenant",
            "default",
        ])
        .env_remove("KINDGI_LOG")
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(" INFO ") && !err.contains(" DEBUG "), "{err}");
}
