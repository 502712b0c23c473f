//! [`JsonBody`]: the raw body of a route that takes JSON, after checking its media type.
//! `Content-Type` must be `application/json` (any case, parameters such as `charset`
//! allowed); anything else — none, `text/plain`, `application/jsonx` — is
//! `415 unsupported-media-type` `Content-Type must be application/json` (the pack service's
//! message; the official `/v1` runtime parses any body, so the code is ours, in its style).
//! Routes that take no body (unregister, reinstate, cancel) do not use it and accept any.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use serde_json::json;

use crate::error::ApiError;

/// The request body of a JSON route.
#[derive(Debug, Clone)]
pub struct JsonBody(pub Bytes);

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

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody, ApiError> {
        if !is_json(request.headers()) {
            return Err(unsupported_media_type(request.headers()));
        }
        Bytes::from_request(request, state)
            .await
            .map(JsonBody)
            .map_err(|e| match e.status() {
                StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload-too-large",
                    "Request body is larger than the 1 MiB limit",
                ),
                _ => ApiError::bad_input(format!("Request body could not be read: {e}")),
            })
    }
}
