//! `validate_manifest` over the real engine (kindgi-schema), compared live with the
//! reference: the official `validateToolManifest` (schema 1.1.0) and Ajv 8 on our 1.3.0
//! schema, both run by `tests/data/reference-validate.mjs` under the reference Node.
//!
//! Needs `KINDGI_CLI_NODE_MODULES`, `KINDGI_NPM_NODE_MODULES` and `KINDGI_NODE24_DIR`
//! (`source .cache/reference.env`); without them the test is skipped with a message, or
//! fails when `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::{RealEngine, data};
use kindgi_spec::validate::{ManifestCheck, Problem, validate_manifest};
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};

const WIRE: ManifestCheck = ManifestCheck {
    production: false,
    has_handler: None,
};

fn base() -> Value {
    json!({
        "id": "test.echo",
        "description": "Echo the input as output",
        "version": "1.0.0",
        "input": {"type": "object", "properties": {"msg": {"type": "string"}}, "required": ["msg"]},
        "output": {"type": "object", "properties": {"msg": {"type": "string"}}, "required": ["msg"]}
    })
}

fn with(patch: Value) -> Value {
    let mut m = base();
    for (k, v) in patch.as_object().unwrap() {
        if v.is_null() {
            m.as_object_mut().unwrap().remove(k);
        } else {
            m[k] = v.clone();
        }
    }
    m
}

fn http(url: &str) -> Value {
    with(
        json!({"id": "acme.lookup", "spec": {"kind": "http", "method": "GET", "urlTemplate": url}}),
    )
}

