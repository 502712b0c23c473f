//! `conformance.echo` 2.0.0: returns `{message, version: "2.0.0"}`.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.echo")
        .version("2.0.0")
        .description("Returns the message it was given, and its version.")
        .input(json!({
            "type": "object",
            "properties": {"message": {"type": "string", "minLength": 1}},
            "required": ["message"],
            "additionalProperties": false,
        }))
        .output(json!({
            "type": "object",
            "properties": {"message": {"type": "string"}, "version": {"type": "string"}},
            "required": ["message", "version"],
            "additionalProperties": false,
        }))
        .mutating(false)
        .raw_handler(crate::tools::handler(|input, _ctx| async move {
            Ok(json!({"message": input.get("message").cloned().unwrap_or_default(), "version": "2.0.0"}))
        }))
        .build()
}
