//! `/v1/tools`: register, list, read, unregister and reinstate tool versions (tool.md §11).
//! Stored manifests are sent as the JSON text the store holds, without re-encoding.

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use kindgi_spec::tool_id::{ToolId, Version};
use kindgi_spec::validate::{ManifestCheck, validate_manifest};
use kindgi_tools::engine::ToolSchemaEngine;
use kindgi_tools::registry::{ListQuery, RegisterOptions, ToolRecord};
use serde_json::{Value, json};

use crate::auth::Tenant;
use crate::cpu;
use crate::error::ApiError;
use crate::idempotency::{AnswerRecorded, IdempotencyContext};
use crate::json_body::JsonBody;
use crate::state::AppState;

/// Default and maximum page sizes.
pub const DEFAULT_LIMIT: usize = 25;
pub const MAX_LIMIT: usize = 100;

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

/// The value of query parameter `name` (percent-decoded), if present.
fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then(|| decode_query(v))
    })
}

fn decode_query(v: &str) -> String {
    let v = v.replace('+', " ");
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The reference's `clampLimit`: missing, non-numeric or < 1 → 25; capped at 100.
pub fn clamp_limit(raw: Option<&str>) -> usize {
    match raw.and_then(|s| s.trim().parse::<i64>().ok()) {
        Some(n) if n >= 1 => usize::try_from(n).unwrap_or(MAX_LIMIT).min(MAX_LIMIT),
        _ => DEFAULT_LIMIT,
    }
}

fn encode_cursor(key: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json!({ "after": key }).to_string())
}

fn decode_cursor(cursor: &str) -> Result<String, ApiError> {
    let malformed = || ApiError::bad_input("`cursor` is malformed");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| malformed())?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| malformed())?;
    value
        .get("after")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(malformed)
}

/// `{"data": [...], "hasMore": bool, "nextCursor"?: string}` from raw JSON items.
fn page_body<'a>(
    items: impl Iterator<Item = std::borrow::Cow<'a, str>>,
    has_more: bool,
    next: Option<String>,
) -> String {
    let mut body = String::from("{\"data\":[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&item);
    }
    body.push_str("],\"hasMore\":");
    body.push_str(if has_more { "true" } else { "false" });
    if let (true, Some(next)) = (has_more, next) {
        body.push_str(",\"nextCursor\":");
        body.push_str(&Value::String(next).to_string());
    }
    body.push('}');
    body
}

async fn register(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    idempotency: Option<Extension<IdempotencyContext>>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|_| ApiError::bad_input("Request body must be valid JSON"))?;
    let Value::Object(mut object) = value else {
        return Err(ApiError::bad_input("Request body must be an object"));
    };
    let project_id = match object.remove("projectId") {
        Some(Value::String(p)) if !p.trim().is_empty() => p,
        _ => return Err(ApiError::bad_input("`projectId` is required")),
    };
    if project_id.len() > 200 || project_id.chars().any(char::is_control) {
        return Err(ApiError::bad_input(
            "`projectId` must be at most 200 characters, without control characters",
        ));
    }
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
    let options = RegisterOptions {
        project_id: Some(project_id),
        retired: false,
    };
    let answer = json!({ "toolId": manifest.id.as_str(), "version": manifest.version }).to_string();
    // With an Idempotency-Key on the persistent registry, the answer commits with the version.
    if let (Some(Extension(context)), Some(store)) = (idempotency, &state.store_registry) {
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
    Tenant(tenant): Tenant,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let q = query.as_deref();
    let limit = clamp_limit(query_param(q, "limit").as_deref());
    let after = query_param(q, "cursor")
        .filter(|c| !c.is_empty())
        .map(|c| decode_cursor(&c))
        .transpose()?;
    let name = query_param(q, "name").filter(|n| !n.is_empty());
    let page = state
        .registry
        .list(&tenant, ListQuery { limit, after, name })
        .await
        .map_err(|e| ApiError::from_registry(e, None))?;
    let next = page.items.last().map(|r| encode_cursor(&r.tool_id));
    let body = page_body(
        page.items.iter().map(|r| r.manifest_json.as_str().into()),
        page.has_more,
        next,
    );
    Ok(json_text(StatusCode::OK, body))
}

