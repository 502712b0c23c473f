//! Where the API commands go, and with which key (platform-api.md §12.1, case 107): per
//! field, flags > `KINDGI_API_URL`/`KINDGI_API_TOKEN` > `./.kindgirc.json` >
//! `~/.kindgi/config.json`; a key from a file goes only to its own address; the
//! `.kindgirc.json` is used only when it is the user's, 0600 and loopback. A loopback
//! server records which key reached it.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api_common;

use api_common::*;

fn not_found() -> Mock {
    Mock::start(|_| (404, envelope("run-not-found", "No run with id r")))
}

fn auths(m: &Mock) -> Vec<Option<String>> {
    m.requests()
        .iter()
        .map(|s| s.header("authorization").map(str::to_owned))
        .collect()
}

#[test]
fn the_folder_file_is_used_and_env_and_flags_override_it() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let p = not_found();
    write_file(
        dir.path(),
        ".kindgirc.json",
        &format!(r#"{{"apiUrl":"{}","token":"t"}}"#, p.url),
        0o600,
    );
    let out = kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stderr.trim(), "Error [not-found]: No run with id r");
    assert_eq!(auths(&p), vec![Some("Bearer t".to_owned())]);
    // The environment's key wins over the file's, and goes to the file's address.
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r"],
        &[("KINDGI_API_TOKEN", "env")],
    );
    assert_eq!(out.code, 1, "{out:?}");
    // A flag wins over the environment.
    kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r", "--token", "flag"],
        &[("KINDGI_API_TOKEN", "env")],
    );
    assert_eq!(
        auths(&p),
        vec![
            Some("Bearer t".into()),
            Some("Bearer env".into()),
            Some("Bearer flag".into())
        ]
    );
    // An address from the environment wins over the file's; the file's key is not sent there.
    let q = not_found();
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r"],
        &[("KINDGI_API_URL", &q.url)],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("is sent only there"), "{}", out.stderr);
    assert!(q.requests().is_empty(), "nothing is sent");
    // With a key for it, it goes there.
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r", "--token", "k"],
        &[("KINDGI_API_URL", &q.url)],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(auths(&q), vec![Some("Bearer k".to_owned())]);
}

#[test]
fn the_home_config_fills_what_the_folder_file_lacks() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let p = not_found();
    write_file(
        home.path(),
        ".kindgi/config.json",
        &format!(r#"{{"apiUrl":"{}/","token":"home"}}"#, p.url),
        0o600,
    );
    let out = kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    // The folder file names the same address (written differently) and no key: home's key.
    let same = p.url.replace("127.0.0.1", "localhost");
    write_file(
        dir.path(),
        ".kindgirc.json",
        &format!(r#"{{"apiUrl":"{same}"}}"#),
        0o600,
    );
    let out = kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        auths(&p),
        vec![Some("Bearer home".into()), Some("Bearer home".into())]
    );
    assert!(
        p.requests().iter().all(|s| s.path == "/v1/runs/r"),
        "the trailing / is dropped"
    );
    // A folder file for another address: its address wins, home's key is not sent there.
    let q = not_found();
    write_file(
        dir.path(),
        ".kindgirc.json",
        &format!(r#"{{"apiUrl":"{}"}}"#, q.url),
        0o600,
    );
    let out = kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("is sent only there"), "{}", out.stderr);
    assert!(q.requests().is_empty());
    // --hosted ignores the folder file.
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r", "--hosted"],
        &[],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(auths(&p).len(), 3);
}

#[test]
fn an_untrusted_or_broken_folder_file_is_refused_before_anything_is_sent() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let p = not_found();
    write_file(
        dir.path(),
        ".kindgirc.json",
        &format!(r#"{{"apiUrl":"{}","token":"t"}}"#, p.url),
        0o644,
    );
    let out = kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("chmod 600"), "{}", out.stderr);
    write_file(
        dir.path(),
        ".kindgirc.json",
        r#"{"apiUrl":"http://example.com","token":"t"}"#,
        0o600,
    );
    let out = kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("not a loopback address"),
        "{}",
        out.stderr
    );
    write_file(dir.path(), ".kindgirc.json", "{nope", 0o600);
    let out = kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("not valid JSON"), "{}", out.stderr);
    // Our older `url` field is read too.
    write_file(
        dir.path(),
        ".kindgirc.json",
        &format!(r#"{{"url":"{}","token":"old"}}"#, p.url),
        0o600,
    );
    kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(auths(&p), vec![Some("Bearer old".to_owned())]);
}

#[test]
fn without_an_address_it_says_how_to_give_one() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = kindgi(dir.path(), home.path(), &["runs", "get", "r"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        "Error: API URL not configured. Set KINDGI_API_URL, pass --url=..., or run `kindgi auth login`."
    );
}
