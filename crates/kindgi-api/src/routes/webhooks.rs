//! `/v1/webhooks` (platform-api.md §9.1, `OA webhooks.*`): register, list, read, change,
//! pause, resume and unregister webhook triggers, take one over, and read its fires, over the
//! [`WebhookStore`] port. The receiver a sender posts to is [`super::hooks`].
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/webhooks` | `201 OA:WebhookTriggerRecord` (`signingSecret` once, with `generateSecret`) |
//! | `GET /v1/webhooks?limit&cursor&status&projectId` | a page, newest first |
//! | `GET`, `PATCH /v1/webhooks/{triggerId}` | the record; `404 trigger-not-found` |
//! | `POST /v1/webhooks/{triggerId}/pause`, `/resume` | the record; same state → `409 trigger-already-in-state` |
//! | `POST /v1/webhooks/{triggerId}/unregister` | `{triggerId, unregistered: true}`; again → 404 |
//! | `POST /v1/webhooks/{triggerId}/owner {runAsServiceAccountId?}` | the record, owned by the caller or the account (tenant admins) |
//! | `GET /v1/webhooks/{triggerId}/fires?limit&cursor` | a page of fires, newest first |
//!
//! `generateSecret` stores a new secret under `hmacSecretName` in the trigger's project, in
//! the served env, through the secrets store (a name the project has → `409
//! secret-write-conflict`); under an `Idempotency-Key` a repeat learns only that it happened
//! (`409 idempotency-key-replay-withheld`). Otherwise the secret's scope is recorded where it
//! is found (the project's, else the tenant's; neither: `null`, nothing verifies).
//! `toolsAllowedUnattended` (our extension) goes through [`super::unattended`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRef, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_core::definition::DefinitionKind;
use kindgi_core::ports::{FireQuery, WebhookQuery, WebhookStore};
use kindgi_core::trigger::{OwnerKind, TriggerOwner, TriggerStatus};
use kindgi_core::webhook::{
    DEFAULT_BODY_LIMIT, DEFAULT_RATE_LIMIT, SecretScope, SignatureConfig, WebhookTrigger,
};
use kindgi_runtime::{Runtime, RuntimeError};
use kindgi_store::idempotency::IdempotencyStore;
use kindgi_store::seal::SecretValue;
use kindgi_store::tokens::PrincipalKind;
use kindgi_store::values::{SecretWrite, ValueKey, ValueScope, ValuesError, WriteMode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::hooks_verify::generate_secret;
use super::key_holder::{KeyHolder, denied, iso};
use super::secrets::name_refusal;
use super::trigger_access::{check_executes, listed_project, new_trigger_project, reaches};
use super::unattended::tools_allowed_unattended;
use super::values::{key_problem, store_for};
use super::webhooks_wire::{
    Settings, bad, fire_json, required_string, settings, trigger_json, trigger_not_found,
};
use crate::error::ApiError;
use crate::idempotency::{AnswerRecorded, IdempotencyContext};
use crate::json_body::JsonObject;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::{Projects, tenant_uuid};
use crate::query::QueryString;
use crate::state::AppState;

/// The webhook triggers as handlers take them (`State<Triggers>`), over the server's
/// database.
#[derive(Debug, Clone)]
pub struct Triggers(pub Arc<dyn WebhookStore>);

impl FromRef<AppState> for Triggers {
    fn from_ref(state: &AppState) -> Triggers {
        Triggers(Arc::new(kindgi_store::webhooks::WebhookTriggerStore::new(
            state.db.clone(),
        )))
    }
}

/// The admin routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/webhooks", get(list).post(register))
        .route("/v1/webhooks/{trigger_id}", get(read).patch(update))
        .route("/v1/webhooks/{trigger_id}/pause", post(pause))
        .route("/v1/webhooks/{trigger_id}/resume", post(resume))
        .route("/v1/webhooks/{trigger_id}/unregister", post(unregister))
        .route("/v1/webhooks/{trigger_id}/owner", post(take_over))
        .route("/v1/webhooks/{trigger_id}/fires", get(fires))
}

/// Why `hmacSecretName` is never a model provider's key (`400 provider-key-refused`).
const PROVIDER_KEY_RULE: &str = "a webhook trigger's signing secret is never a model provider's key (the receiver would read it to check senders). Store the signing secret under its own name and name that";

fn now() -> i64 {
    kindgi_runtime::record::now_millis()
}

fn store_failed(e: kindgi_core::StorageError) -> ApiError {
    ApiError::internal(&e)
}

