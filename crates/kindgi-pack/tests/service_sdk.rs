//! The SDK's index: canonical, deterministic, variant-aware; definition errors say what is
//! wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod service_common;

use kindgi_pack::sdk::{Check, CheckResult, Pack, PackCheck, SdkError};
use kindgi_spec::pack_index::PackIndex;
use serde_json::{Value, json};

#[test]
fn index_is_sorted_canonical_and_deterministic() {
    let pack = service_common::pack(true)
        .agent("src/agents.rs", json!({"id": "test.agent", "version": "1.0.0", "name": "A", "instructions": "i", "capabilities": [], "tools": []}))
        .flow("src/flows.rs", json!({"id": "test.flow", "version": "1.0.0", "nodes": [], "edges": []}))
        .env(&["B_VAR", "A_VAR"], &["OPT"]);
    let a = pack
        .index("20261001.7", "2026-10-01T12:00:00.000Z", None)
        .unwrap()
        .to_canonical_string()
        .unwrap();
    let b = pack
        .index("20261001.7", "2026-10-01T12:00:00.000Z", None)
        .unwrap()
        .to_canonical_string()
        .unwrap();
    assert_eq!(a, b);
    assert!(a.ends_with("}\n") && a.contains("\n  \"agents\": ["));
    let index: PackIndex = serde_json::from_str(&a).unwrap();
    let ids: Vec<(String, Option<String>)> = index
        .tools
        .iter()
        .map(|t| (t.id.clone(), t.version.clone()))
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
    let echo: Vec<&Option<String>> = index
        .tools
        .iter()
        .filter(|t| t.id == "test.echo")
        .map(|t| &t.version)
        .collect();
    assert_eq!(echo, [&Some("1.0.0".to_owned()), &Some("2.0.0".to_owned())]);
    assert!(index.tools.iter().all(|t| t.module_path.starts_with("t/")));
    assert_eq!(index.flows[0].rest["kernelPayloadVersion"], 1);
    assert_eq!(index.agents[0].module_path, "src/agents.rs");
    let env = index.env.unwrap();
    assert_eq!(env.required, ["A_VAR", "B_VAR"]);
    // Keys sorted at every level: re-canonicalizing the text changes nothing.
    let value: Value = serde_json::from_str(&a).unwrap();
    assert_eq!(
        kindgi_spec::pack_index::canonical_json_text(&value).unwrap(),
        a
    );
    // Another pin, another text.
    let c = pack
        .index("20261002.1", "2026-10-02T00:00:00.000Z", None)
        .unwrap()
        .to_canonical_string()
        .unwrap();
    assert_ne!(a, c);
}

#[test]
fn variants_list_their_entries_only_when_named() {
    let only = Check::define("test.extra")
        .evaluate(|_, _, _| async { Ok(CheckResult::pass()) })
        .build()
        .unwrap();
    let pack = service_common::pack(false)
        .add_check(PackCheck::new("t/extra.rs", only).only_in_variant("extras"));
    let base = pack.index("1", "2026-10-01T12:00:00.000Z", None).unwrap();
    assert!(base.guardrails.iter().all(|g| g.id != "test.extra"));
    let extras = pack
        .index("1", "2026-10-01T12:00:00.000Z", Some("extras"))
        .unwrap();
    assert!(
        extras
            .guardrails
            .iter()
            .any(|g| g.id == "test.extra" && g.check_module_path == "t/extra.rs")
    );
    // Registered either way, so `serve` can bind it whichever index names it.
    assert!(pack.registry().has_module("t/extra.rs"));
}

#[test]
fn definition_errors_say_what_is_wrong() {
    let err = Check::define("test.no-evaluate").build().unwrap_err();
    assert!(err.to_string().contains("no evaluate"), "{err}");
    let err = Check::define("test.bad-config")
        .config_schema(json!({"type": "object", "frobnicate": true}))
        .evaluate(|_, _, _| async { Ok(CheckResult::pass()) })
        .build()
        .unwrap_err();
    assert!(matches!(err, SdkError::Check { .. }));
    let err = Pack::new("p", "1.0.0")
        .agent("src/a.rs", json!([1]))
        .index("1", "t", None)
        .unwrap_err();
    assert!(err.to_string().contains("src/a.rs"), "{err}");
    let err = Pack::new("p", "1.0.0")
        .flow("src/f.rs", json!({"id": "p.f"}))
        .index("1", "t", None)
        .unwrap_err();
    assert!(err.to_string().contains("flow"), "{err}");
}

#[test]
fn unknown_command_is_a_usage_error() {
    let code = Pack::new("p", "1.0.0").run(&["nothing".to_owned()]);
    assert_eq!(
        format!("{code:?}"),
        format!("{:?}", std::process::ExitCode::from(2))
    );
}

#[test]
fn outside_data_is_written_to_the_index_only_when_true_and_read_back() {
    let t = |id: &str, outside: Option<bool>| {
        let mut b = kindgi_tools::Tool::define(id)
            .version("1.0.0")
            .description("d")
            .input(json!({"type": "object"}))
            .output(json!({"type": "object"}))
            .mutating(false);
        if let Some(o) = outside {
            b = b.result_is_outside_data(o);
        }
        b.raw_handler(service_common::handler(|i, _| async move { Ok(i) }))
            .build()
            .unwrap()
    };
    let pack = Pack::new("p", "1.0.0")
        .tool("t/a.rs", t("p.mail", Some(true)))
        .tool("t/b.rs", t("p.calc", Some(false)))
        .tool("t/c.rs", t("p.plain", None));
    let index = pack.index("1", "2026-10-01T12:00:00.000Z", None).unwrap();
    let value: Value = serde_json::from_str(&index.to_canonical_string().unwrap()).unwrap();
    let tools = value["tools"].as_array().unwrap();
    let entry = |id: &str| tools.iter().find(|t| t["id"] == id).unwrap();
    assert_eq!(entry("p.mail")["resultIsOutsideData"], true);
    assert!(entry("p.calc").get("resultIsOutsideData").is_none());
    assert!(entry("p.plain").get("resultIsOutsideData").is_none());
    let manifest = |id: &str| {
        kindgi_pack_client::dispatch::manifest_of(index.tools.iter().find(|t| t.id == id).unwrap())
            .unwrap()
    };
    assert!(manifest("p.mail").result_is_outside_data());
    assert!(!manifest("p.calc").result_is_outside_data());
}
