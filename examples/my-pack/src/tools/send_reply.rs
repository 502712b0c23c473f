//! `my-pack.send-reply`: sends the customer a reply. It sends a message to someone outside,
//! so it is mutating (the default) with an `external-side-effect` effect: an agent whose
//! approval gates are on (`conversationPolicy.hitl`) asks a person before its first use, and
//! a before-tool guardrail (`my-pack.no-card-numbers`) judges each call before it starts.

use kindgi_spec::tool::EffectKind;
use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("my-pack.send-reply")
        .version("0.1.0")
        .description("Sends the customer a reply (a message they will read).")
        .input(json!({
            "type": "object",
            "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 2000}},
            "required": ["message"],
            "additionalProperties": false,
        }))
        .output(json!({
            "type": "object",
            "properties": {"sent": {"type": "boolean"}, "message": {"type": "string"}},
            "required": ["sent", "message"],
        }))
        .effect(EffectKind::ExternalSideEffect, "external:customer-mail")
        .raw_handler(super::handler(|input, _ctx| async move {
            Ok(json!({"sent": true, "message": input["message"]}))
        }))
        .build()
}
