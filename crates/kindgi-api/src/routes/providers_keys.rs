//! A model provider's key is used by its provider only (`providers.register`): a
//! registration whose `secret_ref` names a secret that a tool (its current version), an MCP
//! endpoint or a webhook trigger already uses is refused `409 provider-key-in-use`, with
//! `details.usedBy` listing each (`kind`, `id`, a tool's `version`); and from then on that
//! name is refused to tools, MCP endpoints and webhook triggers (`400 provider-key-refused`,
//! as the fixed provider key names are).
//!
//! Names match without their env: tools and endpoints name a secret by name alone, and a
//! provider key under another env is still the same credential's name.

use axum::http::StatusCode;
use kindgi_core::ports::{ProviderRegistry, WebhookQuery, WebhookStore};
use kindgi_store::mcp_endpoints::{McpEndpointFilter, McpEndpointStore};
use kindgi_store::providers::ProviderStore;
use kindgi_store::webhooks::WebhookTriggerStore;
use kindgi_tools::registry::ListQuery;
use serde_json::{Map, Value, json};

use super::secret_binding;
use crate::error::ApiError;
use crate::state::AppState;

/// Secret names that are a model provider's key whatever is registered (the host's own model
/// keys), with the provider.
pub const PROVIDER_KEYS: &[(&str, &str)] = &[
    ("KINDGI_MODEL_API_KEY", "kindgi-model"),
    ("OPENAI_API_KEY", "openai"),
    ("ANTHROPIC_API_KEY", "anthropic"),
];

/// Rows read per page while looking for a secret's users.
const PAGE: usize = 100;

fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::internal(&e)
}

/// What uses the secret `name` in `tenant`: `{kind: "tool", id, version}` for a tool whose
/// latest active version names it, `{kind: "mcp-endpoint", id}`, `{kind: "webhook-trigger",
/// id}`; in that order, each by id.
pub async fn users(state: &AppState, tenant: &str, name: &str) -> Result<Vec<Value>, ApiError> {
    let mut used = tool_users(state, tenant, name).await?;
    used.extend(mcp_users(state, tenant, name).await?);
    used.extend(trigger_users(state, tenant, name).await?);
    Ok(used)
}

async fn tool_users(state: &AppState, tenant: &str, name: &str) -> Result<Vec<Value>, ApiError> {
    let mut used = Vec::new();
    let mut after = None;
    loop {
        let page = state
            .registry
            .list(
                tenant,
                ListQuery {
                    limit: PAGE,
                    after: after.clone(),
                    name: None,
                },
            )
            .await
            .map_err(internal)?;
        for t in &page.items {
            let manifest: Map<String, Value> =
                serde_json::from_str(&t.manifest_json).unwrap_or_default();
            if secret_binding::tool_secrets(&manifest)
                .iter()
                .any(|s| s == name)
            {
                used.push(json!({"kind": "tool", "id": t.tool_id, "version": t.version}));
            }
        }
        after = page.items.last().map(|t| t.tool_id.clone());
        if !page.has_more || after.is_none() {
            return Ok(used);
        }
    }
}

async fn mcp_users(state: &AppState, tenant: &str, name: &str) -> Result<Vec<Value>, ApiError> {
    let store = McpEndpointStore::new(state.db.clone());
    let mut used = Vec::new();
    let mut after = None;
    loop {
        let filter = McpEndpointFilter {
            after: after.clone(),
            limit: PAGE,
            ..McpEndpointFilter::default()
        };
        let page = store.list(tenant, &filter).await.map_err(internal)?;
        for e in &page {
            let mut names = Vec::new();
            secret_binding::secret_refs(&e.body, &mut names);
            if names.iter().any(|s| s == name) {
                used.push(json!({"kind": "mcp-endpoint", "id": e.endpoint_id}));
            }
        }
        if page.len() < PAGE {
            return Ok(used);
        }
        after = page.last().map(|e| e.endpoint_id.clone());
    }
}

