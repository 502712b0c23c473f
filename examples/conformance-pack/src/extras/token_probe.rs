//! `conformance.token-probe`: whether pack code can read the service token back — from the
//! live environment, `/proc/self/environ` (the environment the process image started with),
//! `/proc/self/cmdline`, or the file `KINDGI_PACK_SERVICE_TOKEN_FILE` names. The caller
//! sends the token it used; the answer says only where it was found, never what was read.

use kindgi_tools::{DefineError, Tool};
use serde_json::{Value, json};

/// Whether `haystack` holds `needle` (an empty needle is never found).
fn holds(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// What a probe of `path` found: `null` if it cannot be read.
fn probe(path: &std::path::Path, token: &[u8]) -> Value {
    std::fs::read(path).map_or(Value::Null, |bytes| Value::Bool(holds(&bytes, token)))
}

pub fn tool() -> Result<Tool, DefineError> {
    Tool::define("conformance.token-probe")
        .version("1.0.0")
        .description("Says where, if anywhere, pack code can read the given token back.")
        .input(json!({
            "type": "object",
            "properties": {"token": {"type": "string", "minLength": 1}},
            "required": ["token"],
        }))
        .output(json!({"type": "object"}))
        .mutating(false)
        .raw_handler(crate::tools::handler(|input, _ctx| async move {
            let token = input["token"]
                .as_str()
                .unwrap_or_default()
                .as_bytes()
                .to_vec();
            let live = std::env::vars_os().any(|(k, v)| {
                holds(k.as_encoded_bytes(), &token) || holds(v.as_encoded_bytes(), &token)
            });
            let file = std::env::var_os("KINDGI_PACK_SERVICE_TOKEN_FILE")
                .map_or(Value::Null, |p| probe(std::path::Path::new(&p), &token));
            Ok(json!({
                "env": live,
                "environ": probe("/proc/self/environ".as_ref(), &token),
                "cmdline": probe("/proc/self/cmdline".as_ref(), &token),
                "tokenFile": file,
            }))
        }))
        .build()
}
