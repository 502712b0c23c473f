//! `conformance.hold`: prints `hold: <release>` on stdout, then waits until the file
//! `<release>` exists (the conformance kit creates it to release the call) and returns
//! `{released: true}`; when the call is cancelled it stops with `{released: false}`.

use kindgi_tools::{DefineError, Tool};
use serde_json::{Value, json};
use std::time::Duration;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.hold")
        .version("1.0.0")
        .description("Holds the call until its release file exists.")
        .input(json!({
            "type": "object",
            "properties": {"release": {"type": "string", "minLength": 1}},
            "required": ["release"],
        }))
        .output(json!({
            "type": "object",
            "properties": {"released": {"type": "boolean"}},
            "required": ["released"],
        }))
        .raw_handler(super::handler(|input, ctx| async move {
            let release = input
                .get("release")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            println!("hold: {release}");
            loop {
                if tokio::fs::try_exists(&release).await.unwrap_or(false) {
                    return Ok(json!({"released": true}));
                }
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(10)) => {}
                    () = ctx.signal.cancelled() => return Ok(json!({"released": false})),
                }
            }
        }))
        .build()
}
