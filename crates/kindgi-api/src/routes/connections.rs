//! `/v1/connections` (Kindgi's extension, docs/connections.md): a tenant's connections to
//! other apps, over the [`ConnectionStore`] port — what tools' `needsSpec.connections`
//! resolve to per call.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/connections {app, as, permissions, accessToken, refreshToken?, expiresAt?, expiresIn?, tokenUrl?, clientId?, clientSecretName?}` | `201` the connection; again for the same app and holder: same id, new tokens; a person's resumes the runs waiting for it first |
//! | `GET /v1/connections?app&as&limit&cursor` | a page, oldest first |
//! | `GET /v1/connections/connect?app&as&permissions` | how to connect an app: the request to send (the link a waiting call reports) |
//! | `GET /v1/connections/{id}` | the connection; `404 connection-not-found` |
//! | `POST /v1/connections/{id}/revoke` | the connection, `status: revoked`; its tokens erased |
//!
//! `as: person` is the caller's own person (a person's key); `as: company` needs a tenant
//! admin. A person sees their own connections and the company's; an admin sees all. Nothing
//! here ever answers a token: a connection's JSON says only whether it can be refreshed.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_core::connection::{
    ConnectionHolder, ConnectionQuery, ConnectionRecord, ConnectionTokens, NewConnection,
    RefreshClient,
};
use kindgi_core::ports::ConnectionStore;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::key_holder::{KeyHolder, denied, iso};
use super::reviewer::key_person;
use crate::error::ApiError;
use crate::json_body::JsonObject;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::tenant_uuid;
use crate::query::QueryString;
use crate::state::AppState;
use crate::values_config::{KeyState, clip};

/// The longest token accepted (access or refresh), in bytes.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// The most permission keys one connection grants.
pub const MAX_PERMISSIONS: usize = 100;
/// The longest permission key, app id, client id or secret name.
pub const MAX_NAME: usize = 200;
/// The longest token endpoint URL.
pub const MAX_URL: usize = 2048;

/// The message of a company connection write by a caller that is not a tenant admin.
pub const NEEDS_ADMIN: &str =
    "A company connection (`as: company`) is added or revoked by a tenant admin";
/// The message of a person connection added with a key that is no person's.
pub const NEEDS_PERSON: &str = "A person's connection (`as: person`) is added with that person's own key, and this key is not a person's (a service account's, or minted for someone else)";

/// The tenants' connections as handlers take them, over the server's database and its
/// secrets key.
#[derive(Debug, Clone)]
pub struct Connections(pub Arc<dyn ConnectionStore>);

impl axum::extract::FromRef<AppState> for Connections {
    fn from_ref(state: &AppState) -> Connections {
        Connections(Arc::new(kindgi_store::connections::ConnectionsStore::new(
            state.db.clone(),
            state.values.seal_key(),
        )))
    }
}

/// The routes. `connect` is a static segment: it wins over `{connectionId}`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/connections", get(list).post(add))
        .route("/v1/connections/connect", get(connect))
        .route("/v1/connections/{connection_id}", get(get_one))
        .route("/v1/connections/{connection_id}/revoke", post(revoke))
}

/// A connection's JSON: never a token.
pub fn connection_json(c: &ConnectionRecord, now: i64) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(c.id));
    o.insert("tenantId".into(), json!(tenant_uuid(&c.tenant)));
    o.insert("app".into(), json!(c.app));
    o.insert("as".into(), json!(c.holder.as_str()));
    if let Some(u) = c.holder.user_id() {
        o.insert("userId".into(), json!(u));
    }
    o.insert("permissions".into(), json!(c.permissions));
    o.insert("status".into(), json!(c.status(now)));
    if let Some(e) = c.expires_at {
        o.insert("expiresAt".into(), json!(iso(e)));
    }
    o.insert(
        "refreshable".into(),
        json!(c.refreshable && c.refresh.is_some()),
    );
    if let Some(r) = &c.refresh {
        o.insert("tokenUrl".into(), json!(r.token_url));
        o.insert("clientId".into(), json!(r.client_id));
        if let Some(n) = &r.client_secret_name {
            o.insert("clientSecretName".into(), json!(n));
        }
    }
    if let Some(by) = &c.created_by {
        o.insert("createdBy".into(), json!(by));
    }
    o.insert("createdAt".into(), json!(iso(c.created_at)));
    o.insert("updatedAt".into(), json!(iso(c.updated_at)));
    if let Some(r) = c.revoked_at {
        o.insert("revokedAt".into(), json!(iso(r)));
    }
    Value::Object(o)
}

fn bad(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::bad_input(message).with_details(json!({"field": field}))
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "connection-not-found",
        format!("No connection with id \"{}\"", clip(id)),
    )
    .with_details(json!({"connectionId": clip(id)}))
}

