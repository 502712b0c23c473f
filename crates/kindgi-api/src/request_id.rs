//! Request ids: honour a client's `X-Request-Id` (when it is short printable ASCII), mint
//! `req-<uuidv4>` otherwise, echo it in the response header, and render error envelopes
//! with it (see [`crate::error`]).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::error::{ApiError, generic_for};

/// The header name.
pub const HEADER: &str = "x-request-id";

/// The request's id, in the request extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

fn acceptable(v: &str) -> bool {
    !v.is_empty() && v.len() <= 200 && v.bytes().all(|b| b.is_ascii_graphic())
}

/// The middleware.
pub async fn middleware(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| acceptable(v))
        .map(str::to_owned)
        .unwrap_or_else(|| format!("req-{}", uuid::Uuid::new_v4()));
    request.extensions_mut().insert(RequestId(id.clone()));
    let mut response = next.run(request).await;
    let status = response.status();
    if status.is_client_error() || status.is_server_error() {
        let error = match response.extensions_mut().remove::<ApiError>() {
            Some(e) => Some(e),
            // Another layer's bare error (unknown route, wrong method, body limit).
            None if !is_json(&response) => Some(generic_for(status)),
            None => None,
        };
        if let Some(error) = error {
            let body = serde_json::to_vec(&error.envelope(&id)).unwrap_or_default();
            let mut rendered = Response::new(Body::from(body));
            *rendered.status_mut() = status;
            for (name, value) in response.headers() {
                if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
                    rendered.headers_mut().append(name, value.clone());
                }
            }
            rendered.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response = rendered;
        }
    }
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER, v);
    }
    response
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}
