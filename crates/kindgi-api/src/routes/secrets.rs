//! `/v1/secrets`: versioned secrets per tenant, scope and env (platform-api.md §7, case 76).
//! A value crosses the wire only on write: every answer is metadata (`OA:SecretRecord`,
//! `OA:SecretVersionRecord` with `value: null`). Values are sealed at rest by
//! `kindgi_store::seal`; with no secrets key, writes answer `503 secret-provider-unavailable`
//! saying how to set one. Rotation is `501 secret-operation-unsupported`.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_store::seal::SecretValue;
use kindgi_store::values::{
    ListQuery, SecretRecord, SecretVersion, SecretWrite, ValueKey, ValuesError, WriteMode,
};
use serde_json::{Map, Value, json};

use super::values::{
    Params, Position, RawScope, Values, clip, cursor, env_name, key_problem, names_tenant,
    object_body, params, query_scope, revision_field, scope_json, tags, time,
};
use crate::error::ApiError;
use crate::page::{clamp_limit, encode_cursor, page};
use crate::state::AppState;

/// Names starting with this are the runtime's own (`400 reserved-name-prefix`).
pub const RESERVED_PREFIX: &str = "kindgi.";
/// The longest secret name.
pub const MAX_SECRET_NAME: usize = 255;

/// The secret routes, to merge into the `/v1` router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/secrets", get(list).post(set))
        .route("/v1/secrets/{name}", get(read).delete(revoke))
        .route("/v1/secrets/{name}/versions", get(versions))
        .route("/v1/secrets/{name}/versions/{version}", get(version))
        .route("/v1/secrets/{name}/rotate", post(rotate))
        .route("/v1/secrets/{name}/rotations/{rotation}", get(rotation))
        .route(
            "/v1/secrets/{name}/rotations/{rotation}/events",
            get(rotation),
        )
}

/// `OA:SecretRecord` (no value).
pub fn record_json(r: &SecretRecord) -> Value {
    let mut o = Map::new();
    o.insert("scope".into(), scope_json(&r.key.tenant, &r.key.scope));
    o.insert("envName".into(), json!(r.key.env_name));
    o.insert("name".into(), json!(r.key.name));
    o.insert("currentVersion".into(), json!(r.current_version));
    o.insert("createdAt".into(), json!(time(r.created_at)));
    o.insert("updatedAt".into(), json!(time(r.updated_at)));
    if let Some(t) = r.revoked_at {
        o.insert("revokedAt".into(), json!(time(t)));
    }
    if let Some(reason) = &r.revoke_reason {
        o.insert("revokeReason".into(), json!(reason));
    }
    if let Some(t) = &r.tags {
        o.insert("tags".into(), json!(t));
    }
    if let Some(t) = r.rotation_due_at {
        o.insert("rotationDueAt".into(), json!(time(t)));
    }
    Value::Object(o)
}

/// `OA:SecretVersionRecord`, `value` always `null`.
pub fn version_json(v: &SecretVersion) -> Value {
    let mut o = Map::new();
    o.insert("scope".into(), scope_json(&v.key.tenant, &v.key.scope));
    o.insert("envName".into(), json!(v.key.env_name));
    o.insert("name".into(), json!(v.key.name));
    o.insert("versionId".into(), json!(v.version));
    o.insert("createdAt".into(), json!(time(v.created_at)));
    o.insert("value".into(), Value::Null);
    if let Some(t) = v.revoked_at {
        o.insert("revokedAt".into(), json!(time(t)));
    }
    Value::Object(o)
}

async fn key_of(values: &Values, p: &Params, name: &str) -> Result<ValueKey, ApiError> {
    let env = env_name(p.first("envName"))?;
    let raw = query_scope(p)?;
    Ok(ValueKey {
        tenant: values.tenant().to_owned(),
        scope: values.scope(&raw).await?,
        env_name: env,
        name: name.to_owned(),
    })
}

fn not_found(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "secret-not-found",
        format!("No secret \"{}\".", clip(name)),
    )
    .with_details(json!({"name": clip(name)}))
}

async fn list(values: Values, RawQuery(query): RawQuery) -> Result<Json<Value>, ApiError> {
    let p = params(query.as_deref());
    let key = key_of(&values, &p, "").await?;
    let limit = clamp_limit(p.first("limit"));
    let after = cursor(&p, "secrets")?.map(|c| c.name);
    let q = ListQuery {
        tenant: &key.tenant,
        scope: &key.scope,
        env_name: &key.env_name,
        name_prefix: p.non_empty("namePrefix"),
        after: after.as_deref(),
        limit,
        include_revoked: p.first("includeRevoked") == Some("true"),
    };
    let (rows, more) = values.store.secret_list(&q).await?;
    let next = match (more, rows.last()) {
        (true, Some(last)) => Some(encode_cursor(&Position {
            list: "secrets".into(),
            name: last.key.name.clone(),
            version: 0,
        })),
        _ => None,
    };
    Ok(Json(page(
        rows.iter().map(record_json).collect(),
        next,
        Map::new(),
    )))
}

