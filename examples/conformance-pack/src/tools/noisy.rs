//! `conformance.noisy`: writes a line on stdout (which must never reach the response) and
//! answers `{ok: true}`.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.noisy")
        .version("1.0.0")
        .description("Prints, then answers ok.")
        .input(json!({"type": "object"}))
        .output(json!({
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
            "additionalProperties": false,
        }))
        .mutating(false)
        .raw_handler(super::handler(|_input, _ctx| async move {
            println!("noisy: a line on stdout");
            Ok(json!({"ok": true}))
        }))
        .build()
}
