//! Pagination as the Platform API does it (platform-api.md §1.7): `?limit` (default 25,
//! clamped to 1..=100, never a 400) and an opaque `?cursor`, answered as
//! `{"data": [...], "hasMore": bool, "nextCursor"?: string}` (`nextCursor` only when
//! `hasMore`). A cursor is base64url (no padding) of a small JSON object that names where the
//! previous page ended — e.g. `{"createdAt": …, "id": …}` for runs — so any list can define
//! its own position type. A cursor that does not decode is `400 bad-input`
//! ``\`cursor\` is malformed``.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ApiError;

/// The page size when `?limit` is absent or not a number 1 or more.
pub const DEFAULT_LIMIT: usize = 25;
/// The largest page.
pub const MAX_LIMIT: usize = 100;
/// The longest cursor read (a longer one is malformed without being decoded).
pub const MAX_CURSOR_LEN: usize = 2048;

/// `?limit` clamped as the reference does: absent, non-numeric or < 1 → 25; > 100 → 100.
pub fn clamp_limit(raw: Option<&str>) -> usize {
    match raw.map(str::trim).and_then(|s| s.parse::<i64>().ok()) {
        Some(n) if n >= 1 => (n as u64).min(MAX_LIMIT as u64) as usize,
        _ => DEFAULT_LIMIT,
    }
}

/// Encodes a position as a cursor.
pub fn encode_cursor<T: Serialize>(position: &T) -> String {
    let json = serde_json::to_vec(position).unwrap_or_default();
    URL_SAFE_NO_PAD.encode(json)
}

/// Decodes `?cursor` (absent or empty → `None`).
pub fn decode_cursor<T: DeserializeOwned>(raw: Option<&str>) -> Result<Option<T>, ApiError> {
    let Some(raw) = raw.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let malformed = || {
        ApiError::bad_input("`cursor` is malformed")
            .with_details(serde_json::json!({"field": "cursor"}))
    };
    if raw.len() > MAX_CURSOR_LEN {
        return Err(malformed());
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(raw.trim_end_matches('='))
        .map_err(|_| malformed())?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|_| malformed())
}

/// A page body: `data`, `hasMore`, and `nextCursor` when there is more. `extra` fields
/// (e.g. approvals' `order`) are added at the top level.
pub fn page(data: Vec<Value>, next_cursor: Option<String>, extra: Map<String, Value>) -> Value {
    let mut body = Map::new();
    body.insert("data".into(), Value::Array(data));
    body.insert("hasMore".into(), Value::Bool(next_cursor.is_some()));
    if let Some(c) = next_cursor {
        body.insert("nextCursor".into(), Value::String(c));
    }
    body.extend(extra);
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_clamped_not_refused() {
        assert_eq!(clamp_limit(None), 25);
        assert_eq!(clamp_limit(Some("0")), 25);
        assert_eq!(clamp_limit(Some("abc")), 25);
        assert_eq!(clamp_limit(Some("7")), 7);
        assert_eq!(clamp_limit(Some("500")), 100);
    }

    #[test]
    fn cursors_round_trip_and_garbage_is_malformed() {
        let c = encode_cursor(&serde_json::json!({"sequence": 1}));
        assert_eq!(c, "eyJzZXF1ZW5jZSI6MX0");
        let back: Option<Value> = decode_cursor(Some(&c)).ok().flatten();
        assert_eq!(back, Some(serde_json::json!({"sequence": 1})));
        let e = decode_cursor::<Value>(Some("zzz")).err().map(|e| e.message);
        assert_eq!(e.as_deref(), Some("`cursor` is malformed"));
    }
}
