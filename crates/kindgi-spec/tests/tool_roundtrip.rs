//! Tool manifests 1.3.0 round-trip losslessly through the serde types: parse → serialize →
//! the same JSON value, on manifests that use every field; unknown fields are refused at
//! every level, including inside the `kind`-tagged enums.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use kindgi_spec::{
    CodeArtifactRef, ConnectionOwner, EffectKind, HttpAuthSpec, HttpRequestBodySpec, NetworkPolicy,
    ToolManifest, ToolSpec, Transport,
};
use serde_json::{Value, json};

fn data(name: &str) -> Value {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Parses `value` as a manifest, serializes it back, and checks nothing changed — by value
/// and, since key order is preserved, by text.
fn round_trip(value: &Value) -> ToolManifest {
    let manifest: ToolManifest = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("does not parse: {e}\n{value:#}"));
    let back = serde_json::to_value(&manifest).unwrap();
    assert_eq!(&back, value, "JSON changed in the round trip");
    let text = serde_json::to_string(&manifest).unwrap();
    let reparsed: ToolManifest = serde_json::from_str(&text).unwrap();
    assert_eq!(reparsed, manifest);
    manifest
}

#[test]
fn every_field_of_a_handler_tool() {
    let raw = data("tool.every-field.json");
    let m = round_trip(&raw);
    assert_eq!(m.pauses, Some(true));
    assert_eq!(m.result_is_outside_data, Some(true));
    assert_eq!(m.needs_approval_when_unattended, Some(true));
    assert_eq!(m.transport, Some(Transport::Native));
    let limits = m.limits.as_ref().unwrap();
    assert_eq!((limits.mem_mb, limits.cpu_ms), (256, 5000));
    assert_eq!(
        m.network,
        Some(NetworkPolicy::Allowlist {
            hosts: vec!["api.example.com".into(), "smtp.example.com".into()]
        })
    );
    let kinds: Vec<EffectKind> = m.effects().iter().map(|e| e.kind).collect();
    assert_eq!(kinds, EffectKind::ALL);
    let needs = m.needs_spec.as_ref().unwrap();
    let connections = needs.connections.as_ref().unwrap();
    assert_eq!(
        connections.keys().collect::<Vec<_>>(),
        ["mail", "crm"],
        "order kept"
    );
    assert_eq!(connections["mail"].as_, ConnectionOwner::Person);
    assert_eq!(connections["crm"].as_, ConnectionOwner::Company);
    assert!(
        matches!(&m.code_artifact_ref, Some(CodeArtifactRef::Oci { artifact_version, .. }) if artifact_version == "20261001.7")
    );
    // Key order survives too: the text is the same as the input re-serialized.
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        serde_json::to_string(&raw).unwrap()
    );
}

#[test]
fn every_field_of_an_http_tool() {
    let raw = data("tool.http-every-field.json");
    let m = round_trip(&raw);
    let Some(ToolSpec::Http(spec)) = &m.spec else {
        panic!("not an http spec: {:?}", m.spec)
    };
    assert_eq!(
        spec.authorization,
        Some(HttpAuthSpec::Connection {
            connection: "gh".into()
        })
    );
    assert_eq!(
        spec.request_body,
        Some(HttpRequestBodySpec::Text {
            template: "note: {note}".into()
        })
    );
    assert_eq!(
        spec.success_status.map(|s| (s.min, s.max)),
        Some((200, 399))
    );
    assert!(matches!(
        m.code_artifact_ref,
        Some(CodeArtifactRef::Filesystem { .. })
    ));
    assert_eq!(m.network, Some(NetworkPolicy::Unrestricted));
    assert!(m.is_read_only());
}

#[test]
fn every_auth_kind_and_body_kind() {
    let base = data("tool.http-every-field.json");
    let auths = [
        json!({"kind": "bearer", "secretRef": {"envName": "production", "name": "github-token"}}),
        json!({"kind": "header", "headerName": "X-API-Key", "secretRef": {"envName": "local", "name": "key"}}),
        json!({"kind": "connection", "connection": "gh"}),
    ];
    let bodies = [
        json!({"kind": "json-input"}),
        json!({"kind": "input-passthrough"}),
        json!({"kind": "text", "template": "{a} and {b}"}),
    ];
    for auth in &auths {
        for body in &bodies {
            let mut raw = base.clone();
            raw["spec"]["authorization"] = auth.clone();
            raw["spec"]["requestBody"] = body.clone();
            let m = round_trip(&raw);
            let Some(ToolSpec::Http(spec)) = m.spec else {
                panic!("{auth} {body}: not http")
            };
            assert_eq!(serde_json::to_value(spec.authorization).unwrap(), *auth);
            assert_eq!(serde_json::to_value(spec.request_body).unwrap(), *body);
        }
    }
    let mut minimal = base.clone();
    minimal["spec"] =
        json!({"kind": "http", "method": "DELETE", "urlTemplate": "https://x.example/{id}"});
    round_trip(&minimal);
}

#[test]
fn mcp_tool_and_minimal_tool() {
    let m = round_trip(&data("tool.mcp.json"));
    assert!(m.is_mcp());
    assert!(!m.is_read_only(), "an MCP tool is never read-only");
    assert_eq!(m.network, Some(NetworkPolicy::None));
    let minimal = json!({"id": "test.echo", "description": "Echo", "version": "1.0.0", "input": {}, "output": {}});
    let m = round_trip(&minimal);
    assert!(m.is_mutating(), "absent mutating means true");
    assert_eq!(m.transport_or_default(), Transport::Auto);
    assert!(!m.pauses() && !m.result_is_outside_data() && !m.needs_approval_when_unattended());
}

