//! `/v1/service-accounts` (platform-api.md §10.3), tenant admins only: create, list, read,
//! grant, ungrant and unregister service accounts. An unregistered account keeps its record
//! (with `unregisteredAt`, no grants) and its keys stop authenticating. Keys for an account
//! are minted with `POST /v1/tokens {"for": {"kind": "service-account", "id"}}`.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_store::service_accounts::{
    AccountFilter, Grant, NewAccount, ServiceAccount, ServiceAccountError, ServiceAccountStore,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::key_holder::{KeyHolder, denied, iso, object_body, opt_str};
use crate::error::ApiError;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::check_project_id;
use crate::query::QueryString;
use crate::state::AppState;

/// The most grants one request names.
pub const MAX_GRANTS: usize = 100;
/// The longest description.
pub const MAX_DESCRIPTION: usize = 500;

/// The service-account routes, merged into the `/v1` router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/service-accounts", post(create).get(list))
        .route("/v1/service-accounts/{id}", get(get_one))
        .route("/v1/service-accounts/{id}/grant", post(grant))
        .route("/v1/service-accounts/{id}/ungrant", post(ungrant))
        .route("/v1/service-accounts/{id}/unregister", post(unregister))
}

fn grant_json(g: &Grant) -> Value {
    serde_json::to_value(g).unwrap_or(Value::Null)
}

/// `OA:ServiceAccount`.
pub fn account_json(a: &ServiceAccount) -> Value {
    let mut m = Map::new();
    m.insert("serviceAccountId".into(), json!(a.id));
    m.insert("name".into(), json!(a.name));
    if let Some(d) = &a.description {
        m.insert("description".into(), json!(d));
    }
    m.insert(
        "grants".into(),
        Value::Array(a.grants.iter().map(grant_json).collect()),
    );
    if let Some(c) = &a.created_by {
        m.insert("createdBy".into(), json!(c));
    }
    m.insert("createdAt".into(), json!(iso(a.created_at)));
    if let Some(t) = a.unregistered_at {
        m.insert("unregisteredAt".into(), json!(iso(t)));
    }
    Value::Object(m)
}

fn admin_only(caller: &KeyHolder) -> Result<(), ApiError> {
    if caller.is_admin() {
        return Ok(());
    }
    Err(denied(
        "Managing service accounts needs a tenant admin",
        "service-accounts.manage",
        &format!("tenant:{}", caller.tenant),
        "not-tenant-admin",
    ))
}

fn not_found(id: &str) -> ApiError {
    let shown: String = id.chars().take(100).collect();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "service-account-not-found",
        format!("No service account with id \"{shown}\""),
    )
    .with_details(json!({"serviceAccountId": shown}))
}

fn store_error(e: ServiceAccountError) -> ApiError {
    match e {
        ServiceAccountError::NameTaken { name } => ApiError::new(
            StatusCode::CONFLICT,
            "service-account-name-taken",
            format!("A service account named \"{name}\" already exists in this tenant"),
        )
        .with_details(json!({"name": name})),
        ServiceAccountError::NotFound { id } => not_found(&id),
        ServiceAccountError::Unregistered { id } => ApiError::new(
            StatusCode::CONFLICT,
            "service-account-unregistered",
            format!("Service account \"{id}\" is unregistered; it takes no grants"),
        )
        .with_details(json!({"serviceAccountId": id})),
        ServiceAccountError::Store(e) => ApiError::internal(&e),
    }
}

/// `^[a-z0-9][a-z0-9-]{0,62}$`.
fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// One grant of a body; `ungrant` allows a project grant without its role. `at` names it.
fn check_grant(tenant: &str, v: &Value, at: &str, ungrant: bool) -> Result<Grant, ApiError> {
    let bad = |m: String| ApiError::bad_input(m).with_details(json!({"field": at}));
    let Some(obj) = v.as_object() else {
        return Err(bad(format!("`{at}` must be an object with a `kind`")));
    };
    match obj.get("kind").and_then(Value::as_str) {
        Some("tenant-admin") => Ok(Grant::TenantAdmin),
        Some("tenant-member") => Ok(Grant::TenantMember),
        Some("project") => {
            let project = obj.get("projectId").and_then(Value::as_str);
            let Some(project) = project else {
                return Err(bad(format!(
                    "`{at}.projectId` is required for a project grant"
                )));
            };
            let project_id = check_project_id(tenant, Some(project))?;
            let role = match obj.get("role").and_then(Value::as_str) {
                Some(r @ ("viewer" | "editor" | "owner" | "admin")) => r.to_owned(),
                None if ungrant => String::new(),
                _ => {
                    return Err(bad(format!(
                        "`{at}.role` must be one of viewer, editor, owner, admin"
                    )));
                }
            };
            Ok(Grant::Project { project_id, role })
        }
        _ => Err(bad(format!(
            "`{at}.kind` must be \"tenant-admin\", \"tenant-member\" or \"project\""
        ))),
    }
}