/// Manifests using only 1.1.0 fields, with ids our stricter id rule accepts, so the
/// reference's answer must be ours.
fn shared_cases() -> Vec<(&'static str, Value)> {
    let draft07 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"location": {"type": "string", "enum": ["Chicago"]}, "point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}},
        "required": ["location"]
    });
    let mcp = |input: Value| {
        with(
            json!({"transport": "mcp", "mcpEndpoint": "mcp+stdio://weather", "input": input, "output": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}}),
        )
    };
    vec![
        ("base tool", base()),
        (
            "effects",
            with(
                json!({"effects": [{"kind": "reads", "resource": "memory:facts"}, {"kind": "network", "resource": "external:api.example.com", "notes": "rate limited"}]}),
            ),
        ),
        (
            "needs",
            with(
                json!({"needs": [{"name": "tenant"}, {"name": "memory:facts", "optional": true}]}),
            ),
        ),
        ("empty id", with(json!({"id": ""}))),
        ("empty description", with(json!({"description": ""}))),
        ("version v1", with(json!({"version": "v1"}))),
        (
            "prerelease version",
            with(json!({"version": "1.2.3-beta.1"})),
        ),
        ("no version", with(json!({"version": null}))),
        ("numeric version", with(json!({"version": 1}))),
        ("bad transport", with(json!({"transport": "weird"}))),
        (
            "unknown effect",
            with(json!({"effects": [{"kind": "gambles"}]})),
        ),
        (
            "bad input type",
            with(json!({"input": {"type": "not-a-json-schema-type"}})),
        ),
        (
            "dangling output ref",
            with(json!({"output": {"$ref": "#/definitions/DoesNotExist"}})),
        ),
        ("unknown top-level field", with(json!({"projectId": "p"}))),
        (
            "limits without cpuMs",
            with(json!({"limits": {"memMB": 1}})),
        ),
        (
            "allowlist without hosts",
            with(json!({"network": {"kind": "allowlist"}})),
        ),
        (
            "http method FETCH",
            with(json!({"spec": {"kind": "http", "method": "FETCH", "urlTemplate": "https://x"}})),
        ),
        (
            "http timeout 0",
            with(
                json!({"spec": {"kind": "http", "method": "GET", "urlTemplate": "https://x", "timeoutMs": 0}}),
            ),
        ),
        (
            "secret schema unknown keyword",
            with(
                json!({"id": "acme.sign", "needsSpec": {"secrets": {"SIGNING_KEY": {"type": "string", "x-unknown": true}}}}),
            ),
        ),
        (
            "env schema bad type",
            with(json!({"id": "acme.sign", "needsSpec": {"env": {"REGION": {"type": "strng"}}}})),
        ),
        (
            "env default not a string",
            with(
                json!({"id": "acme.sign", "needsSpec": {"env": {"RETRIES": {"type": "string", "default": 3}}}}),
            ),
        ),
        (
            "good needsSpec",
            with(json!({"id": "acme.sign", "needsSpec": {
                "secrets": {"SIGNING_KEY": {"type": "string", "minLength": 32}, "STAMP_KEY": {"type": ["string", "null"], "minLength": 32}},
                "env": {"REGION": {"type": "string", "enum": ["eu", "us"], "default": "eu"}}
            }})),
        ),
        ("mcp draft-07", mcp(draft07.clone())),
        (
            "draft-07 on a pack tool",
            with(json!({"input": draft07.clone()})),
        ),
        (
            "draft-07 on a native tool",
            with(json!({"transport": "native", "input": draft07.clone()})),
        ),
        (
            "strict 2020-12 tuple",
            with(
                json!({"input": {"type": "object", "properties": {"id": {"type": ["string", "number"]}, "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}}, "required": ["id"]}}),
            ),
        ),
        (
            "mcp draft-04",
            mcp(json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"})),
        ),
        ("null", Value::Null),
        ("string", json!("x")),
        ("number", json!(42)),
        ("built-in id", with(json!({"id": "kindgi_remember"}))),
        ("handler key", with(json!({"handler": "() => 1"}))),
        ("host placeholder", http("https://{host}/x")),
        ("domain placeholder", http("https://api.{domain}/x")),
        ("port placeholder", http("https://api.example.com:{port}/x")),
        (
            "userinfo placeholder",
            http("https://{user}@api.example.com/x"),
        ),
        ("scheme placeholder", http("{scheme}://api.example.com/x")),
        ("ftp", http("ftp://api.example.com/x")),
        ("no host", http("https:///x")),
        (
            "path and query placeholders",
            http("https://api.example.com/{id}?q={q}"),
        ),
        ("localhost", http("http://localhost:8080/{id}")),
        ("upper case", http("HTTPS://API.EXAMPLE.COM/{id}")),
        (
            "many schema problems",
            json!({"id": 7, "version": "1", "input": [], "needs": [{}], "sandbox": "loose", "metadata": 1}),
        ),
    ]
}

/// Manifests with 1.3.0 fields: only Ajv on our schema is the reference for the shape.
fn new_cases() -> Vec<(&'static str, Value)> {
    vec![
        ("every field", data("tool.every-field.json")),
        ("every http field", data("tool.http-every-field.json")),
        ("mcp tool", data("tool.mcp.json")),
        (
            "pauses not a boolean",
            with(
                json!({"pauses": "yes", "resultIsOutsideData": 1, "needsApprovalWhenUnattended": null}),
            ),
        ),
        (
            "bad connection need",
            with(
                json!({"needsSpec": {"connections": {"mail": {"app": "", "permissions": "gmail.send", "as": "someone", "extra": 1}}}}),
            ),
        ),
        (
            "connection auth without name",
            with(
                json!({"spec": {"kind": "http", "method": "GET", "urlTemplate": "https://x.example/", "authorization": {"kind": "connection"}}}),
            ),
        ),
    ]
}

struct Reference {
    reference: Value,
    ajv: Vec<Problem>,
}

fn ask_reference(manifests: &[Value]) -> Option<Vec<Reference>> {
    let vars = [
        "KINDGI_CLI_NODE_MODULES",
        "KINDGI_NPM_NODE_MODULES",
        "KINDGI_NODE24_DIR",
    ];
    let missing: Vec<&str> = vars
        .iter()
        .copied()
        .filter(|v| std::env::var_os(v).is_none())
        .collect();
    if !missing.is_empty() {
        kindgi_spec::testing::skip_without_reference(
            "validate_reference",
            format_args!("{} unset", missing.join(", ")),
        );
        return None;
    }
    let node = format!("{}/bin/node", std::env::var("KINDGI_NODE24_DIR").unwrap());
    let dir = env!("CARGO_MANIFEST_DIR");
    let mut child = Command::new(node)
        .arg(format!("{dir}/tests/data/reference-validate.mjs"))
        .arg(format!("{dir}/schemas/tool.schema.json"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&serde_json::to_vec(manifests).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "reference script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    Some(
        answers
            .into_iter()
            .map(|a| Reference {
                reference: a["reference"].clone(),
                ajv: serde_json::from_value(a["ajv"].clone()).unwrap(),
            })
            .collect(),
    )
}

fn ours(manifest: &Value) -> Vec<Problem> {
    match validate_manifest(manifest, &WIRE, &RealEngine) {
        Ok(_) => vec![],
        Err(p) => p,
    }
}

#[test]
fn schema_problems_are_ajvs_exactly() {
    let cases: Vec<(&str, Value)> = shared_cases().into_iter().chain(new_cases()).collect();
    let manifests: Vec<Value> = cases.iter().map(|(_, m)| m.clone()).collect();
    let Some(answers) = ask_reference(&manifests) else {
        return;
    };
    let mut failures = vec![];
    for ((name, manifest), answer) in cases.iter().zip(&answers) {
        if !manifest.is_object() {
            continue;
        }
        let ours = ours(manifest);
        if !ours.starts_with(&answer.ajv) {
            failures.push(format!(
                "{name}:\n  ajv:  {:?}\n  ours: {ours:?}",
                answer.ajv
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn answers_agree_with_the_official_validate_tool_manifest() {
    let cases = shared_cases();
    let manifests: Vec<Value> = cases.iter().map(|(_, m)| m.clone()).collect();
    let Some(answers) = ask_reference(&manifests) else {
        return;
    };
    let mut failures = vec![];
    for ((name, manifest), answer) in cases.iter().zip(&answers) {
        let ours = ours(manifest);
        let reference = &answer.reference;
        let agrees = if reference["ok"] == true {
            ours.is_empty()
        } else if reference["code"] == "invalid-schema" {
            // The reference reports a schema that does not compile with a message only:
            // ours is a problem at /input or /output whose message begins with it.
            // Its strict-mode hint names Zod; ours names serde_json: compare up to it.
            let message = reference["message"].as_str().unwrap();
            let message = message
                .split(". For a field that may hold any JSON value")
                .next()
                .unwrap();
            ours.iter().any(|p| {
                (p.path == "/input" || p.path == "/output") && p.message.starts_with(message)
            })
        } else {
            // invalid-tool-definition stops at the first failing step; we go on, so its
            // issues are the beginning of ours.
            let issues: Vec<Problem> = serde_json::from_value(reference["issues"].clone()).unwrap();
            !issues.is_empty() && ours.starts_with(&issues)
        };
        if !agrees {
            failures.push(format!(
                "{name}:\n  reference: {reference}\n  ours:      {ours:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
