//! A Google Gemini API client (`POST {base}/v1beta/models/{model}:generateContent`, default
//! base `https://generativelanguage.googleapis.com`), the `@kindgi/adapter-model-gemini`
//! adapter.
//!
//! Header `x-goog-api-key`. System messages become `systemInstruction`; the rest `contents`
//! with roles `user` and `model`. The model's tool calls are `functionCall` parts, their
//! results `functionResponse` parts (`response: {output: <the result, parsed when JSON>}`) of
//! one user turn. Tools go out as one `functionDeclarations` list with the schema under
//! `parametersJsonSchema`, which takes full JSON Schema (`parameters` takes only Gemini's
//! OpenAPI subset and refuses e.g. `additionalProperties` or `$ref`). Names encoded `.`→`__`.
//!
//! Gemini gives no call ids (only some models set `functionCall.id`): a call without one is
//! named `gemini-call-<step>-<n>` — `<step>` one more than the model turns already in the
//! request, `<n>` its order in the answer — so ids are stable for one request and unique in a
//! conversation; a tool result finds its call's name through that id. A call's
//! `thoughtSignature` (Gemini 3 wants it back with the call) rides in the id after `~sig~`
//! and is put back on the `functionCall` part when the conversation is sent again.
//! `finishReason` STOP → stop (tool-use with calls), MAX_TOKENS → length, SAFETY, RECITATION,
//! BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY and a blocked prompt → content-filter.
//! Usage from `usageMetadata` (thinking tokens count as output). Errors
//! `{error:{code,message,status}}`. Streaming: `:streamGenerateContent?alt=sse`, each event a
//! partial answer, folded into one.

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

use super::openai::{decode_tool_name, encode_tool_name};
use super::wire::Endpoint;
use super::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, TextSink, ToolCall,
    Usage,
};

pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// Between a generated call id and the call's thought signature.
const SIGNATURE_MARK: &str = "~sig~";

/// The client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct GeminiProvider {
    pub endpoint: Endpoint,
}

fn function_call_part(c: &ToolCall) -> Value {
    let (id, signature) = match c.id.split_once(SIGNATURE_MARK) {
        Some((id, sig)) => (id, Some(sig)),
        None => (c.id.as_str(), None),
    };
    let mut call = json!({
        "name": encode_tool_name(&c.name),
        "args": if c.arguments.is_object() { c.arguments.clone() } else { json!({}) },
    });
    if !id.starts_with("gemini-call-") {
        call["id"] = json!(id);
    }
    let mut part = json!({"functionCall": call});
    if let Some(sig) = signature {
        part["thoughtSignature"] = json!(sig);
    }
    part
}

/// The `contents` array: user and model turns, tool results in user turns.
pub fn contents(request: &ModelRequest) -> Vec<Value> {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, parts: Vec<Value>| {
        if parts.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((r, p)) if *r == role => p.extend(parts),
            _ => out.push((role, parts)),
        }
    };
    for m in &request.messages {
        let text = |t: &str| (!t.is_empty()).then(|| json!({"text": t}));
        match m.role {
            Role::System => {}
            Role::User => push("user", text(&m.content).into_iter().collect()),
            Role::Assistant => {
                let mut parts: Vec<Value> = text(&m.content).into_iter().collect();
                for c in &m.tool_calls {
                    names.insert(c.id.as_str(), c.name.as_str());
                    parts.push(function_call_part(c));
                }
                push("model", parts);
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or("");
                let name = names.get(id).copied().unwrap_or("unknown");
                let output =
                    serde_json::from_str::<Value>(&m.content).unwrap_or_else(|_| json!(m.content));
                let mut response =
                    json!({"name": encode_tool_name(name), "response": {"output": output}});
                let bare = id.split(SIGNATURE_MARK).next().unwrap_or(id);
                if !bare.is_empty() && !bare.starts_with("gemini-call-") {
                    response["id"] = json!(bare);
                }
                push("user", vec![json!({"functionResponse": response})]);
            }
        }
    }
    out.into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

impl GeminiProvider {
    pub fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }

    /// The request body.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut body = Map::new();
        let system: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System && !m.content.is_empty())
            .map(|m| json!({"text": m.content}))
            .collect();
        if !system.is_empty() {
            body.insert("systemInstruction".into(), json!({"parts": system}));
        }
        body.insert("contents".into(), Value::Array(contents(request)));
        if !request.tools.is_empty() {
            let declarations: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "name": encode_tool_name(&t.name),
                        "description": t.description,
                        "parametersJsonSchema": t.parameters,
                    })
                })
                .collect();
            body.insert(
                "tools".into(),
                json!([{"functionDeclarations": declarations}]),
            );
        }
        let mut generation = Map::new();
        if let Some(t) = request.temperature {
            generation.insert("temperature".into(), json!(t));
        }
        if let Some(m) = request
            .max_output_tokens
            .or(self.endpoint.max_output_tokens)
        {
            generation.insert("maxOutputTokens".into(), json!(m));
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        Value::Object(body)
    }

    fn headers(&self) -> Result<reqwest::header::HeaderMap, ModelError> {
        let key = self.endpoint.api_key.as_deref().unwrap_or("");
        super::wire::headers(&[("x-goog-api-key", key)])
    }

    fn url(&self, method: &str) -> String {
        let model = self
            .endpoint
            .model
            .strip_prefix("models/")
            .unwrap_or(&self.endpoint.model);
        format!("{}/v1beta/models/{model}:{method}", self.endpoint.base_url)
    }
}

