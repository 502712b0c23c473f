//! `conformance.min-length` / `conformance.checks.min-length`: passes when the trace's
//! `output`, trimmed, has at least `minLength` characters (default 1), else
//! `reason: "too short"` — as the official fixture counts (`"  a  "` is one character).

use kindgi_pack::sdk::{Check, CheckResult, SdkError};
use serde_json::{Value, json};

/// Trimmed as JavaScript's `String.prototype.trim` does: white space, line terminators and
/// the byte-order mark.
fn trimmed(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

pub fn check() -> Result<Check, SdkError> {
    Check::define("conformance.min-length")
        .check_id("conformance.checks.min-length")
        .kind("zero-llm")
        .on_violation("halt")
        .config_schema(json!({
            "type": "object",
            "properties": {"minLength": {"type": "integer", "minimum": 0, "default": 1}},
        }))
        .evaluate(|config, trace, _ctx| async move {
            let min = config.get("minLength").and_then(Value::as_u64).unwrap_or(1);
            let len = trace
                .get("output")
                .and_then(Value::as_str)
                .map_or(0, |s| trimmed(s).chars().count());
            Ok(if len as u64 >= min {
                CheckResult::pass()
            } else {
                CheckResult::fail("too short")
            })
        })
        .build()
}
