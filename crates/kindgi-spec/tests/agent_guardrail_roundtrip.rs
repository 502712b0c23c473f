//! Agent (1.6.0 + `parallelToolCalls`) and guardrail (1.1.0) definitions round-trip
//! losslessly; closed objects refuse unknown keys, open ones keep them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::data;
use kindgi_spec::agent::{
    AgentDefinition, Instructions, RetrievalScope, RetrievalSource, ToolErrorKind,
};
use kindgi_spec::guardrail::{GuardrailDefinition, ScopeWhen, Severity};
use kindgi_spec::{CodeArtifactRef, NetworkPolicy};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Same JSON value after parse → serialize. Key order is not compared: a struct writes its
/// fields in declaration order (our fixtures use it; a pack index sorts keys).
fn round_trip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(value: &Value) -> T {
    let parsed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("does not parse: {e}\n{value:#}"));
    assert_eq!(
        &serde_json::to_value(&parsed).unwrap(),
        value,
        "JSON changed in the round trip"
    );
    let again: T = serde_json::from_str(&serde_json::to_string(&parsed).unwrap()).unwrap();
    assert_eq!(again, parsed);
    parsed
}

#[test]
fn agent_with_every_field() {
    let a: AgentDefinition = round_trip(&data("agent.every-field.json"));
    assert!(
        matches!(&a.instructions, Instructions::Prompt(p) if p.prompt == "acme.prompts.verify-citations")
    );
    assert!(!a.parallel_tool_calls());
    let params = a.parameters.as_ref().unwrap();
    assert_eq!(params[1].default, Some(json!(0.75)));
    assert_eq!(
        params[2].default,
        Some(Value::Null),
        "an explicit null default is kept"
    );
    assert_eq!(params[0].default, None);
    assert_eq!(a.retrieval[1].source, Some(RetrievalSource::Conversations));
    assert_eq!(a.retrieval[1].scope, RetrievalScope::SameSegment);
    assert_eq!(a.capabilities[0]["note"], json!({"free": "form", "n": 1}));
    assert_eq!(
        a.budget
            .as_ref()
            .unwrap()
            .max_cost_usd
            .as_ref()
            .unwrap()
            .to_string(),
        "1",
        "1 stays 1, not 1.0"
    );
    assert_eq!(
        a.tool_errors.as_ref().unwrap().retry_on.as_deref().unwrap(),
        [
            ToolErrorKind::InvalidArguments,
            ToolErrorKind::UnknownTool,
            ToolErrorKind::ToolError
        ]
    );
}

#[test]
fn minimal_agent_and_defaults() {
    let a: AgentDefinition = round_trip(&data("agent.minimal.json"));
    assert!(matches!(&a.instructions, Instructions::Text(t) if t.starts_with("Repeat")));
    assert!(a.parallel_tool_calls(), "absent means true");
    assert_eq!(
        a.budget
            .as_ref()
            .unwrap()
            .max_cost_usd
            .as_ref()
            .unwrap()
            .as_f64(),
        Some(0.25)
    );
}

#[test]
fn agents_of_pack_indexes() {
    // The index's agent entries are agent definitions plus `modulePath`.
    for file in [
        "pack-index.example.python-pack.json",
        "conformance-pack-python.index.json",
    ] {
        let index = data(file);
        let agents = index["agents"].as_array().unwrap();
        assert!(!agents.is_empty(), "{file}");
        for agent in agents {
            let mut agent = agent.clone();
            agent.as_object_mut().unwrap().remove("modulePath");
            round_trip::<AgentDefinition>(&agent);
        }
    }
}

#[test]
fn agent_closed_objects_refuse_unknown_keys() {
    let every = data("agent.every-field.json");
    for pointer in [
        "/x",
        "/instructions/x",
        "/modelSettings/x",
        "/parameters/0/x",
        "/tools/0/x",
        "/retrieval/0/x",
        "/memory/x",
        "/memory/remember/x",
        "/conversationPolicy/x",
        "/budget/x",
        "/output/x",
        "/toolErrors/x",
    ] {
        let mut raw = every.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        raw.pointer_mut(parent)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .insert(key.to_owned(), json!(1));
        assert!(
            serde_json::from_value::<AgentDefinition>(raw).is_err(),
            "{pointer} accepted"
        );
    }
    let mut bad = every.clone();
    bad["retrieval"][0]["scope"] = json!("everywhere");
    let err = serde_json::from_value::<AgentDefinition>(bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("everywhere"), "{err}");
}

#[test]
fn guardrail_with_every_field() {
    let g: GuardrailDefinition = round_trip(&data("guardrail.every-field.json"));
    assert_eq!(g.severity_or_default(), Severity::Critical);
    assert_eq!(g.when(), ScopeWhen::RuntimeOnly);
    assert_eq!(g.action.on_violation, "retry");
    assert_eq!(g.action.retry.as_ref().unwrap().max_attempts, 3);
    assert_eq!(g.config.as_ref().unwrap()["nested"], json!({"off": null}));
    assert_eq!(
        g.network,
        Some(NetworkPolicy::Allowlist {
            hosts: vec!["judge.example.com".into()]
        })
    );
    assert_eq!(
        g.limits.as_ref().map(|l| (l.mem_mb, l.cpu_ms)),
        Some((128, 2000))
    );
    assert_eq!(
        g.judge_capabilities.as_ref().unwrap()["maxTokens"],
        json!(256)
    );
}

#[test]
fn minimal_guardrail_and_defaults() {
    let g: GuardrailDefinition = round_trip(&data("guardrail.minimal.json"));
    assert_eq!(g.severity_or_default(), Severity::Error);
    assert_eq!(g.when(), ScopeWhen::Always);
    assert_eq!(
        g.budget
            .as_ref()
            .unwrap()
            .max_cost_usd
            .as_ref()
            .unwrap()
            .to_string(),
        "0"
    );
    assert!(matches!(
        g.code_artifact_ref,
        Some(CodeArtifactRef::Filesystem { .. })
    ));
    // Open strings: a kind or an action the schema only gives as examples.
    let mut other = data("guardrail.minimal.json");
    other["kind"] = json!("regex");
    other["action"]["on-violation"] = json!("quarantine");
    round_trip::<GuardrailDefinition>(&other);
}

#[test]
fn guardrail_closed_objects_refuse_unknown_keys() {
    let every = data("guardrail.every-field.json");
    for pointer in [
        "/x",
        "/action/x",
        "/action/retry/x",
        "/scope/x",
        "/budget/x",
        "/limits/x",
        "/network/x",
        "/needsSpec/x",
        "/codeArtifactRef/x",
    ] {
        let mut raw = every.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        raw.pointer_mut(parent)
            .unwrap()
            .as_object_mut()
            .unwrap()
            .insert(key.to_owned(), json!(1));
        assert!(
            serde_json::from_value::<GuardrailDefinition>(raw).is_err(),
            "{pointer} accepted"
        );
    }
    // Open objects keep whatever they hold.
    let mut open = every.clone();
    open["config"]["anything"] = json!([1, {"a": null}]);
    open["judgeCapabilities"]["new"] = json!(true);
    open["configSchema"]["x-extension"] = json!("kept");
    round_trip::<GuardrailDefinition>(&open);
}
