//! An OpenAI Responses API client (`POST {base}/responses`), what the openai-compat adapter
//! speaks to `api.openai.com` unless `adapter_config.api` says `chat-completions`.
//!
//! Stateless (`store:false`): every call carries the whole conversation as input items —
//! messages (`{type:"message",role,content}`), the model's tool calls
//! (`{type:"function_call",call_id,name,arguments}`) and their results
//! (`{type:"function_call_output",call_id,output}`). Tools are
//! `{type:"function",name,description,parameters,strict:false}` (the API's default is strict,
//! which most tool schemas do not satisfy). Tool names are encoded `.`→`__` as for Chat
//! Completions. The answer's `output` items become text (`output_text`, and `refusal` text
//! as content-filter) and tool calls; `status:"incomplete"` with
//! `incomplete_details.reason` `max_output_tokens` → length, `content_filter` →
//! content-filter; usage `input_tokens`/`output_tokens`. Streaming reads
//! `response.output_text.delta` events and parses the final `response.completed`.

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::openai::{decode_tool_name, encode_tool_name};
use super::wire::{Endpoint, provider_message};
use super::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, TextSink, ToolCall,
    Usage,
};

/// The client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ResponsesProvider {
    pub endpoint: Endpoint,
}

impl ResponsesProvider {
    pub fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }

    /// The request body (`stream:false`).
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut input = Vec::new();
        for m in &request.messages {
            match m.role {
                Role::System | Role::User => input.push(json!({
                    "type": "message",
                    "role": if m.role == Role::System { "system" } else { "user" },
                    "content": m.content,
                })),
                Role::Assistant => {
                    if !m.content.is_empty() {
                        input.push(
                            json!({"type": "message", "role": "assistant", "content": m.content}),
                        );
                    }
                    for c in &m.tool_calls {
                        input.push(json!({
                            "type": "function_call",
                            "call_id": c.id,
                            "name": encode_tool_name(&c.name),
                            "arguments": c.arguments.to_string(),
                        }));
                    }
                }
                Role::Tool => input.push(json!({
                    "type": "function_call_output",
                    "call_id": m.tool_call_id.clone().unwrap_or_default(),
                    "output": m.content,
                })),
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(self.endpoint.model));
        body.insert("input".into(), Value::Array(input));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "name": encode_tool_name(&t.name),
                        "description": t.description,
                        "parameters": t.parameters,
                        "strict": false,
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(m) = request
            .max_output_tokens
            .or(self.endpoint.max_output_tokens)
        {
            body.insert("max_output_tokens".into(), json!(m));
        }
        body.insert("store".into(), json!(false));
        body.insert("stream".into(), json!(false));
        Value::Object(body)
    }

    fn headers(&self) -> Result<reqwest::header::HeaderMap, ModelError> {
        let key = self.endpoint.api_key.as_deref().unwrap_or("unused");
        super::wire::headers(&[("authorization", &format!("Bearer {key}"))])
    }

    fn url(&self) -> String {
        format!("{}/responses", self.endpoint.base_url)
    }
}

/// Parses a Responses API answer (a `response` object).
pub fn parse_response(body: &Value) -> Result<ModelResponse, ModelError> {
    if let Some(error) = body.get("error").filter(|e| e.is_object()) {
        let code = error.get("code").and_then(Value::as_str).unwrap_or("error");
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        return Err(ModelError::BadResponse(format!(
            "the response failed: {code}: {message}"
        )));
    }
    let output = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::BadResponse("no `output` array".into()))?;
    let mut text = String::new();
    let mut refused = false;
    let mut tool_calls = Vec::new();
    for (i, item) in output.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""))
                        }
                        Some("refusal") => {
                            refused = true;
                            text.push_str(part.get("refusal").and_then(Value::as_str).unwrap_or(""))
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => tool_calls.push(function_call(i, item)?),
            _ => {}
        }
    }
    let incomplete = body
        .get("incomplete_details")
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    let finish_reason = match incomplete {
        Some("max_output_tokens") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        _ if !tool_calls.is_empty() => FinishReason::ToolUse,
        _ if refused => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    };
    let usage = body.get("usage").map(|u| Usage {
        input_tokens: u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0),
    });
    Ok(ModelResponse {
        text,
        tool_calls,
        finish_reason,
        usage: usage.unwrap_or_default(),
        warnings: Vec::new(),
    })
}

fn function_call(i: usize, item: &Value) -> Result<ToolCall, ModelError> {
    let name = item
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ModelError::BadResponse(format!("output[{i}] has no name")))?;
    let arguments = item
        .get("arguments")
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let id = ["call_id", "id"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("call-{i}"));
    Ok(ToolCall {
        id,
        name: decode_tool_name(name),
        arguments,
    })
}

#[async_trait]
impl ModelProvider for ResponsesProvider {
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
        while let Some(event) = sse.next_event().await? {
            if event.data.trim() == "[DONE]" || event.data.is_empty() {
                continue;
            }
            let data: Value = serde_json::from_str(&event.data).map_err(|e| {
                ModelError::BadResponse(format!("a streamed event is not JSON: {e}"))
            })?;
            match data.get("type").and_then(Value::as_str) {
                Some("response.output_text.delta") => {
                    if let Some(d) = data.get("delta").and_then(Value::as_str) {
                        on_text(d);
                    }
                }
                Some("response.completed" | "response.incomplete" | "response.failed") => {
                    return parse_response(data.get("response").unwrap_or(&Value::Null));
                }
                Some("error") => {
                    let message = provider_message(&json!({"error": data}))
                        .unwrap_or_else(|| data.to_string());
                    return Err(ModelError::BadResponse(format!(
                        "the stream reported an error: {}",
                        self.endpoint.wire.mask(&message)
                    )));
                }
                _ => {}
            }
        }
        Err(ModelError::BadResponse(
            "the stream ended before response.completed".into(),
        ))
    }
}
