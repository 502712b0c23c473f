//! Request bodies of JSON routes (platform-api.md §1.6).
//!
//! * [`JsonObject`]: what the reference does — the body is parsed whatever its
//!   `Content-Type`; nesting deeper than [`MAX_DEPTH`] is `400 bad-input`
//!   `details.maxDepth: 128`; unparseable is `400 bad-input` ``Request body must be valid
//!   JSON``; anything but an object is ``Request body must be an object``. An empty body is
//!   `{}` when the route allows it ([`JsonObject::or_empty`]) — lifecycle POSTs accept no
//!   body and no `Content-Type` as well as `{}`.
//! * [`JsonBody`]: the raw body after checking the media type: `Content-Type` must be
//!   `application/json` (any case, parameters allowed), else `415 unsupported-media-type`
//!   `Content-Type must be application/json` (our stricter rule for the tool routes).
//!
//! Both read at most [`crate::BODY_LIMIT`] bytes (`413 request-too-large` beyond it).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use serde_json::{Map, Value, json};

use crate::error::ApiError;

/// The deepest nesting of arrays and objects a body may have.
pub const MAX_DEPTH: usize = 128;

/// The request body of a JSON route.
#[derive(Debug, Clone)]
pub struct JsonBody(pub Bytes);

/// A route's body parsed as a JSON object (see the module docs).
#[derive(Debug, Clone)]
pub struct JsonObject(pub Map<String, Value>);

/// True when `headers` say the body is `application/json`.
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim())
        .is_some_and(|essence| essence.eq_ignore_ascii_case("application/json"))
}

/// `415 unsupported-media-type`.
pub fn unsupported_media_type(headers: &HeaderMap) -> ApiError {
    let got: String = headers
        .get(header::CONTENT_TYPE)
        .map(|v| {
            String::from_utf8_lossy(v.as_bytes())
                .chars()
                .take(100)
                .collect()
        })
        .unwrap_or_default();
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported-media-type",
        "Content-Type must be application/json",
    )
    .with_details(json!({ "contentType": got }))
}

/// The deepest nesting of `[`/`{` in `bytes` (outside strings), stopping past `limit`.
pub fn nesting_depth(bytes: &[u8], limit: usize) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    return deepest;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Parses a body as a JSON object with the reference's errors.
pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if nesting_depth(bytes, MAX_DEPTH) > MAX_DEPTH {
        return Err(ApiError::bad_input(format!(
            "Request body is nested deeper than {MAX_DEPTH} levels"
        ))
        .with_details(json!({ "maxDepth": MAX_DEPTH })));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_input("Request body must be an object")),
        Err(_) => Err(ApiError::bad_input("Request body must be valid JSON")),
    }
}

impl JsonObject {
    /// The object, or `{}` for an empty body (also without `Content-Type`).
    pub fn or_empty(bytes: &[u8]) -> Result<JsonObject, ApiError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(JsonObject(Map::new()));
        }
        parse_object(bytes).map(JsonObject)
    }
}

async fn read_bytes<S: Send + Sync>(request: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, state)
        .await
        .map_err(|e| match e.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::too_large(crate::BODY_LIMIT),
            _ => ApiError::bad_input(format!("Request body could not be read: {e}")),
        })
}

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonObject, ApiError> {
        let bytes = read_bytes(request, state).await?;
        parse_object(&bytes).map(JsonObject)
    }
}

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody, ApiError> {
        if !is_json(request.headers()) {
            return Err(unsupported_media_type(request.headers()));
        }
        read_bytes(request, state).await.map(JsonBody)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_outside_strings_only() {
        assert_eq!(nesting_depth(br#"{"a":[1,{"b":"[[[["}]}"#, 128), 3);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(nesting_depth(deep.as_bytes(), 128) > 128);
        let e = parse_object(deep.as_bytes()).err().map(|e| e.details);
        assert_eq!(e, Some(Some(json!({"maxDepth": 128}))));
    }

    #[test]
    fn bodies_get_the_reference_messages() {
        let msg = |b: &[u8]| parse_object(b).err().map(|e| e.message);
        assert_eq!(
            msg(b"{nope").as_deref(),
            Some("Request body must be valid JSON")
        );
        assert_eq!(
            msg(b"[1]").as_deref(),
            Some("Request body must be an object")
        );
        assert!(parse_object(b"{\"a\":1}").is_ok());
        assert!(JsonObject::or_empty(b"").is_ok());
    }
}
