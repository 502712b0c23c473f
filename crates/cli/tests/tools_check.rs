//! `kindgi tools check`: the real binary on real files; exit codes and `--json` output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kindgi(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kindgi"))
        .args(args)
        .output()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn valid_manifest() -> Value {
    json!({
        "id": "acme.orders-lookup",
        "description": "Look up a customer's orders",
        "version": "1.0.0",
        "mutating": false,
        "effects": [{"kind": "reads", "resource": "db:orders"}],
        "input": {"type":"object","properties":{"customerId":{"type":"string"}},"required":["customerId"]},
        "output": {"type":"object","properties":{"orders":{"type":"array"}}}
    })
}

fn json_out(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn valid_manifests_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &valid_manifest().to_string());
    let out = kindgi(&["tools", "check", a.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ok ") && text.contains("acme.orders-lookup@1.0.0"),
        "{text}"
    );

    let out = kindgi(&["tools", "check", "--json", a.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json_out(&out),
        json!([{"file": a.to_str().unwrap(), "valid": true, "problems": []}])
    );
}

#[test]
fn any_invalid_manifest_exits_1_with_its_problems() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &valid_manifest().to_string());
    let mut bad = valid_manifest();
    bad["version"] = json!("v1");
    bad["transport"] = json!("weird");
    let bad = write(dir.path(), "bad.json", &bad.to_string());

    let out = kindgi(&[
        "tools",
        "check",
        "--json",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let reports = json_out(&out);
    assert_eq!(reports[0]["valid"], true);
    assert_eq!(reports[1]["file"], bad.to_str().unwrap());
    assert_eq!(reports[1]["valid"], false);
    let paths: Vec<&str> = reports[1]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"/version") && paths.contains(&"/transport"),
        "{paths:?}"
    );
    for p in reports[1]["problems"].as_array().unwrap() {
        assert!(p["message"].as_str().is_some_and(|m| !m.is_empty()));
    }

    let out = kindgi(&[
        "tools",
        "check",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("invalid") && text.contains("/version"),
        "{text}"
    );
}

#[test]
fn a_file_that_is_not_json_is_an_invalid_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let junk = write(dir.path(), "junk.json", "{ not json");
    let out = kindgi(&["tools", "check", "--json", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let reports = json_out(&out);
    assert_eq!(reports[0]["valid"], false);
    assert_eq!(reports[0]["problems"][0]["path"], "");
    assert!(
        reports[0]["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("not JSON")
    );
}

#[test]
fn a_json_value_that_is_not_an_object_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let num = write(dir.path(), "num.json", "42");
    let out = kindgi(&["tools", "check", "--json", num.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json_out(&out)[0]["problems"],
        json!([{"path": "", "message": "must be an object"}])
    );
}

#[test]
fn a_missing_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let out = kindgi(&["tools", "check", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nope.json"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn no_files_is_a_usage_error() {
    let out = kindgi(&["tools", "check"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn production_refuses_filesystem_artifacts() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = valid_manifest();
    m["codeArtifactRef"] = json!({"kind": "filesystem", "modulePath": "/srv/pack/handler.js"});
    let file = write(dir.path(), "fs.json", &m.to_string());
    let out = kindgi(&["tools", "check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let out = kindgi(&[
        "tools",
        "check",
        "--production",
        "--json",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let problems = &json_out(&out)[0]["problems"];
    assert!(
        problems[0]["path"]
            .as_str()
            .unwrap()
            .starts_with("/codeArtifactRef"),
        "{problems}"
    );
}

#[test]
fn the_repository_examples_check_as_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools");
    let mut valid: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.to_str().unwrap().to_owned())
        .collect();
    valid.sort();
    assert!(valid.len() >= 3, "{valid:?}");
    let mut args = vec!["tools", "check"];
    args.extend(valid.iter().map(String::as_str));
    let out = kindgi(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let invalid = root.join("invalid");
    for entry in std::fs::read_dir(invalid).unwrap() {
        let path = entry.unwrap().path();
        let out = kindgi(&["tools", "check", "--json", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
        assert!(!json_out(&out)[0]["problems"].as_array().unwrap().is_empty());
    }
}