async fn create(
    State(state): State<AppState>,
    caller: KeyHolder,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    admin_only(&caller)?;
    let body = object_body(&bytes, false)?;
    let name = match body.get("name") {
        Some(Value::String(n)) if valid_name(n) => n.clone(),
        _ => {
            return Err(ApiError::bad_input(
                "`name` must match ^[a-z0-9][a-z0-9-]{0,62}$ (lowercase letters, digits and hyphens, e.g. acme-ci)",
            )
            .with_details(json!({"field": "name"})));
        }
    };
    let description = opt_str(&body, "description", MAX_DESCRIPTION)?.map(str::to_owned);
    let grants = match body.get("grants") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) if a.len() <= MAX_GRANTS => a
            .iter()
            .enumerate()
            .map(|(i, g)| check_grant(&caller.tenant, g, &format!("grants[{i}]"), false))
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(
                ApiError::bad_input("`grants` must be an array of at most 100 grants")
                    .with_details(json!({"field": "grants"})),
            );
        }
    };
    let account = ServiceAccountStore::new(state.db.clone())
        .create(&NewAccount {
            tenant: caller.tenant.clone(),
            name,
            description,
            grants,
            created_by: Some(caller.actor()),
        })
        .await
        .map_err(store_error)?;
    Ok((StatusCode::CREATED, Json(account_json(&account))).into_response())
}

#[derive(Debug, Serialize, Deserialize)]
struct Position {
    #[serde(rename = "createdAt")]
    created_at: i64,
    id: String,
}

async fn list(
    State(state): State<AppState>,
    caller: KeyHolder,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    admin_only(&caller)?;
    let q = QueryString::parse(query.as_deref());
    let limit = clamp_limit(q.first("limit"));
    let cursor: Option<Position> = decode_cursor(q.first("cursor"))?;
    let include_unregistered = q.first("includeUnregistered") == Some("true");
    let mut rows = ServiceAccountStore::new(state.db.clone())
        .list(
            &caller.tenant,
            &AccountFilter {
                include_unregistered,
                after: cursor.map(|c| (c.created_at, c.id)),
                limit: limit + 1,
            },
        )
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let next = if rows.len() > limit {
        rows.truncate(limit);
        rows.last().map(|a| {
            encode_cursor(&Position {
                created_at: a.created_at,
                id: a.id.clone(),
            })
        })
    } else {
        None
    };
    let data = rows.iter().map(account_json).collect();
    Ok(Json(page(data, next, Map::new())).into_response())
}

async fn get_one(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    admin_only(&caller)?;
    let account = ServiceAccountStore::new(state.db.clone())
        .get(&caller.tenant, &id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .ok_or_else(|| not_found(&id))?;
    Ok(Json(account_json(&account)).into_response())
}

async fn grant(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    change(state, caller, id, bytes, false).await
}

async fn ungrant(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    change(state, caller, id, bytes, true).await
}

async fn change(
    state: AppState,
    caller: KeyHolder,
    id: String,
    bytes: Bytes,
    ungrant: bool,
) -> Result<Response, ApiError> {
    admin_only(&caller)?;
    let body = Value::Object(object_body(&bytes, false)?);
    let g = check_grant(&caller.tenant, &body, "grant", ungrant)?;
    let store = ServiceAccountStore::new(state.db.clone());
    let account = if ungrant {
        store.ungrant(&caller.tenant, &id, &g).await
    } else {
        store.grant(&caller.tenant, &id, &g).await
    }
    .map_err(store_error)?;
    Ok(Json(account_json(&account)).into_response())
}

async fn unregister(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    admin_only(&caller)?;
    let account = ServiceAccountStore::new(state.db.clone())
        .unregister(&caller.tenant, &id)
        .await
        .map_err(store_error)?;
    Ok(Json(account_json(&account)).into_response())
}
