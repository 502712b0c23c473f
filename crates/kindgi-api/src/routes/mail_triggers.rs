//! `/v1/mail-triggers` (our extension: mail triggers are beyond the reference), modelled on
//! the reference's webhook triggers (platform-api.md §9.1): an address whose inbound mail
//! (`/v1/mail/inbound/{tenantId}`, [`super::mail_inbound`]) starts a flow run for the person
//! who sent it, over the [`MailTriggerStore`] port.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/mail-triggers {address, flowId+flowVersion \| agentId+agentVersion?, senders, mailbox, projectId?, config?, toolsAllowedUnattended?, label?, rateLimitPerMinute?}` | `201` the record |
//! | `GET /v1/mail-triggers?limit&cursor&status&projectId` | a page, oldest first |
//! | `GET/PATCH /v1/mail-triggers/{triggerId}` | the record; `404 trigger-not-found` |
//! | `POST /v1/mail-triggers/{id}/pause\|resume` | the record; same state: `409 trigger-already-in-state` |
//! | `POST /v1/mail-triggers/{id}/unregister` | `{triggerId, unregistered: true}` (again: 404) |
//! | `GET /v1/mail-triggers/{id}/fires?limit&cursor` | `{data: [fire], hasMore, nextCursor?}`, newest first |
//!
//! Every route needs a tenant admin: a trigger acts for the people its `senders` name. A
//! trigger runs a flow (`flowId`+`flowVersion`) or an agent (`agentId`+`agentVersion?`), takes
//! `rateLimitPerMinute` mails a minute (default 600), and keeps the key it was registered with,
//! re-checked at every mail ([`super::schedule_owners`]).
//! An address another live trigger has is `409 trigger-address-taken`.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_core::StorageError;
use kindgi_core::definition::DefinitionKind;
use kindgi_core::mail_trigger::{
    DEFAULT_RATE_LIMIT, MailFire, MailFireQuery, MailSender, MailTarget, MailTrigger,
    MailTriggerConfig, MailTriggerQuery, MailboxConnection,
};
use kindgi_core::ports::MailTriggerStore;
use kindgi_core::trigger::{OwnerKind, TriggerOwner, TriggerStatus};
use kindgi_core::webhook::MAX_RATE_LIMIT;
use kindgi_spec::tool::ConnectionOwner;
use kindgi_store::tokens::PrincipalKind;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::key_holder::{KeyHolder, denied, iso};
use super::trigger_access::{check_target, listed_project, new_trigger_project, reaches};
use crate::error::ApiError;
use crate::json_body::JsonObject;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::{Projects, tenant_uuid};
use crate::query::QueryString;
use crate::state::AppState;

/// The most `senders` a trigger maps.
pub const MAX_SENDERS: usize = 100;
/// The longest address (RFC 5321's path limit).
pub const MAX_ADDRESS: usize = 254;
/// The longest label, app, user id or flow id.
pub const MAX_TEXT: usize = 200;

/// The message of a call by a key that is not a tenant admin.
pub const NEEDS_ADMIN: &str =
    "Mail triggers need a tenant admin: a trigger's runs act for the people its `senders` name";

/// The tenant's mail triggers as handlers take them, over the server's database.
#[derive(Debug, Clone)]
pub struct MailTriggers(pub Arc<dyn MailTriggerStore>);

impl MailTriggers {
    pub fn from_state(state: &AppState) -> MailTriggers {
        MailTriggers(Arc::new(kindgi_store::mail_triggers::MailTriggerSql::new(
            state.db.clone(),
        )))
    }

    /// The live trigger of `address`.
    pub async fn by_address(&self, address: &str) -> Result<Option<MailTrigger>, ApiError> {
        self.0
            .by_address(address)
            .await
            .map_err(|e| ApiError::internal(&e))
    }
}

