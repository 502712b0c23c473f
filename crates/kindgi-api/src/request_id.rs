//! The headers every answer carries (platform-api.md §1.4), in one middleware:
//!
//! * `X-Request-Id`: a client's non-empty value (printable ASCII, ≤ 200 bytes) is echoed,
//!   else `req-<uuid v4>`; error envelopes carry it as `requestId` (see [`crate::error`]).
//! * `traceresponse: 00-<trace>-<span>-01`: the trace id of a valid incoming `traceparent`
//!   is kept (else one is minted), with a new span id; handlers read it as [`Trace`] (runs
//!   record `traceId`).
//! * a `request` tracing span with the `request_id`, around the request's handling, so each
//!   log line of a request names it;
//! * `Cache-Control: no-store` on every `/v1` answer, SSE included — except an answer
//!   marked [`NoStoreExempt`] (the pre-auth `413`).

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument as _;

use crate::error::{ApiError, generic_for};

/// The header name.
pub const HEADER: &str = "x-request-id";

/// The request's id, in the request extensions (a handler takes it as an extractor).
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// The request's W3C trace context, in the request extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// 32 lowercase hex digits.
    pub trace_id: String,
    /// 16 lowercase hex digits: this request's span.
    pub span_id: String,
}

/// A response extension: no `Cache-Control: no-store` on this answer.
#[derive(Debug, Clone, Copy)]
pub struct NoStoreExempt;

fn acceptable(v: &str) -> bool {
    !v.is_empty() && v.len() <= 200 && v.bytes().all(|b| b.is_ascii_graphic())
}

fn hex_of(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && s.bytes().any(|b| b != b'0')
}

/// The trace id of a `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), when valid.
pub fn parse_traceparent(v: &str) -> Option<String> {
    let mut parts = v.trim().split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let ok = version.len() == 2
        && version != "ff"
        && hex_of(trace, 32)
        && hex_of(parent, 16)
        && flags.len() == 2
        && flags.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| trace.to_owned())
}

/// A random v4 UUID. From the thread's CSPRNG (`rand`), not `Uuid::new_v4`: that asks the
/// kernel (`getrandom`) each time, three system calls per request here.
fn random_uuid() -> uuid::Uuid {
    uuid::Builder::from_random_bytes(rand::random()).into_uuid()
}

impl Trace {
    fn for_request(request: &Request) -> Trace {
        Trace::from_headers(request.headers())
    }

    fn from_headers(headers: &HeaderMap) -> Trace {
        let trace_id = headers
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_traceparent)
            .unwrap_or_else(|| {
                let mut buf = [0u8; uuid::fmt::Simple::LENGTH];
                random_uuid().simple().encode_lower(&mut buf).to_owned()
            });
        // 16 hex digits of 64 random bits, never all zero (an invalid span id).
        let span_id = hex::encode(rand::random::<u64>().max(1).to_be_bytes());
        Trace { trace_id, span_id }
    }

    /// The `traceresponse` value. (Pieces pushed, not `format!`: this runs on every request.)
    pub fn header(&self) -> String {
        let mut h = String::with_capacity(3 + self.trace_id.len() + 1 + self.span_id.len() + 3);
        h.push_str("00-");
        h.push_str(&self.trace_id);
        h.push('-');
        h.push_str(&self.span_id);
        h.push_str("-01");
        h
    }
}

/// A handler's request id: the middleware's; none only outside the router (then empty,
/// never a refusal).
impl<S: Send + Sync> FromRequestParts<S> for RequestId {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<RequestId, Infallible> {
        Ok(parts
            .extensions
            .get::<RequestId>()
            .cloned()
            .unwrap_or_else(|| RequestId(String::new())))
    }
}

/// A handler's trace context: the middleware's; outside the router, one minted for the
/// request (never a refusal).
impl<S: Send + Sync> FromRequestParts<S> for Trace {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Trace, Infallible> {
        Ok(parts
            .extensions
            .get::<Trace>()
            .cloned()
            .unwrap_or_else(|| Trace::from_headers(&parts.headers)))
    }
}

/// The middleware.
pub async fn middleware(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| acceptable(v))
        .map(str::to_owned)
        .unwrap_or_else(|| {
            let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
            let mut id = String::with_capacity(4 + buf.len());
            id.push_str("req-");
            id.push_str(random_uuid().hyphenated().encode_lower(&mut buf));
            id
        });
    let trace = Trace::for_request(&request);
    let v1 = request.uri().path().starts_with("/v1");
    request.extensions_mut().insert(RequestId(id.clone()));
    request.extensions_mut().insert(trace.clone());
    // Every event logged while the request is handled carries its id. An `error` span, so
    // it is on whenever any event is (a span a filter disables takes its id with it).
    let span = tracing::error_span!("request", request_id = %id);
    let mut response = next.run(request).instrument(span).await;
    let status = response.status();
    if status.is_client_error() || status.is_server_error() {
        let error = match response.extensions_mut().remove::<ApiError>() {
            Some(e) => Some(e),
            // Another layer's bare error (a body limit, an extractor's rejection).
            None if !is_json(&response) => Some(generic_for(status)),
            None => None,
        };
        if let Some(error) = error {
            response = render(&error, &id, response);
        }
    }
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&id) {
        headers.insert(HEADER, v);
    }
    if let Ok(v) = HeaderValue::from_maybe_shared(bytes::Bytes::from(trace.header())) {
        headers.insert("traceresponse", v);
    }
    if v1 && response.extensions().get::<NoStoreExempt>().is_none() {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// `error` as the envelope, keeping `response`'s status, headers and extensions.
fn render(error: &ApiError, id: &str, response: Response) -> Response {
    let (mut parts, _) = response.into_parts();
    let body = serde_json::to_vec(&error.envelope(id)).unwrap_or_default();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(body))
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}
