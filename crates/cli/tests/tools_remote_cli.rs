//! `kindgi tools list|get|register`: usage errors and an unreachable API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_kindgi");

fn run(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env_remove("KINDGI_API_TOKEN")
        .env_remove("KINDGI_API_URL")
        .output()
        .unwrap()
}

#[test]
fn missing_token_is_a_usage_error() {
    let o = run(&["tools", "list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--token"));
}

#[test]
fn bad_manifest_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.json");
    std::fs::write(&f, "{oops").unwrap();
    let o = run(&["tools", "register", f.to_str().unwrap(), "--token", "kgi_x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not JSON"));
    std::fs::write(&f, "[1]").unwrap();
    assert_eq!(
        run(&["tools", "register", f.to_str().unwrap(), "--token", "kgi_x"])
            .status
            .code(),
        Some(2)
    );
    let o = run(&[
        "tools",
        "register",
        "/nonexistent/tool.json",
        "--token",
        "kgi_x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        run(&["tools", "get"]).status.code(),
        Some(2),
        "clap: ID is required"
    );
}

#[test]
fn unreachable_api_exits_1() {
    // A port nothing listens on: bind one, then drop it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = run(&[
        "tools",
        "get",
        "acme.x",
        "--api",
        &format!("http://127.0.0.1:{port}"),
        "--token",
        "kgi_x",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot reach the API"));
}