impl axum::extract::FromRef<AppState> for MailTriggers {
    fn from_ref(state: &AppState) -> MailTriggers {
        MailTriggers::from_state(state)
    }
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/mail-triggers", get(list).post(create))
        .route("/v1/mail-triggers/{trigger_id}", get(get_one).patch(patch))
        .route("/v1/mail-triggers/{trigger_id}/pause", post(pause))
        .route("/v1/mail-triggers/{trigger_id}/resume", post(resume))
        .route(
            "/v1/mail-triggers/{trigger_id}/unregister",
            post(unregister),
        )
        .route("/v1/mail-triggers/{trigger_id}/fires", get(fires))
}

/// The record on the wire.
pub fn trigger_json(t: &MailTrigger) -> Value {
    let c = &t.config;
    let mut o = Map::new();
    o.insert("triggerId".into(), json!(t.trigger_id));
    o.insert("address".into(), json!(t.address));
    match &c.target {
        MailTarget::Flow {
            flow_id,
            flow_version,
        } => {
            o.insert("flowId".into(), json!(flow_id));
            o.insert("flowVersion".into(), json!(flow_version));
        }
        MailTarget::Agent {
            agent_id,
            agent_version,
        } => {
            o.insert("agentId".into(), json!(agent_id));
            if let Some(v) = agent_version {
                o.insert("agentVersion".into(), json!(v));
            }
        }
    }
    o.insert("projectId".into(), json!(t.project_id));
    o.insert("owner".into(), json!(c.owner));
    o.insert("senders".into(), json!(c.senders));
    o.insert("mailbox".into(), json!(c.mailbox));
    if let Some(input) = &c.input {
        o.insert("input".into(), input.clone());
    }
    o.insert(
        "toolsAllowedUnattended".into(),
        json!(c.tools_allowed_unattended),
    );
    o.insert("label".into(), json!(c.label));
    o.insert("rateLimitPerMinute".into(), json!(c.rate_limit_per_minute));
    o.insert("status".into(), json!(t.status.as_str()));
    if let Some(r) = &t.status_reason {
        o.insert("statusReason".into(), json!(r));
    }
    o.insert("lastFiredAt".into(), json!(t.last_fired_at.map(iso)));
    o.insert("createdAt".into(), json!(iso(t.created_at)));
    o.insert("updatedAt".into(), json!(iso(t.updated_at)));
    Value::Object(o)
}

/// A fire on the wire.
pub fn fire_json(f: &MailFire) -> Value {
    let mut o = Map::new();
    o.insert("fireId".into(), json!(f.fire_id));
    o.insert("triggerId".into(), json!(f.trigger_id));
    o.insert("firedAt".into(), json!(iso(f.fired_at)));
    o.insert("outcome".into(), json!(f.outcome.as_str()));
    for (k, v) in [
        ("runId", &f.run_id),
        ("detail", &f.detail),
        ("from", &f.from),
        ("messageId", &f.message_id),
    ] {
        if let Some(v) = v {
            o.insert(k.into(), json!(v));
        }
    }
    if f.duplicates > 0 {
        o.insert("duplicates".into(), json!(f.duplicates));
        o.insert(
            "lastDuplicateAt".into(),
            json!(f.last_duplicate_at.map(iso)),
        );
    }
    Value::Object(o)
}

fn bad(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::bad_input(message).with_details(json!({"field": field}))
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "trigger-not-found",
        format!("No mail trigger with id \"{id}\""),
    )
    .with_details(json!({"triggerId": id}))
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

fn stored(e: StorageError, address: &str) -> ApiError {
    match e {
        StorageError::Conflict { .. } => ApiError::new(
            StatusCode::CONFLICT,
            "trigger-address-taken",
            format!("Another mail trigger already has the address {address}: unregister it, or pick another address"),
        )
        .with_details(json!({"field": "address", "address": address})),
        e => ApiError::internal(&e),
    }
}

/// `local@domain`, lower-case.
pub fn address_of(value: Option<&Value>, field: &str) -> Result<String, ApiError> {
    let why = format!(
        "`{field}` must be a mail address (local@domain, at most {MAX_ADDRESS} characters)"
    );
    let s = value
        .and_then(Value::as_str)
        .map(|s| s.trim().to_ascii_lowercase())
        .ok_or_else(|| bad(field, why.clone()))?;
    let ok = s.len() <= MAX_ADDRESS
        && s.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains('@')
        })
        && !s
            .chars()
            .any(|c| c.is_whitespace() || "<>()[],;:\\\"".contains(c));
    if ok { Ok(s) } else { Err(bad(field, why)) }
}

