//! An OpenAI Chat Completions client (`POST {base}/chat/completions`): OpenAI itself when a
//! registration says `adapter_config.api: chat-completions`, and any OpenAI-compatible server
//! (Ollama, vLLM, LM Studio, OpenRouter) by `adapter_config.baseUrl`, key optional. The
//! env-configured provider (`openai-compat`) is this client too:
//!
//! - `KINDGI_MODEL` — the model name; setting it turns this provider on;
//! - `KINDGI_MODEL_BASE_URL` — default `https://api.openai.com/v1`;
//! - `KINDGI_MODEL_API_KEY` — sent as `Authorization: Bearer …` (`unused` when absent, for
//!   local servers that want none).
//!
//! Wire rules kept from the reference adapter: tool names go out with `.` encoded as `__` and
//! come back decoded; arguments that are not JSON become `{}`; `finish_reason`
//! `tool_calls`/`function_call` → tool-use, `length`, `content_filter` → content-filter, else
//! stop; `stream:false`, or `stream:true` with `stream_options.include_usage` when streaming
//! (the deltas assembled into the same answer). Retries: the shared rule ([`super::retry`]).

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::time::Duration;

use super::retry::RetryPolicy;
use super::sse::SseReader;
use super::wire::Wire;
use super::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, TextSink, ToolCall,
    Usage,
};
use kindgi_tools::egress::EgressPolicy;

pub const PROVIDER_ID: &str = "openai-compat";
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const ENV_MODEL: &str = "KINDGI_MODEL";
pub const ENV_BASE_URL: &str = "KINDGI_MODEL_BASE_URL";
pub const ENV_API_KEY: &str = "KINDGI_MODEL_API_KEY";
/// The largest answer read (32 MiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = super::wire::DEFAULT_MAX_RESPONSE_BYTES;

/// The client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct OpenAiCompatProvider {
    wire: Wire,
    provider_id: String,
    base_url: String,
    api_key: String,
    model: String,
    max_output_tokens: Option<u32>,
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
        let api_key = api_key
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "unused".into());
        Ok(Self {
            wire: Wire::new(EgressPolicy::open(), Some(api_key.clone()))?,
            provider_id: PROVIDER_ID.to_owned(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key,
            model: model.into(),
            max_output_tokens: None,
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
        self.wire.retry = RetryPolicy::new(attempts, base);
        self
    }

    /// Caps the answer read; a larger one is [`ModelError::BadResponse`].
    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.wire.max_response_bytes = bytes;
        self
    }

    /// The id `provider_id()` reports (a registration's `metadata.id`).
    pub fn with_provider_id(mut self, id: impl Into<String>) -> Self {
        self.provider_id = id.into();
        self
    }

    /// The addresses the client may reach.
    pub fn with_egress(mut self, egress: EgressPolicy) -> Result<Self, ModelError> {
        let retry = self.wire.retry;
        let bytes = self.wire.max_response_bytes;
        let traced = self.wire.send_traceparent;
        self.wire = Wire::new(egress, Some(self.api_key.clone()))?;
        self.wire.retry = retry;
        self.wire.max_response_bytes = bytes;
        self.wire.send_traceparent = traced;
        Ok(self)
    }

    /// `max_tokens` when a request sets none.
    pub fn with_max_output_tokens(mut self, tokens: Option<u32>) -> Self {
        self.max_output_tokens = tokens;
        self
    }

    /// Sends each request's `traceparent` as a header (the registration's `send_traceparent`).
    pub fn with_send_traceparent(mut self, send: bool) -> Self {
        self.wire.send_traceparent = send;
        self
    }

    /// The stream's idle timeout (default 120 s).
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.wire.idle_timeout = idle;
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
        if let Some(m) = request.max_output_tokens.or(self.max_output_tokens) {
            body.insert("max_tokens".into(), json!(m));
        }
        body.insert("stream".into(), json!(false));
        Value::Object(body)
    }
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
                    .filter(|id| !id.is_empty())
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
        &self.provider_id
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let url = format!("{}/chat/completions", self.base_url);
        let body = self.request_body(&request);
        let value = self
            .wire
            .post_json(&url, &self.wire.traced(self.headers()?, &request)?, &body)
            .await?;
        parse_response(&value)
    }

    async fn invoke_streaming(
        &self,
        request: ModelRequest,
        on_text: &TextSink,
    ) -> Result<ModelResponse, ModelError> {
        let url = format!("{}/chat/completions", self.base_url);
        let mut body = self.request_body(&request);
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
        let resp = self
            .wire
            .post(&url, &self.wire.traced(self.headers()?, &request)?, &body)
            .await?;
        let mut sse = SseReader::new(resp, self.wire.max_response_bytes, self.wire.idle_timeout);
        let mut acc = StreamAssembly::default();
        while let Some(event) = sse.next_event().await? {
            if event.data.trim() == "[DONE]" {
                break;
            }
            let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
                ModelError::BadResponse(format!("a streamed chunk is not JSON: {e}"))
            })?;
            if let Some(message) = super::wire::provider_message(&chunk) {
                return Err(ModelError::BadResponse(format!(
                    "the stream reported an error: {}",
                    self.wire.mask(&message)
                )));
            }
            acc.add(&chunk, on_text);
        }
        parse_response(&acc.into_completion())
    }
}

impl OpenAiCompatProvider {
    fn headers(&self) -> Result<reqwest::header::HeaderMap, ModelError> {
        super::wire::headers(&[("authorization", &format!("Bearer {}", self.api_key))])
    }
}

/// Chat-completion chunks folded into one completion body (`choices[0].message`).
#[derive(Default)]
struct StreamAssembly {
    text: String,
    /// By `index`: id, name, arguments text.
    calls: std::collections::BTreeMap<u64, (String, String, String)>,
    finish_reason: Option<String>,
    usage: Option<Value>,
}

impl StreamAssembly {
    fn add(&mut self, chunk: &Value, on_text: &TextSink) {
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return;
        };
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(r.to_owned());
        }
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(t) = delta.get("content").and_then(Value::as_str)
            && !t.is_empty()
        {
            self.text.push_str(t);
            on_text(t);
        }
        for (i, c) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = c.get("index").and_then(Value::as_u64).unwrap_or(i as u64);
            let entry = self.calls.entry(index).or_default();
            if let Some(id) = c.get("id").and_then(Value::as_str) {
                entry.0 = id.to_owned();
            }
            let f = c.get("function").unwrap_or(&Value::Null);
            if let Some(n) = f.get("name").and_then(Value::as_str) {
                entry.1.push_str(n);
            }
            if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                entry.2.push_str(a);
            }
        }
    }

    fn into_completion(self) -> Value {
        let calls: Vec<Value> = self
            .calls
            .into_values()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        let mut message = json!({"role": "assistant", "content": self.text});
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        let mut body = json!({
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        });
        if let Some(u) = self.usage {
            body["usage"] = u;
        }
        body
    }
}
