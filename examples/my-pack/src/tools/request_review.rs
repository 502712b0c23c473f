//! `my-pack.request-review`: asks a person to review an order and makes the run wait for
//! the answer — a pausing tool (`pauses: true`, docs/pauses.md).
//!
//! Each call gets a wait ticket; the handler hands its link to "the reviewers' system" and
//! answers *pause*. For this example that system is a file: one JSON line per request,
//! `{"orderId", "note", "link", "expiresAt"}`, appended to the file `MY_PACK_REVIEW_OUTBOX`
//! names (created 0600: the link carries the wait token, a capability, so it never goes to
//! a log). Whoever reads it answers with `POST <link>` and a body
//! `{"value": {"approved": true, "reviewer": "ada"}}`, which must match the output schema;
//! that answer becomes the call's result. `{"now": true}` skips the review (approved at
//! once); `timeoutHours` shortens or lengthens the wait (24 h by default, 24 days at most).
//!
//! It sends a request to other people, so it is mutating (the default) with an
//! `external-side-effect` effect.

use kindgi_pack::sdk::{self, PausingHandler, Reply};
use kindgi_spec::tool::EffectKind;
use kindgi_tools::{DefineError, HandlerError, Tool, ToolContext};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// The env name of the outbox file (declared optional in the pack's index).
pub const OUTBOX_ENV: &str = "MY_PACK_REVIEW_OUTBOX";

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("my-pack.request-review")
        .version("0.1.0")
        .description(
            "Asks a person to review an order; the run waits for their answer (approved or not).",
        )
        .input(json!({
            "type": "object",
            "properties": {
                "orderId": {"type": "string", "minLength": 1},
                "note": {"type": "string"},
                "now": {"type": "boolean", "default": false},
                "timeoutHours": {"type": "integer", "minimum": 1, "maximum": 576},
            },
            "required": ["orderId"],
            "additionalProperties": false,
        }))
        .output(json!({
            "type": "object",
            "properties": {
                "approved": {"type": "boolean"},
                "reviewer": {"type": "string"},
                "comment": {"type": "string"},
            },
            "required": ["approved"],
            "additionalProperties": false,
        }))
        .effect(EffectKind::ExternalSideEffect, "external:reviews")
        .pausing_handler(|input: Value, ctx: ToolContext| async move {
            if input["now"] == true {
                return Ok(Reply::Done(
                    json!({"approved": true, "comment": "no review asked"}),
                ));
            }
            let ticket = sdk::wait_ticket(&ctx)?;
            let line = json!({
                "orderId": input["orderId"],
                "note": input.get("note").cloned().unwrap_or(Value::Null),
                "link": ticket.link,
                "expiresAt": ticket.expires_at,
            });
            hand_over(&line).await?;
            Ok(match input["timeoutHours"].as_u64() {
                Some(h) => Reply::pause_for(Duration::from_secs(h * 3600)),
                None => Reply::pause(),
            })
        })
        .build()
}

/// Appends the request to the outbox file (created 0600), with tokio's file API so the
/// write stays off the async workers.
async fn hand_over(line: &Value) -> Result<(), HandlerError> {
    let path = std::env::var(OUTBOX_ENV)
        .ok()
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| {
            HandlerError::msg(format!(
                "{OUTBOX_ENV} is not set: set it to the file the reviewers' system reads review requests from"
            ))
        })?;
    let mut options = tokio::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options
        .open(&path)
        .await
        .map_err(|e| HandlerError::msg(format!("cannot open the {OUTBOX_ENV} file {path}: {e}")))?;
    let mut text = line.to_string();
    text.push('\n');
    let failed = |e: std::io::Error| {
        HandlerError::msg(format!("cannot write to the {OUTBOX_ENV} file {path}: {e}"))
    };
    file.write_all(text.as_bytes()).await.map_err(failed)?;
    // tokio's File finishes a write in the background: without the flush the line may not be
    // in the file yet when the call answers (the reviewers' system would read an empty outbox).
    file.flush().await.map_err(failed)
}
