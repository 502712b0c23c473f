//! `conformance.bad-schema`: its input schema uses an unknown keyword, so it never compiles
//! under strict validation; every call answers `input-validation-failed` (the service still
//! boots).

use kindgi_spec::ToolManifest;
use kindgi_tools::Tool;
use serde_json::json;

/// Assembled from parts: the authoring API would (rightly) refuse this schema.
pub fn tool() -> Tool {
    let raw = json!({
        "id": "conformance.bad-schema",
        "version": "1.0.0",
        "description": "Never reached: its input schema does not compile.",
        "input": {"type": "object", "frobnicate": true},
        "output": {"type": "object"},
        "mutating": false,
    });
    let manifest: ToolManifest = crate::defined("bad-schema manifest", serde_json::from_value(raw));
    Tool::from_parts(
        manifest,
        crate::tools::handler(|input, _ctx| async move { Ok(input) }),
    )
}
