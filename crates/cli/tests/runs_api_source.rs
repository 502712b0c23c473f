//! Where the API commands go, and with which key (platform-api.md §12.1, case 107): per
//! field, flags > `KINDGI_API_URL`/`KINDGI_API_TOKEN` > `./.kindgirc.json` >
//! `~/.kindgi/config.json`, except that a `KINDGI_API_TOKEN` goes only with an address from
//! `--url`/`KINDGI_API_URL` (never to a file's); a key from a file goes only to its own address; the
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
    // The environment's key never goes to the file's address (one source for both, issue
    // 19): the file's own key is used, and a note says so.
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r"],
        &[("KINDGI_API_TOKEN", "env")],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("KINDGI_API_TOKEN is not sent to http://127.0.0.1:"),
        "{}",
        out.stderr
    );
    // A flag, typed for this command, goes wherever it goes.
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
            Some("Bearer t".into()),
            Some("Bearer flag".into())
        ]
    );
    // Address and key both from the environment: they go together, the file is not read.
    let e = not_found();
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r"],
        &[("KINDGI_API_URL", &e.url), ("KINDGI_API_TOKEN", "env")],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(auths(&e), vec![Some("Bearer env".to_owned())]);
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

/// Issue 19, finding 12: a `KINDGI_API_TOKEN` set for a hosted API is never sent to the
/// address a discovered `.kindgirc.json` names. A file with an address and no key of its
/// own is refused before anything is sent, naming the variable and what to do.
#[test]
fn an_environment_key_never_goes_to_a_discovered_folder_files_address() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let p = not_found();
    write_file(
        dir.path(),
        ".kindgirc.json",
        &format!(r#"{{"apiUrl":"{}"}}"#, p.url),
        0o600,
    );
    let secret = "kgi_hosted-key-for-somewhere-else";
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r"],
        &[("KINDGI_API_TOKEN", secret)],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("KINDGI_API_TOKEN is not sent to")
            && out.stderr.contains("Set KINDGI_API_URL too, pass --token"),
        "{}",
        out.stderr
    );
    assert!(p.requests().is_empty(), "nothing is sent: {:?}", auths(&p));
    // The home config's address, likewise.
    std::fs::remove_file(dir.path().join(".kindgirc.json")).unwrap();
    write_file(
        home.path(),
        ".kindgi/config.json",
        &format!(r#"{{"apiUrl":"{}"}}"#, p.url),
        0o600,
    );
    let out = kindgi(
        dir.path(),
        home.path(),
        &["runs", "get", "r"],
        &[("KINDGI_API_TOKEN", secret)],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(p.requests().is_empty(), "nothing is sent: {:?}", auths(&p));
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
