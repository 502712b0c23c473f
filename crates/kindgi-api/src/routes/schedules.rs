//! `/v1/schedules` (platform-api.md §8, `OA schedules.*`): cron triggers over core's
//! [`ScheduleStore`](kindgi_core::ports::ScheduleStore), fired by the runtime's schedule
//! loop ([`kindgi_runtime::triggers::Schedules`], which every write here wakes).
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/schedules` | `201 OA:ScheduleRecord` |
//! | `GET /v1/schedules?limit&cursor&status&projectId` | `OA:ScheduleCollectionPage`, oldest first |
//! | `GET /v1/schedules/{id}?upcoming=1..20` | `OA:ScheduleRecord` |
//! | `PATCH /v1/schedules/{id}` | `OA:ScheduleRecord` (a new expression or zone recomputes `nextFireAt`) |
//! | `POST /v1/schedules/{id}/pause` · `/resume` | the record; same state → `409 trigger-already-in-state` |
//! | `POST /v1/schedules/{id}/unregister` | `{scheduleId, unregistered: true}`; again → 404 |
//! | `GET /v1/schedules/{id}/fires?limit&cursor` | `OA:ScheduleFirePage`, newest first |
//! | `POST /v1/schedules/{id}/run-now` | `202 OA:ScheduleFire` (`manual: true`, `pending`) |
//! | `POST /v1/schedules/{id}/owner {runAsServiceAccountId?}` | the record, owned by the caller or the account (tenant admins) |
//!
//! A non-UUID, unknown, other tenant's or unregistered id is `404 trigger-not-found`
//! ``No schedule with id "<id>"`` with `details.triggerId`. Our extension
//! `toolsAllowedUnattended` ([`super::unattended`]) is read on register and PATCH.

use axum::extract::{FromRef, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_core::definition::DefinitionKind;
use kindgi_core::now_millis;
use kindgi_core::ports::ScheduleQuery;
use kindgi_core::schedule::{CatchUp, Overlap, ScheduleRecord, ScheduleTarget};
use kindgi_core::trigger::{OwnerKind, TriggerOwner, TriggerStatus};
use kindgi_store::service_accounts::ServiceAccountStore;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::key_holder::{KeyHolder, denied, opt_str};
use super::schedules_wire::{
    Policies, check_agent_input, config_of, cron_of, default_deadline, fire_json, invalid_config,
    names_target, policies_of, record_json, target_of, timezone_of,
};
use super::trigger_access::{check_target, listed_project, new_trigger_project, reaches};
use super::unattended::tools_allowed_unattended;
use crate::error::ApiError;
use crate::json_body::JsonObject;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::Projects;
use crate::query::QueryString;
use crate::state::AppState;

/// The schedule routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/schedules", get(list).post(register))
        .route("/v1/schedules/{id}", get(get_one).patch(update))
        .route("/v1/schedules/{id}/pause", post(pause))
        .route("/v1/schedules/{id}/resume", post(resume))
        .route("/v1/schedules/{id}/unregister", post(unregister))
        .route("/v1/schedules/{id}/fires", get(fires))
        .route("/v1/schedules/{id}/run-now", post(run_now))
        .route("/v1/schedules/{id}/owner", post(take_owner))
}

/// `404 trigger-not-found` for `id`.
pub fn not_found(id: &str) -> ApiError {
    let shown: String = id.chars().take(100).collect();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "trigger-not-found",
        format!("No schedule with id \"{shown}\""),
    )
    .with_details(json!({"triggerId": shown}))
}

fn internal(e: &dyn std::fmt::Display) -> ApiError {
    ApiError::internal(e)
}

/// The live schedule `id` of the caller's tenant, within its key's project (`action`:
/// `read` or `write`, what a refusal names).
async fn load_for(
    state: &AppState,
    caller: &KeyHolder,
    id: &str,
    action: &str,
) -> Result<ScheduleRecord, ApiError> {
    let Ok(uuid) = uuid::Uuid::parse_str(id) else {
        return Err(not_found(id));
    };
    let s = state
        .schedules
        .store()
        .get(&caller.tenant, &uuid.hyphenated().to_string())
        .await
        .map_err(|e| internal(&e))?
        .ok_or_else(|| not_found(id))?;
    reaches(caller, &s.project_id, action)?;
    Ok(s)
}

/// [`load_for`] a change.
async fn load(state: &AppState, caller: &KeyHolder, id: &str) -> Result<ScheduleRecord, ApiError> {
    load_for(state, caller, id, "write").await
}

/// `404 flow-not-found` / `agent-not-found` (as `POST /v1/runs` words them) when the target
/// is not registered; `403 permission-denied` when the caller's key may not run it
/// ([`check_target`]); `400 reference-out-of-scope` when it is registered in a project other
/// than the schedule's `project`.
async fn check_schedule_target(
    state: &AppState,
    caller: &KeyHolder,
    project: &str,
    target: &ScheduleTarget,
) -> Result<(), ApiError> {
    let (kind, id, version) = match target {
        ScheduleTarget::Flow {
            flow_id,
            flow_version,
        } => (DefinitionKind::Flow, flow_id, Some(flow_version.as_str())),
        ScheduleTarget::Agent {
            agent_id,
            agent_version,
        } => (DefinitionKind::Agent, agent_id, agent_version.as_deref()),
    };
    check_target(state, caller, project, (kind, id, version), "/target").await
}

/// Who a schedule acts as: the service account `runAsServiceAccountId` names (a tenant
/// admin's to grant), else the caller (its key re-checked at every fire).
async fn owner_of(
    state: &AppState,
    caller: &KeyHolder,
    body: &Map<String, Value>,
) -> Result<(TriggerOwner, Option<String>), ApiError> {
    if let Some(sa) = opt_str(body, "runAsServiceAccountId", 200)? {
        if !caller.is_admin() {
            return Err(denied(
                "`runAsServiceAccountId` needs `act_as` on the service account: a tenant admin holds it",
                "act_as",
                &format!("service_account:{sa}"),
                "not-tenant-admin",
            ));
        }
        let account = ServiceAccountStore::new(state.db.clone())
            .get(&caller.tenant, sa)
            .await
            .map_err(|e| internal(&e))?
            .filter(|a| a.unregistered_at.is_none())
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    "service-account-not-found",
                    format!(
                        "No service account with id \"{}\"",
                        sa.chars().take(100).collect::<String>()
                    ),
                )
                .with_details(json!({"serviceAccountId": sa}))
            })?;
        let owner = TriggerOwner {
            kind: OwnerKind::Service,
            id: account.id,
            display_name: Some(account.name),
        };
        return Ok((owner, None));
    }
    let record = &caller.key.record;
    let owner = match record.principal.as_ref() {
        Some(p) if p.kind == kindgi_store::tokens::PrincipalKind::User => TriggerOwner {
            kind: OwnerKind::User,
            id: p.id.clone(),
            display_name: None,
        },
        Some(p) => TriggerOwner {
            kind: OwnerKind::Service,
            id: p.id.clone(),
            display_name: None,
        },
        None => TriggerOwner {
            kind: OwnerKind::Service,
            id: record.token_id.clone(),
            display_name: record.label.clone(),
        },
    };
    Ok((owner, Some(record.token_id.clone())))
}

async fn register(
    State(state): State<AppState>,
    caller: KeyHolder,
    JsonObject(body): JsonObject,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let cron_required = || {
        ApiError::bad_input("`config.cronExpression` is required")
            .with_details(json!({"field": "config.cronExpression"}))
    };
    let target = target_of(&body)?;
    let config = config_of(&body)?.ok_or_else(cron_required)?;
    let cron = cron_of(config)?.ok_or_else(cron_required)?;
    let timezone = timezone_of(config)?.flatten();
    let input = config.get("input").filter(|v| !v.is_null()).cloned();
    check_agent_input(&target, input.as_ref())?;
    let Policies {
        catch_up,
        overlap,
        starting_deadline_seconds,
        label,
    } = policies_of(&body)?;
    let tools = tools_allowed_unattended(&caller, &body)?.unwrap_or_default();
    let project_id = new_trigger_project(
        &Projects::from_ref(&state),
        &caller,
        opt_str(&body, "projectId", 100)?,
    )
    .await?;
    let now = now_millis();
    let spec = state
        .schedules
        .check(&cron, timezone.as_deref(), now)
        .map_err(|e| invalid_config(&e))?;
    check_schedule_target(&state, &caller, &project_id, &target).await?;
    let (owner, owner_key_id) = owner_of(&state, &caller, &body).await?;
    let record = ScheduleRecord {
        id: uuid::Uuid::new_v4().to_string(),
        tenant: caller.tenant.clone(),
        project_id,
        target,
        owner,
        owner_key_id,
        cron_expression: cron,
        timezone,
        input,
        catch_up: catch_up.unwrap_or(CatchUp::Latest),
        overlap: overlap.unwrap_or(Overlap::Skip),
        starting_deadline_seconds: starting_deadline_seconds.unwrap_or_else(default_deadline),
        label: label.flatten(),
        status: TriggerStatus::Active,
        status_reason: None,
        next_fire_at: spec.next_after(now),
        last_fired_at: None,
        failures_in_row: 0,
        tools_allowed_unattended: tools,
        created_at: now,
        updated_at: now,
    };
    state
        .schedules
        .store()
        .create(&record)
        .await
        .map_err(|e| internal(&e))?;
    state.schedules.changed();
    Ok((StatusCode::CREATED, Json(record_json(&record, None))))
}

/// Where a page of schedules or fires ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageCursor {
    at: i64,
    id: String,
}

async fn list(
    State(state): State<AppState>,
    caller: KeyHolder,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let params = QueryString::bounded(raw.as_deref())?;
    // Values other than active|paused are ignored, as the reference does.
    let status = params.last("status").and_then(TriggerStatus::parse);
    let project_id = match params.last("projectId").filter(|p| !p.is_empty()) {
        None => None,
        Some(p) => match uuid::Uuid::parse_str(p) {
            Ok(u) => Some(u.hyphenated().to_string()),
            Err(_) => {
                return Err(
                    ApiError::bad_input("`projectId` must be a project id (a UUID)")
                        .with_details(json!({"field": "projectId"})),
                );
            }
        },
    };
    let project_id = listed_project(&caller, project_id);
    let limit = clamp_limit(params.last("limit"));
    let after = decode_cursor::<PageCursor>(params.last("cursor"))?.map(|c| (c.at, c.id));
    let mut rows = state
        .schedules
        .store()
        .list(&ScheduleQuery {
            tenant: caller.tenant.clone(),
            status,
            project_id,
            after,
            limit: limit + 1,
        })
        .await
        .map_err(|e| internal(&e))?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| rows.last()).flatten().map(|s| {
        encode_cursor(&PageCursor {
            at: s.created_at,
            id: s.id.clone(),
        })
    });
    let data = rows.iter().map(|s| record_json(s, None)).collect();
    Ok(Json(page(data, next, Map::new())))
}

async fn get_one(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let params = QueryString::bounded(raw.as_deref())?;
    let upcoming = match params.last("upcoming") {
        None => None,
        Some(n) => Some(
            n.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=20).contains(n))
                .ok_or_else(|| {
                    ApiError::bad_input("`upcoming` must be an integer from 1 to 20")
                        .with_details(json!({"field": "upcoming"}))
                })?,
        ),
    };
    let s = load_for(&state, &caller, &id, "read").await?;
    let times = match upcoming {
        None => None,
        Some(n) => {
            let now = now_millis();
            let spec = state
                .schedules
                .check(&s.cron_expression, s.timezone.as_deref(), now)
                .or_else(|_| {
                    kindgi_runtime::triggers::CronSpec::parse(
                        &s.cron_expression,
                        s.timezone.as_deref(),
                        true,
                        now,
                    )
                })
                .map_err(|e| invalid_config(&e))?;
            Some(spec.upcoming(now, n))
        }
    };
    Ok(Json(record_json(&s, times.as_deref())))
}

/// Applies a PATCH body to `s`.
fn patched(
    state: &AppState,
    caller: &KeyHolder,
    mut s: ScheduleRecord,
    body: &Map<String, Value>,
    now: i64,
) -> Result<(ScheduleRecord, bool), ApiError> {
    let retarget = names_target(body);
    if retarget {
        s.target = target_of(body)?;
    }
    let mut rearm = false;
    if let Some(config) = config_of(body)? {
        if let Some(cron) = cron_of(config)? {
            rearm |= cron != s.cron_expression;
            s.cron_expression = cron;
        }
        if let Some(tz) = timezone_of(config)? {
            rearm |= tz != s.timezone;
            s.timezone = tz;
        }
        if let Some(input) = config.get("input") {
            s.input = (!input.is_null()).then(|| input.clone());
        }
    }
    check_agent_input(&s.target, s.input.as_ref())?;
    let p = policies_of(body)?;
    s.catch_up = p.catch_up.unwrap_or(s.catch_up);
    s.overlap = p.overlap.unwrap_or(s.overlap);
    s.starting_deadline_seconds = p
        .starting_deadline_seconds
        .unwrap_or(s.starting_deadline_seconds);
    if let Some(label) = p.label {
        s.label = label;
    }
    if let Some(tools) = tools_allowed_unattended(caller, body)? {
        s.tools_allowed_unattended = tools;
    }
    if rearm {
        let spec = state
            .schedules
            .check(&s.cron_expression, s.timezone.as_deref(), now)
            .map_err(|e| invalid_config(&e))?;
        if s.status == TriggerStatus::Active {
            s.next_fire_at = spec.next_after(now);
        }
    }
    s.updated_at = now;
    Ok((s, retarget))
}

async fn update(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<Value>, ApiError> {
    let s = load(&state, &caller, &id).await?;
    let (s, retarget) = patched(&state, &caller, s, &body, now_millis())?;
    if retarget {
        check_schedule_target(&state, &caller, &s.project_id, &s.target).await?;
    }
    save(&state, &s, &id).await?;
    Ok(Json(record_json(&s, None)))
}

async fn save(state: &AppState, s: &ScheduleRecord, id: &str) -> Result<(), ApiError> {
    if !state
        .schedules
        .store()
        .update(s)
        .await
        .map_err(|e| internal(&e))?
    {
        return Err(not_found(id));
    }
    state.schedules.changed();
    Ok(())
}

fn already(status: TriggerStatus) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "trigger-already-in-state",
        format!("The trigger is already {}", status.as_str()),
    )
    .with_details(json!({"status": status.as_str()}))
}

async fn pause(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let mut s = load(&state, &caller, &id).await?;
    if s.status == TriggerStatus::Paused {
        return Err(already(TriggerStatus::Paused));
    }
    s.status = TriggerStatus::Paused;
    s.status_reason = None;
    s.next_fire_at = None;
    s.updated_at = now_millis();
    save(&state, &s, &id).await?;
    Ok(Json(record_json(&s, None)))
}

async fn resume(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let mut s = load(&state, &caller, &id).await?;
    if s.status == TriggerStatus::Active {
        return Err(already(TriggerStatus::Active));
    }
    let now = now_millis();
    // Missed occurrences are not replayed: the next is the first after now.
    let spec = kindgi_runtime::triggers::CronSpec::parse(
        &s.cron_expression,
        s.timezone.as_deref(),
        true,
        now,
    )
    .map_err(|e| invalid_config(&e))?;
    s.status = TriggerStatus::Active;
    s.status_reason = None;
    s.failures_in_row = 0;
    s.next_fire_at = spec.next_after(now);
    s.updated_at = now;
    save(&state, &s, &id).await?;
    Ok(Json(record_json(&s, None)))
}

async fn unregister(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let s = load(&state, &caller, &id).await?;
    let done = state
        .schedules
        .store()
        .unregister(&caller.tenant, &s.id, now_millis())
        .await
        .map_err(|e| internal(&e))?;
    if !done {
        return Err(not_found(&id));
    }
    state.schedules.changed();
    Ok(Json(json!({"scheduleId": s.id, "unregistered": true})))
}

async fn fires(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let params = QueryString::bounded(raw.as_deref())?;
    let s = load_for(&state, &caller, &id, "read").await?;
    let limit = clamp_limit(params.last("limit"));
    let after = decode_cursor::<PageCursor>(params.last("cursor"))?.map(|c| (c.at, c.id));
    let mut rows = state
        .schedules
        .store()
        .fires(&s.id, after, limit + 1)
        .await
        .map_err(|e| internal(&e))?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| rows.last()).flatten().map(|f| {
        encode_cursor(&PageCursor {
            at: f.fired_at,
            id: f.id.clone(),
        })
    });
    let data = rows.iter().map(fire_json).collect();
    Ok(Json(page(data, next, Map::new())))
}

async fn run_now(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let s = load(&state, &caller, &id).await?;
    let fire = state
        .schedules
        .run_now(&s)
        .await
        .map_err(|e| internal(&e))?;
    Ok((StatusCode::ACCEPTED, Json(fire_json(&fire))))
}

async fn take_owner(
    State(state): State<AppState>,
    caller: KeyHolder,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let JsonObject(body) = JsonObject::or_empty(&body)?;
    let mut s = load(&state, &caller, &id).await?;
    if !caller.is_admin() {
        return Err(denied(
            "Taking over a schedule needs `admin` on its project",
            "admin",
            &format!("project:{}", s.project_id),
            "not-project-admin",
        ));
    }
    let (owner, owner_key_id) = owner_of(&state, &caller, &body).await?;
    s.owner = owner;
    s.owner_key_id = owner_key_id;
    s.failures_in_row = 0;
    s.updated_at = now_millis();
    save(&state, &s, &id).await?;
    Ok(Json(record_json(&s, None)))
}
