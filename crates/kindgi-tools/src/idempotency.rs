//! The idempotency key of a tool call: a deterministic UUIDv5 (SHA-1) a handler passes to
//! the systems it changes, so a retried call (same run, same step, same tool, same call)
//! is recognised as the same call. Byte-compatible with the reference `toolIdempotencyKey`.

use uuid::Uuid;

/// The namespace every key is derived in.
pub const IDEMPOTENCY_NAMESPACE: Uuid = Uuid::from_u128(0xa70d5bff_e713_4322_b2ea_9d5c4926a861);

/// The key of one call: UUIDv5 over the compact JSON (UTF-8, non-ASCII written raw) of
/// `[runId, stepScope, toolId]`, with `callId` appended when there is one.
pub fn tool_idempotency_key(
    run_id: &str,
    step_scope: &str,
    tool_id: &str,
    call_id: Option<&str>,
) -> Uuid {
    let mut parts: Vec<&str> = vec![run_id, step_scope, tool_id];
    parts.extend(call_id);
    // serde_json writes compact JSON and leaves non-ASCII characters unescaped, as
    // JavaScript's JSON.stringify does; serialising strings cannot fail.
    let name = serde_json::to_vec(&parts).unwrap_or_default();
    Uuid::new_v5(&IDEMPOTENCY_NAMESPACE, &name)
}
