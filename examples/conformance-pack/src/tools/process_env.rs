//! `conformance.process-env`: the sorted names (never the values) of the process environment.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.process-env")
        .version("1.0.0")
        .description("Lists the process environment's variable names, sorted.")
        .input(json!({"type": "object"}))
        .output(json!({
            "type": "object",
            "properties": {"names": {"type": "array", "items": {"type": "string"}}},
            "required": ["names"],
        }))
        .mutating(false)
        .raw_handler(super::handler(|_input, _ctx| async move {
            let mut names: Vec<String> = std::env::vars_os()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect();
            names.sort();
            Ok(json!({"names": names}))
        }))
        .build()
}
