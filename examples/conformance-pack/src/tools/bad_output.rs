//! `conformance.bad-output`: returns `{message: 7}` against an output schema wanting a string.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.bad-output")
        .version("1.0.0")
        .description("Produces output that fails its own output schema.")
        .input(json!({"type": "object"}))
        .output(json!({
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        }))
        .mutating(false)
        .raw_handler(super::handler(|_input, _ctx| async move {
            Ok(json!({"message": 7}))
        }))
        .build()
}