fn text_of(body: &Map<String, Value>, field: &str) -> Result<String, ApiError> {
    match body.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= MAX_TEXT => {
            Ok(s.trim().to_owned())
        }
        None | Some(Value::Null) => Err(bad(field, format!("`{field}` is required"))),
        Some(_) => Err(bad(
            field,
            format!("`{field}` must be a non-empty string of at most {MAX_TEXT} characters"),
        )),
    }
}

fn senders_of(value: &Value) -> Result<Vec<MailSender>, ApiError> {
    let items = value
        .as_array()
        .filter(|a| !a.is_empty() && a.len() <= MAX_SENDERS)
        .ok_or_else(|| {
            bad(
                "senders",
                format!("`senders` must be an array of 1 to {MAX_SENDERS} {{address, userId}}: the people the trigger acts for, by the address their mail comes from"),
            )
        })?;
    let mut out: Vec<MailSender> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("senders[{i}]");
        let o = item.as_object().ok_or_else(|| {
            bad(
                &field,
                format!("`{field}` must be an object {{address, userId}}"),
            )
        })?;
        let address = address_of(o.get("address"), &format!("{field}.address"))?;
        let user_id = text_of(o, "userId").map_err(|_| {
            bad(
                &format!("{field}.userId"),
                format!("`{field}.userId` must be the user id of the person mail from {address} acts for"),
            )
        })?;
        if out.iter().any(|s| s.address == address) {
            return Err(bad(&field, format!("`{field}`: {address} is listed twice")));
        }
        out.push(MailSender { address, user_id });
    }
    Ok(out)
}

fn mailbox_of(value: &Value) -> Result<MailboxConnection, ApiError> {
    let o = value.as_object().ok_or_else(|| {
        bad(
            "mailbox",
            "`mailbox` must be {app, whose?}: the connection the address is (e.g. {\"app\": \"google\", \"whose\": \"company\"})",
        )
    })?;
    let app = text_of(o, "app").map_err(|_| {
        bad(
            "mailbox.app",
            "`mailbox.app` must be the app's entry id (e.g. google)",
        )
    })?;
    let whose = match o.get("whose").and_then(Value::as_str) {
        None => ConnectionOwner::Company,
        Some("company") => ConnectionOwner::Company,
        Some("person") => ConnectionOwner::Person,
        Some(_) => {
            return Err(bad(
                "mailbox.whose",
                "`mailbox.whose` must be person or company",
            ));
        }
    };
    Ok(MailboxConnection { app, whose })
}

fn input_of(body: &Map<String, Value>) -> Result<Option<Option<Value>>, ApiError> {
    let Some(config) = body.get("config") else {
        return Ok(None);
    };
    match config.get("input") {
        None | Some(Value::Null) => Ok(Some(None)),
        Some(Value::Object(o)) => Ok(Some(Some(Value::Object(o.clone())))),
        Some(_) => Err(bad(
            "config.input",
            "`config.input` must be an object (the run's fixed input; the mail goes under `mail`)",
        )),
    }
}

fn label_of(body: &Map<String, Value>) -> Result<Option<Option<String>>, ApiError> {
    match body.get("label") {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(s)) if s.chars().count() <= MAX_TEXT => Ok(Some(Some(s.clone()))),
        Some(_) => Err(bad(
            "label",
            format!("`label` must be a string of at most {MAX_TEXT} characters, or null"),
        )),
    }
}

fn owner_of(caller: &KeyHolder) -> TriggerOwner {
    match caller.principal() {
        Some(p) => TriggerOwner {
            kind: match p.kind {
                PrincipalKind::User => OwnerKind::User,
                PrincipalKind::ServiceAccount => OwnerKind::Service,
            },
            id: p.id.clone(),
            display_name: None,
        },
        None => TriggerOwner {
            kind: OwnerKind::Service,
            id: caller.key.record.token_id.clone(),
            display_name: None,
        },
    }
}

