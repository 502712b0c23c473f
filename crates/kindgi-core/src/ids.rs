//! The ids, clocks and constants every floor shares, one copy each: the time format of
//! records (milliseconds since the epoch ⇄ RFC 3339), the wait token's id (a security-relevant
//! hash: idempotency keys and redaction must match the stored ids), the all-tenants scope,
//! the default wait, how a tool reference splits, and a tenant's Default project id.

use sha2::{Digest, Sha256};

/// The tenant under which an entry is visible to every tenant.
pub const ALL_TENANTS: &str = "*";

/// The default wait (an approval tier, a pausing call): 24 hours.
pub const DEFAULT_WAIT_MS: u64 = 24 * 60 * 60 * 1000;

/// A wait token: this prefix and 32 random bytes, base64url without padding.
pub const WAIT_TOKEN_PREFIX: &str = "kgw_";
/// The length of a wait token's body (after [`WAIT_TOKEN_PREFIX`]).
pub const WAIT_TOKEN_BODY_LEN: usize = 43;

/// The namespace of default-project ids (a fixed random UUID).
const DEFAULT_PROJECT_NAMESPACE: uuid::Uuid =
    uuid::Uuid::from_u128(0x6b1d_54c2_94a7_4c1e_9f0e_2d8a_77c3_51b9);

/// The id of `tenant`'s Default project: a UUID v5 derived from the tenant, so it is stable
/// across restarts, processes and databases without being stored (the API serves it; a
/// tool call's values are the Default project's before the tenant's).
pub fn default_project_id(tenant: &str) -> String {
    uuid::Uuid::new_v5(
        &DEFAULT_PROJECT_NAMESPACE,
        format!("kindgi-project:{tenant}").as_bytes(),
    )
    .to_string()
}

/// Now, in milliseconds since the epoch.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Milliseconds since the epoch → RFC 3339 (`2026-01-02T03:04:05.678Z`).
pub fn format_millis(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// RFC 3339 → milliseconds since the epoch (0 when unreadable).
pub fn parse_millis(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|d| d.timestamp_millis())
        .unwrap_or(0)
}

/// The id a wait token is stored and journaled under: the first 40 hex digits of its
/// SHA-256. The token itself is never stored.
pub fn token_id(token: &str) -> String {
    let mut id = hex::encode(Sha256::digest(token.as_bytes()));
    id.truncate(40);
    id
}

/// The id of a wait token ([`token_id`]), or `None` when `token` is not shaped like one
/// (the prefix and 43 base64url characters).
pub fn wait_token_id(token: &str) -> Option<String> {
    let body = token.strip_prefix(WAIT_TOKEN_PREFIX)?;
    let shaped = body.len() == WAIT_TOKEN_BODY_LEN
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    shaped.then(|| token_id(token))
}

/// Splits a tool reference `id` or `id@range`.
pub fn split_tool_ref(reference: &str) -> (&str, Option<&str>) {
    match reference.split_once('@') {
        Some((id, range)) if !range.trim().is_empty() => (id, Some(range.trim())),
        Some((id, _)) => (id, None),
        None => (reference, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millis_round_trip_through_rfc3339() {
        let s = format_millis(1_767_322_245_678);
        assert_eq!(s, "2026-01-02T02:50:45.678Z");
        assert_eq!(parse_millis(&s), 1_767_322_245_678);
        assert_eq!(parse_millis("not a time"), 0);
    }

    #[test]
    fn a_token_id_is_forty_hex_of_its_sha256() {
        // sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
        assert_eq!(token_id("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a3");
        let token = format!("{WAIT_TOKEN_PREFIX}{}", "a".repeat(WAIT_TOKEN_BODY_LEN));
        assert_eq!(wait_token_id(&token), Some(token_id(&token)));
        assert_eq!(wait_token_id("kgw_short"), None);
        let bad = format!("{WAIT_TOKEN_PREFIX}{}", "!".repeat(WAIT_TOKEN_BODY_LEN));
        assert_eq!(wait_token_id(&bad), None);
    }

    #[test]
    fn tool_refs_split_at_the_first_at_sign() {
        assert_eq!(split_tool_ref("a.b"), ("a.b", None));
        assert_eq!(split_tool_ref("a.b@^1"), ("a.b", Some("^1")));
        assert_eq!(split_tool_ref("a.b@ "), ("a.b", None));
    }
}
