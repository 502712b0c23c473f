//! `kindgi tools list|get|versions|get-version|register`: the official wire against a
//! scripted loopback API, usage errors (exit 2) and an unreachable API (exit 1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api_common;

use api_common::*;
use serde_json::json;

fn run(args: &[&str], env: &[(&str, &str)]) -> Out {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    kindgi(dir.path(), home.path(), args, env)
}

#[test]
fn reads_use_the_official_paths_and_queries() {
    let m = Mock::start(|_| (200, json!({"data": [], "hasMore": false}).to_string()));
    let env = [
        ("KINDGI_API_URL", m.url.as_str()),
        ("KINDGI_API_TOKEN", "k"),
    ];
    for args in [
        vec![
            "tools",
            "list",
            "--name=acme.",
            "--include-retired",
            "--limit=3",
        ],
        vec!["tools", "get", "acme.x"],
        vec!["tools", "versions", "acme.x", "--include-unregistered"],
        vec!["tools", "get-version", "acme.x", "1.0.0"],
        vec!["flows", "list"],
        vec!["flows", "get", "acme.f", "2.0.0"],
        vec!["agents", "versions", "acme.a", "--cursor=c1"],
    ] {
        let out = run(&args, &env);
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        assert_eq!(out.json(), json!({"data": [], "hasMore": false}));
    }
    let paths: Vec<String> = m.requests().iter().map(|s| s.path.clone()).collect();
    assert_eq!(
        paths,
        [
            "/v1/tools?name=acme.&includeRetired=true&limit=3",
            "/v1/tools/acme.x",
            "/v1/tools/acme.x/versions?includeTombstoned=true",
            "/v1/tools/acme.x/versions/1.0.0",
            "/v1/flows",
            "/v1/flows/acme.f/versions/2.0.0",
            "/v1/agents/acme.a/versions?cursor=c1",
        ]
    );
}

#[test]
fn register_takes_the_default_project_when_none_is_given() {
    let m = Mock::start(|s| match s.path.as_str() {
        "/v1/projects/default" => (
            200,
            json!({"id": "0b0e2a5c-0000-4000-8000-000000000001"}).to_string(),
        ),
        _ => (
            201,
            json!({"toolId": "acme.x", "version": "1.0.0"}).to_string(),
        ),
    });
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    std::fs::write(&f, r#"{"id":"acme.x","version":"1.0.0"}"#).unwrap();
    let env = [
        ("KINDGI_API_URL", m.url.as_str()),
        ("KINDGI_API_TOKEN", "k"),
    ];
    let out = run(&["tools", "register", f.to_str().unwrap()], &env);
    assert_eq!(out.code, 0, "{out:?}");
    let seen = m.requests();
    assert_eq!(seen[0].path, "/v1/projects/default");
    assert_eq!(
        seen[1].json()["projectId"],
        "0b0e2a5c-0000-4000-8000-000000000001"
    );
    let out = run(
        &["tools", "register", f.to_str().unwrap(), "--project", "p2"],
        &env,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(m.requests().last().unwrap().json()["projectId"], "p2");
}

#[test]
fn bad_manifest_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.json");
    std::fs::write(&f, "{oops").unwrap();
    let env = [
        ("KINDGI_API_URL", "http://127.0.0.1:9"),
        ("KINDGI_API_TOKEN", "k"),
    ];
    let o = run(&["tools", "register", f.to_str().unwrap()], &env);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("is not JSON"), "{}", o.stderr);
    std::fs::write(&f, "[1]").unwrap();
    assert_eq!(
        run(&["tools", "register", f.to_str().unwrap()], &env).code,
        2
    );
    assert_eq!(
        run(&["tools", "register", "/nonexistent/tool.json"], &env).code,
        2
    );
    let o = run(&["tools", "get"], &env);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("Usage: kindgi tools get --help"),
        "{}",
        o.stderr
    );
}

#[test]
fn unreachable_api_exits_1() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let o = run(
        &["tools", "get", "acme.x", "--api", &url, "--token", "kgi_x"],
        &[],
    );
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        o.stderr
            .starts_with("Error [network]: cannot reach the API"),
        "{}",
        o.stderr
    );
}
