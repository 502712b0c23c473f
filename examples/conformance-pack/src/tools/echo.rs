//! `conformance.echo`: returns `{message}`.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.echo")
        .version("1.0.0")
        .description("Returns the message it was given.")
        .input(json!({
            "type": "object",
            "properties": {"message": {"type": "string", "minLength": 1}},
            "required": ["message"],
            "additionalProperties": false,
        }))
        .output(json!({
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
            "additionalProperties": false,
        }))
        .mutating(false)
        .raw_handler(super::handler(|input, _ctx| async move {
            Ok(json!({"message": input.get("message").cloned().unwrap_or_default()}))
        }))
        .build()
}
