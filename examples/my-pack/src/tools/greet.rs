//! `my-pack.greet`: builds a greeting. Read-only.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("my-pack.greet")
        .version("0.1.0")
        .description("Greets someone by name.")
        .input(json!({
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}},
            "required": ["name"],
        }))
        .output(json!({
            "type": "object",
            "properties": {"greeting": {"type": "string"}},
            "required": ["greeting"],
        }))
        .mutating(false)
        .raw_handler(super::handler(|input, _ctx| async move {
            let name = input.get("name").and_then(|v| v.as_str()).unwrap_or("");
            Ok(json!({"greeting": format!("Hello, {name}!")}))
        }))
        .build()
}