async fn read(
    values: Values,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let p = params(query.as_deref());
    let key = key_of(&values, &p, &name).await?;
    match values.store.secret_get(&key).await? {
        Some(r) => Ok(Json(record_json(&r))),
        None => Err(not_found(&name)),
    }
}

/// The body `scope` of `POST /v1/secrets` (required): as the reference's
/// `validateBodyScope`, then checked against what exists here.
fn body_scope(values: &Values, b: &Map<String, Value>) -> Result<RawScope, ApiError> {
    let required = |m: &str| ApiError::new(StatusCode::BAD_REQUEST, "scope-kind-required", m);
    let Some(o) = b.get("scope").and_then(Value::as_object) else {
        return Err(required("`scope` is required in the request body."));
    };
    let kind = match o.get("kind").and_then(Value::as_str) {
        Some(k @ ("tenant" | "org" | "project")) => k,
        _ => {
            return Err(required(
                "`scope.kind` must be one of `tenant` | `org` | `project`.",
            ));
        }
    };
    if let Some(t) = o.get("tenantId") {
        if !t.as_str().is_some_and(|t| names_tenant(t, values.tenant())) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "scope-mismatch",
                "Body `scope.tenantId` does not match session tenantId.",
            ));
        }
    }
    let field = match kind {
        "tenant" => {
            return Ok(RawScope {
                kind: "tenant".into(),
                id: String::new(),
            });
        }
        "org" => "orgId",
        _ => "projectId",
    };
    match o
        .get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        Some(id) => Ok(RawScope {
            kind: kind.into(),
            id: id.into(),
        }),
        None => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "scope-invalid",
            format!("`scope.{field}` is required when scope.kind is `{kind}`."),
        )),
    }
}

/// The shared name grammar: 1–255 of `[A-Za-z0-9._-]`, starting with a letter, digit or
/// `_`, any `.` between two non-`.` characters.
pub fn name_refusal(name: &str) -> Option<ApiError> {
    let invalid = |m: String| ApiError::new(StatusCode::BAD_REQUEST, "secret-name-invalid", m);
    let len = name.chars().count();
    if len > MAX_SECRET_NAME {
        return Some(invalid(format!(
            "A secret name is at most {MAX_SECRET_NAME} characters long; this one is {len}."
        )));
    }
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let shaped = name
        .split('.')
        .all(|seg| !seg.is_empty() && seg.chars().all(ok_char))
        && !name.starts_with('-');
    if !shaped {
        return Some(invalid("A secret name is 1 to 255 ASCII letters, digits, `.`, `-` and `_`; it starts with a letter, digit or `_`, and any `.` sits between two non-`.` characters. Rename it to that form.".into()));
    }
    None
}

/// The validated fields of a `POST /v1/secrets` body.
struct SetBody {
    raw_scope: RawScope,
    env: String,
    name: String,
    write: SecretWrite,
}

fn parse_set_body(values: &Values, p: &Params, body: &[u8]) -> Result<SetBody, ApiError> {
    let b = object_body(body)?;
    let env_raw = match b.get("envName") {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => Some(""),
        None => p.first("envName"),
    };
    let env = env_name(env_raw)?;
    let raw_scope = body_scope(values, &b)?;
    let field = |f: &str, m: &str| ApiError::bad_input(m).with_details(json!({"field": f}));
    let name = match b.get("name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => {
            return Err(field(
                "name",
                "`name` is required and must be a non-empty string",
            ));
        }
    };
    let Some(value) = b.get("value").and_then(Value::as_str) else {
        return Err(field("value", "`value` is required and must be a string"));
    };
    let mode = match b.get("writeMode").and_then(Value::as_str) {
        Some("create-new") => WriteMode::CreateNew,
        Some("add-version") => WriteMode::AddVersion,
        _ => {
            return Err(field(
                "writeMode",
                "`writeMode` must be one of `create-new` | `add-version`",
            ));
        }
    };
    let if_version = revision_field(&b, "ifVersion")?;
    let rotation_due_at = match b.get("rotationDueAt") {
        None => None,
        Some(v) => Some(parse_time(v).ok_or_else(|| {
            field(
                "rotationDueAt",
                "`rotationDueAt` must be an ISO 8601 time when present",
            )
        })?),
    };
    let tags = tags(&b)?;
    match b.get("appEnvFile") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            return Err(field(
                "appEnvFile",
                "`appEnvFile` is for a runtime under `kindgi dev`, whose secrets live in the pack's env files. This runtime keeps secrets in its secrets store: set the value your app needs in its own configuration.",
            ));
        }
        Some(_) => {
            return Err(field(
                "appEnvFile",
                "`appEnvFile` must be a boolean when present",
            ));
        }
    }
    Ok(SetBody {
        raw_scope,
        env,
        name,
        write: SecretWrite {
            value: SecretValue::new(value.to_owned()),
            mode,
            tags,
            rotation_due_at,
            if_version,
        },
    })
}