/// The record's JSON under this server's public URL.
fn answer(state: &AppState, t: &WebhookTrigger) -> Json<Value> {
    Json(Value::Object(trigger_json(
        t,
        state.webhooks.settings.public_url.as_deref(),
    )))
}

/// The caller as an owner: its person, its service account, or (a key that is its own
/// principal) the key.
fn owner_of(caller: &KeyHolder) -> TriggerOwner {
    match caller.principal() {
        Some(p) if p.kind == PrincipalKind::User => TriggerOwner {
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
            id: caller.key.record.key_id.clone(),
            display_name: None,
        },
    }
}

/// `runAsServiceAccountId`: a live service account of the tenant, named by a tenant admin.
async fn run_as(
    state: &AppState,
    caller: &KeyHolder,
    body: &Map<String, Value>,
) -> Result<Option<TriggerOwner>, ApiError> {
    let Some(v) = body.get("runAsServiceAccountId") else {
        return Ok(None);
    };
    let Some(id) = v.as_str().filter(|s| !s.is_empty() && s.len() <= 100) else {
        return Err(bad(
            "runAsServiceAccountId",
            "`runAsServiceAccountId` must be a service account id",
        ));
    };
    if !caller.is_admin() {
        let resource = format!("service_account:{id}");
        return Err(denied(
            "Acting as a service account needs `act_as` on it, which a tenant admin holds",
            "act_as",
            &resource,
            "not-tenant-admin",
        ));
    }
    let account = kindgi_store::service_accounts::ServiceAccountStore::new(state.db.clone())
        .get(&caller.tenant, id)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    match account {
        Some(a) if a.unregistered_at.is_none() => Ok(Some(TriggerOwner {
            kind: OwnerKind::Service,
            id: a.id,
            display_name: Some(a.name),
        })),
        _ => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "service-account-not-found",
            format!("No service account with id \"{id}\" in this tenant"),
        )
        .with_details(json!({"serviceAccountId": id}))),
    }
}

/// `404 flow-not-found` unless the tenant has `flow_id` at `version`.
async fn check_flow(
    rt: &Runtime,
    tenant: &str,
    flow_id: &str,
    version: &str,
) -> Result<(), ApiError> {
    let found = rt
        .definitions()
        .flow(tenant, flow_id, Some(version))
        .await
        .map_err(|e| ApiError::internal(&e))?;
    match found {
        Some(_) => Ok(()),
        None => Err(ApiError::from(RuntimeError::FlowNotFound {
            flow_id: flow_id.to_owned(),
            version: Some(version.to_owned()),
        })),
    }
}

/// Where a named secret is read: the project's, else the tenant's; `None`: neither has it.
async fn secret_scope(
    state: &AppState,
    tenant: &str,
    project_id: &str,
    name: &str,
) -> Result<Option<SecretScope>, ApiError> {
    let store = store_for(&state.db, &state.values);
    for (scope, recorded) in [
        (
            ValueScope::Project(project_id.to_owned()),
            SecretScope::Project {
                project_id: project_id.to_owned(),
            },
        ),
        (ValueScope::Tenant, SecretScope::Tenant),
    ] {
        let key = ValueKey {
            tenant: tenant.to_owned(),
            scope,
            env_name: state.values.served_env.clone(),
            name: name.to_owned(),
        };
        if let Some(r) = store.secret_get(&key).await?
            && r.revoked_at.is_none()
        {
            return Ok(Some(recorded));
        }
    }
    Ok(None)
}

/// Stores a new signing secret under `name` in the project (`409 secret-write-conflict`
/// when the project has the name). Returns the secret, to show once.
async fn store_new_secret(state: &AppState, t: &WebhookTrigger) -> Result<String, ApiError> {
    if let Some(problem) = key_problem(&state.values) {
        return Err(problem);
    }
    let secret = generate_secret(&t.signature);
    let key = ValueKey {
        tenant: t.tenant.clone(),
        scope: ValueScope::Project(t.project_id.clone()),
        env_name: state.values.served_env.clone(),
        name: t.hmac_secret_name.clone(),
    };
    let write = SecretWrite {
        value: SecretValue::new(secret.clone()),
        mode: WriteMode::CreateNew,
        tags: None,
        rotation_due_at: None,
        if_version: None,
    };
    match store_for(&state.db, &state.values)
        .secret_set(&key, &write)
        .await
    {
        Ok(_) => Ok(secret),
        Err(ValuesError::SecretExists { current }) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "secret-write-conflict",
            format!(
                "The project already has a secret \"{}\"; `generateSecret` never overwrites one. Name another, or leave `generateSecret` out to use it",
                t.hmac_secret_name
            ),
        )
        .with_details(json!({"name": t.hmac_secret_name, "currentVersion": current}))),
        Err(e) => Err(ApiError::from(e)),
    }
}

