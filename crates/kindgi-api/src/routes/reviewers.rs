//! `/v1/approvals/reviewers` (platform-api.md §4 "Reviewers", `OA approvals.reviewers.*`):
//! the tenant's reviewer roster, over the [`ReviewerRoster`](kindgi_core::ports::ReviewerRoster)
//! port.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/approvals/reviewers?limit&cursor&role` | `OA:ReviewerCollectionPage`, oldest first |
//! | `POST /v1/approvals/reviewers {userId, role, displayName?}` | `201 OA:Reviewer`; again for the same person: same id, the new role |
//! | `GET /v1/approvals/reviewers/{id}` | `OA:Reviewer`; `404 reviewer-not-found` |
//! | `POST /v1/approvals/reviewers/{id}/unregister` | `{reviewerId, unregistered: true}` (sets `deactivatedAt`) |
//!
//! Reads are for a tenant admin or a reviewer (anyone else: `403 permission-denied`); writes
//! need a tenant admin. `userId` is any non-empty user id, as the reference takes it (the
//! schema says UUID, but this runtime's operator and `kindgi dev` persons are `admin` and
//! `dev`), at most 200 characters. Messages are the reference's
//! (`@kindgi/api/src/routes/reviewers.ts`).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_core::ports::{NewReviewer, ReviewerRecord, RosterQuery};
use kindgi_runtime::approval::ReviewerRole;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::key_holder::{KeyHolder, denied, iso};
use super::reviewer::{self, Roster};
use crate::error::ApiError;
use crate::json_body::JsonObject;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::tenant_uuid;
use crate::query::QueryString;
use crate::state::AppState;

/// The longest `displayName`.
pub const MAX_DISPLAY_NAME: usize = 200;
/// The longest `userId` (the caller's own id, when it is no UUID).
pub const MAX_USER_ID: usize = 200;

/// The message of a write by a caller that is not a tenant admin.
pub const NEEDS_ADMIN: &str = "Managing the reviewer roster needs a tenant admin";

/// The roster routes. Mounted before `/v1/approvals/{approvalId}`: a static segment wins.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/approvals/reviewers", get(list).post(register))
        .route("/v1/approvals/reviewers/{reviewer_id}", get(get_one))
        .route(
            "/v1/approvals/reviewers/{reviewer_id}/unregister",
            post(unregister),
        )
}

/// `OA:Reviewer` of `r`.
pub fn reviewer_json(r: &ReviewerRecord) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(r.id));
    o.insert("tenantId".into(), json!(tenant_uuid(&r.tenant)));
    o.insert("userId".into(), json!(r.user_id));
    o.insert("role".into(), json!(r.role.as_str()));
    if let Some(n) = &r.display_name {
        o.insert("displayName".into(), json!(n));
    }
    o.insert("createdAt".into(), json!(iso(r.created_at)));
    if let Some(d) = r.deactivated_at {
        o.insert("deactivatedAt".into(), json!(iso(d)));
    }
    Value::Object(o)
}

/// Where a page ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RosterCursor {
    created_at: i64,
    id: String,
}

fn bad(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::bad_input(message).with_details(json!({"field": field}))
}

fn reviewer_not_found(message: String, id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "reviewer-not-found", message)
        .with_details(json!({"reviewerId": id}))
}

/// The message of the `403` for a roster read by someone who is neither.
pub const ROSTER_READERS: &str = "The reviewer roster is for tenant admins and reviewers: it names the people who decide approvals.";

/// Reads: a tenant admin, or a reviewer (a roster row of the key's person).
async fn may_read(caller: &KeyHolder, roster: &Roster) -> Result<(), ApiError> {
    match reviewer::gate(caller, roster, "read").await {
        Ok(_) => Ok(()),
        Err(e) if e.code == "permission-denied" => Err(denied(
            ROSTER_READERS,
            "read",
            &format!("tenant:{}", tenant_uuid(&caller.tenant)),
            ROSTER_READERS,
        )),
        Err(e) => Err(e),
    }
}

fn require_admin(caller: &KeyHolder) -> Result<(), ApiError> {
    if caller.is_admin() {
        return Ok(());
    }
    Err(denied(
        NEEDS_ADMIN,
        "admin",
        &format!("tenant:{}", tenant_uuid(&caller.tenant)),
        NEEDS_ADMIN,
    ))
}

