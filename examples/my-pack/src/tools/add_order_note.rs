//! `my-pack.add-order-note`: adds a note to an order. It writes (`mutating` left out, which
//! means `true`, and a `writes` effect), so a dry run stops before calling it.

use kindgi_spec::tool::EffectKind;
use kindgi_tools::{DefineError, Tool};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_NOTE: AtomicU64 = AtomicU64::new(1);

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("my-pack.add-order-note")
        .version("0.1.0")
        .description("Adds a note to an order.")
        .input(json!({
            "type": "object",
            "properties": {
                "orderId": {"type": "string", "minLength": 1},
                "text": {"type": "string", "minLength": 1},
            },
            "required": ["orderId", "text"],
        }))
        .output(json!({
            "type": "object",
            "properties": {"noteId": {"type": "string"}, "orderId": {"type": "string"}},
            "required": ["noteId", "orderId"],
        }))
        .effect(EffectKind::Writes, "external:orders")
        .raw_handler(super::handler(|input, _ctx| async move {
            let n = NEXT_NOTE.fetch_add(1, Ordering::Relaxed);
            Ok(json!({"noteId": format!("note_{n}"), "orderId": input["orderId"]}))
        }))
        .build()
}
