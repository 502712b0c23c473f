//! `my-pack.lookup-order`: reads an order. Declared read-only (`mutating: false`, no
//! effects), so it runs in a dry run.

use kindgi_tools::{DefineError, HandlerError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("my-pack.lookup-order")
        .version("0.1.0")
        .description("Looks an order up by id.")
        .input(json!({
            "type": "object",
            "properties": {"orderId": {"type": "string", "minLength": 1}},
            "required": ["orderId"],
        }))
        .output(json!({
            "type": "object",
            "properties": {
                "status": {"type": "string"},
                "orderId": {"type": "string"},
                "totalCents": {"type": "integer", "minimum": 0},
            },
            "required": ["status", "orderId", "totalCents"],
            "additionalProperties": false,
        }))
        .effects([])
        .mutating(false)
        .raw_handler(super::handler(|input, _ctx| async move {
            let id = input.get("orderId").and_then(|v| v.as_str()).unwrap_or("");
            match super::ORDERS.iter().find(|(o, _, _)| *o == id) {
                Some((order, status, total)) => {
                    Ok(json!({"status": status, "orderId": order, "totalCents": total}))
                }
                None => Err(HandlerError::msg(format!("no order \"{id}\""))),
            }
        }))
        .build()
}
