//! `validate_manifest` end to end over the real engine (kindgi-schema), with the expected
//! problems written out (Ajv 8's answers on the 1.3.0 schema, captured with
//! `tests/data/reference-validate.mjs`). Runs without the reference installed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::{RealEngine, data};
use kindgi_spec::validate::{ManifestCheck, Problem, validate_manifest};
use serde_json::{Value, json};

const WIRE: ManifestCheck = ManifestCheck {
    production: false,
    has_handler: None,
};

fn with(patch: Value) -> Value {
    let mut m = json!({"id": "test.echo", "description": "Echo", "version": "1.0.0", "input": {}, "output": {}});
    for (k, v) in patch.as_object().unwrap() {
        m[k] = v.clone();
    }
    m
}

fn problems(manifest: &Value) -> Vec<(String, String)> {
    match validate_manifest(manifest, &WIRE, &RealEngine) {
        Ok(_) => vec![],
        Err(p) => p
            .into_iter()
            .map(|Problem { path, message }| (path, message))
            .collect(),
    }
}

fn expect(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(p, m)| (p.to_string(), m.to_string()))
        .collect()
}

#[test]
fn fixtures_with_every_field_are_valid() {
    for name in [
        "tool.every-field.json",
        "tool.http-every-field.json",
        "tool.mcp.json",
    ] {
        let raw = data(name);
        let m = validate_manifest(&raw, &WIRE, &RealEngine)
            .unwrap_or_else(|p| panic!("{name}: {p:#?}"));
        assert_eq!(serde_json::to_value(&m).unwrap(), raw, "{name}");
    }
}

#[test]
fn new_boolean_fields_are_booleans() {
    assert_eq!(
        problems(&with(
            json!({"pauses": "yes", "resultIsOutsideData": 1, "needsApprovalWhenUnattended": null})
        )),
        expect(&[
            ("/needsApprovalWhenUnattended", "must be boolean"),
            ("/pauses", "must be boolean"),
            ("/resultIsOutsideData", "must be boolean"),
        ])
    );
}

#[test]
fn connection_needs_have_their_shape() {
    let raw = with(
        json!({"needsSpec": {"connections": {"mail": {"app": "", "permissions": "gmail.send", "as": "someone", "extra": 1}}}}),
    );
    assert_eq!(
        problems(&raw),
        expect(&[
            (
                "/needsSpec/connections/mail",
                "must NOT have additional properties"
            ),
            (
                "/needsSpec/connections/mail/app",
                "must NOT have fewer than 1 characters"
            ),
            ("/needsSpec/connections/mail/permissions", "must be array"),
            (
                "/needsSpec/connections/mail/as",
                "must be equal to one of the allowed values"
            ),
        ])
    );
}

#[test]
fn connection_auth_shape_then_declaration() {
    let raw = with(
        json!({"spec": {"kind": "http", "method": "GET", "urlTemplate": "https://x.example/", "authorization": {"kind": "connection"}}}),
    );
    assert_eq!(
        problems(&raw),
        expect(&[
            (
                "/spec/authorization",
                "must have required property 'secretRef'"
            ),
            ("/spec/authorization/kind", "must be equal to constant"),
            (
                "/spec/authorization",
                "must have required property 'headerName'"
            ),
            (
                "/spec/authorization",
                "must have required property 'secretRef'"
            ),
            ("/spec/authorization/kind", "must be equal to constant"),
            (
                "/spec/authorization",
                "must have required property 'connection'"
            ),
            (
                "/spec/authorization",
                "must match exactly one schema in oneOf"
            ),
            ("/spec", "must match exactly one schema in oneOf"),
        ])
    );
    let raw = with(
        json!({"spec": {"kind": "http", "method": "GET", "urlTemplate": "https://x.example/", "authorization": {"kind": "connection", "connection": "mail"}}}),
    );
    let p = problems(&raw);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].0, "/spec/authorization/connection");
}

#[test]
fn unit_network_kinds_take_no_hosts() {
    assert_eq!(
        problems(&with(json!({"network": {"kind": "none", "hosts": []}}))),
        expect(&[
            ("/network", "must NOT have additional properties"),
            ("/network/kind", "must be equal to constant"),
            ("/network", "must match exactly one schema in oneOf"),
        ])
    );
}

