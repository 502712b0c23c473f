//! The runtime's side of pack protocol v2: a pooled HTTP client for a pack service.
//!
//! One [`PackClient`] per pack service, shared by every call (it is cheap to clone; the
//! connection pool is inside). Each call sends the token (`kindgi-pack-token`), the relative
//! deadline (`kindgi-timeout-ms`), the run and request ids, the protocol and a W3C
//! `traceparent`, and comes back as one of:
//!
//! * an [`Answer`] — the service answered 200 with a response message: a tool's result, a
//!   check's result, or an error message with its code (pack code ran, or was refused at the
//!   message level);
//! * a [`PackCallError`] — the transport failed. [`PackCallError::may_have_run`] says whether
//!   the pack code may have run, which is what a caller needs before it runs a mutating tool
//!   again.
//!
//! Retry rule (reference §10): a 503 means the service provably did not run the call (not
//! ready, draining, at its concurrency cap: the official services answer `overloaded` past
//! 32 calls in flight), so the client waits for its `Retry-After` (capped at
//! [`PackClientConfig::max_retry_after`]; at least an exponential backoff from
//! [`PackClientConfig::retry_backoff`]), plus up to half again at random so callers turned
//! away together do not come back together, and sends it again — for read-only and mutating
//! tools alike, as often as the call's deadline allows. A strict service's `missing env` 503
//! is not retried: it lasts until the service restarts. Nothing else is retried: a
//! connection reset after the request was sent, a timeout, a 502 or a 500 may have run the
//! call.

use std::time::{Duration, Instant};

use bytes::Bytes;
use kindgi_spec::pack_protocol::{
    CheckInvoke, DEFAULT_TIMEOUT_MS, Info, Request, Response, ToolInvoke, TransportError, headers,
};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};

/// The value sent in `kindgi-protocol`. The reference never pins its format; the protocol's
/// major version is what a service could act on.
pub const PROTOCOL_HEADER_VALUE: &str = "2";

/// The largest 200 answer body a client reads by default (64 MiB): a tool's output may be
/// big, but a service streaming without end must not exhaust the runtime's memory.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// How much of a non-200 answer is read: its `{"error": …}` body is small, the rest is
/// dropped.
const ERROR_BODY_BYTES: usize = 64 * 1024;

/// How a [`PackClient`] talks to one pack service.
#[derive(Debug, Clone)]
pub struct PackClientConfig {
    /// The service's base URL, e.g. `http://127.0.0.1:8080` (no trailing path needed).
    pub base_url: String,
    /// The shared token, sent as `kindgi-pack-token`. Trimmed, as the service trims its own.
    pub token: String,
    /// The deadline of a call that names none (`KINDGI_PACK_CALL_TIMEOUT_MS`, default 120 s).
    pub default_timeout: Duration,
    /// How many times a 503 is retried at most (so at most `max_retries + 1` attempts);
    /// the default, `u32::MAX`, leaves the call's deadline as the only bound.
    pub max_retries: u32,
    /// The longest `Retry-After` the client honours; a longer one is cut to this (and so is
    /// the backoff).
    pub max_retry_after: Duration,
    /// The first retry's least wait; it doubles with each further 503 of the same call.
    pub retry_backoff: Duration,
    /// Extra time past the deadline the client waits for the service's own
    /// `deadline-exceeded` answer before it gives up on the connection.
    pub answer_grace: Duration,
    /// Connection establishment timeout.
    pub connect_timeout: Duration,
    /// Idle pooled connections kept per host.
    pub pool_max_idle_per_host: usize,
    /// The largest 200 answer body read; a larger one is [`PackCallError::TooLarge`].
    pub max_response_bytes: usize,
}

impl PackClientConfig {
    /// Defaults for a service at `base_url` with `token`.
    pub fn new(base_url: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            token: token.into(),
            default_timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
            max_retries: u32::MAX,
            max_retry_after: Duration::from_secs(5),
            retry_backoff: Duration::from_millis(100),
            answer_grace: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(5),
            pool_max_idle_per_host: 64,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }
}

