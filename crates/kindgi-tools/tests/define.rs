//! Definition rules (tool.md §4, §14 "defineTool"): the builder, typed handlers with
//! derived schemas, raw manifests, declarative tools, and the projection to a manifest.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_spec::{
    EffectKind, HttpKind, HttpMethod, HttpToolSpec, Need, NetworkPolicy, RuntimeLimits,
    SandboxMode, ToolSpec, Transport, TypedNeeds,
};
use kindgi_tools::synth::{SpecSynthesizer, SynthesizerRegistry};
use kindgi_tools::{
    DefineErrorCode, Handler, HandlerError, InvokeErrorCode, Tool, ToolContext, define_manifest,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::sync::Arc;

#[derive(Debug, Deserialize, JsonSchema)]
struct LookupInput {
    /// The customer's id.
    customer_id: String,
    #[serde(default = "default_limit")]
    limit: u32,
    include_archived: Option<bool>,
}

fn default_limit() -> u32 {
    10
}

#[derive(Debug, Serialize, JsonSchema)]
struct Order {
    id: String,
    total_cents: u64,
    ratio: f64,
    status: Status,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum Status {
    Open,
    Shipped,
}

#[derive(Debug, Serialize, JsonSchema)]
struct LookupOutput {
    orders: Vec<Order>,
    note: Option<String>,
}

fn echo_manifest() -> Value {
    json!({
        "id": "test.echo",
        "description": "Echo the input as output",
        "version": "1.0.0",
        "input": {"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]},
        "output": {"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}
    })
}

fn echo_handler() -> Handler {
    Arc::new(|input, _ctx| Box::pin(async move { Ok(input) }))
}

fn with(mut base: Value, key: &str, value: Value) -> Value {
    base[key] = value;
    base
}

fn define_err(raw: Value) -> kindgi_tools::DefineError {
    define_manifest(&raw, Some(echo_handler()), &SynthesizerRegistry::builtin()).unwrap_err()
}

fn lookup_tool() -> Tool {
    Tool::define("acme.orders-lookup")
        .description("Look up a customer's orders")
        .version("1.2.0")
        .mutating(false)
        .effect(EffectKind::Reads, "db:orders")
        .handler(|input: LookupInput, _ctx: ToolContext| async move {
            let orders = (0..input.limit.min(2))
                .map(|i| Order {
                    id: format!("{}-{i}", input.customer_id),
                    total_cents: 1250,
                    ratio: 0.5,
                    status: if input.include_archived == Some(true) {
                        Status::Shipped
                    } else {
                        Status::Open
                    },
                })
                .collect();
            Ok(LookupOutput { orders, note: None })
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn typed_tool_derives_strict_schemas_and_runs() {
    let tool = lookup_tool();
    let manifest = tool.manifest();
    assert_eq!(manifest.input["type"], "object");
    assert_eq!(manifest.input["properties"]["limit"]["default"], 10);
    assert!(
        manifest.input["properties"]["limit"]
            .get("format")
            .is_none(),
        "uint32 removed"
    );
    assert_eq!(manifest.input["required"], json!(["customer_id"]));
    assert_eq!(manifest.mutating, Some(false));
    assert!(manifest.is_read_only());

    let out = tool
        .invoke(&json!({"customer_id":"c1"}), ToolContext::for_test())
        .await
        .unwrap();
    assert_eq!(out["orders"][0]["id"], "c1-0");
    assert_eq!(out["orders"][1]["status"], "open");
    assert_eq!(out["note"], Value::Null);

    let err = tool
        .invoke(&json!({"customer_id":7}), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
    assert_eq!(err.errors[0].instance_path(), "/customer_id");
    let err = tool
        .invoke(
            &json!({"customer_id":"c","limit":-1}),
            ToolContext::for_test(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
}

#[test]
fn mutating_absent_means_true() {
    let tool = Tool::define("acme.send")
        .description("Send")
        .version("1.0.0")
        .input(json!({"type":"object"}))
        .output(json!({"type":"object"}))
        .handler(|i: Value, _c| async move { Ok(i) })
        .build()
        .unwrap();
    assert_eq!(tool.manifest().mutating, None);
    assert!(tool.manifest().is_mutating());
    assert!(tool.to_manifest_value().get("mutating").is_none());
}

#[test]
fn every_builder_method_sets_its_manifest_field() {
    let mut metadata = Map::new();
    metadata.insert("owner".into(), json!("team-orders"));
    let tool = Tool::define("acme.refund")
        .description("Refund an order")
        .version("2.0.1")
        .input(json!({"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}))
        .output(json!({"type":"object"}))
        .mutating(true)
        .effect(EffectKind::Writes, "db:refunds")
        .effect_kind(EffectKind::ExternalSideEffect)
        .needs([Need { name: "tenant".into(), optional: None }])
        .needs_spec(TypedNeeds {
            env: Some(json!({"REGION":{"type":"string","enum":["eu","us"],"default":"eu"}}).as_object().unwrap().clone()),
            ..Default::default()
        })
        .transport(Transport::Native)
        .metadata(metadata)
        .sandbox(SandboxMode::ContextIsolated)
        .needs_approval_when_unattended(true)
        .pauses(false)
        .result_is_outside_data(false)
        .limits(RuntimeLimits { mem_mb: 128, cpu_ms: 1000 })
        .network(NetworkPolicy::Allowlist { hosts: vec!["api.example.com".into()] })
        .handler(|i: Value, _c| async move { Ok(i) })
        .build()
        .unwrap();
    let m = tool.to_manifest_value();
    assert_eq!(
        m["effects"],
        json!([{"kind":"writes","resource":"db:refunds"},{"kind":"external-side-effect"}])
    );
    assert_eq!(m["needs"], json!([{"name":"tenant"}]));
    assert_eq!(m["needsSpec"]["env"]["REGION"]["default"], "eu");
    assert_eq!(m["transport"], "native");
    assert_eq!(m["metadata"], json!({"owner":"team-orders"}));
    assert_eq!(m["sandbox"], "context-isolated");
    assert_eq!(m["needsApprovalWhenUnattended"], true);
    assert_eq!(m["pauses"], false);
    assert_eq!(m["resultIsOutsideData"], false);
    assert_eq!(m["limits"], json!({"memMB":128,"cpuMs":1000}));
    assert_eq!(
        m["network"],
        json!({"kind":"allowlist","hosts":["api.example.com"]})
    );
    assert!(m.get("handler").is_none(), "the projection has no handler");
    // The projection is a valid wire manifest and round-trips.
    let again = define_manifest(&m, Some(echo_handler()), &SynthesizerRegistry::empty()).unwrap();
    assert_eq!(again.to_manifest_value(), m);
}

#[test]
fn input_must_be_an_object_type() {
    let err = Tool::define("acme.scalar")
        .description("takes a bare string")
        .version("1.0.0")
        .handler(|s: String, _c| async move { Ok(s) })
        .build()
        .unwrap_err();
    assert_eq!(err.code, DefineErrorCode::InvalidToolDefinition);
    assert!(
        err.problems
            .iter()
            .any(|p| p.path == "/input" && p.message.contains("object type")),
        "{err:?}"
    );
}

#[test]
fn a_raw_handler_without_schemas_is_refused() {
    let err = Tool::define("acme.raw")
        .description("raw")
        .version("1.0.0")
        .raw_handler(echo_handler())
        .build()
        .unwrap_err();
    assert!(
        err.problems.iter().any(|p| p.message.contains("input")),
        "{err:?}"
    );
}

#[test]
fn the_base_manifest_defines() {
    let tool = define_manifest(
        &echo_manifest(),
        Some(echo_handler()),
        &SynthesizerRegistry::empty(),
    )
    .unwrap();
    assert_eq!(tool.id(), "test.echo");
    assert_eq!(tool.version(), "1.0.0");
}

#[test]
fn the_handler_given_is_the_handler_kept() {
    let handler = echo_handler();
    let tool = define_manifest(
        &echo_manifest(),
        Some(handler.clone()),
        &SynthesizerRegistry::empty(),
    )
    .unwrap();
    assert!(Arc::ptr_eq(&handler, tool.handler()));
}

#[test]
fn effects_and_needs_define() {
    let raw = with(
        with(
            echo_manifest(),
            "effects",
            json!([{"kind":"reads","resource":"memory:facts"},{"kind":"network","resource":"external:api.example.com","notes":"rate limited"}]),
        ),
        "needs",
        json!([{"name":"tenant"},{"name":"memory:facts","optional":true}]),
    );
    assert!(define_manifest(&raw, Some(echo_handler()), &SynthesizerRegistry::empty()).is_ok());
}

#[test]
fn bad_manifests_are_invalid_tool_definitions() {
    let cases = [
        (with(echo_manifest(), "id", json!("")), "/id"),
        (
            with(echo_manifest(), "description", json!("")),
            "/description",
        ),
        (with(echo_manifest(), "version", json!("v1")), "/version"),
        (
            with(echo_manifest(), "version", json!("1.2.3-beta.1")),
            "/version",
        ),
        (with(echo_manifest(), "version", json!(1)), "/version"),
        (
            with(echo_manifest(), "transport", json!("weird")),
            "/transport",
        ),
        (
            with(echo_manifest(), "effects", json!([{"kind":"gambles"}])),
            "/effects/0/kind",
        ),
        (with(echo_manifest(), "projectId", json!("p")), ""),
        (
            with(echo_manifest(), "limits", json!({"memMB":1})),
            "/limits",
        ),
        (
            with(echo_manifest(), "network", json!({"kind":"allowlist"})),
            "/network",
        ),
    ];
    for (raw, path) in cases {
        let err = define_err(raw.clone());
        assert_eq!(err.code, DefineErrorCode::InvalidToolDefinition, "{raw}");
        assert!(
            err.problems
                .iter()
                .any(|p| p.path == path || p.path.starts_with(&format!("{path}/"))),
            "{raw}: expected a problem at {path}, got {:?}",
            err.problems
        );
    }
}

#[test]
fn schemas_that_do_not_compile_are_invalid_schema() {
    let err = define_err(with(
        echo_manifest(),
        "input",
        json!({"type":"not-a-json-schema-type"}),
    ));
    assert_eq!(err.code, DefineErrorCode::InvalidSchema, "{err:?}");
    assert_eq!(err.problems[0].path, "/input");
    let err = define_err(with(
        echo_manifest(),
        "output",
        json!({"$ref":"#/definitions/DoesNotExist"}),
    ));
    assert_eq!(err.code, DefineErrorCode::InvalidSchema, "{err:?}");
    assert_eq!(err.problems[0].path, "/output");
}

#[test]
fn strict_mode_refuses_loose_pack_schemas() {
    let err = define_err(with(
        echo_manifest(),
        "input",
        json!({"type":"object","properties":{"point":{"type":"array","items":[{"type":"number"}]}}}),
    ));
    assert_eq!(err.code, DefineErrorCode::InvalidSchema);
}

#[test]
fn draft07_schemas_need_transport_mcp() {
    let draft7 = json!({"$schema":"http://json-schema.org/draft-07/schema#","type":"object"});
    let raw = with(
        with(echo_manifest(), "input", draft7.clone()),
        "output",
        draft7,
    );
    let err = define_err(raw.clone());
    assert_eq!(err.code, DefineErrorCode::InvalidSchema);
    assert!(
        err.message
            .contains("isn't a JSON Schema dialect Kindgi validates here: 2020-12"),
        "{}",
        err.message
    );
    let mcp = with(
        with(raw, "transport", json!("mcp")),
        "mcpEndpoint",
        json!("mcp+stdio://weather"),
    );
    assert!(define_manifest(&mcp, Some(echo_handler()), &SynthesizerRegistry::empty()).is_ok());
}

#[test]
fn needs_spec_schemas_must_compile() {
    let mut raw = with(
        echo_manifest(),
        "needsSpec",
        json!({"secrets":{"SIGNING_KEY":{"type":"string","x-unknown":true}}}),
    );
    raw["id"] = json!("acme.sign");
    let err = define_err(raw);
    assert_eq!(err.code, DefineErrorCode::InvalidToolDefinition);
    assert_eq!(err.problems[0].path, "/needsSpec/secrets/SIGNING_KEY");
    assert!(
        err.message.contains("Tool \"acme.sign\": the schema for needsSpec.secrets.SIGNING_KEY doesn't compile: strict mode: unknown keyword: \"x-unknown\""),
        "{}",
        err.message
    );

    let mut raw = with(
        echo_manifest(),
        "needsSpec",
        json!({"env":{"RETRIES":{"type":"string","default":3}}}),
    );
    raw["id"] = json!("acme.sign");
    let err = define_err(raw);
    assert_eq!(
        err.message,
        "Tool \"acme.sign\": needsSpec.env.RETRIES's default must be a string: env values are strings."
    );

    let ok = with(
        echo_manifest(),
        "needsSpec",
        json!({
            "secrets":{"SIGNING_KEY":{"type":"string","minLength":32},"STAMP_KEY":{"type":["string","null"],"minLength":32}},
            "env":{"REGION":{"type":"string","enum":["eu","us"],"default":"eu","x-kindgi-tunable":true}}
        }),
    );
    assert!(define_manifest(&ok, Some(echo_handler()), &SynthesizerRegistry::empty()).is_ok());
}

fn http_spec() -> ToolSpec {
    ToolSpec::Http(HttpToolSpec {
        kind: HttpKind::Http,
        method: HttpMethod::Get,
        url_template: "https://api.example.com/items/{id}".into(),
        headers: None,
        authorization: None,
        request_body: None,
        timeout_ms: None,
        parse_json: None,
        success_status: None,
    })
}

fn http_builder() -> kindgi_tools::ToolBuilder {
    Tool::define("acme.get-item")
        .description("Fetch an item")
        .version("1.0.0")
        .input(json!({"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}))
        .output(json!({"type":"object"}))
        .mutating(false)
        .effect(EffectKind::Network, "external:api.example.com")
        .spec(http_spec())
}

// The builtin `http` kind: the `http` feature.
#[cfg(feature = "http")]
#[test]
fn a_declarative_tool_gets_a_synthesized_handler() {
    let tool = http_builder().build().unwrap();
    let m = tool.to_manifest_value();
    assert_eq!(m["spec"]["kind"], "http");
    assert_eq!(m["spec"]["method"], "GET");
    assert_eq!(
        m["spec"]["urlTemplate"],
        "https://api.example.com/items/{id}"
    );
}

#[test]
fn spec_and_handler_are_mutually_exclusive() {
    let err = http_builder()
        .handler(|i: Value, _c| async move { Ok(i) })
        .build()
        .unwrap_err();
    assert_eq!(err.code, DefineErrorCode::InvalidToolDefinition);
    assert!(
        err.problems
            .iter()
            .any(|p| p.path == "/handler" && p.message == "handler + spec both set"),
        "{err:?}"
    );
}

#[test]
fn neither_spec_nor_handler_is_refused() {
    let err = define_manifest(&echo_manifest(), None, &SynthesizerRegistry::builtin()).unwrap_err();
    assert!(
        err.problems
            .iter()
            .any(|p| p.path == "/handler" && p.message == "handler + spec both absent"),
        "{err:?}"
    );
}

#[test]
fn an_unknown_spec_kind_is_refused() {
    let err = http_builder()
        .synthesizers(SynthesizerRegistry::empty())
        .build()
        .unwrap_err();
    assert_eq!(err.code, DefineErrorCode::InvalidToolDefinition);
    assert_eq!(err.problems[0].path, "/spec/kind");
    assert_eq!(err.problems[0].message, "unknown kind \"http\"");
}

// Without the `http` feature the builtin registry knows no kind: a declarative tool is refused
// with the unknown-kind error, as with an empty registry.
#[cfg(not(feature = "http"))]
#[test]
fn without_http_the_builtin_registry_knows_no_kind() {
    let err = http_builder().build().unwrap_err();
    assert_eq!(err.code, DefineErrorCode::InvalidToolDefinition);
    assert_eq!(err.problems[0].path, "/spec/kind");
    assert_eq!(err.problems[0].message, "unknown kind \"http\"");
}

struct Constant;

impl SpecSynthesizer for Constant {
    fn synthesize(
        &self,
        _manifest: &kindgi_spec::ToolManifest,
        _spec: &ToolSpec,
    ) -> Result<Handler, String> {
        Ok(Arc::new(|_i, _c| {
            Box::pin(async { Ok(json!({"synthesized": true})) })
        }))
    }
}

#[tokio::test]
async fn a_registered_synthesizer_builds_the_handler() {
    let registry = SynthesizerRegistry::empty();
    registry.register("http", Arc::new(Constant));
    let tool = http_builder().synthesizers(registry).build().unwrap();
    let out = tool
        .invoke(&json!({"id":"1"}), ToolContext::for_test())
        .await
        .unwrap();
    assert_eq!(out, json!({"synthesized": true}));
}

// The builtin `http` kind: the `http` feature.
#[cfg(feature = "http")]
#[test]
fn url_template_hosts_are_checked() {
    let err = http_builder()
        .spec(ToolSpec::Http(HttpToolSpec {
            url_template: "https://{host}/x".into(),
            ..match http_spec() {
                ToolSpec::Http(s) => s,
                ToolSpec::Other(_) => unreachable!(),
            }
        }))
        .build()
        .unwrap_err();
    assert_eq!(err.problems[0].path, "/spec/urlTemplate");
    assert_eq!(
        err.message,
        "Tool \"acme.get-item\" spec.urlTemplate fills {placeholders} in its path and query only, never in its host or port"
    );
}

#[test]
fn production_refuses_filesystem_artifacts() {
    let builder = || {
        Tool::define("acme.local")
            .description("local")
            .version("1.0.0")
            .input(json!({"type":"object"}))
            .output(json!({"type":"object"}))
            .code_artifact_ref(kindgi_spec::CodeArtifactRef::Filesystem {
                module_path: "/srv/pack/handler.js".into(),
            })
            .handler(|i: Value, _c| async move { Ok(i) })
    };
    assert!(builder().build().is_ok());
    let err = builder().production(true).build().unwrap_err();
    assert!(
        err.problems
            .iter()
            .any(|p| p.path.starts_with("/codeArtifactRef")),
        "{err:?}"
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let raw = json!({"id":"test.x","description":"","version":"v1","input":{"type":"object"},"output":{"type":"object"},"transport":"weird"});
    let err = define_err(raw);
    let paths: Vec<&str> = err.problems.iter().map(|p| p.path.as_str()).collect();
    for path in ["/description", "/version", "/transport"] {
        assert!(paths.contains(&path), "{paths:?}");
    }
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Nested {
    tags: Vec<String>,
    pair: (i32, i32),
    inner: Option<Inner>,
    kind: Kind,
    count: Option<u8>,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[allow(dead_code)]
struct Inner {
    #[serde(default)]
    flag: bool,
    amount: i64,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
#[allow(dead_code)]
enum Kind {
    Circle { radius: f64 },
    Square { side: f32 },
}

#[test]
fn derived_schemas_of_richer_types_compile_in_strict_mode() {
    let tool = Tool::define("acme.rich")
        .description("rich types")
        .version("1.0.0")
        .handler(|_i: Nested, _c| async move { Ok::<_, HandlerError>(json!({})) })
        .output(json!({"type":"object"}))
        .build();
    assert!(tool.is_ok(), "{tool:?}");
}

// The builtin `http` kind: the `http` feature.
#[cfg(feature = "http")]
#[test]
fn bad_http_specs_are_refused_at_spec() {
    let spec = json!({"kind":"http","method":"FETCH","urlTemplate":"https://x.example/{id}"});
    let err = define_manifest(
        &with(echo_manifest(), "spec", spec),
        None,
        &SynthesizerRegistry::builtin(),
    )
    .unwrap_err();
    assert_eq!(err.code, DefineErrorCode::InvalidToolDefinition);
    assert!(
        err.problems.iter().any(|p| p.path.starts_with("/spec")),
        "{err:?}"
    );
    let spec =
        json!({"kind":"http","method":"GET","urlTemplate":"https://x.example/{id}","timeoutMs":0});
    let err = define_manifest(
        &with(echo_manifest(), "spec", spec),
        None,
        &SynthesizerRegistry::builtin(),
    )
    .unwrap_err();
    assert!(
        err.problems.iter().any(|p| p.path.starts_with("/spec")),
        "{err:?}"
    );
}

#[test]
fn a_loose_2020_schema_is_refused_by_strict_mode() {
    let input = json!({
        "type":"object",
        "properties":{"id":{"type":["string","number"]},"point":{"type":"array","prefixItems":[{"type":"number"},{"type":"number"}]}},
        "required":["id"]
    });
    let err = define_err(with(echo_manifest(), "input", input));
    assert_eq!(err.code, DefineErrorCode::InvalidSchema);
    assert!(err.message.contains("strict mode"), "{}", err.message);
}

#[test]
fn an_mcp_tool_cannot_use_draft04() {
    let draft4 = json!({"$schema":"http://json-schema.org/draft-04/schema#","type":"object"});
    let raw = with(
        with(
            with(echo_manifest(), "input", draft4),
            "transport",
            json!("mcp"),
        ),
        "mcpEndpoint",
        json!("mcp+stdio://weather"),
    );
    let err = define_err(raw);
    assert_eq!(err.code, DefineErrorCode::InvalidSchema);
    assert!(
        err.message.contains(
            "draft-04/schema#\" isn't a JSON Schema dialect Kindgi validates: draft-06, draft-07, 2019-09 or 2020-12."
        ),
        "{}",
        err.message
    );
}

#[test]
fn a_handler_key_in_the_manifest_is_ignored() {
    let raw = with(echo_manifest(), "handler", json!("function"));
    let tool = define_manifest(&raw, Some(echo_handler()), &SynthesizerRegistry::empty()).unwrap();
    assert!(tool.to_manifest_value().get("handler").is_none());
}

#[test]
fn a_manifest_that_is_not_an_object_is_refused() {
    for raw in [json!(null), json!("x"), json!(42)] {
        let err =
            define_manifest(&raw, Some(echo_handler()), &SynthesizerRegistry::empty()).unwrap_err();
        assert_eq!(
            err.problems,
            vec![kindgi_spec::validate::Problem::new("", "must be an object")]
        );
    }
}

/// Documented unit variants become `oneOf` + `const`.
#[derive(Deserialize, Serialize, JsonSchema)]
#[allow(dead_code)]
enum Priority {
    /// Whenever.
    Low,
    /// Today.
    High,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum IdOrName {
    Id(u64),
    Name(String),
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
#[allow(dead_code)]
enum Adjacent {
    A(i16),
    B { x: f32 },
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[allow(dead_code)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

#[derive(Deserialize, Serialize, JsonSchema)]
#[allow(dead_code)]
struct Meters(f64);

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Everything {
    priority: Priority,
    who: IdOrName,
    adjacent: Adjacent,
    tree: Tree,
    distance: Meters,
    by_name: std::collections::HashMap<String, Vec<Option<i32>>>,
    sorted: std::collections::BTreeMap<String, bool>,
    boxed: Box<Inner>,
    maybe_list: Option<Vec<Priority>>,
    bytes: Vec<u8>,
    #[serde(default)]
    retries: usize,
    #[serde(default)]
    nested_default: Option<Inner>,
}

#[tokio::test]
async fn derived_schemas_of_many_serde_shapes_define_and_validate() {
    let tool = Tool::define("acme.everything")
        .description("every shape")
        .version("1.0.0")
        .handler(|input: Everything, _c| async move { Ok::<_, HandlerError>(input) })
        .build();
    let tool = match tool {
        Ok(tool) => tool,
        Err(e) => panic!("{e:#?}"),
    };
    let input = json!({
        "priority": "High",
        "who": 7,
        "adjacent": {"t": "B", "c": {"x": 1.5}},
        "tree": {"label": "root", "children": [{"label": "leaf", "children": []}]},
        "distance": 3.5,
        "by_name": {"a": [1, null]},
        "sorted": {"k": true},
        "boxed": {"flag": true, "amount": -3},
        "maybe_list": null,
        "bytes": [0, 255]
    });
    let out = tool.invoke(&input, ToolContext::for_test()).await.unwrap();
    assert_eq!(
        out["retries"], 0,
        "the serde default was filled (schema default or serde)"
    );
    assert_eq!(out["tree"]["children"][0]["label"], "leaf");
    let err = tool
        .invoke(
            &with(input.clone(), "bytes", json!([256])),
            ToolContext::for_test(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, InvokeErrorCode::InputValidationFailed);
    assert_eq!(err.errors[0].instance_path(), "/bytes/0");
    let err = tool
        .invoke(&with(input, "surprise", json!(1)), ToolContext::for_test())
        .await
        .unwrap_err();
    assert_eq!(err.errors[0].keyword(), "additionalProperties");
}

#[test]
fn a_json_handler_without_schemas_says_how_to_give_them() {
    let err = Tool::define("acme.raw-json")
        .description("raw json")
        .version("1.0.0")
        .handler(|i: Value, _c| async move { Ok(i) })
        .build()
        .unwrap_err();
    let input = err.problems.iter().find(|p| p.path == "/input").unwrap();
    assert!(input.message.contains(".input(json!"), "{}", input.message);
    let output = err.problems.iter().find(|p| p.path == "/output").unwrap();
    assert!(
        output.message.contains(".output(json!"),
        "{}",
        output.message
    );
}
