//! Tool manifest validation (`kindgi_spec::validate::validate_manifest` over the real schema
//! engine), as `POST /v1/tools` and a pack index reach it. Invariants:
//! - every problem has a JSON Pointer path and a message;
//! - an accepted manifest, written back out, is accepted again as the same manifest;
//! - production only adds refusals: what production accepts, development accepts;
//! - each validation answers within its budget.
#![no_main]

use kindgi_fuzz::{is_json_pointer, json, within_budget};
use kindgi_spec::validate::{ManifestCheck, validate_manifest};
use kindgi_tools::engine::ToolSchemaEngine;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some(raw) = json(data) else {
        return;
    };
    let engine = ToolSchemaEngine::new();
    let wire = ManifestCheck::default();
    let production = ManifestCheck {
        production: true,
        has_handler: None,
    };
    let dev = within_budget("validate_manifest", || {
        validate_manifest(&raw, &wire, &engine)
    });
    let prod = within_budget("validate_manifest (production)", || {
        validate_manifest(&raw, &production, &engine)
    });
    for problems in [&dev, &prod].into_iter().filter_map(|r| r.as_ref().err()) {
        assert!(!problems.is_empty(), "a refused manifest with no problem");
        for p in problems {
            assert!(
                is_json_pointer(&p.path),
                "problem path {:?} is no pointer",
                p.path
            );
            assert!(
                !p.message.is_empty(),
                "problem at {:?} has no message",
                p.path
            );
        }
    }
    if prod.is_ok() {
        assert!(
            dev.is_ok(),
            "production accepts what development refuses: {dev:?}"
        );
    }
    if let Ok(manifest) = &dev {
        let text = match serde_json::to_value(manifest) {
            Ok(v) => v,
            Err(e) => panic!("an accepted manifest does not serialize: {e}"),
        };
        match validate_manifest(&text, &wire, &engine) {
            Ok(again) => assert_eq!(&again, manifest, "the manifest changed on a round trip"),
            Err(problems) => panic!("an accepted manifest, written out, is refused: {problems:?}"),
        }
    }
});