/// The new trigger a register body describes (before its secret is stored).
async fn new_trigger(
    state: &AppState,
    projects: &Projects,
    caller: &KeyHolder,
    body: &Map<String, Value>,
) -> Result<WebhookTrigger, ApiError> {
    let flow_id = required_string(body, "flowId")?;
    let flow_version = required_string(body, "flowVersion")?;
    let hmac_secret_name = required_string(body, "hmacSecretName")?;
    if let Some(refusal) = name_refusal(&hmac_secret_name) {
        return Err(refusal);
    }
    super::providers_keys::refuse(
        state,
        &caller.tenant,
        std::slice::from_ref(&hmac_secret_name),
        PROVIDER_KEY_RULE,
    )
    .await?;
    let project_id = match body.get("projectId") {
        None => None,
        Some(Value::String(p)) => Some(p.as_str()),
        Some(_) => {
            return Err(bad(
                "projectId",
                "`projectId` must be a project id (a UUID)",
            ));
        }
    };
    let project_id = new_trigger_project(projects, caller, project_id).await?;
    let parsed: Settings = settings(body, false)?;
    let tools = tools_allowed_unattended(caller, body)?.unwrap_or_default();
    let (owner, owner_key_id) = match run_as(state, caller, body).await? {
        Some(o) => (o, None),
        None => (owner_of(caller), Some(caller.key.record.token_id.clone())),
    };
    check_executes(
        state,
        caller,
        &project_id,
        (DefinitionKind::Flow, &flow_id, Some(&flow_version)),
        "/flowId",
    )
    .await?;
    check_flow(&state.runtime, &caller.tenant, &flow_id, &flow_version).await?;
    let at = now();
    let mut t = WebhookTrigger {
        trigger_id: uuid::Uuid::new_v4().to_string(),
        webhook_id: uuid::Uuid::new_v4().to_string(),
        tenant: caller.tenant.clone(),
        project_id,
        flow_id,
        flow_version,
        owner,
        owner_key_id,
        input: None,
        hmac_secret_name,
        hmac_secret_scope: None,
        signature: SignatureConfig::default(),
        delivery_id_header: None,
        body_limit_bytes: DEFAULT_BODY_LIMIT,
        rate_limit_per_minute: DEFAULT_RATE_LIMIT,
        label: None,
        status: TriggerStatus::Active,
        status_reason: None,
        tools_allowed_unattended: tools,
        failures_in_row: 0,
        suppressed: None,
        last_fired_at: None,
        created_at: at,
        updated_at: at,
        unregistered_at: None,
    };
    parsed.apply(&mut t)?;
    Ok(t)
}

async fn register(
    State(state): State<AppState>,
    State(triggers): State<Triggers>,
    State(projects): State<Projects>,
    caller: KeyHolder,
    idempotency: Option<IdempotencyContext>,
    JsonObject(body): JsonObject,
) -> Result<Response, ApiError> {
    let mut t = new_trigger(&state, &projects, &caller, &body).await?;
    let generate = match body.get("generateSecret") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => return Err(bad("generateSecret", "`generateSecret` must be a boolean")),
    };
    let secret = if generate {
        let s = store_new_secret(&state, &t).await?;
        t.hmac_secret_scope = Some(SecretScope::Project {
            project_id: t.project_id.clone(),
        });
        Some(s)
    } else {
        t.hmac_secret_scope =
            secret_scope(&state, &t.tenant, &t.project_id, &t.hmac_secret_name).await?;
        None
    };
    triggers.0.register(&t).await.map_err(store_failed)?;
    tracing::info!(trigger_id = %t.trigger_id, flow_id = %t.flow_id, "webhook trigger registered");
    let mut record = trigger_json(&t, state.webhooks.settings.public_url.as_deref());
    let Some(secret) = secret else {
        return Ok((StatusCode::CREATED, Json(Value::Object(record))).into_response());
    };
    record.insert("signingSecret".into(), Value::String(secret));
    let mut response = (StatusCode::CREATED, Json(Value::Object(record))).into_response();
    if let Some(context) = idempotency {
        withhold(&state, &context, t.created_at).await;
        response.extensions_mut().insert(AnswerRecorded::Recorded);
    }
    Ok(response)
}

