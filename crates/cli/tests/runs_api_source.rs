//! `kindgi runs` takes its address and key from one source (issue 12, finding 7): a key from
//! a flag or the environment never goes to an address from a `.kindgirc.json`, a key from a
//! file never goes to another address, and a file is used only when it is the user's own,
//! mode 0600, and names a loopback address. Real files and modes in temporary folders; a
//! loopback listener records which key reached it.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_kindgi");

/// A one-request server on loopback: answers 404 (an envelope) and reports the
/// `Authorization` header it got.
fn listener() -> (String, mpsc::Receiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in l.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut auth = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("authorization:") {
                    auth = v.trim().to_owned();
                }
            }
            let body = r#"{"error":{"code":"run-not-found","message":"no run","requestId":"r"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = tx.send(auth);
        }
    });
    (url, rx)
}

fn write_rc(dir: &Path, text: &str, mode: u32) {
    let path = dir.join(".kindgirc.json");
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
}

struct Out {
    code: i32,
    stderr: String,
}

fn runs_get(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(BIN);
    c.args(["runs", "get", "run-1"])
        .args(args)
        .current_dir(cwd)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn got(rx: &mpsc::Receiver<String>) -> Option<String> {
    rx.recv_timeout(Duration::from_millis(300)).ok()
}

#[test]
fn a_file_with_group_or_other_bits_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (url, rx) = listener();
    write_rc(
        dir.path(),
        &format!(r#"{{"url":"{url}","token":"kgi_file"}}"#),
        0o644,
    );
    let out = runs_get(dir.path(), &[], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains(".kindgirc.json"), "{}", out.stderr);
    assert!(
        out.stderr.contains("mode 644") && out.stderr.contains("chmod 600"),
        "{}",
        out.stderr
    );
    assert_eq!(got(&rx), None, "nothing is sent");
}

#[test]
fn a_file_naming_a_remote_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_rc(
        dir.path(),
        r#"{"url":"http://203.0.113.7:4000","token":"kgi_file"}"#,
        0o600,
    );
    let out = runs_get(dir.path(), &[], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("not a loopback address"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_given_key_never_goes_to_the_address_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let (url, rx) = listener();
    write_rc(
        dir.path(),
        &format!(r#"{{"url":"{url}","token":"kgi_file"}}"#),
        0o600,
    );
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    for (args, env) in [
        (vec![], vec![("KINDGI_API_TOKEN", "kgi_mine")]),
        (vec!["--token", "kgi_mine"], vec![]),
    ] {
        let out = runs_get(&sub, &args, &env);
        assert_eq!(out.code, 2, "{args:?} {env:?}: {}", out.stderr);
        assert!(out.stderr.contains("no address"), "{}", out.stderr);
        assert_eq!(
            got(&rx),
            None,
            "the caller's key must not reach the file's address"
        );
    }
}

#[test]
fn a_file_key_never_goes_to_another_address() {
    let dir = tempfile::tempdir().unwrap();
    let (file_url, file_rx) = listener();
    let (other_url, other_rx) = listener();
    write_rc(
        dir.path(),
        &format!(r#"{{"url":"{file_url}","token":"kgi_file"}}"#),
        0o600,
    );
    let out = runs_get(dir.path(), &["--api", &other_url], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("is sent only there"), "{}", out.stderr);
    assert_eq!(got(&other_rx), None);
    assert_eq!(got(&file_rx), None);
    // The same address, spelt otherwise, may use the file's key.
    let same = file_url.replace("127.0.0.1", "localhost");
    let out = runs_get(dir.path(), &["--api", &same], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(got(&file_rx).as_deref(), Some("bearer kgi_file"));
}

#[test]
fn pairs_go_where_they_say() {
    let dir = tempfile::tempdir().unwrap();
    let (file_url, file_rx) = listener();
    let (env_url, env_rx) = listener();
    // The official file shape (`apiUrl`), from a parent folder.
    write_rc(
        dir.path(),
        &format!(r#"{{"apiUrl":"{file_url}","token":"kgi_file"}}"#),
        0o600,
    );
    let sub = dir.path().join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    let out = runs_get(&sub, &[], &[]);
    assert_eq!(out.code, 1, "the listener answers 404: {}", out.stderr);
    assert_eq!(got(&file_rx).as_deref(), Some("bearer kgi_file"));
    // The environment pair wins over the file, whole.
    let out = runs_get(
        &sub,
        &[],
        &[
            ("KINDGI_API_URL", &env_url),
            ("KINDGI_API_TOKEN", "kgi_env"),
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(got(&env_rx).as_deref(), Some("bearer kgi_env"));
    assert_eq!(got(&file_rx), None);
}