fn resource(caller: &KeyHolder) -> String {
    format!("tenant:{}", tenant_uuid(&caller.tenant))
}

/// An app id: `[a-z0-9][a-z0-9._-]*`, at most [`MAX_NAME`] characters.
pub fn is_app_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_NAME
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
        })
}

fn app_of(value: Option<&Value>) -> Result<String, ApiError> {
    match value.and_then(Value::as_str) {
        Some(a) if is_app_id(a) => Ok(a.to_owned()),
        _ => Err(bad(
            "app",
            "Field `app` must be an app's entry id: lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit (e.g. \"google\")",
        )),
    }
}

/// Whose a new connection is: the caller's person, or the company (admins only).
fn holder_of(caller: &KeyHolder, value: Option<&Value>) -> Result<ConnectionHolder, ApiError> {
    match value.and_then(Value::as_str) {
        Some("person") => match key_person(caller) {
            Some(u) => Ok(ConnectionHolder::Person(u)),
            None => Err(denied(
                NEEDS_PERSON,
                "connect",
                &resource(caller),
                NEEDS_PERSON,
            )),
        },
        Some("company") if caller.is_admin() => Ok(ConnectionHolder::Company),
        Some("company") => Err(denied(NEEDS_ADMIN, "admin", &resource(caller), NEEDS_ADMIN)),
        _ => Err(bad(
            "as",
            "Field `as` must be \"person\" (your own connection) or \"company\" (the tenant's)",
        )),
    }
}

fn permissions_of(value: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let wrong = || {
        bad(
            "permissions",
            format!(
                "Field `permissions` must be an array of at most {MAX_PERMISSIONS} permission keys of the app (non-empty strings, e.g. \"gmail.send\")"
            ),
        )
    };
    let Some(Value::Array(items)) = value else {
        return Err(wrong());
    };
    if items.len() > MAX_PERMISSIONS {
        return Err(wrong());
    }
    items
        .iter()
        .map(|p| match p.as_str() {
            Some(s) if !s.is_empty() && s.len() <= MAX_NAME => Ok(s.to_owned()),
            _ => Err(wrong()),
        })
        .collect()
}

/// A token field: a non-empty string of at most [`MAX_TOKEN_BYTES`]. The error never
/// quotes it.
fn token_of(
    body: &Map<String, Value>,
    field: &str,
    required: bool,
) -> Result<Option<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) if !required => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_TOKEN_BYTES => {
            Ok(Some(s.clone()))
        }
        _ => Err(bad(
            field,
            format!(
                "Field `{field}` must be a non-empty string of at most {MAX_TOKEN_BYTES} bytes"
            ),
        )),
    }
}

fn short_string(
    body: &Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<Option<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && s.chars().count() <= max => Ok(Some(s.clone())),
        _ => Err(bad(
            field,
            format!(
                "Field `{field}` must be a non-empty string of at most {max} characters when present"
            ),
        )),
    }
}

/// `expiresAt` (RFC 3339) or `expiresIn` (seconds from now), at most one.
fn expiry_of(body: &Map<String, Value>, now: i64) -> Result<Option<i64>, ApiError> {
    match (body.get("expiresAt"), body.get("expiresIn")) {
        (Some(_), Some(_)) => Err(bad(
            "expiresIn",
            "Give `expiresAt` or `expiresIn`, not both",
        )),
        (Some(Value::String(s)), None) => chrono::DateTime::parse_from_rfc3339(s)
            .map(|d| Some(d.timestamp_millis()))
            .map_err(|_| {
                bad(
                    "expiresAt",
                    "Field `expiresAt` must be an RFC 3339 time (e.g. \"2026-01-31T12:00:00Z\")",
                )
            }),
        (Some(_), None) => Err(bad(
            "expiresAt",
            "Field `expiresAt` must be an RFC 3339 time (e.g. \"2026-01-31T12:00:00Z\")",
        )),
        (None, Some(v)) => match v.as_i64() {
            Some(s) if (1..=10 * 365 * 24 * 3600).contains(&s) => {
                Ok(Some(now.saturating_add(s * 1000)))
            }
            _ => Err(bad(
                "expiresIn",
                "Field `expiresIn` must be a whole number of seconds, 1 to 315360000",
            )),
        },
        (None, None) => Ok(None),
    }
}