#[test]
fn manifests_written_by_the_official_python_indexer() {
    // Tool entries of a pack index carry pack-only keys (`modulePath`); without those,
    // each is a tool manifest and must read back unchanged.
    let index = data("conformance-pack-python.index.json");
    let tools = index["tools"].as_array().unwrap();
    assert!(tools.len() >= 5);
    for tool in tools {
        let mut manifest = tool.clone();
        let object = manifest.as_object_mut().unwrap();
        object.remove("modulePath");
        round_trip(&manifest);
    }
}

/// Each mutation adds one unknown key somewhere; every one must be refused.
#[test]
fn unknown_fields_are_refused_everywhere() {
    let http = data("tool.http-every-field.json");
    let every = data("tool.every-field.json");
    let cases: Vec<(&str, Value, &str)> = vec![
        ("top level", every.clone(), "/projectId"),
        ("limits", every.clone(), "/limits/gpu"),
        ("network allowlist", every.clone(), "/network/extra"),
        ("needsSpec", every.clone(), "/needsSpec/files"),
        (
            "connection need",
            every.clone(),
            "/needsSpec/connections/mail/scope",
        ),
        ("need", every.clone(), "/needs/0/extra"),
        ("effect", every.clone(), "/effects/0/extra"),
        ("oci artifact", every.clone(), "/codeArtifactRef/digest"),
        ("http spec", http.clone(), "/spec/retries"),
        ("connection auth", http.clone(), "/spec/authorization/scope"),
        ("text body", http.clone(), "/spec/requestBody/encoding"),
        ("header", http.clone(), "/spec/headers/0/extra"),
        ("success status", http.clone(), "/spec/successStatus/extra"),
    ];
    for (what, mut raw, pointer) in cases {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        raw.pointer_mut(parent)
            .unwrap_or_else(|| panic!("{what}: no {parent}"))
            .as_object_mut()
            .unwrap()
            .insert(key.to_owned(), json!("x"));
        let parsed = serde_json::from_value::<ToolManifest>(raw.clone());
        match parsed {
            Err(e) => assert!(
                e.to_string().contains("unknown field") || e.to_string().contains("did not match"),
                "{what}: {e}"
            ),
            // An http spec with an unknown key is kept whole as an `Other` spec (a kind a
            // synthesizer might claim), not silently trimmed; it must still round-trip.
            Ok(m) => {
                assert!(
                    pointer.starts_with("/spec"),
                    "{what}: unknown key {pointer} accepted"
                );
                assert!(
                    matches!(m.spec, Some(ToolSpec::Other(_))),
                    "{what}: parsed as {:?}",
                    m.spec
                );
                assert_eq!(
                    serde_json::to_value(&m).unwrap(),
                    raw,
                    "{what}: not lossless"
                );
            }
        }
    }
}

#[test]
fn tagged_enums_refuse_unknown_fields_and_kinds() {
    // Directly on the types, so the untagged `ToolSpec` fallback cannot hide anything.
    assert!(serde_json::from_value::<NetworkPolicy>(json!({"kind": "none", "hosts": []})).is_err());
    assert!(
        serde_json::from_value::<NetworkPolicy>(json!({"kind": "unrestricted", "x": 1})).is_err()
    );
    assert!(serde_json::from_value::<NetworkPolicy>(json!({"kind": "allowlist"})).is_err());
    assert!(serde_json::from_value::<NetworkPolicy>(json!({"kind": "some"})).is_err());
    assert!(
        serde_json::from_value::<HttpAuthSpec>(
            json!({"kind": "connection", "connection": "a", "x": 1})
        )
        .is_err()
    );
    assert!(
        serde_json::from_value::<HttpAuthSpec>(
            json!({"kind": "bearer", "secretRef": {"envName": "e", "name": "n", "x": 1}})
        )
        .is_err()
    );
    assert!(serde_json::from_value::<HttpAuthSpec>(json!({"kind": "basic"})).is_err());
    assert!(
        serde_json::from_value::<HttpRequestBodySpec>(json!({"kind": "json-input", "x": 1}))
            .is_err()
    );
    assert!(serde_json::from_value::<HttpRequestBodySpec>(json!({"kind": "text"})).is_err());
    assert!(
        serde_json::from_value::<CodeArtifactRef>(
            json!({"kind": "filesystem", "modulePath": "/a", "imageRef": "i"})
        )
        .is_err()
    );
    assert!(
        serde_json::from_value::<CodeArtifactRef>(json!({"kind": "oci", "modulePath": "/a"}))
            .is_err()
    );
    // and accept exactly the wire names
    assert_eq!(
        serde_json::from_value::<HttpRequestBodySpec>(json!({"kind": "input-passthrough"}))
            .unwrap(),
        HttpRequestBodySpec::InputPassthrough
    );
}

#[test]
fn limits_use_the_wire_name_mem_mb() {
    let m: ToolManifest = serde_json::from_value(json!({
        "id": "a.b", "description": "d", "version": "1.0.0", "input": {}, "output": {},
        "limits": {"memMB": 64, "cpuMs": 10}
    }))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&m).unwrap()["limits"],
        json!({"memMB": 64, "cpuMs": 10})
    );
    let err = serde_json::from_value::<ToolManifest>(json!({
        "id": "a.b", "description": "d", "version": "1.0.0", "input": {}, "output": {},
        "limits": {"memMb": 64, "cpuMs": 10}
    }))
    .unwrap_err();
    assert!(err.to_string().contains("memMb"), "{err}");
}