async fn get_latest(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path(tool_id) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    let record = state
        .registry
        .get(&tenant, &tool_id)
        .await
        .map_err(|e| ApiError::from_registry(e, None))?;
    Ok(json_text(StatusCode::OK, record.manifest_json))
}

/// A manifest with `unregisteredAt` added when the version is tombstoned.
fn version_item(record: &ToolRecord) -> std::borrow::Cow<'_, str> {
    match record.unregistered_at {
        None => record.manifest_json.as_str().into(),
        Some(at) => match serde_json::from_str::<Value>(&record.manifest_json) {
            Ok(Value::Object(mut m)) => {
                m.insert("unregisteredAt".into(), json!(at));
                Value::Object(m).to_string().into()
            }
            _ => record.manifest_json.as_str().into(),
        },
    }
}

async fn list_versions(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let Path(tool_id) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    let q = query.as_deref();
    let limit = clamp_limit(query_param(q, "limit").as_deref());
    let after = query_param(q, "cursor")
        .filter(|c| !c.is_empty())
        .map(|c| decode_cursor(&c))
        .transpose()?;
    let include = query_param(q, "includeTombstoned").is_some_and(|v| v == "true");
    let versions = state
        .registry
        .versions(&tenant, &tool_id, include)
        .await
        .map_err(|e| ApiError::from_registry(e, None))?;
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
    let next = records.last().map(|r| encode_cursor(&r.version));
    Ok(json_text(
        StatusCode::OK,
        page_body(records.iter().map(version_item), has_more, next),
    ))
}

async fn get_version(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path((tool_id, version)) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    check_version(&version)?;
    let record = state
        .registry
        .get_version(&tenant, &tool_id, &version)
        .await
        .map_err(|e| ApiError::from_registry(e, Some(&version)))?;
    Ok(json_text(StatusCode::OK, record.manifest_json))
}

async fn unregister(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path((tool_id, version)) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    check_version(&version)?;
    state
        .registry
        .unregister(&tenant, &tool_id, &version)
        .await
        .map_err(|e| ApiError::from_registry(e, Some(&version)))?;
    Ok(
        Json(json!({ "toolId": tool_id, "version": version, "unregistered": true }))
            .into_response(),
    )
}

async fn reinstate(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path((tool_id, version)) = path.map_err(path_error)?;
    check_tool_id(&tool_id)?;
    check_version(&version)?;
    let was = state
        .registry
        .reinstate(&tenant, &tool_id, &version)
        .await
        .map_err(|e| ApiError::from_registry(e, Some(&version)))?;
    Ok(
        Json(json!({ "toolId": tool_id, "version": version, "wasTombstoned": was }))
            .into_response(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_clamp_like_the_reference() {
        assert_eq!(clamp_limit(None), 25);
        assert_eq!(clamp_limit(Some("abc")), 25);
        assert_eq!(clamp_limit(Some("0")), 25);
        assert_eq!(clamp_limit(Some("-5")), 25);
        assert_eq!(clamp_limit(Some("500")), 100);
        assert_eq!(clamp_limit(Some("7")), 7);
    }

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        assert_eq!(decode_cursor(&encode_cursor("acme.x")).unwrap(), "acme.x");
        assert!(decode_cursor("!!!").is_err());
        assert!(decode_cursor("e30").is_err()); // "{}"
    }

    #[test]
    fn query_params_decode() {
        assert_eq!(
            query_param(Some("a=1&name=acme%2Ex+y"), "name").as_deref(),
            Some("acme.x y")
        );
        assert_eq!(query_param(Some("a=1"), "name"), None);
        assert_eq!(query_param(Some("name=%"), "name").as_deref(), Some("%"));
    }
}
