//! The wire types round-trip the specification's examples losslessly, and a service answers
//! the example requests with messages that parse back into the wire types.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_spec::pack_index::PackIndex;
use kindgi_spec::pack_protocol::{ErrorMessage, Info, Message, Request, Response};
use serde_json::Value;

fn data(name: &str) -> Value {
    let path = format!("{}/tests/service_data/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn index_example_round_trips() {
    let raw = data("pack-index.example.python-pack.json");
    let index: PackIndex = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(index.pack_id, "acme.ledger");
    assert_eq!(index.tools[0].module_path, "tools/ledger.py");
    assert_eq!(
        index.guardrails[0].check_id(),
        "acme.ledger.checks.response-not-empty"
    );
    assert_eq!(serde_json::to_value(&index).unwrap(), raw);
}

#[test]
fn index_canonical_text_is_stable() {
    let raw = data("pack-index.example.python-pack.json");
    let index: PackIndex = serde_json::from_value(raw).unwrap();
    let text = index.to_canonical_string().unwrap();
    assert!(text.ends_with("}\n"));
    assert!(text.starts_with("{\n  \"agents\": [\n"));
    let again: PackIndex = serde_json::from_str(&text).unwrap();
    assert_eq!(again.to_canonical_string().unwrap(), text);
}

#[test]
fn request_examples_round_trip() {
    for name in [
        "pack-protocol.example.tool-invoke.json",
        "pack-protocol.example.check-invoke.json",
    ] {
        let raw = data(name);
        let req: Request = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(serde_json::to_value(&req).unwrap(), raw, "{name}");
        let any: Message = serde_json::from_value(raw.clone()).unwrap();
        assert!(matches!(any, Message::Request(_)));
    }
}

#[test]
fn response_and_info_examples_round_trip() {
    let raw = data("pack-protocol.example.input-invalid.json");
    let res: Response = serde_json::from_value(raw.clone()).unwrap();
    let Response::Error(ErrorMessage { code, issues, .. }) = &res else {
        panic!("error expected")
    };
    assert_eq!(code.as_str(), "input-validation-failed");
    assert_eq!(
        issues.as_ref().unwrap()[0].keyword.as_deref(),
        Some("required")
    );
    assert_eq!(serde_json::to_value(&res).unwrap(), raw);

    let raw = data("pack-protocol.example.info.json");
    let info: Info = serde_json::from_value(raw.clone()).unwrap();
    assert_eq!(info.checks, ["acme.ledger.checks.response-not-empty"]);
    assert_eq!(serde_json::to_value(&info).unwrap(), raw);
}

#[test]
fn wrong_versions_do_not_parse() {
    let mut raw = data("pack-protocol.example.tool-invoke.json");
    raw["v"] = Value::from("2");
    assert!(serde_json::from_value::<Request>(raw).is_err());
    let mut raw = data("pack-index.example.python-pack.json");
    raw["v"] = Value::from(2);
    let err = serde_json::from_value::<PackIndex>(raw).unwrap_err();
    assert!(
        err.to_string().contains("Index envelope v2 is not v1"),
        "{err}"
    );
}