#[test]
fn versions_are_plain_and_without_leading_zeros() {
    assert_eq!(
        problems(&with(json!({"version": "1.2.3-beta.1"}))),
        expect(&[("/version", "must match pattern \"^\\d+\\.\\d+\\.\\d+$\"")])
    );
    assert_eq!(
        problems(&with(json!({"version": "1.02.3"}))),
        expect(&[(
            "/version",
            "version \"1.02.3\" has a leading zero in \"02\": write \"1.2.3\""
        )])
    );
}

#[test]
fn need_schemas_compile_strictly_but_allow_the_tunable_marker() {
    let ok = with(
        json!({"needsSpec": {"env": {"REGION": {"type": "string", "x-kindgi-tunable": true, "default": "eu"}}}}),
    );
    assert_eq!(problems(&ok), vec![]);
    let raw = with(
        json!({"id": "acme.sign", "needsSpec": {"secrets": {"SIGNING_KEY": {"type": "string", "x-unknown": true}}}}),
    );
    assert_eq!(
        problems(&raw),
        expect(&[(
            "/needsSpec/secrets/SIGNING_KEY",
            "doesn't compile: strict mode: unknown keyword: \"x-unknown\""
        )])
    );
}

#[test]
fn mcp_dialects() {
    let draft07 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}}});
    let mcp = with(
        json!({"transport": "mcp", "mcpEndpoint": "mcp+http://127.0.0.1:1/mcp", "input": draft07.clone()}),
    );
    assert_eq!(problems(&mcp), vec![]);
    let pack = with(json!({"input": draft07}));
    let p = problems(&pack);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].0, "/input");
    assert_eq!(
        p[0].1,
        "Tool input schema does not compile: The schema's $schema \"http://json-schema.org/draft-07/schema#\" \
         isn't a JSON Schema dialect Kindgi validates here: 2020-12."
    );
    let draft04 = with(json!({"transport": "mcp", "mcpEndpoint": "mcp+stdio://x",
        "input": {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}}));
    assert_eq!(
        problems(&draft04),
        expect(&[(
            "/input",
            "Tool input schema does not compile: The schema's $schema \"http://json-schema.org/draft-04/schema#\" \
             isn't a JSON Schema dialect Kindgi validates: draft-06, draft-07, 2019-09 or 2020-12."
        )])
    );
}

#[test]
fn everything_wrong_at_once_over_the_real_engine() {
    let raw = json!({
        "id": "Acme.Send",
        "description": "",
        "version": "1.02.0",
        "input": {"type": "object", "x-label": "x"},
        "output": {},
        "transport": "mcp",
        "pauses": true,
        "mutating": false,
        "effects": [{"kind": "writes"}],
        "needsSpec": {"env": {"N": {"type": "string", "default": 1}}},
        "codeArtifactRef": {"kind": "filesystem", "modulePath": "/x"},
        "limits": {"memMB": 0, "cpuMs": 1}
    });
    let p = validate_manifest(
        &raw,
        &ManifestCheck {
            production: true,
            has_handler: Some(true),
        },
        &RealEngine,
    )
    .unwrap_err();
    let paths: Vec<&str> = p.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/description",
            "/limits/memMB",
            "/id",
            "/version",
            "/needsSpec/env/N/default",
            "/mcpEndpoint",
            "/pauses",
            "/codeArtifactRef/kind",
            "/mutating",
        ],
        "{p:#?}"
    );
}

#[test]
fn manifests_from_the_official_indexers_pass() {
    // Tool entries of pack indexes written by the official Python indexer (and the
    // specification's example), minus the index-only `modulePath`.
    for file in [
        "conformance-pack-python.index.json",
        "pack-index.example.python-pack.json",
    ] {
        let index = data(file);
        for tool in index["tools"].as_array().unwrap() {
            let mut manifest = tool.clone();
            manifest.as_object_mut().unwrap().remove("modulePath");
            if let Err(p) = validate_manifest(&manifest, &WIRE, &RealEngine) {
                panic!("{file} {}: {p:#?}", tool["id"]);
            }
        }
    }
}