/// Per-call options. Ids default to the ones in the message (`ctx.runId`, `ctx.requestId`).
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// The call's relative deadline; the client's default when `None`.
    pub timeout: Option<Duration>,
    /// `kindgi-run-id`; defaults to the tool call's `ctx.runId` (or the trace's `runId`).
    pub run_id: Option<String>,
    /// `kindgi-request-id`; defaults to the tool call's `ctx.requestId`.
    pub request_id: Option<String>,
    /// The caller's W3C `traceparent`; a fresh one is sent when `None`.
    pub traceparent: Option<String>,
}

/// A 200 answer to an invoke: the response message and the service's answer headers.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The result, check result or error message.
    pub response: Response,
    /// `kindgi-duration-ms`, when the service sent a parsable one.
    pub duration_ms: Option<u64>,
    /// `kindgi-artifact-version`, when sent.
    pub artifact_version: Option<String>,
    /// How many HTTP attempts the call took (1 + the 503s retried).
    pub attempts: u32,
}

/// Configuration that cannot make a client.
#[derive(Debug, thiserror::Error)]
pub enum PackClientConfigError {
    #[error(
        "the pack token may hold only printable ASCII without spaces (it travels in the \
         kindgi-pack-token header); got {len} characters that do not"
    )]
    BadToken { len: usize },
    #[error("the pack token is empty: set KINDGI_PACK_SERVICE_TOKEN to the service's token")]
    EmptyToken,
    #[error("the pack service URL {url:?} is not an http(s) URL")]
    BadUrl { url: String },
    #[error("could not build the HTTP client: {source}")]
    Http {
        #[source]
        source: reqwest::Error,
    },
}

/// A call that did not come back as a 200 response message: the pack seam's one error
/// (the relay rule as data: [`PackCallError::relay`], [`PackCallError::may_have_run`]).
pub use kindgi_tools::pack_call::{PackCallError, Relay};

/// The pooled client for one pack service.
#[derive(Debug, Clone)]
pub struct PackClient {
    http: reqwest::Client,
    invoke_url: String,
    info_url: String,
    ready_url: String,
    token: HeaderValue,
    config: PackClientConfig,
}

