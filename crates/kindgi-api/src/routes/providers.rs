//! `/v1/providers` (operationIds `providers.*`): a tenant's model providers — register
//! (checked by [`providers_validate`](super::providers_validate)), list (paged, `?feature=`),
//! get, check, capabilities and unregister (a tombstone). A registration's key is never
//! stored nor answered: only the name of the tenant secret it resolves from (`secret_ref`),
//! which must exist when the provider is registered. Binding that secret needs a tenant
//! admin or `secrets:use`, as a tool's or an MCP endpoint's does
//! ([`secret_binding`](super::secret_binding)); a secret a tool, an MCP endpoint or a
//! webhook trigger already uses is refused (`409 provider-key-in-use`,
//! [`providers_keys`](super::providers_keys)).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_core::ports::{ProviderRegistration, ProviderRegistry, ProviderWrite, SecretRef};
use kindgi_runtime::model::adapters::{self, ConfigProblem};
use kindgi_store::providers::ProviderStore;
use kindgi_store::values::{ValueKey, ValueScope};
use serde_json::{Map, Value, json};

use super::providers_keys;
use super::providers_validate::{self as validate, Registration};
use super::secret_binding;
use super::values;
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::default_project_id;
use crate::query::QueryString;
use crate::routes::key_holder::KeyHolder;
use crate::state::AppState;

/// The provider routes, to be merged into the `/v1` router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/providers", post(register).get(list))
        .route("/v1/providers/{provider_id}", get(get_one))
        .route("/v1/providers/{provider_id}/check", get(check))
        .route(
            "/v1/providers/{provider_id}/capabilities",
            get(capabilities),
        )
        .route("/v1/providers/{provider_id}/unregister", post(unregister))
}

fn store(state: &AppState) -> ProviderStore {
    ProviderStore::new(state.db.clone())
}

fn echo(s: &str) -> String {
    s.chars().take(200).collect()
}

fn storage(e: kindgi_core::StorageError) -> ApiError {
    ApiError::internal(&e)
}

/// `404 provider-not-found`.
fn not_found(provider_id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "provider-not-found",
        format!(
            "No model provider with id \"{}\" in this tenant",
            echo(provider_id)
        ),
    )
    .with_details(json!({ "providerId": echo(provider_id) }))
}

async fn find(state: &AppState, tenant: &str, id: &str) -> Result<ProviderRegistration, ApiError> {
    store(state)
        .provider(tenant, id)
        .await
        .map_err(storage)?
        .ok_or_else(|| not_found(id))
}

/// The problem with `secret_ref` when the tenant has no such secret (in its Default
/// project or at the tenant), or it is revoked.
async fn secret_problem(
    state: &AppState,
    tenant: &str,
    secret: &SecretRef,
) -> Result<Option<ConfigProblem>, ApiError> {
    let values = values::store_for(&state.db, &state.values);
    for scope in [
        ValueScope::Project(default_project_id(tenant)),
        ValueScope::Tenant,
    ] {
        let key = ValueKey {
            tenant: tenant.to_owned(),
            scope,
            env_name: secret.env_name.clone(),
            name: secret.name.clone(),
        };
        let found = values
            .secret_get(&key)
            .await
            .map_err(|e| ApiError::internal(&e))?;
        if found.is_some_and(|s| s.revoked_at.is_none()) {
            return Ok(None);
        }
    }
    Ok(Some(ConfigProblem::new(
        "/secret_ref",
        format!(
            "secret_ref names the secret \"{}\" in env \"{}\", which this tenant doesn't have; set it first (`kindgi secrets set {} --scope=tenant --env={}`).",
            echo(&secret.name),
            echo(&secret.env_name),
            echo(&secret.name),
            echo(&secret.env_name)
        ),
    )))
}

async fn register(
    State(state): State<AppState>,
    caller: KeyHolder,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|_| ApiError::bad_input("Request body must be valid JSON"))?;
    let Value::Object(object) = value else {
        return Err(ApiError::bad_input("Request body must be an object"));
    };
    let r: Registration = validate::validate(&object)?;
    let tenant = caller.tenant.clone();
    if let Some(s) = &r.secret_ref {
        secret_binding::require(
            &caller,
            std::slice::from_ref(&s.name),
            &format!("model provider {}", echo(&r.id)),
        )?;
    }
    let mut issues = validate::problems(&r);
    if let Some(s) = &r.secret_ref
        && let Some(p) = secret_problem(&state, &tenant, s).await?
    {
        issues.insert(0, p);
    }
    if !issues.is_empty() {
        return Err(validate::config_invalid(&r.id, &r.adapter_id, &issues));
    }
    // A provider's key is its own: not a secret a tool or an endpoint already sends.
    if let Some(s) = &r.secret_ref {
        let used_by = providers_keys::users(&state, &tenant, &s.name).await?;
        if !used_by.is_empty() {
            return Err(providers_keys::in_use(&echo(&r.id), &s.name, used_by));
        }
    }
    let registration = ProviderRegistration {
        tenant,
        id: r.id.clone(),
        adapter_id: r.adapter_id,
        metadata: r.metadata,
        secret_ref: r.secret_ref,
        adapter_config: r.adapter_config,
        send_traceparent: r.send_traceparent,
        created_at: kindgi_store::now_millis(),
        unregistered_at: None,
    };
    let outcome = store(&state)
        .register(&registration)
        .await
        .map_err(storage)?;
    if outcome == ProviderWrite::AlreadyRegistered {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "provider-already-registered",
            format!(
                "Model provider \"{}\" is already registered; unregister it first to register it again",
                echo(&r.id)
            ),
        )
        .with_details(json!({ "providerId": echo(&r.id) })));
    }
    Ok((StatusCode::CREATED, Json(json!({ "providerId": r.id }))).into_response())
}

