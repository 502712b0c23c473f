//! `kindgi runs` usage errors (exit 2) and API resolution, without a server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;

#[test]
fn bad_json_input_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kindgi_in(tmp.path(), &["runs", "start", "--flow=x", "--input={bad"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.starts_with("Error: --input is not valid JSON"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("Usage: kindgi runs start --help"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_missing_flow_or_input_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kindgi_in(tmp.path(), &["runs", "start", "--input={}"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--flow"), "{}", out.stderr);
    let out = kindgi_in(tmp.path(), &["runs", "start", "--flow=x"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--input"), "{}", out.stderr);
}

#[test]
fn an_input_file_that_does_not_exist_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kindgi_in(
        tmp.path(),
        &["runs", "start", "--flow=x", "--input=@nope.json"],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("nope.json"), "{}", out.stderr);
}

#[test]
fn without_a_dev_server_or_flags_it_says_how_to_get_one() {
    let tmp = tempfile::tempdir().unwrap();
    let out = kindgi_in(tmp.path(), &["runs", "get", "abc"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("kindgi dev"), "{}", out.stderr);
}

#[test]
fn an_unreachable_api_fails_with_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = kindgi_in(
        tmp.path(),
        &["runs", "get", "abc", "--api", &url, "--token", "k"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("cannot reach the API"),
        "{}",
        out.stderr
    );
}
