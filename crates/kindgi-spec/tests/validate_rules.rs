//! The rules `validate_manifest` adds on top of the schema, each fed a known engine answer
//! (see `common::ScriptedEngine`), so a failure here is this crate's fault.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::{ScriptedEngine, data};
use kindgi_spec::validate::{ManifestCheck, Problem, SchemaMode, SchemaSide, validate_manifest};
use serde_json::{Value, json};

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

fn with(mut manifest: Value, patch: Value) -> Value {
    for (k, v) in patch.as_object().unwrap() {
        manifest[k] = v.clone();
    }
    manifest
}

fn problems(manifest: &Value, check: &ManifestCheck) -> Vec<Problem> {
    validate_manifest(manifest, check, &ScriptedEngine::default()).expect_err("expected problems")
}

fn ok(manifest: &Value, check: &ManifestCheck) {
    if let Err(p) = validate_manifest(manifest, check, &ScriptedEngine::default()) {
        panic!("expected ok, got {p:#?}");
    }
}

fn paths(problems: &[Problem]) -> Vec<&str> {
    problems.iter().map(|p| p.path.as_str()).collect()
}

#[test]
fn a_valid_manifest_comes_back_typed() {
    let m = validate_manifest(&base(), &WIRE, &ScriptedEngine::default()).unwrap();
    assert_eq!(m.id, "test.echo");
    assert_eq!(m.version, "1.0.0");
    for name in [
        "tool.every-field.json",
        "tool.http-every-field.json",
        "tool.mcp.json",
    ] {
        let raw = data(name);
        let m = validate_manifest(&raw, &WIRE, &ScriptedEngine::default())
            .unwrap_or_else(|p| panic!("{name}: {p:#?}"));
        assert_eq!(serde_json::to_value(&m).unwrap(), raw, "{name}");
    }
}

#[test]
fn not_an_object_is_the_only_problem() {
    for raw in [Value::Null, json!("x"), json!(42), json!([base()])] {
        assert_eq!(
            problems(&raw, &WIRE),
            vec![Problem::new("", "must be an object")],
            "{raw}"
        );
    }
}

#[test]
fn handler_key_is_dropped_on_the_wire_path() {
    let raw = with(base(), json!({"handler": "function"}));
    let m = validate_manifest(&raw, &WIRE, &ScriptedEngine::default()).unwrap();
    assert!(
        !serde_json::to_value(&m)
            .unwrap()
            .as_object()
            .unwrap()
            .contains_key("handler")
    );
}

#[test]
fn shape_problems_from_the_engine_come_first_and_stay_as_given() {
    let engine = ScriptedEngine {
        shape_problems: vec![Problem::new(
            "/transport",
            "must be equal to one of the allowed values",
        )],
        ..Default::default()
    };
    let raw = with(base(), json!({"transport": "weird", "id": "kindgi_x"}));
    let p = validate_manifest(&raw, &WIRE, &engine).unwrap_err();
    assert_eq!(
        p,
        vec![
            Problem::new("/transport", "must be equal to one of the allowed values"),
            Problem::new("/id", "must not start with \"kindgi_\""),
        ]
    );
}

#[test]
fn reserved_prefix_and_tool_id_rule() {
    assert_eq!(
        problems(&with(base(), json!({"id": "kindgi_remember"})), &WIRE),
        vec![Problem::new("/id", "must not start with \"kindgi_\"")]
    );
    for (id, says) in [
        ("echo", "has no pack prefix"),
        ("Test.Echo", "uppercase"),
        ("test.verify_citation", "underscores"),
        ("test..echo", "empty segment"),
    ] {
        let p = problems(&with(base(), json!({"id": id})), &WIRE);
        assert_eq!(paths(&p), ["/id"], "{id}");
        assert!(p[0].message.contains(says), "{id}: {}", p[0].message);
        assert!(
            p[0].message.contains("\"acme.verify-citation\""),
            "shows a good id: {}",
            p[0].message
        );
    }
    ok(
        &with(base(), json!({"id": "conformance.checks.min-length"})),
        &WIRE,
    );
    // An empty id is the schema's to report (minLength): the id rule adds nothing, so an
    // engine that reports no shape problem lets it through.
    assert!(
        validate_manifest(
            &with(base(), json!({"id": ""})),
            &WIRE,
            &ScriptedEngine::default()
        )
        .is_ok()
    );
}