/// The refresh client: `tokenUrl` and `clientId` together (and `clientSecretName`), the URL
/// one the host's egress policy admits.
fn refresh_of(
    state: &AppState,
    body: &Map<String, Value>,
) -> Result<Option<RefreshClient>, ApiError> {
    let token_url = short_string(body, "tokenUrl", MAX_URL)?;
    let client_id = short_string(body, "clientId", MAX_NAME)?;
    let client_secret_name = short_string(body, "clientSecretName", MAX_NAME)?;
    let (token_url, client_id) = match (token_url, client_id) {
        (None, None) if client_secret_name.is_none() => return Ok(None),
        (Some(u), Some(c)) => (u, c),
        (None, _) => {
            return Err(bad(
                "tokenUrl",
                "Field `tokenUrl` is required with `clientId` or `clientSecretName`: the OAuth 2 token endpoint a refresh is sent to",
            ));
        }
        (Some(_), None) => {
            return Err(bad(
                "clientId",
                "Field `clientId` is required with `tokenUrl`: the OAuth 2 client the refresh authenticates as",
            ));
        }
    };
    let url = url::Url::parse(&token_url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"));
    let Some(url) = url else {
        return Err(bad("tokenUrl", "Field `tokenUrl` must be an http(s) URL"));
    };
    if let Err(e) = state.egress.check_url(&url) {
        return Err(bad(
            "tokenUrl",
            format!("Field `tokenUrl` may not be reached from this server: {e}"),
        ));
    }
    Ok(Some(RefreshClient {
        token_url,
        client_id,
        client_secret_name,
    }))
}

/// The `503` when no usable secrets key seals tokens.
fn key_missing(state: &AppState) -> Option<ApiError> {
    let reason = match &state.values.key {
        KeyState::Ready(_) => return None,
        KeyState::Missing => kindgi_store::seal::KEY_HOWTO.to_owned(),
        KeyState::Invalid(r) => r.clone(),
    };
    Some(ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "secret-provider-unavailable",
        format!(
            "This runtime has no usable secrets key, so it cannot store connections' tokens: {reason}"
        ),
    ))
}

async fn add(
    State(state): State<AppState>,
    State(store): State<Connections>,
    caller: KeyHolder,
    JsonObject(body): JsonObject,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let now = kindgi_runtime::record::now_millis();
    let app = app_of(body.get("app"))?;
    let holder = holder_of(&caller, body.get("as"))?;
    let permissions = permissions_of(body.get("permissions"))?;
    let access_token = token_of(&body, "accessToken", true)?.unwrap_or_default();
    let refresh_token = token_of(&body, "refreshToken", false)?;
    let expires_at = expiry_of(&body, now)?;
    let refresh = refresh_of(&state, &body)?;
    if let Some(e) = key_missing(&state) {
        return Err(e);
    }
    let row = store
        .0
        .add(&NewConnection {
            tenant: caller.tenant.clone(),
            app,
            holder,
            permissions,
            tokens: ConnectionTokens {
                access_token,
                refresh_token,
                expires_at,
            },
            refresh,
            created_by: Some(caller.actor()),
            now,
        })
        .await
        .map_err(|e| ApiError::internal(&e))?;
    resume_waiting(&state, &row).await;
    Ok((StatusCode::CREATED, Json(connection_json(&row, now))))
}

/// A person's connection came: the runs of the tenant whose calls wait for it are resumed
/// (inline, before the answer). A failure to resume leaves them waiting for the sweeper,
/// which finds the connection on its next pass; the connection is stored either way.
async fn resume_waiting(state: &AppState, row: &ConnectionRecord) {
    let ConnectionHolder::Person(person) = &row.holder else {
        return;
    };
    match state
        .runtime
        .connection_added(&row.tenant, person, &row.app)
        .await
    {
        Ok(0) => {}
        Ok(n) => {
            tracing::info!(app = %row.app, runs = n, "a connection resumed the runs waiting for it")
        }
        Err(e) => {
            tracing::warn!(app = %row.app, error = %e, "could not resume the runs waiting for a connection; the sweeper will");
        }
    }
}

/// Where a page ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cursor {
    created_at: i64,
    id: String,
}

/// What `caller` may see: an admin all (or one kind), a person their own and the company's.
fn visible(
    caller: &KeyHolder,
    kind: Option<&str>,
) -> Result<(Option<ConnectionHolder>, bool), ApiError> {
    if caller.is_admin() {
        return Ok(match kind {
            Some("company") => (Some(ConnectionHolder::Company), false),
            _ => (None, false),
        });
    }
    let person = key_person(caller).map(ConnectionHolder::Person);
    Ok(match (kind, person) {
        (Some("company"), _) => (Some(ConnectionHolder::Company), false),
        (Some("person"), Some(p)) => (Some(p), false),
        (_, Some(p)) => (Some(p), true),
        (_, None) => (Some(ConnectionHolder::Company), false),
    })
}

fn may_see(caller: &KeyHolder, c: &ConnectionRecord) -> bool {
    caller.is_admin()
        || c.holder == ConnectionHolder::Company
        || key_person(caller).is_some_and(|u| c.holder.user_id() == Some(u.as_str()))
}

