//! `kindgi schema validate`: the real binary on real files; exit codes and `--json` output.
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

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path
}

fn json_out(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn greeting_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "greeting": {"type": "string", "default": "Hi"}},
        "required": ["name"]
    })
}

fn run(schema: &Value, instance: &Value, extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "schema.json", schema);
    let i = write(dir.path(), "instance.json", instance);
    let mut args = vec![
        "schema",
        "validate",
        "--schema",
        s.to_str().unwrap(),
        i.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    kindgi(&args)
}

#[test]
fn a_valid_instance_exits_0_with_defaults_filled() {
    let out = run(&greeting_schema(), &json!({"name": "Ada"}), &["--json"]);
    assert_eq!(out.status.code(), Some(0));
    let report = json_out(&out);
    assert_eq!(report["compiles"], true);
    assert_eq!(report["valid"], true);
    assert_eq!(report["issues"], json!([]));
    assert_eq!(
        report["instanceAfter"],
        json!({"name": "Ada", "greeting": "Hi"})
    );
    assert!(report.get("compileError").is_none());

    let out = run(&greeting_schema(), &json!({"name": "Ada"}), &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("valid"));
}

#[test]
fn the_output_side_fills_nothing() {
    let out = run(
        &greeting_schema(),
        &json!({"name": "Ada"}),
        &["--side", "output", "--json"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_out(&out)["instanceAfter"], json!({"name": "Ada"}));
}

#[test]
fn an_invalid_instance_exits_1_with_ajv_issues() {
    let out = run(&greeting_schema(), &json!({"name": 42}), &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report = json_out(&out);
    assert_eq!(report["compiles"], true);
    assert_eq!(report["valid"], false);
    assert_eq!(
        report["issues"][0],
        json!({
            "instancePath": "/name",
            "schemaPath": "#/properties/name/type",
            "keyword": "type",
            "params": {"type": "string"},
            "message": "must be string"
        })
    );

    let out = run(&greeting_schema(), &json!({}), &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("must have required property 'name'"),
        "{text}"
    );
}

#[test]
fn a_schema_that_does_not_compile_exits_2() {
    let bad = json!({"type": "object", "x-label": "strict mode refuses this"});
    let out = run(&bad, &json!({}), &["--json"]);
    assert_eq!(out.status.code(), Some(2));
    let report = json_out(&out);
    assert_eq!(report["compiles"], false);
    assert_eq!(report["valid"], false);
    assert!(
        report["compileError"]
            .as_str()
            .unwrap()
            .contains("strict mode"),
        "{report}"
    );

    let out = run(&bad, &json!({}), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not compile"));
}

#[test]
fn mcp_mode_accepts_draft07() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}}
    });
    let out = run(&schema, &json!({"point": [1, 2]}), &["--json"]);
    assert_eq!(out.status.code(), Some(2), "pack mode refuses draft-07");
    let out = run(
        &schema,
        &json!({"point": [1, 2]}),
        &["--mode", "mcp", "--json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let out = run(
        &schema,
        &json!({"point": [1, "two"]}),
        &["--mode", "mcp", "--json"],
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn unusable_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let schema = write(dir.path(), "schema.json", &greeting_schema());
    let missing = dir.path().join("missing.json");
    let out = kindgi(&[
        "schema",
        "validate",
        "--schema",
        schema.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"));

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "nope").unwrap();
    let out = kindgi(&[
        "schema",
        "validate",
        "--schema",
        junk.to_str().unwrap(),
        schema.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not JSON"));

    let out = kindgi(&["schema", "validate", schema.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "--schema is required");
    let out = kindgi(&[
        "schema",
        "validate",
        "--schema",
        schema.to_str().unwrap(),
        "--mode",
        "weird",
        schema.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}
