//! The HTTP half every model adapter shares: one client with a connect and a total timeout
//! that applies the connection's egress policy (its resolver, IP-literal hosts checked
//! before sending, no redirects followed, no proxy under a closed policy), a JSON POST with
//! the shared retry rule ([`super::retry`]) and a capped body read, and the failed answer
//! turned into [`ModelError::Status`] carrying the provider's own error message. The
//! credential the call sends is masked (`***`) wherever a failed answer echoes it.

use reqwest::header::HeaderMap;
use serde_json::Value;
use std::time::Duration;

use super::ModelError;
use super::retry::RetryPolicy;
use kindgi_tools::egress::EgressPolicy;

/// The largest answer read (32 MiB): far above any real answer, and a bound on what a
/// misbehaving endpoint can make the runtime hold.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// Time to open a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time for a whole call, answer included (streaming or not).
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(600);
/// Longest silence inside a streamed answer.
pub const STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Characters of a failed answer's body kept in [`ModelError::Status`].
pub const ERROR_BODY_CHARS: usize = 500;

/// The shared client of one adapter instance. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Wire {
    http: reqwest::Client,
    egress: EgressPolicy,
    pub retry: RetryPolicy,
    pub max_response_bytes: usize,
    pub idle_timeout: Duration,
    pub total_timeout: Duration,
    /// Masked in quoted error bodies.
    secret: Option<String>,
    /// Whether a request's `traceparent` goes out as a header (the registration's
    /// `send_traceparent`; default off, so no trace id leaves unless it opted in).
    pub send_traceparent: bool,
}

impl Wire {
    pub fn new(egress: EgressPolicy, secret: Option<String>) -> Result<Self, ModelError> {
        let http = egress
            .client_builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            egress,
            retry: RetryPolicy::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            idle_timeout: STREAM_IDLE_TIMEOUT,
            total_timeout: TOTAL_TIMEOUT,
            secret: secret.filter(|s| s.len() >= 4),
            send_traceparent: false,
        })
    }

    /// `headers` plus the request's `traceparent` when this client sends it.
    pub fn traced(
        &self,
        mut headers: HeaderMap,
        request: &super::ModelRequest,
    ) -> Result<HeaderMap, ModelError> {
        if self.send_traceparent
            && let Some(tp) = &request.traceparent
        {
            let v = reqwest::header::HeaderValue::from_str(tp).map_err(|_| {
                ModelError::Config("the traceparent is not a valid header value".into())
            })?;
            headers.insert("traceparent", v);
        }
        Ok(headers)
    }

    /// POSTs `body` and returns the answer's JSON, trying again by the retry rule.
    pub async fn post_json(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Value, ModelError> {
        let resp = self.post(url, headers, body).await?;
        let bytes = read_capped(resp, self.max_response_bytes, true)
            .await
            .map_err(|e| self.read_error(url, e))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| ModelError::BadResponse(format!("the body is not JSON: {e}")))
    }

    /// POSTs `body` and returns the successful answer unread (a stream), trying again by the
    /// retry rule until an answer with a 2xx status comes.
    pub async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<reqwest::Response, ModelError> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| ModelError::Config(format!("{url:?} is not a URL: {e}")))?;
        self.egress
            .check_url(&parsed)
            .map_err(|e| ModelError::Transport(format!("POST {url}: {e}")))?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = self
                .http
                .post(parsed.clone())
                .headers(headers.clone())
                .timeout(self.total_timeout)
                .json(body)
                .send()
                .await;
            let (retryable, err, answer_headers) = match sent {
                Err(e) => {
                    // An egress refusal is the same on every try.
                    let refused = kindgi_tools::egress::EgressError::find_in(&e).is_some();
                    (
                        !refused,
                        ModelError::Transport(self.describe_send(url, &e)),
                        None,
                    )
                }
                Ok(resp) if resp.status().is_success() => return Ok(resp),
                Ok(resp) => {
                    let code = resp.status().as_u16();
                    let h = resp.headers().clone();
                    (
                        RetryPolicy::is_retryable_status(code),
                        self.status_error(code, resp).await,
                        Some(h),
                    )
                }
            };
            if !retryable || !self.retry.may_retry(attempt) {
                return Err(err);
            }
            tokio::time::sleep(self.retry.pause(attempt, answer_headers.as_ref())).await;
        }
    }

    /// "POST <url>: <cause>", naming an egress refusal in words when that is the cause.
    fn describe_send(&self, url: &str, e: &reqwest::Error) -> String {
        if let Some(refused) = kindgi_tools::egress::EgressError::find_in(e) {
            return format!("POST {url}: {refused}");
        }
        let mut cause = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            cause = format!("{cause}: {s}");
            source = s.source();
        }
        format!("POST {url}: {cause}")
    }

    async fn status_error(&self, status: u16, resp: reqwest::Response) -> ModelError {
        // Up to 4 bytes a character: enough for the quoted prefix, no more. The message is
        // read from a longer prefix, so a long error still yields its message.
        let bytes = read_capped(resp, 64 * 1024, false)
            .await
            .unwrap_or_default();
        let text = self.mask(&String::from_utf8_lossy(&bytes));
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| provider_message(&v))
            .map(|m| m.chars().take(ERROR_BODY_CHARS).collect::<String>())
            .unwrap_or_else(|| text.chars().take(ERROR_BODY_CHARS).collect());
        ModelError::Status {
            status,
            message,
            body: text.chars().take(ERROR_BODY_CHARS).collect(),
        }
    }

    pub(crate) fn read_error(&self, url: &str, e: ReadError) -> ModelError {
        match e {
            ReadError::TooLarge => ModelError::BadResponse(format!(
                "the body is larger than the {} byte limit",
                self.max_response_bytes
            )),
            ReadError::Failed(e) => ModelError::Transport(format!(
                "POST {url}: the answer broke off while being read: {e}"
            )),
        }
    }

    /// The text with the credential masked.
    pub fn mask(&self, text: &str) -> String {
        match &self.secret {
            Some(s) if text.contains(s.as_str()) => text.replace(s.as_str(), "***"),
            _ => text.to_owned(),
        }
    }
}

