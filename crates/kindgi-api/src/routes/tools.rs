//! `/v1/tools`: register, list, read, unregister and reinstate tool versions (tool.md §11,
//! platform-api.md §5). Items are rendered as `OA:Tool` / `OA:ToolVersionRow`: the
//! manifest's properties the schema has, in its order, plus `projectId` and, on a tombstoned
//! version, `unregisteredAt` (RFC 3339). Registering checks the manifest (every problem at
//! once), then refuses `metadata` keys under `kindgi.` (the runtime's own) and a model
//! provider's key named as a tool secret (`400 provider-key-refused`).

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_spec::tool_id::{ToolId, Version};
use kindgi_spec::validate::{ManifestCheck, validate_manifest};
use kindgi_tools::engine::ToolSchemaEngine;
use kindgi_tools::registry::{ListQuery, RegisterOptions, ToolRecord};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::auth::Caller;
use crate::cpu;
use crate::error::ApiError;
use crate::idempotency::{AnswerRecorded, IdempotencyContext};
use crate::json_body::JsonBody;
use crate::key_project::KeyProject;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::query::QueryString;
use crate::routes::key_holder::KeyHolder;
use crate::routes::registry::{self, Writable};
use crate::routes::secret_binding;
use crate::state::AppState;
use bytes::Bytes;

/// The properties of `OA:Tool` (and `OA:ToolVersionRow`), in order.
const WIRE_KEYS: &[&str] = &[
    "id",
    "projectId",
    "description",
    "version",
    "input",
    "output",
    "needs",
    "effects",
    "transport",
    "mcpEndpoint",
    "metadata",
    "mutating",
    "needsApprovalWhenUnattended",
    "sandbox",
    "limits",
    "network",
    "needsSpec",
    "codeArtifactRef",
    "spec",
    "unregisteredAt",
    "secretScopes",
];

/// The tool routes, to be merged into the `/v1` router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/tools", post(register).get(list))
        .route("/v1/tools/{tool_id}", get(get_latest))
        .route("/v1/tools/{tool_id}/versions", get(list_versions))
        .route("/v1/tools/{tool_id}/versions/{version}", get(get_version))
        .route(
            "/v1/tools/{tool_id}/versions/{version}/unregister",
            post(unregister),
        )
        .route(
            "/v1/tools/{tool_id}/versions/{version}/reinstate",
            post(reinstate),
        )
}

fn json_text(status: StatusCode, text: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(text),
    )
        .into_response()
}

/// The wire item of a stored version.
fn wire(record: &ToolRecord) -> Result<Value, ApiError> {
    let manifest: Value =
        serde_json::from_str(&record.manifest_json).map_err(|e| ApiError::internal(&e))?;
    let mut out = Map::new();
    for &key in WIRE_KEYS {
        let value = match key {
            // Only a real project id (rows from before projects hold `default`).
            "projectId" => uuid::Uuid::parse_str(&record.project_id)
                .is_ok()
                .then(|| Value::String(record.project_id.clone())),
            "unregisteredAt" => record
                .unregistered_at
                .map(|at| Value::String(registry::rfc3339(at))),
            _ => manifest.get(key).cloned(),
        };
        if let Some(v) = value {
            out.insert(key.to_owned(), v);
        }
    }
    Ok(Value::Object(out))
}

fn path_error(e: PathRejection) -> ApiError {
    ApiError::bad_input(format!("The path is not valid: {e}"))
}

/// Check a `toolId` path segment (already percent-decoded): a pack tool id.
fn check_tool_id(id: &str) -> Result<(), ApiError> {
    ToolId::parse(id).map(drop).map_err(|e| {
        ApiError::bad_input(format!(
            "`toolId` {:?} is not a valid tool id: {e}",
            truncate(id)
        ))
        .with_details(json!({ "toolId": truncate(id) }))
    })
}

/// Check a `version` path segment: an exact `X.Y.Z`.
fn check_version(version: &str) -> Result<(), ApiError> {
    Version::parse(version).map(drop).map_err(|e| {
        ApiError::bad_input(format!(
            "`version` {:?} is not an exact version (X.Y.Z): {e}",
            truncate(version)
        ))
        .with_details(json!({ "version": truncate(version) }))
    })
}

