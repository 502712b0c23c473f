//! An Anthropic Messages API client (`POST {base}/v1/messages`, default base
//! `https://api.anthropic.com`), the `@kindgi/adapter-model-anthropic` adapter.
//!
//! Headers `x-api-key` and `anthropic-version: 2023-06-01`. System messages go top-level
//! (`system`, joined by blank lines); `max_tokens` is always sent (the request's, else the
//! registration's `maxOutputTokens`, else [`DEFAULT_MAX_TOKENS`]). The model's tool calls are
//! `tool_use` blocks of the assistant message; tool results are `tool_result` blocks of a user
//! message, consecutive ones (and a user message right after them) merged into one message, as
//! the API wants roles to alternate. Empty text blocks, which the API refuses, are left out.
//! Tools `{name,description,input_schema}` (names encoded `.`→`__`). No `temperature`
//! (the API's current request type has no sampling settings). `stop_reason`
//! `end_turn`/`stop_sequence`/`pause_turn` → stop, `tool_use` → tool-use, `max_tokens` →
//! length, `refusal` → content-filter. Usage counts cached input tokens as input. Errors
//! `{type:"error",error:{type,message}}`; 529 `overloaded_error` is retried (≥ 500).
//! Streaming reads the message events (`content_block_delta` `text_delta` /
//! `input_json_delta`, `message_delta`) into the same answer.

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

use super::openai::{decode_tool_name, encode_tool_name};
use super::wire::{Endpoint, provider_message};
use super::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, TextSink, ToolCall,
    Usage,
};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when neither the request nor the registration says.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    pub endpoint: Endpoint,
}

/// A tool's schema as `input_schema` wants it: an object schema.
fn input_schema(parameters: &Value) -> Value {
    match parameters {
        Value::Object(m) if m.get("type").and_then(Value::as_str) == Some("object") => {
            parameters.clone()
        }
        Value::Object(m) if !m.contains_key("type") => {
            let mut m = m.clone();
            m.insert("type".into(), json!("object"));
            Value::Object(m)
        }
        _ => json!({"type": "object"}),
    }
}

/// The `messages` array: roles alternating, tool results in user messages.
pub fn messages(request: &ModelRequest) -> Vec<Value> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |role: &str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((r, b)) if r == role => b.extend(blocks),
            _ => out.push((role.to_owned(), blocks)),
        }
    };
    for m in &request.messages {
        let text = |t: &str| (!t.is_empty()).then(|| json!({"type": "text", "text": t}));
        match m.role {
            Role::System => {}
            Role::User => push("user", text(&m.content).into_iter().collect()),
            Role::Assistant => {
                let mut blocks: Vec<Value> = text(&m.content).into_iter().collect();
                blocks.extend(m.tool_calls.iter().map(|c| {
                    json!({
                        "type": "tool_use",
                        "id": c.id,
                        "name": encode_tool_name(&c.name),
                        "input": if c.arguments.is_object() { c.arguments.clone() } else { json!({}) },
                    })
                }));
                push("assistant", blocks);
            }
            Role::Tool => push(
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                    "content": m.content,
                })],
            ),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

impl AnthropicProvider {
    pub fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }

    /// The request body (no `stream`).
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.endpoint.model));
        let max = request
            .max_output_tokens
            .or(self.endpoint.max_output_tokens)
            .unwrap_or(DEFAULT_MAX_TOKENS);
        body.insert("max_tokens".into(), json!(max));
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System && !m.content.is_empty())
            .map(|m| m.content.as_str())
            .collect();
        if !system.is_empty() {
            body.insert("system".into(), json!(system.join("\n\n")));
        }
        body.insert("messages".into(), Value::Array(messages(request)));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "name": encode_tool_name(&t.name),
                        "description": t.description,
                        "input_schema": input_schema(&t.parameters),
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        // No `temperature`: the Messages API's published request type
        // (`MessageCreateParams`, anthropic 2.16) has no sampling settings.
        Value::Object(body)
    }

    fn headers(&self) -> Result<reqwest::header::HeaderMap, ModelError> {
        let key = self.endpoint.api_key.as_deref().unwrap_or("");
        super::wire::headers(&[("x-api-key", key), ("anthropic-version", API_VERSION)])
    }

    fn url(&self) -> String {
        format!("{}/v1/messages", self.endpoint.base_url)
    }
}

fn finish_reason(stop_reason: Option<&str>, has_calls: bool) -> FinishReason {
    match stop_reason {
        Some("tool_use") => FinishReason::ToolUse,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("refusal") => FinishReason::ContentFilter,
        _ if has_calls => FinishReason::ToolUse,
        _ => FinishReason::Stop,
    }
}

fn usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("input_tokens")
            + n("cache_creation_input_tokens")
            + n("cache_read_input_tokens"),
        output_tokens: n("output_tokens"),
    }
}