async fn list(
    State(roster): State<Roster>,
    caller: KeyHolder,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    may_read(&caller, &roster).await?;
    let params = QueryString::bounded(raw.as_deref())?;
    let role = match params.last("role").filter(|r| !r.is_empty()) {
        None => None,
        Some(r) => Some(
            ReviewerRole::parse(r)
                .ok_or_else(|| bad("role", format!("Unknown `role` value: {r}")))?,
        ),
    };
    let limit = clamp_limit(params.last("limit"));
    let after = decode_cursor::<RosterCursor>(params.last("cursor"))?.map(|c| (c.created_at, c.id));
    let mut rows = roster
        .0
        .reviewers(&RosterQuery {
            tenant: caller.tenant.clone(),
            role,
            after,
            limit: limit + 1,
        })
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| rows.last()).flatten().map(|r| {
        encode_cursor(&RosterCursor {
            created_at: r.created_at,
            id: r.id.clone(),
        })
    });
    let data = rows.iter().map(reviewer_json).collect();
    Ok(Json(page(data, next, Map::new())))
}

/// The person a registration names: a non-empty string.
fn user_id_of(body: &Map<String, Value>) -> Result<String, ApiError> {
    match body.get("userId").and_then(Value::as_str) {
        Some(u) if !u.is_empty() && u.chars().count() <= MAX_USER_ID => Ok(u.to_owned()),
        _ => Err(bad("userId", "Field `userId` must be a non-empty string")),
    }
}

async fn register(
    State(roster): State<Roster>,
    caller: KeyHolder,
    JsonObject(body): JsonObject,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    require_admin(&caller)?;
    let user_id = user_id_of(&body)?;
    let role = body
        .get("role")
        .and_then(Value::as_str)
        .and_then(ReviewerRole::parse)
        .ok_or_else(|| {
            bad(
                "role",
                "Field `role` must be one of: standard, senior, admin",
            )
        })?;
    let display_name = match body.get("displayName") {
        None => None,
        Some(Value::String(s)) if !s.is_empty() && s.chars().count() <= MAX_DISPLAY_NAME => {
            Some(s.clone())
        }
        Some(_) => {
            return Err(bad(
                "displayName",
                "Field `displayName` must be a non-empty string when present",
            ));
        }
    };
    let row = roster
        .0
        .register(&NewReviewer {
            tenant: caller.tenant.clone(),
            user_id,
            role,
            display_name,
            now: kindgi_runtime::record::now_millis(),
        })
        .await
        .map_err(|e| ApiError::internal(&e))?;
    Ok((StatusCode::CREATED, Json(reviewer_json(&row))))
}

async fn get_one(
    State(roster): State<Roster>,
    caller: KeyHolder,
    Path(reviewer_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    may_read(&caller, &roster).await?;
    let missing = || {
        reviewer_not_found(
            format!("No reviewer registered with id \"{reviewer_id}\""),
            &reviewer_id,
        )
    };
    let Ok(id) = uuid::Uuid::parse_str(&reviewer_id) else {
        return Err(missing());
    };
    match roster
        .0
        .reviewer(&caller.tenant, &id.hyphenated().to_string())
        .await
        .map_err(|e| ApiError::internal(&e))?
    {
        Some(r) => Ok(Json(reviewer_json(&r))),
        None => Err(missing()),
    }
}

async fn unregister(
    State(roster): State<Roster>,
    caller: KeyHolder,
    Path(reviewer_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    require_admin(&caller)?;
    let missing = || {
        reviewer_not_found(
            format!("No reviewer \"{reviewer_id}\" to unregister"),
            &reviewer_id,
        )
    };
    let Ok(id) = uuid::Uuid::parse_str(&reviewer_id) else {
        return Err(missing());
    };
    let id = id.hyphenated().to_string();
    match roster
        .0
        .unregister(&caller.tenant, &id, kindgi_runtime::record::now_millis())
        .await
        .map_err(|e| ApiError::internal(&e))?
    {
        Some(r) => Ok(Json(json!({"reviewerId": r.id, "unregistered": true}))),
        None => Err(missing()),
    }
}
