//! `/v1/env`: env values per tenant, scope and env (platform-api.md §7, cases 73–75). Env
//! values are not secret: they are served back on every read. Writes need `env:write` and
//! the served env (`409 env-not-served`); each write bumps `revision`; a stale `ifRevision`
//! is `409 env-write-conflict`.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use kindgi_store::values::{EnvRecord, EnvWrite, ListQuery, ValueKey, ValuesError};
use serde_json::{Map, Value, json};

use super::values::{
    MAX_NAME, Position, Values, clip, cursor, env_name, object_body, params, query_scope,
    revision_field, scope_json, scopes_equal, tags, time,
};
use crate::error::ApiError;
use crate::page::{clamp_limit, encode_cursor, page};
use crate::state::AppState;

/// The env routes, to merge into the `/v1` router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/env", get(list))
        .route("/v1/env/{name}", get(read).put(put).delete(delete))
}

/// `OA:EnvRecord`.
pub fn record_json(r: &EnvRecord) -> Value {
    let mut o = Map::new();
    o.insert("scope".into(), scope_json(&r.key.tenant, &r.key.scope));
    o.insert("envName".into(), json!(r.key.env_name));
    o.insert("name".into(), json!(r.key.name));
    o.insert("value".into(), json!(r.value));
    o.insert("revision".into(), json!(r.revision));
    o.insert("createdAt".into(), json!(time(r.created_at)));
    o.insert("updatedAt".into(), json!(time(r.updated_at)));
    if let Some(t) = &r.tags {
        o.insert("tags".into(), json!(t));
    }
    Value::Object(o)
}

/// The key a request names: `envName`, the scope triplet and the name.
async fn key_of(
    values: &Values,
    p: &super::values::Params,
    name: &str,
) -> Result<ValueKey, ApiError> {
    let env = env_name(p.first("envName"))?;
    let raw = query_scope(p)?;
    Ok(ValueKey {
        tenant: values.tenant().to_owned(),
        scope: values.scope(&raw).await?,
        env_name: env,
        name: name.to_owned(),
    })
}

async fn list(values: Values, RawQuery(query): RawQuery) -> Result<Json<Value>, ApiError> {
    let p = params(query.as_deref());
    let key = key_of(&values, &p, "").await?;
    let limit = clamp_limit(p.first("limit"));
    let after = cursor(&p, "env")?.map(|c| c.name);
    let q = ListQuery {
        tenant: &key.tenant,
        scope: &key.scope,
        env_name: &key.env_name,
        name_prefix: p.non_empty("namePrefix"),
        after: after.as_deref(),
        limit,
        include_revoked: false,
    };
    let (rows, more) = values.store.env_list(&q).await?;
    let next = match (more, rows.last()) {
        (true, Some(last)) => Some(encode_cursor(&Position {
            list: "env".into(),
            name: last.key.name.clone(),
            version: 0,
        })),
        _ => None,
    };
    let data = rows.iter().map(record_json).collect();
    Ok(Json(page(data, next, Map::new())))
}

async fn read(
    values: Values,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let p = params(query.as_deref());
    let key = key_of(&values, &p, &name).await?;
    match values.store.env_get(&key).await? {
        Some(r) => Ok(Json(record_json(&r))),
        None => Err(not_found(&name)),
    }
}

fn not_found(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "env-not-found",
        format!("No env entry \"{}\".", clip(name)),
    )
    .with_details(json!({"name": clip(name)}))
}

async fn put(
    values: Values,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    values.require("env:write")?;
    let b = object_body(&body)?;
    let p = params(query.as_deref());
    let env = env_name(p.first("envName"))?;
    let raw = query_scope(&p)?;
    check_body_matches(&values, &b, &env, &raw, &name)?;
    let Some(value) = b.get("value").and_then(Value::as_str) else {
        return Err(
            ApiError::bad_input("`value` is required and must be a string")
                .with_details(json!({"field": "value"})),
        );
    };
    let if_revision = revision_field(&b, "ifRevision")?;
    let tags = tags(&b)?;
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(ApiError::bad_input(format!(
            "An env value name is 1 to {MAX_NAME} characters"
        ))
        .with_details(json!({"field": "name"})));
    }
    values.require_served(&env, "env value", &name)?;
    let key = ValueKey {
        tenant: values.tenant().to_owned(),
        scope: values.scope(&raw).await?,
        env_name: env,
        name: name.clone(),
    };
    let write = EnvWrite {
        value: value.to_owned(),
        tags,
        if_revision,
    };
    match values.store.env_set(&key, &write).await {
        Ok(r) => Ok(Json(record_json(&r))),
        Err(ValuesError::EnvConflict { current }) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "env-write-conflict",
            format!("Stored revision is {current}; retry with the current value."),
        )
        .with_details(json!({"currentRevision": current}))),
        Err(ValuesError::ValueTooLarge { len, max }) => Err(ApiError::bad_input(format!(
            "`value` is {len} bytes; an env value is at most {max} bytes"
        ))
        .with_details(json!({"field": "value", "maxBytes": max}))),
        Err(e) => Err(ApiError::from(e)),
    }
}

/// Body `envName`, `scope` and `name` must agree with the query and the path.
fn check_body_matches(
    values: &Values,
    b: &Map<String, Value>,
    env: &str,
    raw: &super::values::RawScope,
    name: &str,
) -> Result<(), ApiError> {
    if let Some(body_env) = b.get("envName") {
        if body_env.as_str() != Some(env) {
            let shown = body_env
                .as_str()
                .map_or_else(|| body_env.to_string(), str::to_owned);
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "env-name-mismatch",
                format!(
                    "Body `envName` \"{}\" does not match query envName \"{env}\".",
                    clip(&shown)
                ),
            ));
        }
    }
    if let Some(scope) = b.get("scope") {
        if !scopes_equal(scope, values.tenant(), raw) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "scope-mismatch",
                "Body `scope` does not match query scopeKind/scopeId.",
            ));
        }
    }
    if let Some(body_name) = b.get("name") {
        if body_name.as_str() != Some(name) {
            return Err(
                ApiError::bad_input("Body `name` does not match path `:name`.")
                    .with_details(json!({"field": "name"})),
            );
        }
    }
    Ok(())
}

async fn delete(
    values: Values,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    values.require("env:write")?;
    let p = params(query.as_deref());
    let key = key_of(&values, &p, &name).await?;
    let deleted = values.store.env_delete(&key).await?;
    Ok(Json(json!({ "deleted": deleted })))
}
