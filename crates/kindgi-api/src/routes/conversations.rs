//! `/v1/conversations` (platform-api.md §11, `OA:Conversation`, `OA:ConversationMessage`):
//! open (the agent version must exist, via [`AppState::agent_exists`]), list (`agentId`,
//! `status`, `openedBy=me`, `replays`, scope; `openedAt desc`), get, close (idempotent),
//! unregister (`501 conversation-unregister-unsupported`) and messages (`sequence asc`).
//! A non-UUID id is `400 bad-input` ``\`conversationId\` must be a conversation id (a UUID)``.
//!
//! The runs route uses [`conversation_error`] to answer a turn into a conversation that
//! [`ConversationStore::check_open`] refused (`404 conversation-not-found`,
//! `409 conversation-closed`).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_core::conversation::{
    Conversation, ConversationMessage, ConversationQuery, NewConversation,
};
use kindgi_store::conversations::ConversationStore;
use serde_json::{Map, Value, json};

use super::scope::{self, Scope};
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::default_project_id;
use crate::query::QueryString;
use crate::state::AppState;

/// The longest `agentId`, `agentVersion`, `title` or `participantId` accepted.
pub const MAX_TEXT: usize = 1024;

/// The conversation routes, to be merged into the `/v1` router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/conversations", post(open).get(list))
        .route("/v1/conversations/{conversation_id}", get(get_one))
        .route("/v1/conversations/{conversation_id}/close", post(close))
        .route(
            "/v1/conversations/{conversation_id}/unregister",
            post(unregister),
        )
        .route(
            "/v1/conversations/{conversation_id}/messages",
            get(messages),
        )
}

pub use crate::projects::tenant_uuid;

/// RFC 3339 UTC with milliseconds. (core's record time format).
pub use kindgi_core::ids::format_millis as rfc3339;

fn store(state: &AppState) -> ConversationStore {
    ConversationStore::new(state.db.clone())
}

/// `OA:Conversation`.
pub fn serialize(c: &Conversation) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(c.id));
    o.insert("tenantId".into(), json!(tenant_uuid(&c.tenant_id)));
    o.insert("agentId".into(), json!(c.agent_id));
    o.insert("agentVersion".into(), json!(c.agent_version));
    o.insert("title".into(), json!(c.title));
    for (key, v) in [
        ("participantId", &c.participant_id),
        ("projectId", &c.project_id),
        ("openedBy", &c.opened_by),
    ] {
        if let Some(v) = v {
            o.insert(key.into(), json!(v));
        }
    }
    o.insert("scope".into(), c.scope.clone());
    let status = if c.closed_at.is_some() {
        "closed"
    } else {
        "open"
    };
    o.insert("status".into(), json!(status));
    o.insert("openedAt".into(), json!(rfc3339(c.opened_at)));
    if let Some(t) = c.closed_at {
        o.insert("closedAt".into(), json!(rfc3339(t)));
    }
    if let Some(t) = c.unregistered_at {
        o.insert("unregisteredAt".into(), json!(rfc3339(t)));
    }
    o.insert("turnCount".into(), json!(c.turn_count));
    if let Some(t) = c.last_message_at {
        o.insert("lastMessageAt".into(), json!(rfc3339(t)));
    }
    if let Some(m) = &c.metadata {
        o.insert("metadata".into(), m.clone());
    }
    Value::Object(o)
}

/// `OA:ConversationMessage`.
pub fn serialize_message(m: &ConversationMessage) -> Value {
    let mut o = Map::new();
    o.insert("sequence".into(), json!(m.sequence));
    o.insert("role".into(), json!(m.role.conversation_name()));
    o.insert("content".into(), m.content.clone());
    if let Some(t) = &m.tool_call {
        o.insert(
            "toolCall".into(),
            json!({ "toolId": t.tool_id, "invocationId": t.invocation_id }),
        );
    }
    if let Some(a) = &m.actor {
        o.insert("actor".into(), json!(a));
    }
    o.insert("createdAt".into(), json!(rfc3339(m.created_at)));
    Value::Object(o)
}

/// The path id, checked to be a UUID.
fn conversation_id(raw: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(raw)
        .map(|_| raw.to_owned())
        .map_err(|_| ApiError::bad_input("`conversationId` must be a conversation id (a UUID)"))
}

