//! `conformance.log-probe`: logs through `tracing` from inside a handler — an info event with
//! fields of each kind, one secret-looking field and free text holding a bearer token and a
//! URL password, a warn event with fields named like the record's own keys, and a debug
//! event — so a test can read what the SDK's log bridge
//! (`kindgi_pack::log_tracing::RecordLayer`) makes of them on stderr.

use kindgi_tools::{DefineError, Tool};
use serde_json::json;

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.log-probe")
        .version("1.0.0")
        .description("Logs through tracing, then answers ok.")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .raw_handler(crate::tools::handler(|_input, _ctx| async move {
            tracing::info!(
                order = "ord_1001",
                count = 3_u64,
                delta = -2_i64,
                ratio = 0.5_f64,
                fresh = true,
                shape = ?("a", 1),
                api_token = "tok-live-91c3",
                note = "sent with Bearer sk-live-77aa to https://u:pw-31f0@example.com/x",
                "looked up {} for {}",
                "ord_1001",
                "Ada"
            );
            // Fields named like the record's own keys must not replace them.
            tracing::warn!(
                password = %"hunter2-5d1e",
                level = "spoofed",
                event = "listening",
                "slow upstream"
            );
            tracing::debug!(detail = "only at debug", "a debug event");
            Ok(json!({"ok": true}))
        }))
        .build()
}
