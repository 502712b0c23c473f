//! Model adapters: the official adapter ids a provider registration names
//! (`RegisterProviderBody.adapter_id`), what each takes in `adapter_config`, and how a
//! registration becomes a [`ModelProvider`].
//!
//! This is the one seam between provider registrations (`/v1/providers`, the tenant's
//! records) and the wire clients in this module: the API checks a registration with
//! [`check`], and the model router builds a client with [`connect`] once it has resolved
//! the registration's `secret_ref` to a key. Neither knows a wire format.

use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

use super::{ModelError, ModelProvider};

/// `@kindgi/adapter-model-openai-compat`: OpenAI's APIs, and any server that speaks Chat
/// Completions (Ollama, vLLM, LM Studio, OpenRouter) by `adapter_config.baseUrl`.
pub const OPENAI_COMPAT: &str = "@kindgi/adapter-model-openai-compat";
/// `@kindgi/adapter-model-anthropic`: the Anthropic Messages API.
pub const ANTHROPIC: &str = "@kindgi/adapter-model-anthropic";
/// `@kindgi/adapter-model-gemini`: the Google Gemini API (`generateContent`).
pub const GEMINI: &str = "@kindgi/adapter-model-gemini";

/// The adapters this runtime has, in the order `GET /v1/providers/{id}/check` names them.
pub const KNOWN: &[&str] = &[OPENAI_COMPAT, ANTHROPIC, GEMINI];

/// Whether this runtime has the adapter.
pub fn is_known(adapter_id: &str) -> bool {
    KNOWN.contains(&adapter_id)
}

/// One fault in a registration (`OA:AdapterConfigProblem`): `path` is a JSON pointer into
/// the registration (`/adapter_config/<key>`, `/secret_ref`, `/adapter_id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigProblem {
    pub path: String,
    pub message: String,
}

impl ConfigProblem {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// What [`connect`] needs: the registration's adapter and settings, the key its
/// `secret_ref` resolved to, and the model the agent's turn chose.
#[derive(Debug, Clone)]
pub struct Connection<'a> {
    /// The registration's `metadata.id` (what `model.call.*` events and errors name).
    pub provider_id: &'a str,
    pub adapter_id: &'a str,
    /// `adapter_config`: flat, non-secret settings.
    pub config: &'a Map<String, Value>,
    /// The resolved credential, when the registration has a `secret_ref`.
    pub api_key: Option<String>,
    /// One of the registration's `metadata.models[].name`.
    pub model: &'a str,
    /// `metadata.models[i].maxOutputTokens`, for APIs that need `max_tokens` on every call.
    pub max_output_tokens: Option<u32>,
    /// Which addresses the client may reach (a tenant's base URL never reaches private
    /// addresses on a shared server unless the operator allows them).
    pub egress: kindgi_tools::egress::EgressPolicy,
}

/// The problems of a registration's `adapter_id` and `adapter_config`; empty when it can
/// be connected.
pub fn check(adapter_id: &str, config: &Map<String, Value>) -> Vec<ConfigProblem> {
    if !is_known(adapter_id) {
        return vec![ConfigProblem::new(
            "/adapter_id",
            format!(
                "adapter_id {adapter_id:?} is not an adapter this runtime has; it has {}.",
                KNOWN.join(", ")
            ),
        )];
    }
    let mut problems = Vec::new();
    if let Some(v) = config.get("baseUrl") {
        match v.as_str().map(reqwest::Url::parse) {
            Some(Ok(url)) if matches!(url.scheme(), "http" | "https") => {}
            _ => problems.push(ConfigProblem::new(
                "/adapter_config/baseUrl",
                "adapter_config.baseUrl must be an http or https URL.",
            )),
        }
    }
    problems
}

/// A client for the registration. Errors are [`ModelError::Config`] naming the setting.
pub fn connect(c: &Connection<'_>) -> Result<Arc<dyn ModelProvider>, ModelError> {
    if let Some(p) = check(c.adapter_id, c.config).into_iter().next() {
        return Err(ModelError::Config(format!("{}: {}", p.path, p.message)));
    }
    match c.adapter_id {
        OPENAI_COMPAT => {
            let base = c
                .config
                .get("baseUrl")
                .and_then(Value::as_str)
                .unwrap_or(super::openai::DEFAULT_BASE_URL);
            let client = super::openai::OpenAiCompatProvider::new(
                base,
                c.api_key.clone(),
                c.model.to_owned(),
            )?;
            Ok(Arc::new(client))
        }
        other => Err(ModelError::Config(format!(
            "the adapter {other} is known but not connected yet"
        ))),
    }
}
