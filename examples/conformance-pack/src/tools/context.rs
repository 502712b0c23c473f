//! `conformance.context`: returns its call context in wire form — `tenantId`, `runId`, and
//! each of `requestId`, `idempotencyKey`, `projectId`, `orgId`, `env`, `secrets`, `config`,
//! `settings` that was sent (absent ones and empty maps left out).

use kindgi_pack::sdk::call_context;
use kindgi_tools::{DefineError, Tool};
use serde_json::{Map, Value, json};

const FIELDS: [&str; 10] = [
    "tenantId",
    "runId",
    "requestId",
    "idempotencyKey",
    "projectId",
    "orgId",
    "env",
    "secrets",
    "config",
    "settings",
];

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.context")
        .version("1.0.0")
        .description("Echoes the call context.")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .raw_handler(super::handler(|_input, _ctx| async move {
            let mut out = Map::new();
            if let Some(ctx) = call_context() {
                for key in FIELDS {
                    match ctx.get(key) {
                        None | Some(Value::Null) => {}
                        Some(Value::Object(m)) if m.is_empty() => {}
                        Some(v) => {
                            out.insert(key.to_owned(), v.clone());
                        }
                    }
                }
            }
            Ok(Value::Object(out))
        }))
        .build()
}
