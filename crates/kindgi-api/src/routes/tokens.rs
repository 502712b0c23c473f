//! `/v1/tokens` (platform-api.md §10.1): mint, list, read and revoke API keys on the wire.
//!
//! Who may: a caller with keys of its own (a person's key, a service account's) manages its
//! own keys; a tenant admin manages every key of the tenant and mints for service accounts.
//! Nobody mints a key for a person other than itself through the API (that person, or the
//! operator's `kindgi tokens create --database --for user:<id>`, makes it), and a new key's
//! capabilities are a subset of the minter's held (expanded) set, so no key is minted with
//! more rights than its minter holds. `?createdBy=` lists by minter (an extension). A key
//! that is its own service account and no admin gets `403 permission-denied` ``Managing API
//! keys needs a tenant admin``. Someone else's key reads as `404 not-found` ``No token with
//! id <id>``. The secret is in the mint answer only, once: under an `Idempotency-Key` the
//! route records, instead of the answer, a `409 idempotency-key-replay-withheld` envelope
//! with `details {status: 201, at}`, so a repeat learns that the mint happened, never the
//! key (§1.5 rule 5); the middleware replays that record.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_store::idempotency::IdempotencyStore;
use kindgi_store::service_accounts::ServiceAccountStore;
use kindgi_store::tokens::{
    HeldCapabilities, KeyRole, NewToken, Principal, PrincipalKind, TokenFilter, TokenRecord,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::key_holder::{
    KeyHolder, denied, iso, object_body, opt_str, parse_principal_ref, principal_json,
};
use crate::error::ApiError;
use crate::idempotency::{AnswerRecorded, IdempotencyContext};
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::Projects;
use crate::query::QueryString;
use crate::state::AppState;
use axum::extract::FromRef;

/// The most capabilities one key carries.
pub const MAX_CAPABILITIES: usize = 100;
/// The longest label.
pub const MAX_LABEL: usize = 500;

/// The token routes, merged into the `/v1` router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/tokens", post(mint).get(list))
        .route("/v1/tokens/{token_id}", get(get_one))
        .route("/v1/tokens/{token_id}/revoke", post(revoke))
}

/// `OA:ApiToken` for `r` (never the secret).
pub fn token_json(r: &TokenRecord) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("tokenId".into(), json!(r.token_id));
    if let Some(p) = &r.principal {
        m.insert("principal".into(), principal_json(p));
    }
    m.insert("role".into(), json!(r.role.as_str()));
    // An all-capabilities key (the operator's) lists what it holds, written out.
    let held = if r.all_capabilities {
        HeldCapabilities::Runtime.names()
    } else {
        r.capabilities.clone()
    };
    m.insert("capabilities".into(), json!(held));
    let mut opt = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    };
    opt("label", r.label.as_ref().map(|v| json!(v)));
    opt("projectId", r.project_id.as_ref().map(|v| json!(v)));
    opt("createdBy", r.created_by.as_ref().map(|v| json!(v)));
    opt("createdAt", Some(json!(iso(r.created_at))));
    opt("expiresAt", r.expires_at.map(|t| json!(iso(t))));
    opt("revokedAt", r.revoked_at.map(|t| json!(iso(t))));
    opt("lastUsedAt", r.last_used_at.map(|t| json!(iso(t))));
    m
}

fn needs_admin_or_own_keys(caller: &KeyHolder) -> Result<(), ApiError> {
    if caller.principal().is_some() || caller.is_admin() {
        return Ok(());
    }
    Err(denied(
        "Managing API keys needs a tenant admin",
        "tokens.manage",
        &format!("tenant:{}", caller.tenant),
        "not-tenant-admin",
    ))
}

/// True when `caller` may see or revoke `r`.
fn visible(caller: &KeyHolder, r: &TokenRecord) -> bool {
    caller.is_admin() || (r.principal.is_some() && r.principal.as_ref() == caller.principal())
}

fn not_found(id: &str) -> ApiError {
    let shown: String = id.chars().take(100).collect();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not-found",
        format!("No token with id {shown}"),
    )
    .with_details(json!({"tokenId": shown}))
}