/// `404 flow-not-found` / `agent-not-found` unless the tenant has what `target` runs;
/// `403 permission-denied` when the caller's key may not run it ([`check_target`]); `400
/// reference-out-of-scope` when it is registered in a project other than the trigger's.
async fn check_mail_target(
    state: &AppState,
    caller: &KeyHolder,
    project: &str,
    target: &MailTarget,
) -> Result<(), ApiError> {
    let (kind, id, version) = match target {
        MailTarget::Flow {
            flow_id,
            flow_version,
        } => (DefinitionKind::Flow, flow_id, Some(flow_version.as_str())),
        MailTarget::Agent {
            agent_id,
            agent_version,
        } => (DefinitionKind::Agent, agent_id, agent_version.as_deref()),
    };
    check_target(state, caller, project, (kind, id, version), "/target").await
}

/// What a register body runs: `flowId` with `flowVersion`, or `agentId` (with
/// `agentVersion`, else the version registered when a mail comes).
fn target_of(body: &Map<String, Value>) -> Result<MailTarget, ApiError> {
    match (body.get("flowId"), body.get("agentId")) {
        (Some(_), None) => Ok(MailTarget::Flow {
            flow_id: text_of(body, "flowId")?,
            flow_version: text_of(body, "flowVersion")?,
        }),
        (None, Some(_)) => Ok(MailTarget::Agent {
            agent_id: text_of(body, "agentId")?,
            agent_version: match body.get("agentVersion") {
                None | Some(Value::Null) => None,
                Some(_) => Some(text_of(body, "agentVersion")?),
            },
        }),
        _ => Err(bad(
            "flowId",
            "Name what the trigger runs: `flowId` (with `flowVersion`) or `agentId` (with `agentVersion`, else the agent's version when a mail comes), not both",
        )),
    }
}

/// `rateLimitPerMinute`: 1 to 6000 mails a minute (`null` on a PATCH: the default).
fn rate_of(body: &Map<String, Value>) -> Result<Option<u32>, ApiError> {
    match body.get("rateLimitPerMinute") {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(DEFAULT_RATE_LIMIT)),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=u64::from(MAX_RATE_LIMIT)).contains(n))
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                bad(
                    "rateLimitPerMinute",
                    format!("`rateLimitPerMinute` must be an integer from 1 to {MAX_RATE_LIMIT}"),
                )
            }),
    }
}

async fn create(
    State(state): State<AppState>,
    State(projects): State<Projects>,
    State(triggers): State<MailTriggers>,
    caller: KeyHolder,
    JsonObject(body): JsonObject,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    require_admin(&caller)?;
    let address = address_of(body.get("address"), "address")?;
    let target = target_of(&body)?;
    let senders = senders_of(body.get("senders").unwrap_or(&Value::Null))?;
    let mailbox = mailbox_of(body.get("mailbox").unwrap_or(&Value::Null))?;
    let input = input_of(&body)?.flatten();
    let label = label_of(&body)?.flatten();
    let tools = super::unattended::tools_allowed_unattended(&caller, &body)?.unwrap_or_default();
    let project_id = match body.get("projectId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(bad(
                "projectId",
                "`projectId` must be a project id (a UUID)",
            ));
        }
    };
    let project_id = new_trigger_project(&projects, &caller, project_id.as_deref()).await?;
    let rate_limit_per_minute = rate_of(&body)?.unwrap_or(DEFAULT_RATE_LIMIT);
    check_mail_target(&state, &caller, &project_id, &target).await?;
    let now = kindgi_runtime::record::now_millis();
    let trigger = MailTrigger {
        trigger_id: uuid::Uuid::new_v4().to_string(),
        tenant: caller.tenant.clone(),
        address,
        project_id,
        config: MailTriggerConfig {
            target,
            owner: owner_of(&caller),
            owner_key_id: Some(caller.key.record.token_id.clone()),
            senders,
            mailbox,
            input,
            tools_allowed_unattended: tools,
            label,
            rate_limit_per_minute,
        },
        status: TriggerStatus::Active,
        status_reason: None,
        consecutive_failures: 0,
        last_fired_at: None,
        created_at: now,
        updated_at: now,
    };
    triggers
        .0
        .create(&trigger)
        .await
        .map_err(|e| stored(e, &trigger.address))?;
    Ok((StatusCode::CREATED, Json(trigger_json(&trigger))))
}

