//! `conformance.defaults`: returns its input after the service filled the schema's defaults.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    let options = json!({
        "type": "object",
        "properties": {"loud": {"type": "boolean", "default": false}},
    });
    let mut options_with_default = options.clone();
    options_with_default["default"] = json!({});
    Tool::define("conformance.defaults")
        .version("1.0.0")
        .description("Returns the input with defaults filled in.")
        .input(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "greeting": {"type": "string", "default": "Hello"},
                "options": options_with_default,
            },
            "required": ["name"],
        }))
        .output(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "greeting": {"type": "string"},
                "options": options,
            },
            "required": ["name"],
        }))
        .mutating(false)
        .raw_handler(super::handler(|input, _ctx| async move { Ok(input) }))
        .build()
}