fn string_field(
    body: &Map<String, Value>,
    key: &str,
    required: bool,
) -> Result<Option<String>, ApiError> {
    match body.get(key) {
        None if !required => Ok(None),
        Some(Value::String(s)) if (!required || !s.is_empty()) && s.chars().count() <= MAX_TEXT => {
            Ok(Some(s.clone()))
        }
        Some(Value::String(s)) if s.chars().count() > MAX_TEXT => Err(ApiError::bad_input(
            format!("`{key}` must be at most {MAX_TEXT} characters"),
        )),
        _ if required => Err(ApiError::bad_input(format!(
            "`{key}` must be a non-empty string"
        ))),
        _ => Err(ApiError::bad_input(format!(
            "`{key}` must be a string when supplied"
        ))),
    }
}

fn object_field(body: &Map<String, Value>, key: &str) -> Result<Option<Value>, ApiError> {
    match body.get(key) {
        None => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
        Some(_) => Err(ApiError::bad_input(format!(
            "`{key}` must be an object when supplied"
        ))),
    }
}

/// The open body, checked as the reference's `parseOpenBody` does.
fn parse_open(tenant: &str, body: &Map<String, Value>) -> Result<NewConversation, ApiError> {
    let agent_id = string_field(body, "agentId", true)?.unwrap_or_default();
    let agent_version = string_field(body, "agentVersion", true)?.unwrap_or_default();
    let title = string_field(body, "title", false)?
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| "Untitled conversation".to_owned());
    let scope = object_field(body, "scope")?.unwrap_or_else(|| json!({}));
    let project_id = match body.get("projectId") {
        None => None,
        Some(Value::String(p)) if uuid::Uuid::parse_str(p).is_ok() => Some(p.clone()),
        Some(_) => {
            return Err(ApiError::bad_input(
                "`projectId` must be a project id (a UUID) when supplied",
            ));
        }
    };
    let participant_id = string_field(body, "participantId", false)?;
    let metadata = object_field(body, "metadata")?;
    let default = default_project_id(tenant);
    let project_id = match project_id {
        None => default,
        Some(p) if p.eq_ignore_ascii_case(&default) => default,
        Some(p) => {
            return Err(ApiError::bad_input(format!(
                "`projectId` \"{p}\" does not resolve to a project in this tenant"
            )));
        }
    };
    Ok(NewConversation {
        agent_id,
        agent_version,
        title,
        participant_id,
        project_id: Some(project_id),
        opened_by: None,
        scope,
        metadata,
    })
}

async fn open(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|_| ApiError::bad_input("Request body must be valid JSON"))?;
    let Value::Object(object) = value else {
        return Err(ApiError::bad_input("Request body must be an object"));
    };
    let new = parse_open(&tenant, &object)?;
    if let Some(check) = &state.agent_exists {
        let exists = check(
            tenant.clone(),
            new.agent_id.clone(),
            new.agent_version.clone(),
        )
        .await
        .map_err(|e| ApiError::internal(&e))?;
        if !exists {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "agent-not-found",
                format!(
                    "No agent \"{}\" at version \"{}\"",
                    new.agent_id, new.agent_version
                ),
            )
            .with_details(json!({ "agentId": new.agent_id, "version": new.agent_version })));
        }
    }
    let opened = store(&state)
        .open(&tenant, new)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    Ok((StatusCode::CREATED, Json(serialize(&opened))).into_response())
}

fn param<'a>(q: &'a QueryString, name: &str) -> Option<&'a str> {
    q.last(name).filter(|s| !s.is_empty())
}

