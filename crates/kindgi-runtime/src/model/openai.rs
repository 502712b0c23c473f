//! An OpenAI-compatible chat-completions client (`POST {base}/chat/completions`,
//! `stream: false`), configured by environment:
//!
//! - `KINDGI_MODEL` — the model name; setting it turns this provider on;
//! - `KINDGI_MODEL_BASE_URL` — default `https://api.openai.com/v1`;
//! - `KINDGI_MODEL_API_KEY` — sent as `Authorization: Bearer …` (`unused` when absent, for
//!   local servers that want none).
//!
//! Wire rules kept from the reference adapter: tool names go out with `.` encoded as `__` and
//! come back decoded; arguments that are not JSON become `{}`; `finish_reason`
//! `tool_calls`/`function_call` → tool-use, `length`, `content_filter` → content-filter, else
//! stop. Retries: 408, 409, 429, 5xx and no answer, honouring `retry-after-ms` /
//! `retry-after` (≤ 60 s), else `base·2^(n−1)·(1+jitter)`.

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::time::Duration;

use super::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall, Usage,
};

pub const PROVIDER_ID: &str = "openai-compat";
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const ENV_MODEL: &str = "KINDGI_MODEL";
pub const ENV_BASE_URL: &str = "KINDGI_MODEL_BASE_URL";
pub const ENV_API_KEY: &str = "KINDGI_MODEL_API_KEY";
/// The largest completion body read (32 MiB): far above any real answer, and a bound on what
/// a misbehaving endpoint can make the runtime hold.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// Characters of a failed answer's body kept in [`ModelError::Status`].
const ERROR_BODY_CHARS: usize = 500;

/// The client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct OpenAiCompatProvider {
    http: reqwest::Client,
    base_url: String,
    api_key: String,
    model: String,
    attempts: u32,
    retry_base: Duration,
    max_response_bytes: usize,
}

/// `.` → `__` (function names allow `[a-zA-Z0-9_-]`).
pub fn encode_tool_name(name: &str) -> String {
    name.replace('.', "__")
}

/// `__` → `.`.
pub fn decode_tool_name(name: &str) -> String {
    name.replace("__", ".")
}

impl OpenAiCompatProvider {
    pub fn new(
        base_url: impl Into<String>,
        api_key: Option<String>,
        model: impl Into<String>,
    ) -> Result<Self, ModelError> {
        let base_url: String = base_url.into();
        let parsed = reqwest::Url::parse(&base_url).map_err(|e| {
            ModelError::Config(format!("{ENV_BASE_URL}={base_url:?} is not a URL: {e}"))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ModelError::Config(format!(
                "{ENV_BASE_URL}={base_url:?} must be an http or https URL"
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: api_key
                .filter(|k| !k.is_empty())
                .unwrap_or_else(|| "unused".into()),
            model: model.into(),
            attempts: 3,
            retry_base: Duration::from_millis(1000),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        })
    }

    /// `Some` when `KINDGI_MODEL` is set.
    pub fn from_env() -> Result<Option<Self>, ModelError> {
        let Some(model) = std::env::var(ENV_MODEL)
            .ok()
            .filter(|m| !m.trim().is_empty())
        else {
            return Ok(None);
        };
        let base = std::env::var(ENV_BASE_URL)
            .ok()
            .filter(|b| !b.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_BASE_URL.into());
        let key = std::env::var(ENV_API_KEY).ok();
        Self::new(base, key, model).map(Some)
    }

    /// Total attempts (≥ 1) and the base of the exponential pause between them.
    pub fn with_retries(mut self, attempts: u32, base: Duration) -> Self {
        self.attempts = attempts.max(1);
        self.retry_base = base;
        self
    }

    /// Caps the completion body read; a larger one is [`ModelError::BadResponse`].
    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// The chat-completions request body.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| match m.role {
                Role::System => json!({"role": "system", "content": m.content}),
                Role::User => json!({"role": "user", "content": m.content}),
                Role::Assistant => {
                    let mut msg = Map::new();
                    msg.insert("role".into(), json!("assistant"));
                    msg.insert(
                        "content".into(),
                        if m.content.is_empty() && !m.tool_calls.is_empty() {
                            Value::Null
                        } else {
                            json!(m.content)
                        },
                    );
                    if !m.tool_calls.is_empty() {
                        let calls: Vec<Value> = m
                            .tool_calls
                            .iter()
                            .map(|c| {
                                json!({
                                    "id": c.id,
                                    "type": "function",
                                    "function": {
                                        "name": encode_tool_name(&c.name),
                                        "arguments": c.arguments.to_string(),
                                    }
                                })
                            })
                            .collect();
                        msg.insert("tool_calls".into(), Value::Array(calls));
                    }
                    Value::Object(msg)
                }
                Role::Tool => json!({
                    "role": "tool",
                    "tool_call_id": m.tool_call_id.clone().unwrap_or_default(),
                    "content": m.content,
                }),
            })
            .collect();
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("messages".into(), Value::Array(messages));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": encode_tool_name(&t.name),
                            "description": t.description,
                            "parameters": t.parameters,
                        }
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(m) = request.max_output_tokens {
            body.insert("max_tokens".into(), json!(m));
        }
        body.insert("stream".into(), json!(false));
        Value::Object(body)
    }

    fn retry_pause(&self, attempt: u32, headers: Option<&reqwest::header::HeaderMap>) -> Duration {
        let cap = Duration::from_secs(60);
        if let Some(h) = headers {
            let read = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
            if let Some(ms) = read("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
                && ms >= 0.0
            {
                return Duration::from_millis(ms as u64).min(cap);
            }
            if let Some(s) = read("retry-after").and_then(|v| v.parse::<f64>().ok())
                && s >= 0.0
            {
                return Duration::from_millis((s * 1000.0) as u64).min(cap);
            }
        }
        let jitter = 1.0 + f64::from(rand_u8()) / 255.0;
        let base = self.retry_base.as_millis() as f64 * 2f64.powi(attempt.saturating_sub(1) as i32);
        Duration::from_millis((base * jitter) as u64).min(cap)
    }
}

