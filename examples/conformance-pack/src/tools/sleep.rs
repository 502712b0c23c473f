//! `conformance.sleep`: waits `ms` milliseconds (stops early when cancelled), returns
//! `{slept: ms}`.

use kindgi_tools::{DefineError, Tool};
use serde_json::{Value, json};
use std::time::Duration;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.sleep")
        .version("1.0.0")
        .description("Sleeps for ms milliseconds (cancellable).")
        .input(json!({
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0}},
            "required": ["ms"],
        }))
        .output(json!({
            "type": "object",
            "properties": {"slept": {"type": "integer"}},
            "required": ["slept"],
        }))
        .mutating(false)
        .raw_handler(super::handler(|input, ctx| async move {
            let ms = input.get("ms").and_then(Value::as_u64).unwrap_or(0);
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                () = ctx.signal.cancelled() => {}
            }
            Ok(json!({"slept": ms}))
        }))
        .build()
}