/// The provider's own words in an error body: OpenAI `{error:{message,type,code}}`,
/// Anthropic `{type:"error",error:{type,message}}`, Gemini `{error:{code,message,status}}`
/// (also inside a one-element array), Ollama `{error:"…"}`. Named by kind when there is one:
/// `invalid_request_error: max_tokens: Field required`.
pub fn provider_message(body: &Value) -> Option<String> {
    let body = match body {
        Value::Array(items) => items.first()?,
        other => other,
    };
    let error = body.get("error")?;
    if let Some(s) = error.as_str() {
        return Some(s.to_owned());
    }
    let message = error.get("message").and_then(Value::as_str)?;
    let kind = ["type", "status", "code"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str))
        .filter(|k| !k.is_empty());
    Some(match kind {
        Some(kind) => format!("{kind}: {message}"),
        None => message.to_owned(),
    })
}

pub(crate) enum ReadError {
    TooLarge,
    Failed(reqwest::Error),
}

/// Reads at most `limit` body bytes; with `strict`, more is an error, otherwise the rest is
/// left unread.
pub(crate) async fn read_capped(
    mut resp: reqwest::Response,
    limit: usize,
    strict: bool,
) -> Result<Vec<u8>, ReadError> {
    if strict && resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(ReadError::Failed)? {
        let room = limit.saturating_sub(bytes.len());
        if chunk.len() > room {
            if strict {
                return Err(ReadError::TooLarge);
            }
            bytes.extend_from_slice(&chunk[..room]);
            break;
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// A header map from `(name, value)` pairs; a value that is not a valid header (a key with a
/// newline) is a configuration error naming the header, never quoting the value.
pub fn headers(pairs: &[(&'static str, &str)]) -> Result<HeaderMap, ModelError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let mut v = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
            ModelError::Config(format!(
                "the value for the {name} header is not a valid header value"
            ))
        })?;
        if matches!(*name, "authorization" | "x-api-key" | "x-goog-api-key") {
            v.set_sensitive(true);
        }
        map.insert(*name, v);
    }
    Ok(map)
}

/// What every adapter's client holds: who it is, where it sends, the key, and its [`Wire`].
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// What `provider_id()` reports (a registration's `metadata.id`).
    pub provider_id: String,
    pub model: String,
    /// Without a trailing `/`.
    pub base_url: String,
    pub api_key: Option<String>,
    /// `max_tokens` (or the API's name for it) when a request sets none.
    pub max_output_tokens: Option<u32>,
    pub wire: Wire,
}

impl Endpoint {
    /// Checks `base_url` (an http(s) URL) and builds the client under `egress`.
    pub fn new(
        provider_id: impl Into<String>,
        model: impl Into<String>,
        base_url: &str,
        api_key: Option<String>,
        egress: EgressPolicy,
    ) -> Result<Self, ModelError> {
        let parsed = reqwest::Url::parse(base_url).map_err(|e| {
            ModelError::Config(format!("the base URL {base_url:?} is not a URL: {e}"))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ModelError::Config(format!(
                "the base URL {base_url:?} must be an http or https URL"
            )));
        }
        let api_key = api_key.filter(|k| !k.is_empty());
        Ok(Self {
            provider_id: provider_id.into(),
            model: model.into(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            wire: Wire::new(egress, api_key.clone())?,
            api_key,
            max_output_tokens: None,
        })
    }

    /// Total tries (≥ 1) and the base of the exponential pause.
    pub fn with_retries(mut self, attempts: u32, base: Duration) -> Self {
        self.wire.retry = RetryPolicy::new(attempts, base);
        self
    }

    pub fn with_max_output_tokens(mut self, tokens: Option<u32>) -> Self {
        self.max_output_tokens = tokens;
        self
    }

    /// Sends each request's `traceparent` as a header (the registration's `send_traceparent`).
    pub fn with_send_traceparent(mut self, send: bool) -> Self {
        self.wire.send_traceparent = send;
        self
    }

    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.wire.max_response_bytes = bytes;
        self
    }

    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.wire.idle_timeout = idle;
        self
    }

    /// An SSE reader over a streamed answer under this endpoint's budget and idle timeout.
    pub fn sse(&self, resp: reqwest::Response) -> super::sse::SseReader {
        super::sse::SseReader::new(resp, self.wire.max_response_bytes, self.wire.idle_timeout)
    }
}