fn tool_call(i: usize, block: &Value, input: Value) -> Result<ToolCall, ModelError> {
    let name = block
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ModelError::BadResponse(format!("content[{i}] tool_use has no name")))?;
    Ok(ToolCall {
        id: block
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("call-{i}")),
        name: decode_tool_name(name),
        arguments: if input.is_object() { input } else { json!({}) },
    })
}

/// Parses a Messages API answer.
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::BadResponse("no `content` array".into()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (i, block) in content.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => {
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                tool_calls.push(tool_call(i, block, input)?);
            }
            _ => {}
        }
    }
    let finish_reason = finish_reason(
        body.get("stop_reason").and_then(Value::as_str),
        !tool_calls.is_empty(),
    );
    Ok(ModelResponse {
        text,
        finish_reason,
        tool_calls,
        usage: body.get("usage").map(usage).unwrap_or_default(),
        warnings: Vec::new(),
    })
}

/// Message stream events folded into one answer.
#[derive(Default)]
struct StreamAssembly {
    text: String,
    /// By block index: the `tool_use` block's start and its input JSON text.
    calls: BTreeMap<u64, (Value, String)>,
    stop_reason: Option<String>,
    usage: Usage,
    stopped: bool,
}

impl StreamAssembly {
    fn add(&mut self, data: &Value, on_text: &TextSink) -> Result<(), String> {
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match data.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                if let Some(u) = data.get("message").and_then(|m| m.get("usage")) {
                    self.usage = usage(u);
                }
            }
            Some("content_block_start") => {
                let block = data.get("content_block").cloned().unwrap_or(Value::Null);
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    self.calls.insert(index, (block, String::new()));
                }
            }
            Some("content_block_delta") => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let t = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        self.text.push_str(t);
                        if !t.is_empty() {
                            on_text(t);
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some((_, json)) = self.calls.get_mut(&index) {
                            json.push_str(
                                delta
                                    .get("partial_json")
                                    .and_then(Value::as_str)
                                    .unwrap_or(""),
                            );
                        }
                    }
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(r) = data
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(r.to_owned());
                }
                if let Some(n) = data
                    .get("usage")
                    .and_then(|u| u.get("output_tokens"))
                    .and_then(Value::as_u64)
                {
                    self.usage.output_tokens = n;
                }
            }
            Some("message_stop") => self.stopped = true,
            Some("error") => {
                return Err(provider_message(data).unwrap_or_else(|| data.to_string()));
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        let mut tool_calls = Vec::new();
        for (i, (block, json)) in self.calls {
            let input = if json.trim().is_empty() {
                json!({})
            } else {
                serde_json::from_str(&json).unwrap_or_else(|_| json!({}))
            };
            tool_calls.push(tool_call(i as usize, &block, input)?);
        }
        Ok(ModelResponse {
            text: self.text,
            finish_reason: finish_reason(self.stop_reason.as_deref(), !tool_calls.is_empty()),
            tool_calls,
            usage: self.usage,
            warnings: Vec::new(),
        })
    }
}

#[async_trait]
impl ModelProvider for AnthropicProvider {
    fn provider_id(&self) -> &str {
        &self.endpoint.provider_id
    }

    fn model(&self) -> &str {
        &self.endpoint.model
    }

    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = self.request_body(&request);
        let value = self
            .endpoint
            .wire
            .post_json(
                &self.url(),
                &self.endpoint.wire.traced(self.headers()?, &request)?,
                &body,
            )
            .await?;
        parse_response(&value)
    }

    async fn invoke_streaming(
        &self,
        request: ModelRequest,
        on_text: &TextSink,
    ) -> Result<ModelResponse, ModelError> {
        let mut body = self.request_body(&request);
        body["stream"] = json!(true);
        let resp = self
            .endpoint
            .wire
            .post(
                &self.url(),
                &self.endpoint.wire.traced(self.headers()?, &request)?,
                &body,
            )
            .await?;
        let mut sse = self.endpoint.sse(resp);
        let mut acc = StreamAssembly::default();
        while let Some(event) = sse.next_event().await? {
            if event.data.is_empty() {
                continue;
            }
            let data: Value = serde_json::from_str(&event.data).map_err(|e| {
                ModelError::BadResponse(format!("a streamed event is not JSON: {e}"))
            })?;
            acc.add(&data, on_text).map_err(|m| {
                ModelError::BadResponse(format!(
                    "the stream reported an error: {}",
                    self.endpoint.wire.mask(&m)
                ))
            })?;
            if acc.stopped {
                break;
            }
        }
        if !acc.stopped {
            return Err(ModelError::BadResponse(
                "the stream ended before message_stop".into(),
            ));
        }
        acc.finish()
    }
}