/// Echo at most 200 characters of client input in messages.
fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

/// The list cursor (the last id) and the versions cursor (the last version).
#[derive(Debug, Serialize, Deserialize)]
struct After {
    after: String,
}

/// An unregister/reinstate failure: an unknown version is `No tool "…" at version "…" to <verb>`.
fn lifecycle_error(
    e: kindgi_tools::registry::RegistryError,
    tool_id: &str,
    version: &str,
    verb: &str,
) -> ApiError {
    use kindgi_tools::registry::RegistryError as E;
    match e {
        E::ToolNotFound { .. } | E::VersionNotFound { .. } => ApiError::new(
            StatusCode::NOT_FOUND,
            "tool-not-found",
            format!("No tool \"{tool_id}\" at version \"{version}\" to {verb}"),
        )
        .with_details(json!({"toolId": tool_id, "version": version})),
        e => ApiError::from_registry(e, Some(version)),
    }
}

/// `validation-failed` for `metadata` keys under `kindgi.`.
fn reserved_metadata(manifest: &Map<String, Value>) -> Result<(), ApiError> {
    let message = |key: &str| {
        format!(
            "metadata \"{key}\": keys under \"kindgi.\" are the runtime's own; a published tool can't set them"
        )
    };
    let reserved: Vec<&String> = manifest
        .get("metadata")
        .and_then(Value::as_object)
        .map(|m| m.keys().filter(|k| k.starts_with("kindgi.")).collect())
        .unwrap_or_default();
    match reserved.first() {
        None => Ok(()),
        Some(first) => {
            Err(
                ApiError::new(StatusCode::BAD_REQUEST, "validation-failed", message(first))
                    .with_details(json!({"issues": reserved
            .iter()
            .map(|k| json!({"path": format!("/metadata/{k}"), "message": message(k)}))
            .collect::<Vec<_>>()})),
            )
        }
    }
}