/// The mint body, checked (§10.1); `Err` is the 400/403/404 to send.
async fn check_mint(
    state: &AppState,
    caller: &KeyHolder,
    body: &Map<String, Value>,
) -> Result<NewToken, ApiError> {
    let principal = match body.get("for") {
        None | Some(Value::Null) => caller.principal().cloned(),
        Some(Value::Object(f)) => Some(check_for(f)?),
        Some(_) => {
            return Err(ApiError::bad_input("`for` must be an object {kind, id}")
                .with_details(json!({"field": "for"})));
        }
    };
    let role = match opt_str(body, "role", 20)? {
        None => KeyRole::Member,
        Some(r) => KeyRole::parse(r).ok_or_else(|| {
            ApiError::bad_input("`role` must be \"member\" or \"admin\"")
                .with_details(json!({"field": "role"}))
        })?,
    };
    let capabilities = check_capabilities(body.get("capabilities"), caller)?;
    let label = opt_str(body, "label", MAX_LABEL)?.map(str::to_owned);
    let expires_at = check_expiry(opt_str(body, "expiresAt", 64)?, caller)?;
    let project_id = check_project(state, caller, opt_str(body, "projectId", 64)?).await?;
    check_whom(caller, principal.as_ref())?;
    if role == KeyRole::Admin && !caller.is_admin() {
        return Err(role_exceeds(
            "An `admin` key needs a tenant admin to mint it",
        ));
    }
    if let Some(p) = &principal
        && p.kind == PrincipalKind::ServiceAccount
    {
        let account = ServiceAccountStore::new(state.db.clone())
            .get(&caller.tenant, &p.id)
            .await
            .map_err(|e| ApiError::internal(&e))?
            .filter(|a| a.unregistered_at.is_none())
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    "principal-not-found",
                    format!("No service account with id \"{}\" in this tenant", p.id),
                )
                .with_details(json!({"principal": principal_json(p)}))
            })?;
        let admin_grant = account
            .grants
            .contains(&kindgi_store::service_accounts::Grant::TenantAdmin);
        if role == KeyRole::Admin && !admin_grant {
            return Err(role_exceeds(
                "An `admin` key for a service account needs its `tenant-admin` grant",
            ));
        }
    }
    Ok(NewToken {
        tenant: caller.tenant.clone(),
        principal,
        role,
        capabilities,
        label,
        project_id,
        created_by: Some(caller.actor()),
        expires_at,
    })
}

/// Whom `caller` may mint for through the API: itself; a tenant admin also for a service
/// account. A key for another person, or a new principal-less key, never.
fn check_whom(caller: &KeyHolder, principal: Option<&Principal>) -> Result<(), ApiError> {
    if principal.is_some() && principal == caller.principal() {
        return Ok(());
    }
    let resource = format!("tenant:{}", caller.tenant);
    match principal {
        Some(p) if p.kind == PrincipalKind::User => Err(denied(
            format!(
                "A key for the person `user:{}` comes only from that person or the operator: the person mints it with a key of their own, or the operator runs `kindgi tokens create --database <db> --tenant <tenant> --for user:{}`",
                p.id, p.id
            ),
            "tokens.mint",
            &resource,
            "person-key-from-someone-else",
        )),
        Some(_) if caller.is_admin() => Ok(()),
        Some(_) => Err(denied(
            "Only a tenant admin mints a key for someone else",
            "tokens.mint",
            &resource,
            "not-tenant-admin",
        )),
        None => Err(denied(
            "This key acts for no principal, so a key minted without `for` would be a new one: mint for a service account (`for: {kind: \"service-account\", id}`)",
            "tokens.mint",
            &resource,
            "no-principal",
        )),
    }
}

fn role_exceeds(message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "role-exceeds-principal", message)
}

fn check_for(f: &Map<String, Value>) -> Result<Principal, ApiError> {
    let kind = f
        .get("kind")
        .and_then(Value::as_str)
        .and_then(PrincipalKind::parse)
        .ok_or_else(|| {
            ApiError::bad_input("`for.kind` must be \"user\" or \"service-account\"")
                .with_details(json!({"field": "for.kind"}))
        })?;
    let id = f
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= 200)
        .ok_or_else(|| {
            ApiError::bad_input("`for.id` must be a non-empty string (at most 200 characters)")
                .with_details(json!({"field": "for.id"}))
        })?;
    Ok(Principal {
        kind,
        id: id.to_owned(),
    })
}