/// Records, for a register's `Idempotency-Key`, the fact of success instead of the answer
/// that held the signing secret.
async fn withhold(state: &AppState, context: &IdempotencyContext, at: i64) {
    let envelope = ApiError::new(
        StatusCode::CONFLICT,
        "idempotency-key-replay-withheld",
        "This Idempotency-Key already registered a webhook trigger; its answer held a signing secret and is not replayed. Read the trigger with GET /v1/webhooks/{triggerId}, or use a new key",
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

/// Where a page ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Position {
    created_at: i64,
    id: String,
}

async fn list(
    State(state): State<AppState>,
    State(triggers): State<Triggers>,
    caller: KeyHolder,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let q = QueryString::bounded(raw.as_deref())?;
    let limit = clamp_limit(q.last("limit"));
    // Other values are ignored, as the reference does.
    let status = q.last("status").and_then(TriggerStatus::parse);
    let project_id = match q.last("projectId").filter(|p| !p.is_empty()) {
        None => None,
        Some(p) if uuid::Uuid::parse_str(p).is_ok() => Some(p.to_ascii_lowercase()),
        Some(_) => {
            return Err(bad(
                "projectId",
                "`projectId` must be a project id (a UUID)",
            ));
        }
    };
    let project_id = listed_project(&caller, project_id);
    let before = decode_cursor::<Position>(q.last("cursor"))?.map(|p| (p.created_at, p.id));
    let mut rows = triggers
        .0
        .triggers(&WebhookQuery {
            tenant: caller.tenant.clone(),
            status,
            project_id,
            before,
            limit: limit + 1,
        })
        .await
        .map_err(store_failed)?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| rows.last()).flatten().map(|t| {
        encode_cursor(&Position {
            created_at: t.created_at,
            id: t.trigger_id.clone(),
        })
    });
    let url = state.webhooks.settings.public_url.as_deref();
    let data = rows
        .iter()
        .map(|t| Value::Object(trigger_json(t, url)))
        .collect();
    Ok(Json(page(data, next, Map::new())))
}

/// The caller's live trigger `id` (`404 trigger-not-found` for a non-UUID, another
/// tenant's, or an unregistered one), within its key's project (`action`: `read` or `write`,
/// what a refusal names).
async fn live_for(
    triggers: &Triggers,
    caller: &KeyHolder,
    id: &str,
    action: &str,
) -> Result<WebhookTrigger, ApiError> {
    let Ok(uuid) = uuid::Uuid::parse_str(id) else {
        return Err(trigger_not_found(id));
    };
    match triggers
        .0
        .trigger(&caller.tenant, &uuid.hyphenated().to_string())
        .await
        .map_err(store_failed)?
    {
        Some(t) if t.unregistered_at.is_none() => {
            reaches(caller, &t.project_id, action)?;
            Ok(t)
        }
        _ => Err(trigger_not_found(id)),
    }
}

/// [`live_for`] a change.
async fn live(
    triggers: &Triggers,
    caller: &KeyHolder,
    id: &str,
) -> Result<WebhookTrigger, ApiError> {
    live_for(triggers, caller, id, "write").await
}

async fn read(
    State(state): State<AppState>,
    State(triggers): State<Triggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let t = live_for(&triggers, &caller, &id, "read").await?;
    Ok(answer(&state, &t))
}

