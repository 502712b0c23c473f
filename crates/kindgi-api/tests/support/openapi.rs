//! Response bodies checked against the official OpenAPI document's component schemas
//! (`@kindgi/api` 0.1.10 `openapi.json`, as the official CLI wheel installs it) with our own
//! engine, kindgi-schema: [`check`]`("Flow", &body)` panics with every issue.
//!
//! The document is found at `$KINDGI_CLI_NODE_MODULES/@kindgi/api/openapi.json`, else in the
//! workspace's `.venv` (what `scripts/test` installs). Without it the checks are skipped
//! with a note — unless `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set, where its absence
//! fails the test. A component is compiled with the schemas it reaches: its `$ref`s
//! (`#/components/schemas/X`) rewritten to `#/$defs/X`, non-strict (OpenAPI's `example`),
//! Draft 2020-12, formats checked (`uuid`, `date-time`).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

use kindgi_schema::{CompileOptions, Mode, Side, Validator};
use serde_json::{Map, Value, json};

const REF_PREFIX: &str = "#/components/schemas/";

fn document_path() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(dir) = std::env::var("KINDGI_CLI_NODE_MODULES") {
        candidates.push(PathBuf::from(dir).join("@kindgi/api/openapi.json"));
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    candidates.push(root.join(
        ".venv/lib/python3.11/site-packages/kindgi_cli/_cli/node_modules/@kindgi/api/openapi.json",
    ));
    candidates.into_iter().find(|p| p.is_file())
}

fn required() -> bool {
    std::env::var("KINDGI_REQUIRE_REFERENCE").is_ok_and(|v| v == "1")
        || std::env::var("CI").is_ok_and(|v| !v.is_empty())
}

/// The official component schemas, or `None` (skip) when the document is not installed.
static SCHEMAS: LazyLock<Option<Map<String, Value>>> = LazyLock::new(|| {
    let Some(path) = document_path() else {
        assert!(
            !required(),
            "the official openapi.json (@kindgi/api 0.1.10) is not installed; run scripts/test"
        );
        eprintln!("note: official openapi.json not found; response schemas are not checked");
        return None;
    };
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    doc.pointer("/components/schemas")
        .and_then(Value::as_object)
        .cloned()
});

static COMPILED: LazyLock<Mutex<BTreeMap<String, Arc<Validator>>>> = LazyLock::new(Mutex::default);

fn rewrite(v: &Value, reached: &mut BTreeSet<String>) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| match (k.as_str(), v.as_str()) {
                    ("$ref", Some(r)) if r.starts_with(REF_PREFIX) => {
                        let name = &r[REF_PREFIX.len()..];
                        reached.insert(name.to_owned());
                        (k.clone(), json!(format!("#/$defs/{name}")))
                    }
                    _ => (k.clone(), rewrite(v, reached)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| rewrite(v, reached)).collect()),
        other => other.clone(),
    }
}

fn validator(component: &str) -> Option<Arc<Validator>> {
    let schemas = SCHEMAS.as_ref()?;
    if let Some(v) = COMPILED.lock().unwrap().get(component) {
        return Some(v.clone());
    }
    let mut defs = Map::new();
    let mut todo = vec![component.to_owned()];
    let mut seen = BTreeSet::new();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let schema = schemas
            .get(&name)
            .unwrap_or_else(|| panic!("no component schema {name}"));
        let mut reached = BTreeSet::new();
        defs.insert(name, rewrite(schema, &mut reached));
        todo.extend(reached);
    }
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/$defs/{component}"),
        "$defs": defs,
    });
    let compiled = kindgi_schema::compile(
        &root,
        CompileOptions {
            mode: Mode::Mcp,
            side: Side::Output,
        },
    )
    .unwrap_or_else(|e| panic!("component {component} does not compile: {e}"));
    let compiled = Arc::new(compiled);
    COMPILED
        .lock()
        .unwrap()
        .insert(component.to_owned(), compiled.clone());
    Some(compiled)
}

/// Whether `body` is valid against `component` (`None`: the document is not installed).
pub fn is_valid(component: &str, body: &Value) -> Option<bool> {
    validator(component).map(|v| v.is_valid(body))
}

/// Panics unless `body` is valid against the official component schema `component`.
pub fn check(component: &str, body: &Value) {
    let Some(v) = validator(component) else {
        return;
    };
    if let Err(issues) = v.validate(body) {
        let text: Vec<String> = issues
            .iter()
            .map(|i| format!("{} {}", i.instance_path(), i.message()))
            .collect();
        panic!(
            "body is not a valid {component}:\n  {}\nbody: {body}",
            text.join("\n  ")
        );
    }
}

/// Panics unless `body` is a valid error envelope (`WireError`).
pub fn check_error(body: &Value) {
    check("WireError", body);
}
