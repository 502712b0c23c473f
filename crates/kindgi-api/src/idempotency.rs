//! The `Idempotency-Key` header on POST, PUT, PATCH and DELETE (API conventions): a
//! successful response (status < 400) is stored for 24 hours per tenant and key, and a retry
//! with the same method, path and body gets it again byte for byte with
//! `X-Idempotent-Replay: true`. The same key with another request is
//! `409 idempotency-key-body-mismatch`; a repeat while the first is still running is
//! `409 idempotency-key-in-flight` with `Retry-After: 30`. A failed request releases the key.
//! Requests without a valid bearer key pass through untouched (the route answers 401).

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kindgi_store::idempotency::{Claim, IdempotencyStore};
use kindgi_store::tokens::KeyStatus;
use sha2::{Digest, Sha256};

use crate::BODY_LIMIT;
use crate::error::ApiError;
use crate::state::AppState;

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The replay marker header.
pub const REPLAY_HEADER: &str = "x-idempotent-replay";

fn bearer(request: &Request) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| key.trim())
        .filter(|k| !k.is_empty())
}

/// The middleware (layered inside the request-id middleware, so its errors get envelopes).
pub async fn middleware(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let writes = matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    let Some(key) = request.headers().get(HEADER).filter(|_| writes) else {
        return next.run(request).await;
    };
    let Some(key) = key
        .to_str()
        .ok()
        .filter(|k| !k.is_empty() && k.len() <= 255 && k.bytes().all(|b| b.is_ascii_graphic()))
    else {
        return ApiError::bad_input(
            "`Idempotency-Key` must be 1 to 255 printable ASCII characters",
        )
        .into_response();
    };
    let key = key.to_owned();
    let tenant = match bearer(&request) {
        Some(token) => match state.authenticate(token).await {
            Ok(KeyStatus::Valid { tenant, .. }) => tenant,
            Ok(_) => return next.run(request).await,
            Err(e) => return ApiError::internal(&e).into_response(),
        },
        None => return next.run(request).await,
    };
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, BODY_LIMIT).await else {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload-too-large",
            "Request body is larger than the 1 MiB limit",
        )
        .into_response();
    };
    let mut hasher = Sha256::new();
    hasher.update(parts.method.as_str().as_bytes());
    hasher.update(b" ");
    hasher.update(parts.uri.to_string().as_bytes());
    hasher.update(b"\n");
    hasher.update(&bytes);
    let request_hash = hex::encode(hasher.finalize());

    let store = IdempotencyStore::new(state.db.clone());
    match store.claim(&tenant, &key, &request_hash).await {
        Err(e) => ApiError::internal(&e).into_response(),
        Ok(Claim::BodyMismatch) => ApiError::new(
            StatusCode::CONFLICT,
            "idempotency-key-body-mismatch",
            "This Idempotency-Key was already used with a different request; use a new key",
        )
        .into_response(),
        Ok(Claim::InFlight) => {
            let mut r = ApiError::new(
                StatusCode::CONFLICT,
                "idempotency-key-in-flight",
                "A request with this Idempotency-Key is still being processed; retry later",
            )
            .into_response();
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
            r
        }
        Ok(Claim::Replay { status, body }) => {
            let mut r = Response::new(Body::from(body));
            *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            r.headers_mut()
                .insert(REPLAY_HEADER, HeaderValue::from_static("true"));
            r
        }
        Ok(Claim::Started) => {
            let response = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            if response.status().as_u16() >= 400 {
                if let Err(e) = store.release(&tenant, &key).await {
                    tracing::error!(error = %e, "cannot release an idempotency key");
                }
                return response;
            }
            let (parts, body) = response.into_parts();
            let body = match to_bytes(body, usize::MAX).await {
                Ok(b) => b,
                Err(e) => {
                    let _ = store.release(&tenant, &key).await;
                    return ApiError::internal(&e).into_response();
                }
            };
            let text = String::from_utf8_lossy(&body);
            if let Err(e) = store
                .complete(&tenant, &key, parts.status.as_u16(), &text)
                .await
            {
                tracing::error!(error = %e, "cannot store an idempotent response");
            }
            Response::from_parts(parts, Body::from(body))
        }
    }
}