/// The model turns already in the request, plus one: the `<step>` of generated call ids.
pub fn step_of(request: &ModelRequest) -> usize {
    request
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count()
        + 1
}

/// Partial answers folded into one (a whole answer is one partial).
#[derive(Default)]
struct Assembly {
    text: String,
    calls: Vec<ToolCall>,
    finish: Option<String>,
    blocked: bool,
    usage: Usage,
    seen_candidate: bool,
}

impl Assembly {
    fn add(&mut self, body: &Value, step: usize, on_text: &TextSink) {
        if body
            .get("promptFeedback")
            .and_then(|f| f.get("blockReason"))
            .is_some()
        {
            self.blocked = true;
        }
        if let Some(u) = body.get("usageMetadata") {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Usage {
                input_tokens: n("promptTokenCount"),
                output_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
            };
        }
        let Some(candidate) = body.get("candidates").and_then(|c| c.get(0)) else {
            return;
        };
        self.seen_candidate = true;
        if let Some(r) = candidate.get("finishReason").and_then(Value::as_str) {
            self.finish = Some(r.to_owned());
        }
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            if let Some(t) = part.get("text").and_then(Value::as_str) {
                self.text.push_str(t);
                if !t.is_empty() {
                    on_text(t);
                }
            }
            if let Some(call) = part.get("functionCall") {
                let n = self.calls.len();
                let mut id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("gemini-call-{step}-{}", n + 1));
                if let Some(sig) = part.get("thoughtSignature").and_then(Value::as_str) {
                    id = format!("{id}{SIGNATURE_MARK}{sig}");
                }
                let name = call.get("name").and_then(Value::as_str).unwrap_or("");
                self.calls.push(ToolCall {
                    id,
                    name: decode_tool_name(name),
                    arguments: call
                        .get("args")
                        .filter(|a| a.is_object())
                        .cloned()
                        .unwrap_or_else(|| json!({})),
                });
            }
        }
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        if !self.seen_candidate && !self.blocked {
            return Err(ModelError::BadResponse("no `candidates[0]`".into()));
        }
        if self.calls.iter().any(|c| c.name.is_empty()) {
            return Err(ModelError::BadResponse(
                "a functionCall part has no name".into(),
            ));
        }
        let finish_reason = match self.finish.as_deref() {
            _ if self.blocked => FinishReason::ContentFilter,
            Some("MAX_TOKENS") => FinishReason::Length,
            Some(
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
                | "IMAGE_SAFETY",
            ) => FinishReason::ContentFilter,
            _ if !self.calls.is_empty() => FinishReason::ToolUse,
            _ => FinishReason::Stop,
        };
        Ok(ModelResponse {
            text: self.text,
            tool_calls: self.calls,
            finish_reason,
            usage: self.usage,
            warnings: Vec::new(),
        })
    }
}

/// Parses a `generateContent` answer; `step` names calls without ids ([`step_of`]).
pub fn parse_response(body: &Value, step: usize) -> Result<ModelResponse, ModelError> {
    let mut acc = Assembly::default();
    acc.add(body, step, &|_| {});
    acc.finish()
}

#[async_trait]
impl ModelProvider for GeminiProvider {
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
                &self.url("generateContent"),
                &self.endpoint.wire.traced(self.headers()?, &request)?,
                &body,
            )
            .await?;
        parse_response(&value, step_of(&request))
    }

    async fn invoke_streaming(
        &self,
        request: ModelRequest,
        on_text: &TextSink,
    ) -> Result<ModelResponse, ModelError> {
        let body = self.request_body(&request);
        let url = format!("{}?alt=sse", self.url("streamGenerateContent"));
        let resp = self
            .endpoint
            .wire
            .post(
                &url,
                &self.endpoint.wire.traced(self.headers()?, &request)?,
                &body,
            )
            .await?;
        let mut sse = self.endpoint.sse(resp);
        let step = step_of(&request);
        let mut acc = Assembly::default();
        while let Some(event) = sse.next_event().await? {
            if event.data.trim().is_empty() {
                continue;
            }
            let data: Value = serde_json::from_str(&event.data).map_err(|e| {
                ModelError::BadResponse(format!("a streamed event is not JSON: {e}"))
            })?;
            if let Some(message) = super::wire::provider_message(&data) {
                return Err(ModelError::BadResponse(format!(
                    "the stream reported an error: {}",
                    self.endpoint.wire.mask(&message)
                )));
            }
            acc.add(&data, step, on_text);
        }
        acc.finish()
    }
}