async fn register(
    State(state): State<AppState>,
    caller: KeyHolder,
    _writable: Writable,
    idempotency: Option<IdempotencyContext>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|_| ApiError::bad_input("Request body must be valid JSON"))?;
    let Value::Object(mut object) = value else {
        return Err(ApiError::bad_input("Request body must be an object"));
    };
    let project_id = match object.remove("projectId") {
        Some(Value::String(p)) if !p.is_empty() => p,
        _ => {
            return Err(ApiError::bad_input("`projectId` is required")
                .with_details(json!({"field": "projectId"})));
        }
    };
    let tenant = caller.tenant.clone();
    let project_id = <crate::projects::Projects as axum::extract::FromRef<_>>::from_ref(&state)
        .check(&tenant, Some(&project_id))
        .await?;
    let checked = object.clone();
    // Validation compiles the input/output schemas: CPU work, off the async workers.
    let raw = Value::Object(object);
    let manifest = cpu::run(move || {
        validate_manifest(&raw, &ManifestCheck::default(), &ToolSchemaEngine::new())
    })
    .await?
    .map_err(|problems| {
        let first = problems
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        let more = if problems.len() > 1 {
            format!(" (and {} more)", problems.len() - 1)
        } else {
            String::new()
        };
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "validation-failed",
            format!("Tool manifest is not valid: {first}{more}"),
        )
        .with_details(json!({ "issues": problems }))
    })?;
    reserved_metadata(&checked)?;
    super::providers_keys::refuse(
        &state,
        &caller.tenant,
        &secret_binding::tool_secrets(&checked),
        &super::providers_keys::never_given("a tool"),
    )
    .await?;
    secret_binding::require(
        &caller,
        &secret_binding::tool_secrets(&checked),
        &format!("tool {}", manifest.id.as_str()),
    )?;
    let options = RegisterOptions {
        project_id: Some(project_id),
        retired: false,
    };
    let answer = json!({ "toolId": manifest.id.as_str() }).to_string();
    // With an Idempotency-Key on the persistent registry, the answer commits with the version.
    if let (Some(context), Some(store)) = (idempotency, &state.store_registry) {
        let recorded = store
            .register_answered(
                &tenant,
                &manifest,
                options,
                &context.answer(StatusCode::CREATED, &answer),
            )
            .await
            .map_err(|e| ApiError::from_registry(e, None))?;
        let mark = match recorded {
            Some(_) => AnswerRecorded::Recorded,
            None => AnswerRecorded::KeyTaken,
        };
        let mut response = json_text(StatusCode::CREATED, answer);
        response.extensions_mut().insert(mark);
        return Ok(response);
    }
    state
        .registry
        .register(&tenant, &manifest, options)
        .await
        .map_err(|e| ApiError::from_registry(e, None))?;
    Ok(json_text(StatusCode::CREATED, answer))
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let tenant = caller.tenant.clone();
    let q = QueryString::clipped(query.as_deref());
    crate::routes::scope::check(&q)?;
    let limit = clamp_limit(q.first("limit"));
    let after: Option<After> = decode_cursor(q.first("cursor"))?;
    let list = ListQuery {
        limit,
        after: after.map(|a| a.after),
        name: q.non_empty("name").map(str::to_owned),
    };
    let include_retired = q.flag("includeRetired");
    let mut page_found = match &state.store_registry {
        Some(store) => store.list_with(&tenant, list, include_retired).await,
        None => state.registry.list(&tenant, list).await,
    }
    .map_err(|e| ApiError::from_registry(e, None))?;
    // A key limited to a project lists that project's tools (see [`registry`]).
    page_found.items.retain(|r| caller.reaches(tool_project(r)));
    let next = page_found
        .has_more
        .then(|| {
            page_found.items.last().map(|r| {
                encode_cursor(&After {
                    after: r.tool_id.clone(),
                })
            })
        })
        .flatten();
    let data = page_found
        .items
        .iter()
        .map(wire)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(page(data, next, Map::new())).into_response())
}

async fn get_latest(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    let Path(tool_id) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    let tenant = &caller.tenant;
    registry::check_project_query(&state, tenant, q.as_deref()).await?;
    let record = state
        .registry
        .get(tenant, &tool_id)
        .await
        .map_err(|e| ApiError::from_registry(e, None))?;
    caller.check_reaches(
        tool_project(&record),
        "read",
        &format!("tool:{}", record.tool_id),
    )?;
    Ok(Json(wire(&record)?).into_response())
}

/// For a key limited to a project: `403 permission-denied` naming `tool:<id>` when version
/// `version` of `tool_id` is of another project (every version of an id lives in its first
/// project). An unknown version is left to the route's `404`.
async fn check_version_reaches(
    state: &AppState,
    caller: &Caller,
    tool_id: &str,
    version: &str,
    action: &str,
) -> Result<(), ApiError> {
    if caller.project_id.is_none() {
        return Ok(());
    }
    match state
        .registry
        .get_version(&caller.tenant, tool_id, version)
        .await
    {
        Ok(record) => caller.check_reaches(
            tool_project(&record),
            action,
            &format!("tool:{}", record.tool_id),
        ),
        Err(_) => Ok(()),
    }
}

/// A tool's project: `None` (the Default project) for rows from before projects, which
/// hold `default`.
fn tool_project(record: &ToolRecord) -> Option<&str> {
    uuid::Uuid::parse_str(&record.project_id)
        .is_ok()
        .then_some(record.project_id.as_str())
}