async fn list(
    State(store): State<Connections>,
    caller: KeyHolder,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let params = QueryString::bounded(raw.as_deref())?;
    let app = match params.last("app").filter(|a| !a.is_empty()) {
        Some(a) if is_app_id(a) => Some(a.to_owned()),
        Some(_) => {
            return Err(bad(
                "app",
                "`app` must be an app's entry id (e.g. \"google\")",
            ));
        }
        None => None,
    };
    let kind = match params.last("as").filter(|a| !a.is_empty()) {
        Some(k @ ("person" | "company")) => Some(k),
        Some(_) => return Err(bad("as", "`as` must be \"person\" or \"company\"")),
        None => None,
    };
    let (holder, with_company) = visible(&caller, kind)?;
    // An admin's `as=person`: every person's, not the company's.
    let admin_people = caller.is_admin() && kind == Some("person");
    let limit = clamp_limit(params.last("limit"));
    let after = decode_cursor::<Cursor>(params.last("cursor"))?.map(|c| (c.created_at, c.id));
    let mut rows = store
        .0
        .connections(&ConnectionQuery {
            tenant: caller.tenant.clone(),
            app,
            holder,
            with_company,
            after,
            limit: limit + 1,
        })
        .await
        .map_err(|e| ApiError::internal(&e))?;
    if admin_people {
        rows.retain(|c| c.holder != ConnectionHolder::Company);
    }
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| rows.last()).flatten().map(|r| {
        encode_cursor(&Cursor {
            created_at: r.created_at,
            id: r.id.clone(),
        })
    });
    let now = kindgi_runtime::record::now_millis();
    let data = rows.iter().map(|c| connection_json(c, now)).collect();
    Ok(Json(page(data, next, Map::new())))
}

async fn find(
    store: &Connections,
    caller: &KeyHolder,
    id: &str,
) -> Result<ConnectionRecord, ApiError> {
    let Ok(uuid) = uuid::Uuid::parse_str(id) else {
        return Err(not_found(id));
    };
    match store
        .0
        .connection(&caller.tenant, &uuid.hyphenated().to_string())
        .await
        .map_err(|e| ApiError::internal(&e))?
    {
        Some(c) if may_see(caller, &c) => Ok(c),
        _ => Err(not_found(id)),
    }
}

async fn get_one(
    State(store): State<Connections>,
    caller: KeyHolder,
    Path(connection_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let c = find(&store, &caller, &connection_id).await?;
    Ok(Json(connection_json(
        &c,
        kindgi_runtime::record::now_millis(),
    )))
}

async fn revoke(
    State(store): State<Connections>,
    caller: KeyHolder,
    Path(connection_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let c = find(&store, &caller, &connection_id).await?;
    if c.holder == ConnectionHolder::Company && !caller.is_admin() {
        return Err(denied(
            NEEDS_ADMIN,
            "admin",
            &resource(&caller),
            NEEDS_ADMIN,
        ));
    }
    let now = kindgi_runtime::record::now_millis();
    match store
        .0
        .revoke(&caller.tenant, &c.id, now)
        .await
        .map_err(|e| ApiError::internal(&e))?
    {
        Some(c) => Ok(Json(connection_json(&c, now))),
        None => Err(not_found(&connection_id)),
    }
}

/// The connect link's answer: what to send to connect `app` (`as`, `permissions` from the
/// query, as a waiting call's `connectUrl` carries them).
async fn connect(_caller: KeyHolder, RawQuery(raw): RawQuery) -> Result<Json<Value>, ApiError> {
    let params = QueryString::bounded(raw.as_deref())?;
    let app = app_of(
        params
            .last("app")
            .map(|a| Value::String(a.to_owned()))
            .as_ref(),
    )?;
    let kind = match params.last("as").filter(|a| !a.is_empty()) {
        None | Some("person") => "person",
        Some("company") => "company",
        Some(_) => return Err(bad("as", "`as` must be \"person\" or \"company\"")),
    };
    let permissions: Vec<String> = params
        .last("permissions")
        .map(|p| {
            p.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty() && p.len() <= MAX_NAME)
                .take(MAX_PERMISSIONS)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let perms: String = permissions
        .iter()
        .map(|p| format!(" --permission={p}"))
        .collect();
    Ok(Json(json!({
        "app": app,
        "as": kind,
        "permissions": permissions,
        "request": {
            "method": "POST",
            "path": "/v1/connections",
            "body": {
                "app": app,
                "as": kind,
                "permissions": permissions,
                "accessToken": "<the app's access token>",
                "refreshToken": "<optional: its refresh token>",
                "expiresIn": "<optional: seconds until the access token expires>",
                "tokenUrl": "<optional: the app's OAuth 2 token endpoint, to refresh at>",
                "clientId": "<optional: the OAuth 2 client id, with tokenUrl>",
                "clientSecretName": "<optional: the tenant secret holding the client secret>"
            }
        },
        "cli": format!("kindgi connections add --app={app} --as={kind}{perms} --access-token-stdin"),
    })))
}