fn check_capabilities(raw: Option<&Value>, caller: &KeyHolder) -> Result<Vec<String>, ApiError> {
    let bad =
        |m: &str| ApiError::bad_input(m.to_owned()).with_details(json!({"field": "capabilities"}));
    let list = match raw {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) if a.len() <= MAX_CAPABILITIES => a,
        Some(Value::Array(_)) => return Err(bad("`capabilities` holds at most 100 entries")),
        Some(_) => return Err(bad("`capabilities` must be an array of strings")),
    };
    let held = caller.key.held_capabilities();
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for c in list {
        let Some(c) = c
            .as_str()
            .filter(|c| (1..=100).contains(&c.chars().count()))
        else {
            return Err(bad(
                "each capability must be a string of 1 to 100 characters",
            ));
        };
        if out.iter().any(|o| o == c) {
            return Err(bad(&format!("capability `{c}` is listed twice")));
        }
        if c.starts_with("system:") {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "capability-not-mintable",
                format!("The `{c}` capability cannot be put on an API key"),
            )
            .with_details(json!({"capability": c})));
        }
        if !held.holds(c) {
            return Err(denied(
                format!("Bearer token is missing the `{c}` capability, so it cannot grant it"),
                "tokens.mint",
                &format!("tenant:{}", caller.tenant),
                "capability-not-held",
            ));
        }
        out.push(c.to_owned());
    }
    Ok(out)
}

fn check_expiry(raw: Option<&str>, caller: &KeyHolder) -> Result<Option<i64>, ApiError> {
    let at = match raw {
        None => None,
        Some(s) => {
            let ms = chrono::DateTime::parse_from_rfc3339(s)
                .map(|d| d.timestamp_millis())
                .map_err(|_| {
                    ApiError::bad_input(
                        "`expiresAt` must be an ISO 8601 date-time, e.g. 2030-01-01T00:00:00Z",
                    )
                    .with_details(json!({"field": "expiresAt"}))
                })?;
            if ms <= kindgi_store::now_millis() {
                return Err(ApiError::bad_input("`expiresAt` must be in the future")
                    .with_details(json!({"field": "expiresAt"})));
            }
            Some(ms)
        }
    };
    if let Some(limit) = caller.key.record.expires_at
        && at.is_none_or(|t| t > limit)
    {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "token-expiry-exceeds-minter",
            "The minting key expires, so the new key needs an `expiresAt` no later than it",
        )
        .with_details(json!({"latestExpiresAt": iso(limit)})));
    }
    Ok(at)
}

/// The new key's project (§10.1): `projectId` names one of the tenant's projects (`400`
/// not a UUID, `404 project-not-found`). A key limited to a project mints only keys limited
/// to it, so it must name it (a body naming another was refused by
/// [`crate::key_project`]; this check stays as defence in depth): `403
/// key-project-mismatch`, as the official route words it.
async fn check_project(
    state: &AppState,
    caller: &KeyHolder,
    raw: Option<&str>,
) -> Result<Option<String>, ApiError> {
    let asked = match raw {
        Some(id) => Some(
            Projects::from_ref(state)
                .check(&caller.tenant, Some(id))
                .await?,
        ),
        None => None,
    };
    match (&caller.key.record.project_id, asked) {
        (Some(mine), asked) if !asked.as_ref().is_some_and(|a| a.eq_ignore_ascii_case(mine)) => {
            let message = format!(
                "Your key is limited to project {mine}: a key it mints must be limited to it too"
            );
            let mut details = json!({
                "keyProjectId": mine,
                "action": "admin",
                "resource": format!("tenant:{}", caller.tenant),
                "reason": message,
            });
            if let (Some(a), Some(d)) = (&asked, details.as_object_mut()) {
                d.insert("projectId".into(), json!(a));
                d.insert("resource".into(), json!(format!("project:{a}")));
            }
            Err(
                ApiError::new(StatusCode::FORBIDDEN, "key-project-mismatch", message)
                    .with_details(details),
            )
        }
        (_, asked) => Ok(asked),
    }
}

async fn mint(
    State(state): State<AppState>,
    caller: KeyHolder,
    idempotency: Option<IdempotencyContext>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    needs_admin_or_own_keys(&caller)?;
    let body = object_body(&bytes, true)?;
    let new = check_mint(&state, &caller, &body).await?;
    let minted = state
        .tokens
        .mint(&new)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let mut answer = token_json(&minted.record);
    answer.insert("token".into(), Value::String(minted.key));
    let mut response = (StatusCode::CREATED, Json(Value::Object(answer))).into_response();
    if let Some(context) = idempotency {
        withhold(&state, &context, minted.record.created_at).await;
        response.extensions_mut().insert(AnswerRecorded::Recorded);
    }
    Ok(response)
}