/// Where a page ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cursor {
    at: i64,
    id: String,
}

async fn list(
    State(triggers): State<MailTriggers>,
    caller: KeyHolder,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    require_admin(&caller)?;
    let params = QueryString::bounded(raw.as_deref())?;
    let limit = clamp_limit(params.last("limit"));
    let after = decode_cursor::<Cursor>(params.last("cursor"))?.map(|c| (c.at, c.id));
    let mut rows = triggers
        .0
        .list(&MailTriggerQuery {
            tenant: caller.tenant.clone(),
            // Other values are ignored, as the reference's lists do.
            status: params.last("status").and_then(TriggerStatus::parse),
            project_id: listed_project(
                &caller,
                params.non_empty("projectId").map(str::to_ascii_lowercase),
            ),
            after,
            limit: limit + 1,
        })
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| rows.last()).flatten().map(|t| {
        encode_cursor(&Cursor {
            at: t.created_at,
            id: t.trigger_id.clone(),
        })
    });
    Ok(Json(page(
        rows.iter().map(trigger_json).collect(),
        next,
        Map::new(),
    )))
}

/// The live trigger `id` of the caller's tenant, within its key's project (`action`:
/// `read` or `write`, what a refusal names).
async fn find(
    triggers: &MailTriggers,
    caller: &KeyHolder,
    id: &str,
    action: &str,
) -> Result<MailTrigger, ApiError> {
    let Ok(uuid) = uuid::Uuid::parse_str(id) else {
        return Err(not_found(id));
    };
    let t = triggers
        .0
        .get(&caller.tenant, &uuid.hyphenated().to_string())
        .await
        .map_err(|e| ApiError::internal(&e))?
        .ok_or_else(|| not_found(id))?;
    reaches(caller, &t.project_id, action)?;
    Ok(t)
}

async fn get_one(
    State(triggers): State<MailTriggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    require_admin(&caller)?;
    Ok(Json(trigger_json(
        &find(&triggers, &caller, &id, "read").await?,
    )))
}