/// Whether any of `r`'s models (or its `metadata.features`) has `feature`.
fn has_feature(r: &ProviderRegistration, feature: &str) -> bool {
    let listed = |v: Option<&Value>| {
        v.and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|f| f.as_str() == Some(feature)))
    };
    listed(r.metadata.get("features")) || r.models().iter().any(|m| listed(m.get("features")))
}

async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let q = QueryString::parse(query.as_deref());
    let limit = clamp_limit(q.last("limit"));
    let feature = q.last("feature").filter(|f| !f.is_empty());
    let cursor: Option<Value> = decode_cursor(q.last("cursor"))?;
    let mut after = match cursor {
        None => None,
        Some(v) => Some(
            v.get("id")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ApiError::bad_input("`cursor` is malformed"))?,
        ),
    };
    let store = store(&state);
    let mut rows: Vec<ProviderRegistration> = Vec::new();
    // A filtered page reads on until it is full or the registry ends.
    loop {
        let batch = store
            .providers(&tenant, after.as_deref(), limit + 1)
            .await
            .map_err(storage)?;
        let done = batch.len() <= limit;
        after = batch.last().map(|r| r.id.clone());
        rows.extend(
            batch
                .into_iter()
                .filter(|r| feature.is_none_or(|f| has_feature(r, f))),
        );
        if done || rows.len() > limit {
            break;
        }
    }
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more
        .then(|| rows.last().map(|r| encode_cursor(&json!({ "id": r.id }))))
        .flatten();
    let data = rows.into_iter().map(|r| r.metadata).collect();
    Ok(Json(page(data, next, Map::new())).into_response())
}

async fn get_one(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(provider_id): Path<String>,
) -> Result<Response, ApiError> {
    let r = find(&state, &tenant, &provider_id).await?;
    Ok(Json(r.metadata).into_response())
}

async fn check(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(provider_id): Path<String>,
) -> Result<Response, ApiError> {
    let r = find(&state, &tenant, &provider_id).await?;
    let issues = adapters::check(&r.adapter_id, &r.adapter_config);
    let mut body = json!({
        "providerId": r.id,
        "adapterId": r.adapter_id,
        "checked": true,
        "issues": issues,
    });
    if let (Some(s), Value::Object(m)) = (&r.secret_ref, &mut body) {
        m.insert("secretRef".into(), json!(s));
    }
    Ok(Json(body).into_response())
}

/// Words for each built-in feature.
fn feature_description(feature: &str) -> &'static str {
    match feature {
        "structured-output" => "Answers in a given JSON Schema.",
        "vision" => "Takes images as input.",
        "audio-input" => "Takes audio as input.",
        "audio-output" => "Answers with audio.",
        "tool-use" => "Calls tools.",
        "parallel-tool-use" => "Calls several tools in one answer.",
        "thinking" => "Thinks before it answers.",
        "long-context" => "Takes long inputs.",
        "code-execution" => "Runs code it writes.",
        "web-search" => "Searches the web.",
        "file-search" => "Searches files given to it.",
        "streaming" => "Streams its answer.",
        "batch" => "Takes batched requests.",
        _ => "A feature the deployment declares.",
    }
}

async fn capabilities(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(provider_id): Path<String>,
) -> Result<Response, ApiError> {
    let r = find(&state, &tenant, &provider_id).await?;
    let kind = r
        .metadata
        .get("capabilityKind")
        .and_then(Value::as_str)
        .unwrap_or("llm-inference")
        .to_owned();
    let mut features: Vec<(String, Vec<String>)> = Vec::new();
    for m in r.models() {
        let Some(name) = m.get("name").and_then(Value::as_str) else {
            continue;
        };
        for f in m
            .get("features")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            match features.iter_mut().find(|(have, _)| have == f) {
                Some((_, models)) => models.push(name.to_owned()),
                None => features.push((f.to_owned(), vec![name.to_owned()])),
            }
        }
    }
    let data: Vec<Value> = features
        .into_iter()
        .map(|(f, models)| {
            json!({
                "id": format!("feature:{f}"),
                "feature": f,
                "description": feature_description(&f),
                "kind": kind,
                "providers": [{"providerId": r.id, "models": models}],
            })
        })
        .collect();
    Ok(Json(json!({ "data": data })).into_response())
}

async fn unregister(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(provider_id): Path<String>,
) -> Result<Response, ApiError> {
    let done = store(&state)
        .unregister(&tenant, &provider_id, kindgi_store::now_millis())
        .await
        .map_err(storage)?;
    if !done {
        return Err(not_found(&provider_id));
    }
    Ok(Json(json!({ "providerId": provider_id, "unregistered": true })).into_response())
}
