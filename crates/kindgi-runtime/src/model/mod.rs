//! Model providers for agent steps: the [`ModelProvider`] trait, the wire clients of the
//! model adapters ([`adapters`]: OpenAI Chat Completions [`openai`] and Responses
//! [`responses`], Anthropic Messages [`anthropic`], Google Gemini [`gemini`]), what they
//! share ([`wire`] HTTP, [`retry`] rule, [`sse`] streams, [`sampling`] for models without
//! sampling settings) and the dev stand-in
//! ([`dev_echo::DevEcho`]), which is not a model.
//!
//! [`from_env`] picks the provider: the OpenAI-compatible client when `KINDGI_MODEL` is set
//! (with `KINDGI_MODEL_BASE_URL`, `KINDGI_MODEL_API_KEY`), else dev-echo.

pub mod adapters;
pub mod anthropic;
pub mod dev_echo;
pub mod gemini;
pub mod openai;
pub mod responses;
pub mod retry;
pub mod sampling;
pub mod sse;
pub mod wire;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

// The messages are core's (one `Message`/`Role` for models and conversation logs).
pub use kindgi_core::conversation::{Message, Role, ToolCall};

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelTool {
    /// The Kindgi tool id (providers encode it as their wire requires).
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// What the agent loop sends.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRequest {
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ModelTool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The call's W3C `traceparent` (the run's trace id, a new span id). Sent as a header
    /// only by a client whose registration opted in (`send_traceparent`); never recorded.
    #[serde(skip)]
    pub traceparent: Option<String>,
}

/// `00-<trace id>-<new span id>-01` for a run's trace id (32 lowercase hex, not all zero);
/// `None` for anything else, so a malformed id sends no header.
pub fn traceparent_for(trace_id: &str) -> Option<String> {
    let valid = trace_id.len() == 32
        && trace_id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && trace_id.bytes().any(|b| b != b'0');
    if !valid {
        return None;
    }
    // A span id is 8 random bytes, never all zero.
    let span = rand::random::<u64>().max(1);
    Some(format!("00-{trace_id}-{span:016x}-01"))
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    Stop,
    ToolUse,
    Length,
    ContentFilter,
}

/// Token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// What a model answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelResponse {
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    #[serde(default)]
    pub usage: Usage,
    /// Warning codes (e.g. `dev-echo-not-a-model`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A failed model call. The agent step reports
/// `model-invocation-failed: Model call to <provider> (<model>) failed: <cause>`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("{0}")]
    Transport(String),
    /// A failed answer: `message` is the provider's own error message (with its kind, e.g.
    /// `invalid_request_error: …`) when the body has one, else the body's first 500
    /// characters; `body` is always those characters.
    #[error("HTTP {status}: {message}")]
    Status {
        status: u16,
        message: String,
        body: String,
    },
    #[error("the answer is not a model response: {0}")]
    BadResponse(String),
    #[error("{0}")]
    Config(String),
}

/// What a streaming call hands each piece of answer text to.
pub type TextSink = dyn for<'s> Fn(&'s str) + Send + Sync;

/// A chat model.
#[async_trait]
pub trait ModelProvider: Send + Sync + std::fmt::Debug {
    /// e.g. `openai-compat`, `dev-echo`.
    fn provider_id(&self) -> &str;
    fn model(&self) -> &str;
    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError>;

    /// Like [`Self::invoke`], calling `on_text` with each piece of answer text as it arrives;
    /// the result is the same assembled [`ModelResponse`]. The default calls `invoke` and
    /// hands over the whole text at once.
    async fn invoke_streaming(
        &self,
        request: ModelRequest,
        on_text: &TextSink,
    ) -> Result<ModelResponse, ModelError> {
        let answer = self.invoke(request).await?;
        if !answer.text.is_empty() {
            on_text(&answer.text);
        }
        Ok(answer)
    }
}

/// The configured provider: OpenAI-compatible when `KINDGI_MODEL` is set, else dev-echo.
/// A set but unusable configuration (e.g. a bad base URL) is an error, not a silent fallback.
pub fn from_env() -> Result<Arc<dyn ModelProvider>, ModelError> {
    match openai::OpenAiCompatProvider::from_env()? {
        Some(p) => Ok(Arc::new(p)),
        None => Ok(Arc::new(dev_echo::DevEcho)),
    }
}