/// Records, for the mint's `Idempotency-Key`, the fact of success instead of the answer.
async fn withhold(state: &AppState, context: &IdempotencyContext, at: i64) {
    let envelope = ApiError::new(
        StatusCode::CONFLICT,
        "idempotency-key-replay-withheld",
        "This Idempotency-Key already minted a token; its answer held a secret and is not replayed. Use a new key to mint another",
    )
    .with_details(json!({"status": 201, "at": iso(at)}))
    .envelope("");
    let record = context.answer(StatusCode::CONFLICT, &envelope.to_string());
    if let Err(e) = IdempotencyStore::new(state.db.clone())
        .record(&record)
        .await
    {
        tracing::error!(error = %e, "cannot record a withheld idempotent answer");
    }
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
    needs_admin_or_own_keys(&caller)?;
    let q = QueryString::parse(query.as_deref());
    let limit = clamp_limit(q.first("limit"));
    let cursor: Option<Position> = decode_cursor(q.first("cursor"))?;
    let asked = match q
        .first("principal")
        .map(str::to_owned)
        .filter(|s| !s.is_empty())
    {
        None => None,
        Some(s) => Some(parse_principal_ref(&s).ok_or_else(|| {
            ApiError::bad_input("`principal` must be `user:<id>` or `service-account:<id>`")
                .with_details(json!({"field": "principal"}))
        })?),
    };
    let created_by = created_by_filter(&caller, q.first("createdBy").map(str::to_owned))?;
    let principal = if caller.is_admin() {
        asked
    } else {
        if asked.is_some() && asked.as_ref() != caller.principal() {
            return Err(denied(
                "Only a tenant admin lists someone else's keys",
                "tokens.list",
                &format!("tenant:{}", caller.tenant),
                "not-tenant-admin",
            ));
        }
        caller.principal().cloned()
    };
    let mut rows = state
        .tokens
        .list(
            &caller.tenant,
            &TokenFilter {
                principal,
                created_by,
                before: cursor.map(|c| (c.created_at, c.id)),
                limit: limit + 1,
            },
        )
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let next = (rows.len() > limit).then(|| {
        rows.truncate(limit);
        rows.last().map(|r| {
            encode_cursor(&Position {
                created_at: r.created_at,
                id: r.token_id.clone(),
            })
        })
    });
    let data = rows.iter().map(|r| Value::Object(token_json(r))).collect();
    Ok(Json(page(data, next.flatten(), Map::new())).into_response())
}

/// `?createdBy=user:<id>|service_account:<id>|service-account:<id>` (an extension: the keys
/// one principal minted, to revoke them with it); a tenant admin's filter only.
fn created_by_filter(caller: &KeyHolder, raw: Option<String>) -> Result<Option<String>, ApiError> {
    let Some(raw) = raw.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let normalized = raw.replacen("service_account:", "service-account:", 1);
    let minter = parse_principal_ref(&normalized).ok_or_else(|| {
        ApiError::bad_input(
            "`createdBy` must be `user:<id>` or `service_account:<id>` (the minter, as `createdBy` names it)",
        )
        .with_details(json!({"field": "createdBy"}))
    })?;
    if !caller.is_admin() && Some(&minter) != caller.principal() {
        return Err(denied(
            "Only a tenant admin lists the keys someone else minted",
            "tokens.list",
            &format!("tenant:{}", caller.tenant),
            "not-tenant-admin",
        ));
    }
    Ok(Some(minter.actor()))
}

async fn get_one(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(token_id): Path<String>,
) -> Result<Response, ApiError> {
    needs_admin_or_own_keys(&caller)?;
    let found = state
        .tokens
        .get(&caller.tenant, &token_id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .filter(|r| visible(&caller, r))
        .ok_or_else(|| not_found(&token_id))?;
    Ok(Json(Value::Object(token_json(&found))).into_response())
}

async fn revoke(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(token_id): Path<String>,
) -> Result<Response, ApiError> {
    needs_admin_or_own_keys(&caller)?;
    let found = state
        .tokens
        .get(&caller.tenant, &token_id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .filter(|r| visible(&caller, r))
        .ok_or_else(|| not_found(&token_id))?;
    state
        .tokens
        .revoke_token(&caller.tenant, &found.token_id)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    Ok(Json(json!({"tokenId": found.token_id, "revoked": true})).into_response())
}