fn rand_u8() -> u8 {
    // Jitter only; the clock's nanoseconds are enough.
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.subsec_nanos() % 256) as u8)
        .unwrap_or(0)
}

/// Parses a chat-completions answer.
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| ModelError::BadResponse("no `choices[0]`".into()))?;
    let message = choice
        .get("message")
        .ok_or_else(|| ModelError::BadResponse("no `choices[0].message`".into()))?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let f = c.get("function").unwrap_or(&Value::Null);
            let name = f.get("name").and_then(Value::as_str).ok_or_else(|| {
                ModelError::BadResponse(format!("tool_calls[{i}] has no function.name"))
            })?;
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => serde_json::from_str::<Value>(s)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({})),
                Some(v @ Value::Object(_)) => v.clone(),
                _ => json!({}),
            };
            tool_calls.push(ToolCall {
                id: c
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("call-{i}")),
                name: decode_tool_name(name),
                arguments,
            });
        }
    }
    let finish_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("tool_calls" | "function_call") => FinishReason::ToolUse,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    };
    let usage = body.get("usage").map(|u| Usage {
        input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: u
            .get("completion_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    });
    Ok(ModelResponse {
        text,
        tool_calls,
        finish_reason,
        usage: usage.unwrap_or_default(),
        warnings: Vec::new(),
    })
}

#[async_trait]
impl ModelProvider for OpenAiCompatProvider {
    fn provider_id(&self) -> &str {
        PROVIDER_ID
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let url = format!("{}/chat/completions", self.base_url);
        let body = self.request_body(&request);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = self
                .http
                .post(&url)
                .bearer_auth(&self.api_key)
                .json(&body)
                .send()
                .await;
            let (retryable, err, headers) = match sent {
                Err(e) => (
                    true,
                    ModelError::Transport(format!("POST {url}: {e}")),
                    None,
                ),
                Ok(resp) => {
                    let status = resp.status();
                    if status.is_success() {
                        let limit = self.max_response_bytes;
                        let bytes = match read_capped(resp, limit, true).await {
                            Ok(bytes) => bytes,
                            Err(ReadError::TooLarge) => {
                                return Err(ModelError::BadResponse(format!(
                                    "the body is larger than the {limit} byte limit"
                                )));
                            }
                            Err(ReadError::Failed(e)) => {
                                return Err(ModelError::Transport(format!(
                                    "POST {url}: the answer broke off while being read: {e}"
                                )));
                            }
                        };
                        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
                            ModelError::BadResponse(format!("the body is not JSON: {e}"))
                        })?;
                        return parse_response(&value);
                    }
                    let headers = resp.headers().clone();
                    let code = status.as_u16();
                    // Up to 4 bytes a character: enough for the quoted prefix, no more.
                    let text = read_capped(resp, ERROR_BODY_CHARS * 4, false)
                        .await
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default();
                    let text: String = text.chars().take(ERROR_BODY_CHARS).collect();
                    let retryable = matches!(code, 408 | 409 | 429) || code >= 500;
                    (
                        retryable,
                        ModelError::Status {
                            status: code,
                            body: text,
                        },
                        Some(headers),
                    )
                }
            };
            if !retryable || attempt >= self.attempts {
                return Err(err);
            }
            tokio::time::sleep(self.retry_pause(attempt, headers.as_ref())).await;
        }
    }
}

enum ReadError {
    TooLarge,
    Failed(reqwest::Error),
}

/// Reads at most `limit` body bytes; with `strict`, more is an error, otherwise the rest is
/// left unread.
async fn read_capped(
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