fn parse_time(v: &Value) -> Option<i64> {
    let s = v.as_str()?;
    let ms = kindgi_runtime::record::parse_millis(s);
    (ms != 0 || s.starts_with("1970-01-01T00:00:00")).then_some(ms)
}

async fn set(values: Values, RawQuery(query): RawQuery, body: Bytes) -> Result<Response, ApiError> {
    values.require("secrets:write")?;
    let p = params(query.as_deref());
    let SetBody {
        raw_scope,
        env,
        name,
        write,
    } = parse_set_body(&values, &p, &body)?;
    values.require_served(&env, "secret", &name)?;
    let key = ValueKey {
        tenant: values.tenant().to_owned(),
        scope: values.scope(&raw_scope).await?,
        env_name: env,
        name: name.clone(),
    };
    if let Some(refusal) = name_refusal(&name) {
        let stored =
            write.mode == WriteMode::AddVersion && values.store.secret_get(&key).await?.is_some();
        if !stored {
            return Err(refusal);
        }
    }
    if name.starts_with(RESERVED_PREFIX) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "reserved-name-prefix",
            format!("Secret names starting with `{RESERVED_PREFIX}` are reserved for the runtime's own secrets; choose another name."),
        )
        .with_details(json!({"name": clip(&name), "prefix": RESERVED_PREFIX})));
    }
    if let Some(problem) = key_problem(&values.config) {
        return Err(problem);
    }
    match values.store.secret_set(&key, &write).await {
        Ok((record, version)) => {
            let status = match write.mode {
                WriteMode::CreateNew => StatusCode::CREATED,
                WriteMode::AddVersion => StatusCode::OK,
            };
            let body = json!({"record": record_json(&record), "versionId": version});
            Ok((status, Json(body)).into_response())
        }
        Err(ValuesError::SecretExists { current }) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "secret-write-conflict",
            format!(
                "Secret \"{}\" already exists. Use writeMode: 'add-version' to add a new version.",
                clip(&name)
            ),
        )
        .with_details(json!({"currentVersion": current}))),
        Err(ValuesError::SecretVersionConflict { current }) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "secret-write-conflict",
            format!("Stored version is {current}; retry with the current value."),
        )
        .with_details(json!({"currentVersion": current}))),
        Err(e) => Err(ApiError::from(e)),
    }
}

async fn revoke(
    values: Values,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let p = params(query.as_deref());
    let hard = p.first("hard") == Some("true");
    values.require(if hard {
        "secrets:revoke:hard"
    } else {
        "secrets:revoke"
    })?;
    let key = key_of(&values, &p, &name).await?;
    let reason = p.first("reason").map(clip).filter(|r| !r.is_empty());
    match values
        .store
        .secret_revoke(&key, hard, reason.as_deref())
        .await?
    {
        Some(revoked) => Ok(Json(json!({"revoked": revoked, "hard": hard}))),
        None => Err(not_found(&name)),
    }
}

async fn versions(
    values: Values,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let p = params(query.as_deref());
    let key = key_of(&values, &p, &name).await?;
    let limit = clamp_limit(p.first("limit"));
    let after = cursor(&p, "versions")?.map_or(0, |c| c.version);
    let (rows, more) = values.store.secret_versions(&key, after, limit).await?;
    let next = match (more, rows.last()) {
        (true, Some(last)) => Some(encode_cursor(&Position {
            list: "versions".into(),
            name: String::new(),
            version: last.version,
        })),
        _ => None,
    };
    Ok(Json(page(
        rows.iter().map(version_json).collect(),
        next,
        Map::new(),
    )))
}

async fn version(
    values: Values,
    Path((name, version)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let Some(n) = version.parse::<i64>().ok().filter(|n| *n >= 1) else {
        return Err(ApiError::bad_input(
            "`versionId` must be a positive integer.",
        ));
    };
    let p = params(query.as_deref());
    let key = key_of(&values, &p, &name).await?;
    match values.store.secret_version(&key, n).await? {
        Some(v) => Ok(Json(version_json(&v))),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "secret-version-not-found",
            format!("No version {n} for secret \"{}\".", clip(&name)),
        )
        .with_details(json!({"name": clip(&name), "versionId": n}))),
    }
}

fn unsupported() -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "secret-operation-unsupported",
        "This runtime does not rotate secrets: add a new version with `POST /v1/secrets` (`writeMode: \"add-version\"`), then revoke the secret if the old value must stop working.",
    )
}

async fn rotate(values: Values) -> Result<Json<Value>, ApiError> {
    values.require("secrets:rotate")?;
    Err(unsupported())
}

/// No rotation ever starts here (`rotate` is unsupported), so no rotation id names one:
/// `404 not-found`, as the reference answers an unknown rotation.
async fn rotation(
    Path((_, rotation)): Path<(String, String)>,
    values: Values,
) -> Result<Json<Value>, ApiError> {
    let _ = values;
    Err(ApiError::new(
        StatusCode::NOT_FOUND,
        "not-found",
        format!(
            "No rotation with id {}",
            rotation.chars().take(128).collect::<String>()
        ),
    )
    .with_details(json!({"rotationId": rotation.chars().take(128).collect::<String>()})))
}