async fn update(
    State(state): State<AppState>,
    State(triggers): State<Triggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<Value>, ApiError> {
    let mut t = live(&triggers, &caller, &id).await?;
    if body.contains_key("flowId") {
        return Err(bad(
            "flowId",
            "A webhook trigger's `flowId` never changes: register a new trigger for another flow",
        ));
    }
    let parsed = settings(&body, true)?;
    if let Some(tools) = tools_allowed_unattended(&caller, &body)? {
        t.tools_allowed_unattended = tools;
    }
    if body.contains_key("flowVersion") {
        let version = required_string(&body, "flowVersion")?;
        check_executes(
            &state,
            &caller,
            &t.project_id,
            (DefinitionKind::Flow, &t.flow_id, Some(&version)),
            "/flowVersion",
        )
        .await?;
        check_flow(&state.runtime, &t.tenant, &t.flow_id, &version).await?;
        t.flow_version = version;
    }
    if body.contains_key("hmacSecretName") {
        let name = required_string(&body, "hmacSecretName")?;
        if let Some(refusal) = name_refusal(&name) {
            return Err(refusal);
        }
        super::providers_keys::refuse(
            &state,
            &t.tenant,
            std::slice::from_ref(&name),
            PROVIDER_KEY_RULE,
        )
        .await?;
        // Naming the secret again records where it is read now.
        t.hmac_secret_scope = secret_scope(&state, &t.tenant, &t.project_id, &name).await?;
        t.hmac_secret_name = name;
        state.webhooks.secrets.clear();
    }
    parsed.apply(&mut t)?;
    t.updated_at = now();
    if !triggers.0.update(&t).await.map_err(store_failed)? {
        return Err(trigger_not_found(&id));
    }
    let t = live(&triggers, &caller, &id).await?;
    Ok(answer(&state, &t))
}

async fn set_status(
    state: &AppState,
    triggers: &Triggers,
    caller: &KeyHolder,
    id: &str,
    to: TriggerStatus,
) -> Result<Json<Value>, ApiError> {
    let t = live(triggers, caller, id).await?;
    let from = match to {
        TriggerStatus::Active => TriggerStatus::Paused,
        TriggerStatus::Paused => TriggerStatus::Active,
    };
    let moved = triggers
        .0
        .set_status(&t.tenant, &t.trigger_id, from, to, now())
        .await
        .map_err(store_failed)?;
    if !moved {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "trigger-already-in-state",
            format!("The trigger is already {}", to.as_str()),
        )
        .with_details(json!({"triggerId": t.trigger_id, "status": to.as_str()})));
    }
    let t = live(triggers, caller, id).await?;
    Ok(answer(state, &t))
}

async fn pause(
    State(state): State<AppState>,
    State(triggers): State<Triggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    set_status(&state, &triggers, &caller, &id, TriggerStatus::Paused).await
}

async fn resume(
    State(state): State<AppState>,
    State(triggers): State<Triggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    set_status(&state, &triggers, &caller, &id, TriggerStatus::Active).await
}

async fn unregister(
    State(triggers): State<Triggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let t = live(&triggers, &caller, &id).await?;
    if !triggers
        .0
        .unregister(&t.tenant, &t.trigger_id, now())
        .await
        .map_err(store_failed)?
    {
        return Err(trigger_not_found(&id));
    }
    tracing::info!(trigger_id = %t.trigger_id, "webhook trigger unregistered");
    Ok(Json(
        json!({"triggerId": t.trigger_id, "unregistered": true}),
    ))
}

async fn take_over(
    State(state): State<AppState>,
    State(triggers): State<Triggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let JsonObject(body) = JsonObject::or_empty(&bytes)?;
    let mut t = live(&triggers, &caller, &id).await?;
    if !caller.is_admin() {
        return Err(denied(
            "Taking over a webhook trigger needs `admin` on its project",
            "admin",
            &format!("project:{}", t.project_id),
            "not-project-admin",
        ));
    }
    (t.owner, t.owner_key_id) = match run_as(&state, &caller, &body).await? {
        Some(o) => (o, None),
        None => (owner_of(&caller), Some(caller.key.record.token_id.clone())),
    };
    t.updated_at = now();
    if !triggers.0.update(&t).await.map_err(store_failed)? {
        return Err(trigger_not_found(&id));
    }
    Ok(answer(&state, &t))
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FirePosition {
    fired_at: i64,
    id: String,
}

async fn fires(
    State(triggers): State<Triggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let t = live_for(&triggers, &caller, &id, "read").await?;
    let q = QueryString::bounded(raw.as_deref())?;
    let limit = clamp_limit(q.last("limit"));
    let before = decode_cursor::<FirePosition>(q.last("cursor"))?.map(|p| (p.fired_at, p.id));
    let mut rows = triggers
        .0
        .fires(&FireQuery {
            tenant: t.tenant.clone(),
            trigger_id: t.trigger_id.clone(),
            before,
            limit: limit + 1,
        })
        .await
        .map_err(store_failed)?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| rows.last()).flatten().map(|f| {
        encode_cursor(&FirePosition {
            fired_at: f.fired_at,
            id: f.fire_id.clone(),
        })
    });
    Ok(Json(page(
        rows.iter().map(fire_json).collect(),
        next,
        Map::new(),
    )))
}

/// The wire tenant id of a trigger (for the receiver's URL check).
pub fn tenant_id_of(t: &WebhookTrigger) -> String {
    tenant_uuid(&t.tenant)
}