async fn list_versions(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let tenant = caller.tenant.clone();
    let Path(tool_id) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    let q = QueryString::clipped(query.as_deref());
    let limit = clamp_limit(q.first("limit"));
    let after: Option<After> = decode_cursor(q.first("cursor"))?;
    let after = after.map(|a| a.after);
    let include = q.flag("includeTombstoned");
    let mut versions = state
        .registry
        .versions(&tenant, &tool_id, include)
        .await
        .map_err(|e| ApiError::from_registry(e, None))?;
    if let Some(v) = versions.first() {
        check_version_reaches(&state, &caller, &tool_id, &v.version, "read").await?;
    }
    // The registry answers newest first; the wire pages semver ascending.
    versions.reverse();
    let start = match &after {
        Some(a) => versions
            .iter()
            .position(|v| &v.version == a)
            .map(|i| i + 1)
            .ok_or_else(|| ApiError::bad_input("`cursor` is malformed"))?,
        None => 0,
    };
    let window: Vec<_> = versions.iter().skip(start).take(limit + 1).collect();
    let has_more = window.len() > limit;
    let mut records = Vec::with_capacity(limit);
    for v in window.into_iter().take(limit) {
        records.push(
            state
                .registry
                .get_version(&tenant, &tool_id, &v.version)
                .await
                .map_err(|e| ApiError::from_registry(e, None))?,
        );
    }
    let next = has_more
        .then(|| {
            records.last().map(|r| {
                encode_cursor(&After {
                    after: r.version.clone(),
                })
            })
        })
        .flatten();
    let data = records.iter().map(wire).collect::<Result<Vec<_>, _>>()?;
    Ok(Json(page(data, next, Map::new())).into_response())
}

async fn get_version(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let tenant = caller.tenant.clone();
    let Path((tool_id, version)) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    check_version(&version)?;
    // Before the cache: it holds bodies whoever read them.
    check_version_reaches(&state, &caller, &tool_id, &version, "read").await?;
    // Read before the record: a change committed after this moves the epoch on.
    let epoch = state.version_epoch();
    if let Some(e) = epoch
        && let Some(body) = state.version_bodies.get(e, &tenant, &tool_id, &version)
    {
        return Ok(json_bytes(body));
    }
    let record = state
        .registry
        .get_version(&tenant, &tool_id, &version)
        .await
        .map_err(|e| ApiError::from_registry(e, Some(&version)))?;
    let body =
        Bytes::from(serde_json::to_vec(&wire(&record)?).map_err(|e| ApiError::internal(&e))?);
    if let Some(e) = epoch {
        state
            .version_bodies
            .put(e, &tenant, &tool_id, &version, body.clone());
    }
    Ok(json_bytes(body))
}

/// A JSON body already rendered.
fn json_bytes(body: Bytes) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

async fn unregister(
    State(state): State<AppState>,
    caller: Caller,
    _writable: Writable,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let tenant = caller.tenant.clone();
    let Path((tool_id, version)) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    check_version(&version)?;
    check_version_reaches(&state, &caller, &tool_id, &version, "write").await?;
    state
        .registry
        .unregister(&tenant, &tool_id, &version)
        .await
        .map_err(|e| lifecycle_error(e, &tool_id, &version, "unregister"))?;
    Ok(
        Json(json!({ "toolId": tool_id, "version": version, "unregistered": true }))
            .into_response(),
    )
}

async fn reinstate(
    State(state): State<AppState>,
    caller: Caller,
    _writable: Writable,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let tenant = caller.tenant.clone();
    let Path((tool_id, version)) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    check_version(&version)?;
    check_version_reaches(&state, &caller, &tool_id, &version, "write").await?;
    let was = state
        .registry
        .reinstate(&tenant, &tool_id, &version)
        .await
        .map_err(|e| lifecycle_error(e, &tool_id, &version, "reinstate"))?;
    Ok(
        Json(json!({ "toolId": tool_id, "version": version, "wasTombstoned": was }))
            .into_response(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_found_in_needs_and_the_http_spec() {
        let m = json!({
            "needsSpec": {"secrets": {"A": {}}},
            "spec": {"authorization": {"secretRef": {"envName": "e", "name": "OPENAI_API_KEY"}}}
        });
        let m = m.as_object().cloned().unwrap_or_default();
        assert_eq!(
            secret_binding::tool_secrets(&m),
            vec!["A".to_owned(), "OPENAI_API_KEY".to_owned()]
        );
        assert_eq!(
            super::super::providers_keys::fixed_provider("OPENAI_API_KEY"),
            Some("openai")
        );
    }
}
