//! `conformance.throws`: its handler always fails with `boom`.

use kindgi_tools::{DefineError, HandlerError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.throws")
        .version("1.0.0")
        .description("Always fails with boom.")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .raw_handler(super::handler(|_input, _ctx| async move {
            Err(HandlerError::msg("boom"))
        }))
        .build()
}