#[test]
fn version_leading_zeros() {
    let p = problems(&with(base(), json!({"version": "01.2.03"})), &WIRE);
    assert_eq!(
        p,
        vec![Problem::new(
            "/version",
            "version \"01.2.03\" has a leading zero in \"01\": write \"1.2.3\""
        )]
    );
    ok(&with(base(), json!({"version": "10.0.0"})), &WIRE);
}

#[test]
fn input_and_output_compile_in_the_right_mode() {
    let engine = ScriptedEngine::default();
    validate_manifest(&base(), &WIRE, &engine).unwrap();
    let asked: Vec<_> = engine
        .compiled
        .lock()
        .unwrap()
        .iter()
        .map(|(_, m, s)| (*m, *s))
        .collect();
    assert_eq!(
        asked,
        [
            (Some(SchemaMode::Pack), Some(SchemaSide::Input)),
            (Some(SchemaMode::Pack), Some(SchemaSide::Output))
        ]
    );
    let engine = ScriptedEngine::default();
    validate_manifest(&data("tool.mcp.json"), &WIRE, &engine).unwrap();
    let modes: Vec<_> = engine
        .compiled
        .lock()
        .unwrap()
        .iter()
        .map(|(_, m, _)| *m)
        .collect();
    assert_eq!(modes, [Some(SchemaMode::Mcp), Some(SchemaMode::Mcp)]);

    let raw = with(
        base(),
        json!({
            "input": {"type": "object", "x-fail": "strict mode: unknown keyword: \"x-label\""},
            "output": {"x-fail": "can't resolve reference #/definitions/DoesNotExist from id #"}
        }),
    );
    let p = problems(&raw, &WIRE);
    assert_eq!(paths(&p), ["/input", "/output"]);
    assert!(p[0].message.starts_with(
        "Tool input schema does not compile: strict mode: unknown keyword: \"x-label\""
    ));
    assert!(
        p[0].message.ends_with(
            "\"x-label\". For a field that may hold any JSON value, `{}` (a `serde_json::Value`) compiles."
        ),
        "strict-mode hint: {}",
        p[0].message
    );
    assert_eq!(
        p[1].message,
        "Tool output schema does not compile: can't resolve reference #/definitions/DoesNotExist from id #"
    );
}

#[test]
fn needs_spec_schemas_and_env_defaults() {
    let raw = with(
        base(),
        json!({"id": "acme.sign", "needsSpec": {
            "env": {
                "REGION": {"type": "strng", "x-fail": "data/type must be equal to one of the allowed values"},
                "RETRIES": {"type": "string", "default": 3},
                "a/b": {"type": "string", "default": "fine"},
                "x~/y": {"type": "string", "default": false}
            },
            "secrets": {"SIGNING_KEY": {"type": "string", "x-fail": "strict mode: unknown keyword: \"x-unknown\""}}
        }}),
    );
    let p = problems(&raw, &WIRE);
    assert_eq!(
        p,
        vec![
            Problem::new(
                "/needsSpec/secrets/SIGNING_KEY",
                "doesn't compile: strict mode: unknown keyword: \"x-unknown\""
            ),
            Problem::new(
                "/needsSpec/env/REGION",
                "doesn't compile: data/type must be equal to one of the allowed values"
            ),
            Problem::new(
                "/needsSpec/env/RETRIES/default",
                "must be a string: env values are strings"
            ),
            Problem::new(
                "/needsSpec/env/x~0~1y/default",
                "must be a string: env values are strings"
            ),
        ]
    );
    // Secrets are compiled but their defaults are not judged; config is not compiled.
    let engine = ScriptedEngine::default();
    let raw = with(
        base(),
        json!({"needsSpec": {"secrets": {"K": {"type": "string", "default": 1}}, "config": {"c": {"x-fail": "no"}}}}),
    );
    validate_manifest(&raw, &WIRE, &engine).unwrap();
    assert_eq!(
        engine.compiled.lock().unwrap().len(),
        3,
        "input, output, one secret"
    );
}

#[test]
fn url_template_origin() {
    let http = |url: &str| {
        with(
            base(),
            json!({"id": "acme.lookup", "spec": {"kind": "http", "method": "GET", "urlTemplate": url}}),
        )
    };
    for url in [
        "https://{host}/x",
        "https://api.{domain}/x",
        "https://api.example.com:{port}/x",
        "https://{user}@api.example.com/x",
    ] {
        assert_eq!(
            problems(&http(url), &WIRE),
            vec![Problem::new(
                "/spec/urlTemplate",
                "fills {placeholders} in its path and query only, never in its host or port"
            )],
            "{url}"
        );
    }
    for url in ["{scheme}://api.example.com/x", "ftp://api.example.com/x"] {
        assert_eq!(
            problems(&http(url), &WIRE),
            vec![Problem::new(
                "/spec/urlTemplate",
                "must start with http:// or https:// and a host"
            )]
        );
    }
    assert_eq!(
        problems(&http("https:///x"), &WIRE),
        vec![Problem::new("/spec/urlTemplate", "must name a host")]
    );
    for url in [
        "https://api.example.com/{id}?q={q}",
        "http://localhost:8080/{id}",
        "HTTPS://API.EXAMPLE.COM/{id}",
    ] {
        ok(&http(url), &WIRE);
    }
}

