//! The HTTP transport (hyper 1, HTTP/1.1): routes and their precedence (404 → 405 → 401 →
//! 421 → 503 → 415 → 413), admission (the slot is taken once the body is in), the budgets
//! a large body takes, deadlines, disconnects, the call record, and the connection loop with
//! its graceful drain.

// A `CallError` is an answer moved once (see `call`); boxing it buys nothing.
#![allow(clippy::result_large_err)]

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use kindgi_spec::pack_protocol::{ErrorCode, MAX_BODY_BYTES, TENANT_MISMATCH_CODE, headers};
use serde_json::{Map, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use super::body::{self, BodyError, Received};
use super::call::{self, CallError, Parsed, Target};
use super::estimate;
use super::offload::{self, JobError};
use super::state::{Permit, State};
use crate::log::{Level, Record};

type Answer = Response<Full<Bytes>>;

const JSON: HeaderValue = HeaderValue::from_static("application/json; charset=utf-8");
const ONE: HeaderValue = HeaderValue::from_static("1");

fn answer(status: StatusCode, body: impl Into<Bytes>) -> Answer {
    let mut res = Response::new(Full::new(body.into()));
    *res.status_mut() = status;
    res.headers_mut().insert(CONTENT_TYPE, JSON);
    res
}

fn error(status: StatusCode, message: &str) -> Answer {
    let mut body = Map::new();
    body.insert("error".into(), Value::from(message));
    answer(status, Value::Object(body).to_string())
}

fn unavailable(body: Bytes) -> Answer {
    let mut res = answer(StatusCode::SERVICE_UNAVAILABLE, body);
    res.headers_mut().insert(headers::RETRY_AFTER, ONE);
    res
}

const DRAINING: &[u8] = br#"{"error":"draining"}"#;
const NOT_READY: &[u8] = br#"{"error":"not ready"}"#;
const OVERLOADED: &[u8] = br#"{"error":"overloaded"}"#;

/// The 503 body while the service isn't ready: draining > missing env > not ready.
fn not_ready(state: &State) -> Option<Bytes> {
    if state.draining.load(Ordering::Acquire) {
        Some(Bytes::from_static(DRAINING))
    } else if let Some(body) = &state.strict_missing_env {
        Some(body.clone())
    } else if !state.ready.load(Ordering::Acquire) {
        Some(Bytes::from_static(NOT_READY))
    } else {
        None
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    Invoke,
    Info,
    Health,
    Ready,
}

/// One request, whatever it is.
pub(crate) async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Answer, Infallible> {
    let route = match req.uri().path() {
        "/v1/invoke" => Route::Invoke,
        "/v1/info" => Route::Info,
        "/healthz" => Route::Health,
        "/readyz" => Route::Ready,
        other => return Ok(error(StatusCode::NOT_FOUND, &format!("No route {other}"))),
    };
    let want = if route == Route::Invoke {
        Method::POST
    } else {
        Method::GET
    };
    if req.method() != want {
        let message = if want == Method::POST {
            "Use POST"
        } else {
            "Use GET"
        };
        return Ok(error(StatusCode::METHOD_NOT_ALLOWED, message));
    }
    if matches!(route, Route::Invoke | Route::Info) {
        let token = req
            .headers()
            .get(headers::PACK_TOKEN)
            .map(HeaderValue::as_bytes)
            .unwrap_or_default();
        if !state.token_ok(token) {
            return Ok(error(StatusCode::UNAUTHORIZED, "Bad pack token"));
        }
        if let Some(tenant) = &state.tenant {
            let sent = req
                .headers()
                .get(headers::TENANT_ID)
                .map(HeaderValue::as_bytes);
            if sent != Some(tenant.as_bytes()) {
                return Ok(tenant_mismatch(match sent {
                    None => "The call names no tenant (kindgi-tenant-id)".to_owned(),
                    Some(_) => format!("This pack service serves tenant \"{tenant}\" only"),
                }));
            }
        }
    }
    Ok(match route {
        Route::Health => answer(StatusCode::OK, Bytes::from_static(br#"{"status":"ok"}"#)),
        Route::Ready => match not_ready(&state) {
            Some(body) => unavailable(body),
            None => answer(StatusCode::OK, Bytes::from_static(br#"{"status":"ready"}"#)),
        },
        Route::Info => answer(StatusCode::OK, state.pack.info_body.clone()),
        Route::Invoke => invoke(state, req).await,
    })
}

fn tenant_mismatch(message: String) -> Answer {
    let mut body = Map::new();
    body.insert("error".into(), Value::from(message));
    body.insert("code".into(), Value::from(TENANT_MISMATCH_CODE));
    answer(
        StatusCode::MISDIRECTED_REQUEST,
        Value::Object(body).to_string(),
    )
}

/// Correlation ids of a tool call, for its record (non-empty strings only).
#[derive(Default)]
struct CallIds {
    request_id: Option<String>,
    tenant_id: Option<String>,
    project_id: Option<String>,
    org_id: Option<String>,
    run_id: Option<String>,
}

impl CallIds {
    fn from_ctx(ctx: &Map<String, Value>) -> Self {
        let get = |k: &str| {
            ctx.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        Self {
            request_id: get("requestId"),
            tenant_id: get("tenantId"),
            project_id: get("projectId"),
            org_id: get("orgId"),
            run_id: get("runId"),
        }
    }
}

/// The caller's trace id and a new span id, from a valid W3C `traceparent`.
fn trace_ids(raw: Option<&HeaderValue>) -> Option<(String, String)> {
    let raw = raw?.to_str().ok()?.trim();
    let parts: Vec<&str> = raw.split('-').collect();
    let [version, trace_id, parent_id, flags, ..] = parts.as_slice() else {
        return None;
    };
    let lower_hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !lower_hex(version, 2)
        || *version == "ff"
        || !lower_hex(trace_id, 32)
        || !lower_hex(parent_id, 16)
        || !lower_hex(flags, 2)
    {
        return None;
    }
    if *version == "00" && parts.len() != 4 {
        return None;
    }
    if trace_id.bytes().all(|b| b == b'0') || parent_id.bytes().all(|b| b == b'0') {
        return None;
    }
    let mut span: u64 = rand::random();
    while span == 0 || format!("{span:016x}") == *parent_id {
        span = rand::random();
    }
    Some(((*trace_id).to_owned(), format!("{span:016x}")))
}

/// A call between admission and its answer. Dropped without an answer (the caller went
/// away and hyper dropped the request), it cancels the handler and records `cancelled`.
struct InFlight {
    state: Arc<State>,
    _permit: Permit,
    /// The call's share of the parsed-calls budget (large bodies only), held to the answer.
    _parsed: Option<OwnedSemaphorePermit>,
    admitted: Instant,
    signal: CancellationToken,
    target: Option<Target>,
    ids: CallIds,
    trace: Option<(String, String)>,
    answered: bool,
}

impl InFlight {
    fn record(&self, outcome: &str) {
        let Some(target) = &self.target else { return };
        let duration_ms = self.admitted.elapsed().as_millis() as u64;
        let level = if outcome == "ok" || outcome == "paused" {
            Level::Info
        } else {
            Level::Warn
        };
        let state = &self.state;
        if !state.logger.enabled("pack", level) {
            return;
        }
        let mut r = Record::new(
            level,
            "pack",
            format!(
                "{} {} {outcome} {duration_ms}ms",
                target.kind(),
                target.id()
            ),
        );
        if let Some((trace_id, span_id)) = &self.trace {
            r.set("traceId", trace_id.as_str());
            r.set("spanId", span_id.as_str());
        }
        let ids = &self.ids;
        for (key, value) in [
            ("requestId", &ids.request_id),
            ("tenantId", &ids.tenant_id),
            ("projectId", &ids.project_id),
            ("orgId", &ids.org_id),
            ("runId", &ids.run_id),
        ] {
            if let Some(v) = value {
                r.set(key, v.as_str());
            }
        }
        if let Target::Tool(id) = target {
            r.set("toolId", &**id);
        }
        r.set("packId", &*state.pack.pack_id);
        r.set("artifactVersion", &*state.pack.artifact_version);
        r.set("target", target.kind());
        if let Target::Check(id) = target {
            r.set("checkId", &**id);
        }
        let r = r
            .with_event("call")
            .field("id", target.id())
            .field("outcome", outcome)
            .field("durationMs", duration_ms)
            .in_message(&["target", "id", "outcome", "durationMs"]);
        state.logger.write(r);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.answered {
            self.signal.cancel();
            self.record(ErrorCode::Cancelled.as_str());
        }
    }
}

/// `content-type` is the media type `application/json`, parameters allowed
/// (`application/json; charset=utf-8`) — not merely a value containing it
/// (`application/jsonx`, `text/plain, application/json`). Case-sensitive, as the official
/// services' substring check is: a call they refuse is refused here too.
fn is_json(value: Option<&HeaderValue>) -> bool {
    let Some(value) = value else { return false };
    let media = value
        .as_bytes()
        .split(|b| *b == b';')
        .next()
        .unwrap_or_default();
    media.trim_ascii() == b"application/json"
}

/// A body that is in, parsed, with the budget it holds.
struct Ready {
    parsed: Result<Parsed, CallError>,
    reservation: Option<OwnedSemaphorePermit>,
}

/// Why a body that is in cannot become a call.
enum NotReady {
    Answer(Answer),
    Deadline,
}

/// Parses a body. A small one is parsed here; a large one is first scanned for what its
/// parsed form would cost (refused past `parsed_per_call`), then waits for that much room in
/// the parsed-calls budget (until the deadline: 503, it did not run), then is parsed off
/// the async workers.
async fn prepare(
    state: &Arc<State>,
    received: Received,
    until: tokio::time::Instant,
) -> Result<Ready, NotReady> {
    let Received { bytes, reading } = received;
    if bytes.len() <= state.limits.small_body {
        return Ok(Ready {
            parsed: call::parse(&bytes),
            reservation: None,
        });
    }
    let scanned = bytes.clone();
    let estimate = offload::run(state, until, move || estimate::parsed_bytes(&scanned))
        .await
        .map_err(|_| NotReady::Answer(unavailable(Bytes::from_static(OVERLOADED))))?;
    if estimate > state.limits.parsed_per_call {
        let message = format!(
            "Request body is too large once parsed: its JSON values would take about {} MiB \
             in memory, and a call may take at most {} MiB; send fewer, larger values (a \
             string or a file reference instead of many small numbers)",
            estimate.div_ceil(1 << 20),
            state.limits.parsed_per_call >> 20
        );
        return Ok(Ready {
            parsed: Err(CallError::new(ErrorCode::MalformedMessage, message)),
            reservation: None,
        });
    }
    let reservation = tokio::time::timeout_at(
        until,
        state.reserve_parsed(bytes.len().saturating_add(estimate)),
    )
    .await
    .map_err(|_| NotReady::Answer(unavailable(Bytes::from_static(OVERLOADED))))?;
    // The body is now accounted for as part of the parsed call.
    drop(reading);
    let parsed = offload::run(state, until, move || call::parse(&bytes))
        .await
        .map_err(|e| match e {
            JobError::Expired => NotReady::Deadline,
            JobError::Panicked(m) => NotReady::Answer(error(StatusCode::INTERNAL_SERVER_ERROR, &m)),
        })?;
    Ok(Ready {
        parsed,
        reservation,
    })
}

async fn invoke(state: Arc<State>, req: Request<Incoming>) -> Answer {
    if let Some(body) = not_ready(&state) {
        return unavailable(body);
    }
    if state.at_cap() {
        return unavailable(Bytes::from_static(OVERLOADED));
    }
    let started = Instant::now();
    if !is_json(req.headers().get(CONTENT_TYPE)) {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    let deadline = call::parse_timeout(
        req.headers()
            .get(headers::TIMEOUT_MS)
            .map(HeaderValue::as_bytes),
    );
    let trace = trace_ids(req.headers().get(headers::TRACEPARENT));
    let hint = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // A caller waiting for `100 Continue` before sending a body declared too large is told
    // 413 at once: reading the body would invite it to send all of it.
    let expects_continue = req
        .headers()
        .get(http::header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if expects_continue && hint.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large");
    }
    // A body slower than the call's own deadline (at most a minute) is not worth waiting for.
    let read_until = tokio::time::Instant::now() + deadline.min(Duration::from_secs(60));
    let received = match body::read(&state, req.into_body(), hint, read_until).await {
        Ok(received) => received,
        Err(BodyError::TooLarge) => {
            return error(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large");
        }
        Err(BodyError::Aborted) => {
            return error(StatusCode::BAD_REQUEST, "Request body was cut short");
        }
        Err(BodyError::TimedOut) => {
            return error(
                StatusCode::REQUEST_TIMEOUT,
                "Request body took too long to arrive",
            );
        }
        Err(BodyError::Busy) => {
            // The rest of the body is still in the socket: this connection is done.
            let mut res = unavailable(Bytes::from_static(OVERLOADED));
            res.headers_mut()
                .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
            return res;
        }
    };
    // The deadline covers everything from here: parsing, validation, the handler.
    let until = tokio::time::Instant::now() + deadline;
    let ready = match prepare(&state, received, until).await {
        Ok(ready) => ready,
        Err(NotReady::Answer(answer)) => return answer,
        Err(NotReady::Deadline) => {
            let e = CallError::new(
                ErrorCode::DeadlineExceeded,
                "The call passed its deadline before its body was parsed",
            );
            return message(&state, started, e.to_body());
        }
    };
    let Some(permit) = state.try_admit() else {
        return unavailable(Bytes::from_static(OVERLOADED));
    };
    // A body that needed no reservation is small: its input may be validated in place.
    let small = ready.reservation.is_none();
    let call = InFlight {
        state: state.clone(),
        _permit: permit,
        _parsed: ready.reservation,
        admitted: started,
        signal: CancellationToken::new(),
        target: None,
        ids: CallIds::default(),
        trace,
        answered: false,
    };
    run(call, ready.parsed, small, until).await
}

/// Runs an admitted call and writes its answer and record.
async fn run(
    mut call: InFlight,
    parsed: Result<Parsed, CallError>,
    small: bool,
    until: tokio::time::Instant,
) -> Answer {
    let state = call.state.clone();
    let outcome = match parsed {
        Err(e) => Err(e),
        Ok(Parsed::Tool {
            id,
            version,
            input,
            ctx,
        }) => {
            call.ids = CallIds::from_ctx(&ctx);
            if let Some(tenant) = &state.tenant {
                if ctx.get("tenantId").and_then(Value::as_str) != Some(tenant.as_str()) {
                    call.answered = true;
                    return tenant_mismatch(format!(
                        "This pack service serves tenant \"{tenant}\" only; the call's ctx names another"
                    ));
                }
            }
            call::run_tool(
                &state,
                id,
                version,
                input,
                ctx,
                small,
                until,
                &call.signal.clone(),
                &mut call.target,
            )
            .await
        }
        Ok(Parsed::Check { id, config, trace }) => {
            call::run_check(
                &state,
                id,
                config,
                trace,
                until,
                &call.signal.clone(),
                &mut call.target,
            )
            .await
        }
    };
    call.answered = true;
    let (bytes, outcome_code): (Vec<u8>, &str) = match outcome {
        // A pausing tool's `pause` (docs/pauses.md) is an answer, not a failure.
        Ok(bytes) if bytes.starts_with(br#"{"v":2,"kind":"pause""#) => (bytes, "paused"),
        Ok(bytes) => (bytes, "ok"),
        Err(e) => {
            if call.target.is_none() {
                call.target = e.target.clone();
            }
            (e.to_body(), e.code.as_str())
        }
    };
    call.record(outcome_code);
    message(&state, call.admitted, bytes)
}

/// A 200 message with its headers (500 if it could not be written).
fn message(state: &State, started: Instant, bytes: Vec<u8>) -> Answer {
    if bytes.is_empty() {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The pack service could not write its answer",
        );
    }
    let mut res = answer(StatusCode::OK, bytes);
    let h = res.headers_mut();
    h.insert(
        headers::DURATION_MS,
        HeaderValue::from(started.elapsed().as_millis() as u64),
    );
    if let Some(v) = &state.artifact_header {
        h.insert(headers::ARTIFACT_VERSION, v.clone());
    }
    res
}

/// Serves on `listener` with `kindgi-serve` until `stop` fires, then closes idle
/// connections and gives the rest up to `grace` to finish writing. The body deadline is
/// [`handle`]'s own (the call's, at most a minute, answered with the protocol's 408), so the
/// loop sets none.
pub(crate) async fn serve(
    listener: TcpListener,
    state: Arc<State>,
    stop: CancellationToken,
    grace: Duration,
) {
    let limits = kindgi_serve::Limits {
        body_timeout: None,
        shutdown_grace: grace,
        ..kindgi_serve::Limits::default()
    };
    let service = service_fn(move |req| handle(state.clone(), req));
    kindgi_serve::serve(listener, service, limits, stop).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_rules() {
        let ok =
            HeaderValue::from_static("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        let (trace, span) = trace_ids(Some(&ok)).unwrap();
        assert_eq!(trace, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span.len(), 16);
        assert_ne!(span, "00f067aa0ba902b7");
        for bad in [
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "garbage",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(
                trace_ids(Some(&HeaderValue::from_static(bad))).is_none(),
                "{bad}"
            );
        }
    }
}
