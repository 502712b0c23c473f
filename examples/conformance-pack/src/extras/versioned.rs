//! `conformance.versioned` at 1.0.0 and 2.0.0: each answers `{version: "<its version>"}`.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool(version: &'static str) -> Result<Tool, DefineError> {
    Tool::define("conformance.versioned")
        .version(version)
        .description("Answers with its own version.")
        .input(json!({"type": "object"}))
        .output(json!({
            "type": "object",
            "properties": {"version": {"type": "string"}},
            "required": ["version"],
        }))
        .mutating(false)
        .raw_handler(crate::tools::handler(move |_input, _ctx| async move {
            Ok(json!({"version": version}))
        }))
        .build()
}