#[test]
fn mcp_endpoint() {
    let mcp = |endpoint: Option<&str>| {
        let mut m = with(base(), json!({"transport": "mcp"}));
        if let Some(e) = endpoint {
            m["mcpEndpoint"] = json!(e);
        }
        m
    };
    for good in [
        "mcp+stdio://npx server",
        "mcp+http://127.0.0.1:3001/mcp",
        "mcp+sse://host/sse",
    ] {
        ok(&mcp(Some(good)), &WIRE);
    }
    let p = problems(&mcp(None), &WIRE);
    assert_eq!(paths(&p), ["/mcpEndpoint"]);
    assert!(
        p[0].message
            .starts_with("is required when transport is \"mcp\""),
        "{}",
        p[0].message
    );
    for bad in ["http://127.0.0.1/mcp", "stdio://x", "MCP+HTTP://x"] {
        let p = problems(&mcp(Some(bad)), &WIRE);
        assert_eq!(paths(&p), ["/mcpEndpoint"], "{bad}");
        assert!(
            p[0].message
                .contains("must start with mcp+stdio://, mcp+http:// or mcp+sse://"),
            "{}",
            p[0].message
        );
    }
    let p = problems(&mcp(Some("mcp+stdio:// ")), &WIRE);
    assert!(
        p[0].message.contains("names no command or address"),
        "{}",
        p[0].message
    );
    // Not an MCP tool: the endpoint is not required.
    ok(&with(base(), json!({"transport": "auto"})), &WIRE);
}

#[test]
fn spec_and_handler_are_exclusive() {
    let spec = with(
        base(),
        json!({"spec": {"kind": "http", "method": "GET", "urlTemplate": "https://x.example/"}}),
    );
    let authored = |has| ManifestCheck {
        production: false,
        has_handler: Some(has),
    };
    assert_eq!(
        problems(&spec, &authored(true)),
        vec![Problem::new("/handler", "handler + spec both set")]
    );
    ok(&spec, &authored(false));
    ok(&spec, &WIRE);
    assert_eq!(
        problems(&base(), &authored(false)),
        vec![Problem::new("/handler", "handler + spec both absent")]
    );
    ok(&base(), &authored(true));
    ok(&data("tool.mcp.json"), &authored(false));
}

#[test]
fn only_a_pack_tool_with_a_handler_pauses() {
    let pauses = with(base(), json!({"pauses": true}));
    ok(
        &pauses,
        &ManifestCheck {
            production: false,
            has_handler: Some(true),
        },
    );
    ok(&pauses, &WIRE);
    ok(
        &with(
            base(),
            json!({"pauses": false, "spec": {"kind": "http", "method": "GET", "urlTemplate": "https://x.example/"}}),
        ),
        &WIRE,
    );

    let spec = with(
        pauses.clone(),
        json!({"spec": {"kind": "http", "method": "GET", "urlTemplate": "https://x.example/"}}),
    );
    let p = problems(&spec, &WIRE);
    assert_eq!(paths(&p), ["/pauses"]);
    assert!(
        p[0].message.contains("declarative `spec` cannot pause"),
        "{}",
        p[0].message
    );

    let mcp = with(
        pauses.clone(),
        json!({"transport": "mcp", "mcpEndpoint": "mcp+http://h/mcp"}),
    );
    let p = problems(&mcp, &WIRE);
    assert_eq!(paths(&p), ["/pauses"]);
    assert!(
        p[0].message.contains("an MCP tool cannot pause"),
        "{}",
        p[0].message
    );

    let p = problems(
        &pauses,
        &ManifestCheck {
            production: false,
            has_handler: Some(false),
        },
    );
    assert_eq!(paths(&p), ["/handler", "/pauses"]);
}