async fn trigger_users(state: &AppState, tenant: &str, name: &str) -> Result<Vec<Value>, ApiError> {
    let triggers = WebhookTriggerStore::new(state.db.clone());
    let mut used = Vec::new();
    let mut before = None;
    loop {
        let page = triggers
            .triggers(&WebhookQuery {
                tenant: tenant.to_owned(),
                status: None,
                project_id: None,
                before: before.clone(),
                limit: PAGE,
            })
            .await
            .map_err(internal)?;
        for t in &page {
            if t.hmac_secret_name == name {
                used.push(json!({"kind": "webhook-trigger", "id": t.trigger_id}));
            }
        }
        if page.len() < PAGE {
            used.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
            return Ok(used);
        }
        before = page.last().map(|t| (t.created_at, t.trigger_id.clone()));
    }
}

/// `409 provider-key-in-use` for registering `provider_id` with the secret `name`.
pub fn in_use(provider_id: &str, name: &str, used_by: Vec<Value>) -> ApiError {
    let first = used_by
        .first()
        .map(|u| {
            let kind = match u["kind"].as_str() {
                Some("mcp-endpoint") => "MCP endpoint",
                Some("webhook-trigger") => "webhook trigger",
                _ => "tool",
            };
            format!("{kind} \"{}\"", u["id"].as_str().unwrap_or_default())
        })
        .unwrap_or_default();
    let more = match used_by.len() {
        0 | 1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    ApiError::new(
        StatusCode::CONFLICT,
        "provider-key-in-use",
        format!(
            "The secret \"{name}\" is used by {first}{more}: a model provider's key is used by its provider only. Store the provider's key under its own name (the same value is fine) and name that in secret_ref"
        ),
    )
    .with_details(json!({"providerId": provider_id, "secret": name, "usedBy": used_by}))
}

/// The first of `names` that a registered model provider of `tenant` uses as its key, with
/// that provider's id.
pub async fn provider_key(
    state: &AppState,
    tenant: &str,
    names: &[String],
) -> Result<Option<(String, String)>, ApiError> {
    if names.is_empty() {
        return Ok(None);
    }
    let store = ProviderStore::new(state.db.clone());
    let mut after: Option<String> = None;
    loop {
        let page = store
            .providers(tenant, after.as_deref(), PAGE)
            .await
            .map_err(internal)?;
        for p in &page {
            if let Some(s) = &p.secret_ref
                && names.contains(&s.name)
            {
                return Ok(Some((s.name.clone(), p.id.clone())));
            }
        }
        if page.len() < PAGE {
            return Ok(None);
        }
        after = page.last().map(|p| p.id.clone());
    }
}

/// What a tool or an MCP endpoint is told when it names a model provider's key (`what`: `a
/// tool`, `an MCP endpoint`).
pub fn never_given(what: &str) -> String {
    format!(
        "{what} never gets a model provider's key. If it needs to call a model itself, store the key under its own name (the same value is fine) and use that name"
    )
}

/// The provider whose key `name` is among the host's fixed model key names.
pub fn fixed_provider(name: &str) -> Option<&'static str> {
    PROVIDER_KEYS
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, provider)| *provider)
}

/// `400 provider-key-refused` (`details {secret, providerId}`): ``\`<name>\` is the key of
/// model provider "<id>": <rule>``.
pub fn refused(name: &str, provider: &str, rule: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "provider-key-refused",
        format!("`{name}` is the key of model provider \"{provider}\": {rule}"),
    )
    .with_details(json!({"secret": name, "providerId": provider}))
}

/// `Err(400 provider-key-refused)` when one of `names` is a model provider's key: one of the
/// host's fixed names, or a registered provider's. The one check of tools
/// (`needsSpec.secrets`, `secretRef`s), MCP endpoints and webhook triggers (`hmacSecretName`).
pub async fn refuse(
    state: &AppState,
    tenant: &str,
    names: &[String],
    rule: &str,
) -> Result<(), ApiError> {
    for name in names {
        if let Some(provider) = fixed_provider(name) {
            return Err(refused(name, provider, rule));
        }
    }
    match provider_key(state, tenant, names).await? {
        Some((name, provider)) => Err(refused(&name, &provider, rule)),
        None => Ok(()),
    }
}
