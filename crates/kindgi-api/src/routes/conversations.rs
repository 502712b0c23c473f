//! `/v1/conversations` (platform-api.md §11, `OA:Conversation`, `OA:ConversationMessage`):
//! open (the agent version must exist, via [`AppState::agent_exists`]), list (`agentId`,
//! `status`, `openedBy=me`, `replays`, scope; `openedAt desc`), get, close (idempotent),
//! unregister (`501 conversation-unregister-unsupported`) and messages (`sequence asc`).
//! A non-UUID id is `400 bad-input` ``\`conversationId\` must be a conversation id (a UUID)``.
//!
//! A key limited to a project ([`crate::key_project`]) opens conversations in that project
//! (a body without `projectId` included), lists only that project's, and reading, closing or
//! listing the messages of another project's is `403 permission-denied` naming
//! `conversation:<id>`, as a run of another project is. Its turns are checked by
//! [`check_turn`].
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
use crate::auth::Caller;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::key_project::KeyProject;
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

/// The open body, checked as the reference's `parseOpenBody` does; its `projectId` is the
/// one asked for (resolved by [`open_project`]).
fn parse_open(body: &Map<String, Value>) -> Result<NewConversation, ApiError> {
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
    Ok(NewConversation {
        agent_id,
        agent_version,
        title,
        participant_id,
        project_id,
        opened_by: None,
        scope,
        metadata,
    })
}

/// The project a conversation opens in: the body's (a project of the tenant: unknown is
/// `400 bad-input` here, not 404), else the one the caller's key is limited to, else the
/// tenant's Default project.
async fn open_project(
    state: &AppState,
    caller: &Caller,
    asked: Option<&str>,
) -> Result<String, ApiError> {
    let named = asked.or(caller.project_id.as_deref());
    let Some(p) = named else {
        return Ok(default_project_id(&caller.tenant));
    };
    let projects = <crate::projects::Projects as axum::extract::FromRef<_>>::from_ref(state);
    match projects.check(&caller.tenant, Some(p)).await {
        Err(e) if e.code == "project-not-found" => Err(ApiError::bad_input(format!(
            "`projectId` \"{p}\" does not resolve to a project in this tenant"
        ))),
        other => other,
    }
}

async fn open(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let tenant = caller.tenant.clone();
    let value: Value = serde_json::from_slice(&body)
        .map_err(|_| ApiError::bad_input("Request body must be valid JSON"))?;
    let Value::Object(object) = value else {
        return Err(ApiError::bad_input("Request body must be an object"));
    };
    let mut new = parse_open(&object)?;
    new.project_id = Some(open_project(&state, &caller, new.project_id.as_deref()).await?);
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
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let tenant = &caller.tenant;
    // A repeated key is read by its last value.
    let q = QueryString::parse(query.as_deref());
    let limit = clamp_limit(q.last("limit"));
    let mut filter = list_filter(tenant, &q)?;
    // A key limited to a project lists that project's (a scope naming another was refused
    // before; an org's are none of its project's, as they are none of the tenant's).
    if let Some(limit) = &caller.project_id
        && filter.project_id.is_none()
    {
        filter.project_id = Some(limit.to_ascii_lowercase());
    }
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
        .list(tenant, &filter)
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

/// `403 permission-denied` naming `conversation:<id>` when `c` is of a project the caller's
/// key does not reach.
fn check_reaches(caller: &Caller, c: &Conversation, action: &str) -> Result<(), ApiError> {
    caller.check_reaches(
        c.project_id.as_deref(),
        action,
        &format!("conversation:{}", c.id),
    )
}

/// Conversation `id` as `caller` may `action` it: `404 conversation-not-found`, or `403`
/// for another project's.
async fn reachable(
    state: &AppState,
    caller: &Caller,
    id: &str,
    action: &str,
) -> Result<Conversation, ApiError> {
    let c = store(state).require(&caller.tenant, id).await?;
    check_reaches(caller, &c, action)?;
    Ok(c)
}

/// Before a turn into `input.conversationId` records anything (platform-api.md §3.1): a
/// conversation of another project than the caller's key's is `403 permission-denied`;
/// one of another project than the run's is `409 conversation-project-mismatch`
/// (`details.projectId`, `details.conversationProjectId`). An unknown conversation is left
/// to the runtime's `404`.
pub async fn check_turn(
    state: &AppState,
    caller: &Caller,
    input: &Value,
    run_project: &str,
) -> Result<(), ApiError> {
    let Some(id) = input.get("conversationId").and_then(Value::as_str) else {
        return Ok(());
    };
    if uuid::Uuid::parse_str(id).is_err() {
        return Ok(());
    }
    let Some(c) = store(state)
        .get(&caller.tenant, id)
        .await
        .map_err(|e| ApiError::internal(&e))?
    else {
        return Ok(());
    };
    check_reaches(caller, &c, "write")?;
    let of_conversation = c
        .project_id
        .clone()
        .unwrap_or_else(|| default_project_id(&caller.tenant));
    if of_conversation.eq_ignore_ascii_case(run_project) {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::CONFLICT,
        "conversation-project-mismatch",
        format!(
            "Conversation {id} is in project {of_conversation}; the run is in project {run_project}: start the turn in the conversation's project"
        ),
    )
    .with_details(json!({"projectId": run_project, "conversationProjectId": of_conversation})))
}

async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    Path(raw): Path<String>,
) -> Result<Response, ApiError> {
    let id = conversation_id(&raw)?;
    let c = reachable(&state, &caller, &id, "read").await?;
    Ok(Json(serialize(&c)).into_response())
}

async fn close(
    State(state): State<AppState>,
    caller: Caller,
    Path(raw): Path<String>,
) -> Result<Response, ApiError> {
    let id = conversation_id(&raw)?;
    if caller.project_id.is_some() {
        reachable(&state, &caller, &id, "write").await?;
    }
    let c = store(&state).close(&caller.tenant, &id).await?;
    Ok(Json(serialize(&c)).into_response())
}

async fn unregister(
    State(state): State<AppState>,
    caller: Caller,
    Path(raw): Path<String>,
) -> Result<Response, ApiError> {
    let id = conversation_id(&raw)?;
    // Another project's is refused as a close would be, before the 501.
    if caller.project_id.is_some() {
        reachable(&state, &caller, &id, "write").await?;
    }
    Err(ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "conversation-unregister-unsupported",
        "This runtime can't unregister conversations.",
    ))
}

async fn messages(
    State(state): State<AppState>,
    caller: Caller,
    Path(raw): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let id = conversation_id(&raw)?;
    if caller.project_id.is_some() {
        reachable(&state, &caller, &id, "read").await?;
    }
    let tenant = caller.tenant.clone();
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