#[test]
fn filesystem_artifacts_only_outside_production() {
    let fs = with(
        base(),
        json!({"codeArtifactRef": {"kind": "filesystem", "modulePath": "/home/dev/t.py"}}),
    );
    ok(&fs, &WIRE);
    let p = problems(
        &fs,
        &ManifestCheck {
            production: true,
            has_handler: None,
        },
    );
    assert_eq!(paths(&p), ["/codeArtifactRef/kind"]);
    assert!(
        p[0].message.contains("refused in production"),
        "{}",
        p[0].message
    );
    let oci = with(
        base(),
        json!({"codeArtifactRef": {"kind": "oci", "imageRef": "r/i@sha256:00", "modulePath": "t.py", "artifactVersion": "1"}}),
    );
    ok(
        &oci,
        &ManifestCheck {
            production: true,
            has_handler: None,
        },
    );
}

#[test]
fn read_only_tools_cannot_declare_world_changing_effects() {
    let effects = json!([
        {"kind": "reads"}, {"kind": "writes"}, {"kind": "network"}, {"kind": "deletes"},
        {"kind": "spawns-run"}, {"kind": "emits-event"}, {"kind": "external-side-effect"},
        {"kind": "sensitive-data-egress"}
    ]);
    let p = problems(
        &with(base(), json!({"mutating": false, "effects": effects})),
        &WIRE,
    );
    assert_eq!(
        p,
        vec![Problem::new(
            "/mutating",
            "is false, but the tool declares effects that change the world: \"writes\" (/effects/1), \"deletes\" (/effects/3), \
             \"spawns-run\" (/effects/4), \"emits-event\" (/effects/5), \"external-side-effect\" (/effects/6); \
             set `mutating` to true, or remove those effects if the tool only reads"
        )]
    );
    ok(
        &with(base(), json!({"mutating": true, "effects": effects})),
        &WIRE,
    );
    ok(&with(base(), json!({"effects": effects})), &WIRE);
    ok(
        &with(
            base(),
            json!({"mutating": false, "effects": [{"kind": "reads"}, {"kind": "network"}, {"kind": "sensitive-data-egress"}]}),
        ),
        &WIRE,
    );
}

#[test]
fn connection_auth_names_a_declared_connection() {
    let raw = data("tool.http-every-field.json");
    ok(&raw, &WIRE);
    let mut undeclared = raw.clone();
    undeclared["spec"]["authorization"]["connection"] = json!("mail");
    let p = problems(&undeclared, &WIRE);
    assert_eq!(paths(&p), ["/spec/authorization/connection"]);
    assert!(p[0].message.starts_with("names connection \"mail\", which needsSpec.connections does not declare (it declares \"gh\")"), "{}", p[0].message);
    let mut none = undeclared.clone();
    none.as_object_mut().unwrap().remove("needsSpec");
    let p = problems(&none, &WIRE);
    assert!(
        p[0].message.contains("(it declares none)"),
        "{}",
        p[0].message
    );
}

#[test]
fn every_problem_at_once() {
    let raw = json!({
        "id": "Acme.Send",
        "description": "d",
        "version": "1.02.0",
        "input": {"x-fail": "strict mode: unknown keyword: \"x-label\""},
        "output": {},
        "transport": "mcp",
        "mcpEndpoint": "http://x",
        "pauses": true,
        "mutating": false,
        "effects": [{"kind": "writes"}],
        "needsSpec": {"env": {"N": {"type": "string", "default": 1}}},
        "codeArtifactRef": {"kind": "filesystem", "modulePath": "/x"},
        "spec": {"kind": "http", "method": "GET", "urlTemplate": "https://{h}/", "authorization": {"kind": "connection", "connection": "c"}}
    });
    let p = validate_manifest(
        &raw,
        &ManifestCheck {
            production: true,
            has_handler: Some(true),
        },
        &ScriptedEngine::default(),
    )
    .unwrap_err();
    assert_eq!(
        paths(&p),
        [
            "/id",
            "/version",
            "/input",
            "/needsSpec/env/N/default",
            "/spec/urlTemplate",
            "/mcpEndpoint",
            "/handler",
            "/pauses",
            "/codeArtifactRef/kind",
            "/mutating",
            "/spec/authorization/connection",
        ]
    );
}

#[test]
fn typed_read_failure_is_a_problem_not_a_panic() {
    // An engine that lets everything through: the typed read still refuses, with a message.
    let raw = with(base(), json!({"limits": {"memMB": 1.5, "cpuMs": 1}}));
    let p = problems(&raw, &WIRE);
    assert_eq!(paths(&p), [""]);
    assert!(
        p[0].message
            .starts_with("tool \"test.echo\" cannot be read as a manifest"),
        "{}",
        p[0].message
    );
}