impl PackClient {
    /// A client for the service `config` names.
    pub fn new(config: PackClientConfig) -> Result<Self, PackClientConfigError> {
        let base = config.base_url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(PackClientConfigError::BadUrl {
                url: config.base_url.clone(),
            });
        }
        let token = config.token.trim();
        if token.is_empty() {
            return Err(PackClientConfigError::EmptyToken);
        }
        if !token.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(PackClientConfigError::BadToken { len: token.len() });
        }
        let mut token = HeaderValue::from_str(token)
            .map_err(|_| PackClientConfigError::BadToken { len: token.len() })?;
        token.set_sensitive(true);
        let http = reqwest::Client::builder()
            .no_proxy()
            // A pack client talks to its own service only: following a 3xx would re-send the
            // token and the call (with its secrets) to whatever host the answer names.
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true)
            .connect_timeout(config.connect_timeout)
            .pool_max_idle_per_host(config.pool_max_idle_per_host)
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .map_err(|source| PackClientConfigError::Http { source })?;
        Ok(Self {
            http,
            invoke_url: format!("{base}/v1/invoke"),
            info_url: format!("{base}/v1/info"),
            ready_url: format!("{base}/readyz"),
            token,
            config,
        })
    }

    /// The configuration this client was built with.
    pub fn config(&self) -> &PackClientConfig {
        &self.config
    }

    /// Runs a tool handler.
    pub async fn invoke_tool(
        &self,
        invoke: &ToolInvoke,
        options: &CallOptions,
    ) -> Result<Answer, PackCallError> {
        let body = serde_json::to_vec(&Request::Invoke(invoke.clone()))
            .map_err(|source| PackCallError::Encode { source })?;
        let run_id = options
            .run_id
            .as_deref()
            .or(Some(invoke.ctx.run_id.as_str()));
        let request_id = options
            .request_id
            .as_deref()
            .or(invoke.ctx.request_id.as_deref());
        self.send(Bytes::from(body), run_id, request_id, options)
            .await
    }

    /// Runs a guardrail check.
    pub async fn invoke_check(
        &self,
        invoke: &CheckInvoke,
        options: &CallOptions,
    ) -> Result<Answer, PackCallError> {
        let body = serde_json::to_vec(&Request::CheckInvoke(invoke.clone()))
            .map_err(|source| PackCallError::Encode { source })?;
        let trace_run = invoke
            .trace
            .as_ref()
            .and_then(|t| t.get("runId"))
            .and_then(|v| v.as_str());
        let run_id = options.run_id.as_deref().or(trace_run);
        self.send(
            Bytes::from(body),
            run_id,
            options.request_id.as_deref(),
            options,
        )
        .await
    }

    /// Sends an already-serialized request message (the body of `POST /v1/invoke`).
    pub async fn invoke_raw(
        &self,
        body: Bytes,
        options: &CallOptions,
    ) -> Result<Answer, PackCallError> {
        self.send(
            body,
            options.run_id.as_deref(),
            options.request_id.as_deref(),
            options,
        )
        .await
    }

    /// `GET /v1/info`.
    pub async fn info(&self) -> Result<Info, PackCallError> {
        let url = &self.info_url;
        let response = self
            .http
            .get(url)
            .header(headers::PACK_TOKEN, self.token.clone())
            .timeout(self.short_timeout())
            .send()
            .await
            .map_err(|e| self.transport_error(e, 0))?;
        let status = response.status();
        let bytes = self.read_answer(response, status, 0, url).await?;
        if status != StatusCode::OK {
            return Err(self.status_error(status, &bytes, 1, false));
        }
        serde_json::from_slice(&bytes).map_err(|e| PackCallError::BadResponse {
            url: url.clone(),
            detail: e.to_string(),
        })
    }

    /// `GET /readyz`: `Ok(())` when ready, else the 503 as [`PackCallError::Unavailable`].
    pub async fn ready(&self) -> Result<(), PackCallError> {
        let response = self
            .http
            .get(&self.ready_url)
            .timeout(self.short_timeout())
            .send()
            .await
            .map_err(|e| self.transport_error(e, 0))?;
        let status = response.status();
        let bytes = self
            .read_answer(response, status, 0, &self.ready_url)
            .await?;
        if status == StatusCode::OK {
            Ok(())
        } else {
            Err(self.status_error(status, &bytes, 1, false))
        }
    }

    async fn send(
        &self,
        body: Bytes,
        run_id: Option<&str>,
        request_id: Option<&str>,
        options: &CallOptions,
    ) -> Result<Answer, PackCallError> {
        let timeout = options.timeout.unwrap_or(self.config.default_timeout);
        // A deadline past what the clock can hold (e.g. `Duration::MAX`) means "no deadline":
        // a century is as good, and adding would panic.
        let now = Instant::now();
        let deadline = now
            .checked_add(timeout)
            .or_else(|| now.checked_add(FAR_FUTURE))
            .unwrap_or(now);
        let traceparent = match &options.traceparent {
            Some(t) => t.clone(),
            None => new_traceparent(),
        };
        let mut fixed = HeaderMap::new();
        fixed.insert(headers::PACK_TOKEN, self.token.clone());
        fixed.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        fixed.insert(
            headers::PROTOCOL,
            HeaderValue::from_static(PROTOCOL_HEADER_VALUE),
        );
        insert_text(&mut fixed, headers::RUN_ID, run_id);
        insert_text(&mut fixed, headers::REQUEST_ID, request_id);
        insert_text(&mut fixed, headers::TRACEPARENT, Some(&traceparent));

        let mut attempts = 0u32;
        loop {
            attempts += 1;
            // The deadline is relative on the wire; a retried call carries what is left.
            let left = deadline.saturating_duration_since(Instant::now());
            let left_ms = u64::try_from(left.as_millis().max(1)).unwrap_or(u64::MAX);
            let response = self
                .http
                .post(&self.invoke_url)
                .headers(fixed.clone())
                .header(headers::TIMEOUT_MS, left_ms)
                .timeout(left.saturating_add(self.config.answer_grace))
                .body(body.clone())
                .send()
                .await
                .map_err(|e| self.transport_error(e, left_ms))?;
            let status = response.status();
            let response_headers = response.headers().clone();
            let bytes = self
                .read_answer(response, status, left_ms, &self.invoke_url)
                .await?;
            if status == StatusCode::OK {
                let parsed: Response =
                    serde_json::from_slice(&bytes).map_err(|e| PackCallError::BadResponse {
                        url: self.invoke_url.clone(),
                        detail: e.to_string(),
                    })?;
                return Ok(Answer {
                    response: parsed,
                    duration_ms: header_text(&response_headers, headers::DURATION_MS)
                        .and_then(|v| v.trim().parse().ok()),
                    artifact_version: header_text(&response_headers, headers::ARTIFACT_VERSION)
                        .map(str::to_owned),
                    attempts,
                });
            }
            let error = self.status_error(status, &bytes, attempts, true);
            if let PackCallError::Unavailable {
                missing_env: None, ..
            } = &error
                && attempts <= self.config.max_retries
            {
                let wait = self.retry_wait(&response_headers, attempts);
                // Waiting past the deadline would only send a call that is already late.
                if Instant::now()
                    .checked_add(wait)
                    .is_some_and(|t| t < deadline)
                {
                    tracing::debug!(
                        url = %self.invoke_url,
                        attempts,
                        wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        "pack service unavailable; retrying the call, which did not run"
                    );
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            return Err(error);
        }
    }

    /// How long to wait before the next attempt after the `attempts`-th 503: its
    /// `Retry-After` or the backoff (`retry_backoff` doubled per attempt), whichever is
    /// longer, capped at `max_retry_after`, plus a random share of up to half of it.
    fn retry_wait(&self, answer: &HeaderMap, attempts: u32) -> Duration {
        let doublings = attempts.saturating_sub(1).min(16);
        let backoff = self.config.retry_backoff.saturating_mul(1 << doublings);
        let wait = retry_after(answer)
            .max(backoff)
            .min(self.config.max_retry_after);
        let half_ms = u64::try_from(wait.as_millis() / 2).unwrap_or(u64::MAX);
        let jitter = rand::random::<u64>() % half_ms.saturating_add(1);
        wait.saturating_add(Duration::from_millis(jitter))
    }

    /// The bound on `/v1/info` and `/readyz`.
    fn short_timeout(&self) -> Duration {
        self.config
            .connect_timeout
            .saturating_add(self.config.answer_grace)
    }

    /// Reads an answer's body: a 200's up to `max_response_bytes` (more is an error), any
    /// other status's first [`ERROR_BODY_BYTES`] (only its small `{"error": …}` matters).
    async fn read_answer(
        &self,
        mut response: reqwest::Response,
        status: StatusCode,
        waited_ms: u64,
        url: &str,
    ) -> Result<Bytes, PackCallError> {
        let ok = status == StatusCode::OK;
        let limit = if ok {
            self.config.max_response_bytes
        } else {
            ERROR_BODY_BYTES
        };
        let too_large = || PackCallError::TooLarge {
            url: url.to_owned(),
            limit,
        };
        if ok && response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(e, waited_ms))?
        {
            let room = limit.saturating_sub(body.len());
            if chunk.len() > room {
                if ok {
                    return Err(too_large());
                }
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Bytes::from(body))
    }

    fn transport_error(&self, error: reqwest::Error, waited_ms: u64) -> PackCallError {
        let url = self.invoke_url.clone();
        if error.is_connect() {
            PackCallError::Connect {
                url,
                source: Box::new(error),
            }
        } else if error.is_timeout() {
            PackCallError::Timeout {
                url,
                waited_ms: waited_ms.saturating_add(
                    u64::try_from(self.config.answer_grace.as_millis()).unwrap_or(u64::MAX),
                ),
            }
        } else {
            PackCallError::Interrupted {
                url,
                source: Box::new(error),
            }
        }
    }

    fn status_error(
        &self,
        status: StatusCode,
        body: &[u8],
        attempts: u32,
        invoke: bool,
    ) -> PackCallError {
        let url = if invoke {
            self.invoke_url.clone()
        } else {
            self.info_url.clone()
        };
        let parsed: Option<TransportError> = serde_json::from_slice(body).ok();
        let error = parsed
            .as_ref()
            .and_then(|p| p.error.clone())
            .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(200).collect());
        match status.as_u16() {
            503 => PackCallError::Unavailable {
                url,
                reason: error,
                attempts,
                missing_env: parsed.and_then(|p| p.missing_env),
            },
            400..=499 => PackCallError::Refused {
                url,
                status: status.as_u16(),
                error,
            },
            s => PackCallError::ServerFailed {
                url,
                status: s,
                error,
            },
        }
    }
}

