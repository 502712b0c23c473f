//! The `Idempotency-Key` header on POST, PUT, PATCH and DELETE (platform-api.md §1.5): a
//! successful answer (status < 400) is stored for 24 hours under tenant | caller
//! (`user:…`, `service_account:…` or the key) | `METHOD:path` | key, and a retry with the
//! same body (sha256 of the raw bytes) gets it again byte for byte with
//! `X-Idempotent-Replay: true`. Another caller, or another route, using the same key runs
//! independently. The same key with another request is
//! `409 idempotency-key-body-mismatch`; a repeat while the first is still running is
//! `409 idempotency-key-in-flight` with `Retry-After: 5`. Failed requests store nothing.
//! Requests without a valid bearer key pass through untouched (the route answers 401).
//!
//! **Crash safety.** Nothing is stored before the answer exists. A route whose write the
//! store does itself (`POST /v1/tools`) gets an [`IdempotencyContext`] and records the answer
//! in the write's own transaction, marking its response [`AnswerRecorded`]; after a crash a
//! retry therefore finds either the answer (the write committed) or nothing (it did not, and
//! the retry does it). Other routes' answers are recorded right after the handler. "In
//! flight" is known only to the serving process ([`crate::in_flight::InFlight`]), so it ends with it: a key is
//! never held by a request that died.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kindgi_store::idempotency::{AnswerToRecord, IdempotencyStore, StoredAnswer};
use sha2::{Digest, Sha256};

use crate::BODY_LIMIT;
use crate::auth::{Authenticated, authenticate};
use crate::error::ApiError;
use crate::state::AppState;

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The replay marker header.
pub const REPLAY_HEADER: &str = "x-idempotent-replay";
/// `Retry-After` on `409 idempotency-key-in-flight`, in seconds (the reference's value).
pub const IN_FLIGHT_RETRY_AFTER_S: u32 = 5;

/// Given to a route (as a request extension) when the request carries a key the route may
/// record itself, inside its write's transaction.
#[derive(Debug, Clone)]
pub struct IdempotencyContext {
    pub tenant: String,
    pub key: String,
    pub request_hash: String,
}

impl IdempotencyContext {
    /// The answer to record with the write.
    pub fn answer(&self, status: StatusCode, body: &str) -> AnswerToRecord {
        AnswerToRecord {
            tenant: self.tenant.clone(),
            key: self.key.clone(),
            request_hash: self.request_hash.clone(),
            status: status.as_u16(),
            body: body.to_owned(),
        }
    }
}

/// A route takes it as `Option<IdempotencyContext>`: `None` when the request carries no key
/// the route may record itself.
impl<S: Send + Sync> axum::extract::OptionalFromRequestParts<S> for IdempotencyContext {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Option<IdempotencyContext>, std::convert::Infallible> {
        Ok(parts.extensions.get::<IdempotencyContext>().cloned())
    }
}

/// Response extensions a route sets after using an [`IdempotencyContext`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerRecorded {
    /// The answer committed with the write: send it, store nothing more.
    Recorded,
    /// Another request recorded the key first, so nothing was written: replay its answer.
    KeyTaken,
}

fn request_hash(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

fn in_flight() -> Response {
    let mut r = ApiError::new(
        StatusCode::CONFLICT,
        "idempotency-key-in-flight",
        "A request with this Idempotency-Key is still being processed; retry later",
    )
    .into_response();
    r.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from(IN_FLIGHT_RETRY_AFTER_S),
    );
    r
}

/// The stored answer for this request: a replay, or a mismatch when the key was used with
/// another request.
fn answer_with(stored: StoredAnswer, request_hash: &str) -> Response {
    if stored.request_hash != request_hash {
        return ApiError::new(
            StatusCode::CONFLICT,
            "idempotency-key-body-mismatch",
            "This Idempotency-Key was already used with a different request; use a new key",
        )
        .into_response();
    }
    let mut r = Response::new(Body::from(stored.body));
    *r.status_mut() = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut()
        .insert(REPLAY_HEADER, HeaderValue::from_static("true"));
    r
}

/// The middleware (layered inside the request-id middleware, so its errors get envelopes).
///
/// The state comes behind an `Arc`: the layer hands it to every request, and cloning an
/// [`AppState`] is a dozen reference counts.
pub async fn middleware(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let writes = matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    let Some(key) = request
        .headers()
        .get(HEADER)
        .filter(|v| writes && !v.is_empty())
    else {
        return next.run(request).await;
    };
    let Ok(caller) = authenticate(&state, request.headers()).await else {
        // The route answers the 401 (or the 500) itself.
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
    let tenant = caller.tenant.clone();
    let key = format!(
        "{}|{}:{}|{key}",
        caller.idempotency_scope(),
        request.method(),
        crate::redact::path_without_token(request.uri().path())
    );
    let (mut parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, BODY_LIMIT).await else {
        return ApiError::too_large(BODY_LIMIT).into_response();
    };
    let hash = request_hash(&bytes);
    // Hold the key first, then look: a request that finished just before is then seen.
    let Some(_guard) = state.in_flight.enter(&tenant, &key) else {
        return in_flight();
    };
    let store = IdempotencyStore::new(state.db.clone());
    match store.lookup(&tenant, &key).await {
        Err(e) => return ApiError::internal(&e).into_response(),
        Ok(Some(stored)) => return answer_with(stored, &hash),
        Ok(None) => {}
    }
    let context = IdempotencyContext {
        tenant: tenant.clone(),
        key: key.clone(),
        request_hash: hash.clone(),
    };
    parts.extensions.insert(Authenticated(caller));
    parts.extensions.insert(context.clone());
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    match response.extensions().get::<AnswerRecorded>() {
        Some(AnswerRecorded::Recorded) => return response,
        Some(AnswerRecorded::KeyTaken) => {
            return match store.lookup(&tenant, &key).await {
                Ok(Some(stored)) => answer_with(stored, &hash),
                Ok(None) => in_flight(),
                Err(e) => ApiError::internal(&e).into_response(),
            };
        }
        None => {}
    }
    if response.status().as_u16() >= 400 {
        return response;
    }
    record_after(&store, &context, response).await
}

/// Store a route's successful answer after the fact (routes whose write is not the store's).
async fn record_after(
    store: &IdempotencyStore,
    context: &IdempotencyContext,
    response: Response,
) -> Response {
    let (parts, body) = response.into_parts();
    let body = match to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => return ApiError::internal(&e).into_response(),
    };
    let text = String::from_utf8_lossy(&body);
    match store.record(&context.answer(parts.status, &text)).await {
        Ok(true) => {}
        Ok(false) => tracing::warn!("an idempotency key was recorded by a concurrent request"),
        Err(e) => tracing::error!(error = %e, "cannot store an idempotent response"),
    }
    Response::from_parts(parts, Body::from(body))
}
