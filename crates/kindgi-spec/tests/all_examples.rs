//! Every example of the specification (`spec/examples/`, copied into `tests/data/`) reads
//! into its wire type and writes back as the same JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::data;
use kindgi_spec::flow::Flow;
use kindgi_spec::pack_index::PackIndex;
use kindgi_spec::pack_protocol::Message;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn round_trip<T: DeserializeOwned + Serialize>(name: &str) {
    let value = data(name);
    let parsed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
    let back: Value = serde_json::to_value(&parsed).unwrap();
    assert_eq!(back, value, "{name}: JSON changed in the round trip");
}

#[test]
fn all_six_examples_round_trip() {
    round_trip::<Flow>("flow.example.with-loop.json");
    round_trip::<PackIndex>("pack-index.example.python-pack.json");
    for name in [
        "pack-protocol.example.check-invoke.json",
        "pack-protocol.example.info.json",
        "pack-protocol.example.input-invalid.json",
        "pack-protocol.example.tool-invoke.json",
    ] {
        round_trip::<Message>(name);
    }
}

#[test]
fn the_example_index_tools_are_valid_manifests() {
    // The tool entries of the example index are tool manifests plus `modulePath`.
    let index = data("pack-index.example.python-pack.json");
    for tool in index["tools"].as_array().unwrap() {
        let mut manifest = tool.clone();
        manifest.as_object_mut().unwrap().remove("modulePath");
        let parsed: kindgi_spec::ToolManifest = serde_json::from_value(manifest.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), manifest);
    }
}