/// The list filter from the query (without paging).
fn list_filter(tenant: &str, q: &QueryString) -> Result<ConversationQuery, ApiError> {
    let open = match param(q, "status") {
        None => None,
        Some("open") => Some(true),
        Some("closed") => Some(false),
        Some(_) => return Err(ApiError::bad_input("`status` must be one of: open, closed")),
    };
    if q.last("openedBy").is_some_and(|o| o != "me") {
        return Err(ApiError::bad_input("`openedBy` must be `me`"));
    }
    if !matches!(
        param(q, "replays"),
        None | Some("exclude" | "include" | "only")
    ) {
        return Err(ApiError::bad_input(
            "`replays` must be `exclude`, `include` or `only`",
        ));
    }
    let scope = scope::parse_query(
        param(q, "scopeKind"),
        param(q, "scopeId"),
        param(q, "inherit"),
    )?;
    let project_id = match scope.scope {
        None | Some(Scope::Tenant) => None,
        Some(Scope::Project(id) | Scope::Org(id)) if uuid::Uuid::parse_str(&id).is_err() => {
            let what = if param(q, "scopeKind") == Some("org") {
                "an org"
            } else {
                "a project"
            };
            return Err(scope::scope_invalid(format!(
                "scope query parameters malformed: scopeId must be {what} id (a UUID), got \"{}\"",
                id.chars().take(200).collect::<String>()
            )));
        }
        // No orgs here: an org's conversations are none of the tenant's.
        Some(Scope::Org(id)) => Some(id),
        Some(Scope::Project(id)) => Some(if id.eq_ignore_ascii_case(&default_project_id(tenant)) {
            default_project_id(tenant)
        } else {
            id
        }),
    };
    Ok(ConversationQuery {
        agent_id: param(q, "agentId").map(str::to_owned),
        open,
        project_id,
        before: None,
        limit: 1,
    })
}

async fn list(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    // A repeated key is read by its last value.
    let q = QueryString::parse(query.as_deref());
    let limit = clamp_limit(q.last("limit"));
    let mut filter = list_filter(&tenant, &q)?;
    let mut extra = Map::new();
    let opened_by_me = q.last("openedBy").is_some_and(|o| o == "me");
    if opened_by_me {
        extra.insert("openedBy".into(), json!("me"));
    }
    // Conversations opened here record no principal (API keys are not people), and this
    // runtime opens no replay conversations: `openedBy=me` and `replays=only` list none.
    if opened_by_me || param(&q, "replays") == Some("only") {
        return Ok(Json(page(Vec::new(), None, extra)).into_response());
    }
    let cursor: Option<Value> = decode_cursor(q.last("cursor"))?;
    if let Some(c) = cursor {
        let at = c
            .get("createdAt")
            .and_then(Value::as_str)
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.timestamp_millis());
        let id = c.get("id").and_then(Value::as_str).map(str::to_owned);
        let (Some(at), Some(id)) = (at, id) else {
            return Err(ApiError::bad_input("`cursor` is malformed"));
        };
        filter.before = Some((at, id));
    }
    filter.limit = limit + 1;
    let mut rows = store(&state)
        .list(&tenant, &filter)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more
        .then(|| {
            rows.last()
                .map(|r| encode_cursor(&json!({ "createdAt": rfc3339(r.opened_at), "id": r.id })))
        })
        .flatten();
    Ok(Json(page(rows.iter().map(serialize).collect(), next, extra)).into_response())
}

async fn get_one(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(raw): Path<String>,
) -> Result<Response, ApiError> {
    let id = conversation_id(&raw)?;
    let c = store(&state).require(&tenant, &id).await?;
    Ok(Json(serialize(&c)).into_response())
}

async fn close(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(raw): Path<String>,
) -> Result<Response, ApiError> {
    let id = conversation_id(&raw)?;
    let c = store(&state).close(&tenant, &id).await?;
    Ok(Json(serialize(&c)).into_response())
}

async fn unregister(
    Tenant(_tenant): Tenant,
    Path(raw): Path<String>,
) -> Result<Response, ApiError> {
    conversation_id(&raw)?;
    Err(ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "conversation-unregister-unsupported",
        "This runtime can't unregister conversations.",
    ))
}

async fn messages(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(raw): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let id = conversation_id(&raw)?;
    // A repeated key is read by its last value.
    let q = QueryString::parse(query.as_deref());
    let limit = clamp_limit(q.last("limit"));
    let cursor: Option<Value> = decode_cursor(q.last("cursor"))?;
    let from = match cursor {
        None => 0,
        Some(c) => c
            .get("sequence")
            .and_then(Value::as_i64)
            .ok_or_else(|| ApiError::bad_input("`cursor` is malformed"))?
            .saturating_add(1),
    };
    let mut rows = store(&state)
        .messages(&tenant, &id, from, limit + 1)
        .await?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more
        .then(|| {
            rows.last()
                .map(|m| encode_cursor(&json!({ "sequence": m.sequence })))
        })
        .flatten();
    Ok(Json(page(
        rows.iter().map(serialize_message).collect(),
        next,
        Map::new(),
    ))
    .into_response())
}