async fn patch(
    State(state): State<AppState>,
    State(projects): State<Projects>,
    State(triggers): State<MailTriggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<Value>, ApiError> {
    require_admin(&caller)?;
    let mut t = find(&triggers, &caller, &id, "write").await?;
    if body.contains_key("address") {
        t.address = address_of(body.get("address"), "address")?;
    }
    for field in ["flowId", "agentId"] {
        if body.contains_key(field) {
            return Err(bad(
                field,
                format!("`{field}` never changes: register another trigger to run something else"),
            ));
        }
    }
    let mut retarget = match (
        &mut t.config.target,
        body.contains_key("flowVersion"),
        body.contains_key("agentVersion"),
    ) {
        (MailTarget::Flow { flow_version, .. }, true, false) => {
            *flow_version = text_of(&body, "flowVersion")?;
            true
        }
        (MailTarget::Agent { agent_version, .. }, false, true) => {
            *agent_version = match body.get("agentVersion") {
                None | Some(Value::Null) => None,
                Some(_) => Some(text_of(&body, "agentVersion")?),
            };
            true
        }
        (_, false, false) => false,
        (MailTarget::Flow { .. }, _, _) => {
            return Err(bad(
                "agentVersion",
                "This trigger runs a flow: change its `flowVersion`",
            ));
        }
        (MailTarget::Agent { .. }, _, _) => {
            return Err(bad(
                "flowVersion",
                "This trigger runs an agent: change its `agentVersion`",
            ));
        }
    };
    if let Some(rate) = rate_of(&body)? {
        t.config.rate_limit_per_minute = rate;
    }
    if let Some(s) = body.get("senders") {
        t.config.senders = senders_of(s)?;
    }
    if let Some(m) = body.get("mailbox") {
        t.config.mailbox = mailbox_of(m)?;
    }
    if let Some(input) = input_of(&body)? {
        t.config.input = input;
    }
    if let Some(label) = label_of(&body)? {
        t.config.label = label;
    }
    if let Some(tools) = super::unattended::tools_allowed_unattended(&caller, &body)? {
        t.config.tools_allowed_unattended = tools;
    }
    if let Some(p) = body.get("projectId") {
        let p = p
            .as_str()
            .ok_or_else(|| bad("projectId", "`projectId` must be a project id (a UUID)"))?;
        let moved = new_trigger_project(&projects, &caller, Some(p)).await?;
        retarget |= !moved.eq_ignore_ascii_case(&t.project_id);
        t.project_id = moved;
    }
    // A new version, or a new project, must still reach what it runs.
    if retarget {
        check_mail_target(&state, &caller, &t.project_id, &t.config.target).await?;
    }
    t.updated_at = kindgi_runtime::record::now_millis();
    write(&triggers, &t, &id).await?;
    Ok(Json(trigger_json(&t)))
}

async fn write(triggers: &MailTriggers, t: &MailTrigger, id: &str) -> Result<(), ApiError> {
    if triggers
        .0
        .update(t)
        .await
        .map_err(|e| stored(e, &t.address))?
    {
        Ok(())
    } else {
        Err(not_found(id))
    }
}

async fn set_status(
    triggers: &MailTriggers,
    caller: &KeyHolder,
    id: &str,
    to: TriggerStatus,
) -> Result<Json<Value>, ApiError> {
    require_admin(caller)?;
    let mut t = find(triggers, caller, id, "write").await?;
    if t.status == to {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "trigger-already-in-state",
            format!("The trigger is already {}", to.as_str()),
        )
        .with_details(json!({"triggerId": t.trigger_id, "status": to.as_str()})));
    }
    t.status = to;
    t.status_reason = None;
    if to == TriggerStatus::Active {
        t.consecutive_failures = 0;
    }
    t.updated_at = kindgi_runtime::record::now_millis();
    write(triggers, &t, id).await?;
    Ok(Json(trigger_json(&t)))
}

async fn pause(
    State(triggers): State<MailTriggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    set_status(&triggers, &caller, &id, TriggerStatus::Paused).await
}

async fn resume(
    State(triggers): State<MailTriggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    set_status(&triggers, &caller, &id, TriggerStatus::Active).await
}

async fn unregister(
    State(triggers): State<MailTriggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    require_admin(&caller)?;
    let t = find(&triggers, &caller, &id, "write").await?;
    let now = kindgi_runtime::record::now_millis();
    if !triggers
        .0
        .unregister(&caller.tenant, &t.trigger_id, now)
        .await
        .map_err(|e| ApiError::internal(&e))?
    {
        return Err(not_found(&id));
    }
    Ok(Json(
        json!({"triggerId": t.trigger_id, "unregistered": true}),
    ))
}

async fn fires(
    State(triggers): State<MailTriggers>,
    caller: KeyHolder,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    require_admin(&caller)?;
    let t = find(&triggers, &caller, &id, "read").await?;
    let params = QueryString::bounded(raw.as_deref())?;
    let limit = clamp_limit(params.last("limit"));
    let before = decode_cursor::<Cursor>(params.last("cursor"))?.map(|c| (c.at, c.id));
    let mut rows = triggers
        .0
        .fires(&MailFireQuery {
            tenant: caller.tenant.clone(),
            trigger_id: t.trigger_id.clone(),
            before,
            limit: limit + 1,
        })
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| rows.last()).flatten().map(|f| {
        encode_cursor(&Cursor {
            at: f.fired_at,
            id: f.fire_id.clone(),
        })
    });
    Ok(Json(page(
        rows.iter().map(fire_json).collect(),
        next,
        Map::new(),
    )))
}