fn insert_text(map: &mut HeaderMap, name: &'static str, value: Option<&str>) {
    if let Some(v) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
        map.insert(name, v);
    }
}

fn header_text<'a>(map: &'a HeaderMap, name: &str) -> Option<&'a str> {
    map.get(name).and_then(|v| v.to_str().ok())
}

/// `Retry-After` in whole seconds (the only form a pack service sends); 1 s when absent or
/// not a number.
fn retry_after(map: &HeaderMap) -> Duration {
    map.get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(1))
}

/// Stands in for a deadline too far away for the clock (about a century).
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// A fresh W3C `traceparent` (version 00, sampled) with random trace and span ids.
pub fn new_traceparent() -> String {
    let trace: u128 = rand::random::<u128>().max(1);
    let span: u64 = rand::random::<u64>().max(1);
    format!("00-{trace:032x}-{span:016x}-01")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_is_w3c_shaped() {
        let t = new_traceparent();
        let parts: Vec<&str> = t.split('-').collect();
        assert_eq!(parts.len(), 4);
        assert_eq!(parts[0], "00");
        assert_eq!(parts[1].len(), 32);
        assert_eq!(parts[2].len(), 16);
        assert_eq!(parts[3], "01");
    }

    #[test]
    fn config_refuses_bad_tokens_and_urls() {
        let bad = PackClient::new(PackClientConfig::new("http://127.0.0.1:1", "two words"));
        assert!(matches!(bad, Err(PackClientConfigError::BadToken { .. })));
        let empty = PackClient::new(PackClientConfig::new("http://127.0.0.1:1", "  \n"));
        assert!(matches!(empty, Err(PackClientConfigError::EmptyToken)));
        let url = PackClient::new(PackClientConfig::new("127.0.0.1:1", "tok"));
        assert!(matches!(url, Err(PackClientConfigError::BadUrl { .. })));
        assert!(PackClient::new(PackClientConfig::new("http://127.0.0.1:1/", "tok\n")).is_ok());
    }

    #[test]
    fn the_wait_after_a_503_is_its_retry_after_or_the_backoff_plus_jitter() {
        let client = PackClient::new(PackClientConfig::new("http://127.0.0.1:1", "tok")).unwrap();
        let mut one = HeaderMap::new();
        one.insert(RETRY_AFTER, HeaderValue::from_static("1"));
        let waits: Vec<Duration> = (0..64).map(|_| client.retry_wait(&one, 1)).collect();
        let (least, most) = (Duration::from_secs(1), Duration::from_millis(1500));
        assert!(waits.iter().all(|w| *w >= least && *w <= most), "{waits:?}");
        assert!(
            waits.iter().any(|w| *w != waits[0]),
            "not jittered: {waits:?}"
        );
        // No Retry-After worth waiting for: the backoff, doubling per attempt, capped.
        let mut zero = HeaderMap::new();
        zero.insert(RETRY_AFTER, HeaderValue::from_static("0"));
        let third = client.retry_wait(&zero, 3);
        assert!(third >= Duration::from_millis(400) && third <= Duration::from_millis(600));
        let late = client.retry_wait(&zero, 40);
        assert!(late >= Duration::from_secs(5) && late <= Duration::from_millis(7500));
    }

    #[test]
    fn retry_after_defaults_to_one_second() {
        let mut map = HeaderMap::new();
        assert_eq!(retry_after(&map), Duration::from_secs(1));
        map.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&map), Duration::from_secs(3));
        map.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&map), Duration::from_secs(1));
    }
}
