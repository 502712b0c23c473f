//! Model adapters: the official adapter ids a provider registration names
//! (`RegisterProviderBody.adapter_id`), what each takes in `adapter_config`, and how a
//! registration becomes a [`ModelProvider`].
//!
//! This is the one seam between provider registrations (`/v1/providers`, the tenant's
//! records) and the wire clients in this module: the API checks a registration with
//! [`check`], and the model router builds a client with [`connect`] once it has resolved
//! the registration's `secret_ref` to a key. Neither knows a wire format.
//!
//! `adapter_config` keys (all optional; docs/model-adapters.md): `baseUrl` (every adapter),
//! `api` (`responses` | `chat-completions`, openai-compat only; absent → `responses` for
//! `api.openai.com`, else `chat-completions`), `maxRetries` (0–10, default 2: tries =
//! `maxRetries + 1`).

use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

use super::wire::Endpoint;
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
    /// The registration's `send_traceparent`: each request's `traceparent` goes out as a
    /// header.
    pub send_traceparent: bool,
    /// `metadata.models[i].sampling` (absent: `true`). `false`: calls go without a
    /// `temperature` and say so ([`super::sampling`]).
    pub sampling: bool,
    /// Which addresses the client may reach (a tenant's base URL never reaches private
    /// addresses on a shared server unless the operator allows them).
    pub egress: kindgi_tools::egress::EgressPolicy,
}

/// `adapter_config.api` values of the openai-compat adapter.
pub const OPENAI_APIS: &[&str] = &["responses", "chat-completions"];
/// The largest `adapter_config.maxRetries`.
pub const MAX_RETRIES_LIMIT: u64 = 10;

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
    if adapter_id == OPENAI_COMPAT
        && let Some(v) = config.get("api")
        && !v.as_str().is_some_and(|a| OPENAI_APIS.contains(&a))
    {
        problems.push(ConfigProblem::new(
            "/adapter_config/api",
            format!(
                "adapter_config.api must be one of {}.",
                OPENAI_APIS.join(", ")
            ),
        ));
    }
    if let Some(v) = config.get("maxRetries")
        && v.as_u64().is_none_or(|n| n > MAX_RETRIES_LIMIT)
    {
        problems.push(ConfigProblem::new(
            "/adapter_config/maxRetries",
            format!("adapter_config.maxRetries must be an integer from 0 to {MAX_RETRIES_LIMIT}."),
        ));
    }
    problems
}

/// Which OpenAI API a registration speaks: `adapter_config.api`, else `responses` for
/// `api.openai.com` hosts and `chat-completions` for every other server (the reference's
/// rule).
pub fn openai_api(config: &Map<String, Value>, base_url: &str) -> &'static str {
    match config.get("api").and_then(Value::as_str) {
        Some("responses") => "responses",
        Some("chat-completions") => "chat-completions",
        _ => {
            let host = reqwest::Url::parse(base_url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
            match host.as_deref() {
                Some(h) if h == "api.openai.com" || h.ends_with(".api.openai.com") => "responses",
                _ => "chat-completions",
            }
        }
    }
}

/// A client for the registration. Errors are [`ModelError::Config`] naming the setting.
pub fn connect(c: &Connection<'_>) -> Result<Arc<dyn ModelProvider>, ModelError> {
    if let Some(p) = check(c.adapter_id, c.config).into_iter().next() {
        return Err(ModelError::Config(format!("{}: {}", p.path, p.message)));
    }
    let default_base = match c.adapter_id {
        OPENAI_COMPAT => super::openai::DEFAULT_BASE_URL,
        ANTHROPIC => super::anthropic::DEFAULT_BASE_URL,
        GEMINI => super::gemini::DEFAULT_BASE_URL,
        other => {
            return Err(ModelError::Config(format!(
                "the adapter {other} is known but not connected yet"
            )));
        }
    };
    let base = c
        .config
        .get("baseUrl")
        .and_then(Value::as_str)
        .unwrap_or(default_base);
    let attempts = c
        .config
        .get("maxRetries")
        .and_then(Value::as_u64)
        .map_or(super::retry::DEFAULT_ATTEMPTS, |n| n as u32 + 1);
    let endpoint = Endpoint::new(
        c.provider_id,
        c.model,
        base,
        c.api_key.clone(),
        c.egress.clone(),
    )?
    .with_retries(attempts, super::retry::DEFAULT_BASE)
    .with_max_output_tokens(c.max_output_tokens)
    .with_send_traceparent(c.send_traceparent);
    let client: Arc<dyn ModelProvider> = match c.adapter_id {
        ANTHROPIC => Arc::new(super::anthropic::AnthropicProvider::new(endpoint)),
        GEMINI => Arc::new(super::gemini::GeminiProvider::new(endpoint)),
        _ if openai_api(c.config, base) == "responses" => {
            Arc::new(super::responses::ResponsesProvider::new(endpoint))
        }
        _ => Arc::new(
            super::openai::OpenAiCompatProvider::new(base, c.api_key.clone(), c.model.to_owned())?
                .with_provider_id(c.provider_id)
                .with_egress(c.egress.clone())?
                .with_retries(attempts, super::retry::DEFAULT_BASE)
                .with_max_output_tokens(c.max_output_tokens)
                .with_send_traceparent(c.send_traceparent),
        ),
    };
    Ok(if c.sampling {
        client
    } else {
        Arc::new(super::sampling::WithoutSampling(client))
    })
}
