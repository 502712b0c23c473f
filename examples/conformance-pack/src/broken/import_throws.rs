//! `conformance.import-throws`: its load step fails, so a service whose index lists it
//! refuses to boot with a problem naming the tool.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.import-throws")
        .version("1.0.0")
        .description("Its module fails to load.")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .raw_handler(crate::tools::handler(
            |input, _ctx| async move { Ok(input) },
        ))
        .build()
}

/// The load step: always fails, as a module that throws while it is imported.
pub fn load() -> Result<(), String> {
    Err("Error: conformance import boom".to_owned())
}
