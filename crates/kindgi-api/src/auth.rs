//! Bearer API keys (platform-api.md §1.2): the [`Caller`] extractor (and [`Tenant`], its
//! tenant alone). `Authorization: Bearer <key>`, the scheme in any case, the key trimmed.
//!
//! | request | answer |
//! |---|---|
//! | no header, or an empty one | `401 auth-missing` `Authorization header is required` |
//! | another scheme | `401 auth-missing` `Authorization header must be "Bearer <token>"` |
//! | `Bearer` and nothing | `401 auth-missing` `Bearer token is empty` |
//! | a key nobody issued | `401 auth-missing` `Bearer token is not recognized` |
//! | a revoked key | `401 auth-revoked` `Bearer token has been revoked` |
//! | an expired key | `401 auth-expired` `Bearer token has expired` |
//!
//! No `WWW-Authenticate`. A key is checked on every request, from a cache that follows every
//! change to keys in any process (see [`AppState::authenticate`]). When a middleware has already checked the same request's
//! key, it leaves an [`Authenticated`] extension and the extractor uses it instead of reading
//! the row twice.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use kindgi_core::StartedBy;
use kindgi_store::tokens::{HeldCapabilities, KeyStatus, PrincipalKind};

use crate::error::ApiError;
use crate::state::AppState;

/// Who a key acts for, when the key names one (recorded with the key by
/// `kindgi_store::tokens`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A person (`user:<id>`).
    User(String),
    /// A service account (`service_account:<id>`).
    ServiceAccount(String),
}

/// The authenticated caller: the key's tenant, the key's id, when known its principal, the
/// capabilities the key holds (fail-closed; see [`HeldCapabilities`]) and the project the
/// key is limited to, if it is (`projectId` at mint; see [`crate::key_project`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub tenant: String,
    pub key_id: String,
    pub principal: Option<Principal>,
    pub capabilities: HeldCapabilities,
    pub project_id: Option<String>,
}

impl Caller {
    /// A run's `startedBy` for runs this caller starts (§3.1 `startedByCaller`): a person →
    /// `person`; a service account, or a key that is its own principal → `key`.
    pub fn started_by(&self) -> StartedBy {
        match self.principal {
            Some(Principal::User(_)) => StartedBy::Person,
            // A service account's key, or a key that is its own principal.
            Some(Principal::ServiceAccount(_)) | None => StartedBy::Key,
        }
    }

    /// Who this caller is, when its key names a principal: `user:<id>` or
    /// `service_account:<id>` (a run's `startedByActor`, an approval's `requestedBy`).
    pub fn actor(&self) -> Option<String> {
        match &self.principal {
            Some(Principal::User(id)) => Some(format!("user:{id}")),
            Some(Principal::ServiceAccount(id)) => Some(format!("service_account:{id}")),
            None => None,
        }
    }

    /// The caller part of an idempotency key (`user:…`, `service_account:…` or the key).
    pub fn idempotency_scope(&self) -> String {
        match &self.principal {
            Some(Principal::User(id)) => format!("user:{id}"),
            Some(Principal::ServiceAccount(id)) => format!("service_account:{id}"),
            None => format!("key:{}", self.key_id),
        }
    }
}

/// The authenticated caller's tenant.
#[derive(Debug, Clone)]
pub struct Tenant(pub String);

/// This request's caller, already checked earlier in the same request.
#[derive(Debug, Clone)]
pub(crate) struct Authenticated(pub(crate) Caller);

fn missing(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, "auth-missing", message)
}

/// The key of an `Authorization` header, or the `401` its shape earns.
pub(crate) fn bearer_key(headers: &HeaderMap) -> Result<&str, ApiError> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or("\u{0}").trim())
        .unwrap_or_default();
    if value.is_empty() {
        return Err(missing("Authorization header is required"));
    }
    let (scheme, key) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(missing("Authorization header must be \"Bearer <token>\""));
    }
    let key = key.trim();
    if key.is_empty() {
        return Err(missing("Bearer token is empty"));
    }
    Ok(key)
}

/// Authenticates a request's headers.
pub(crate) async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Caller, ApiError> {
    let key = bearer_key(headers)?;
    match state
        .authenticate(key)
        .await
        .map_err(|e| ApiError::internal(&e))?
    {
        KeyStatus::Valid {
            tenant,
            key_id,
            principal,
            key,
        } => Ok(Caller {
            tenant,
            key_id,
            principal: principal.map(|p| match p.kind {
                PrincipalKind::User => Principal::User(p.id),
                PrincipalKind::ServiceAccount => Principal::ServiceAccount(p.id),
            }),
            capabilities: key.held_capabilities(),
            project_id: key.record.project_id.clone(),
        }),
        KeyStatus::Unknown => Err(missing("Bearer token is not recognized")),
        KeyStatus::Expired => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "auth-expired",
            "Bearer token has expired",
        )),
        KeyStatus::Revoked => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "auth-revoked",
            "Bearer token has been revoked",
        )),
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
        if let Some(Authenticated(caller)) = parts.extensions.get::<Authenticated>() {
            return Ok(caller.clone());
        }
        let caller = authenticate(state, &parts.headers).await?;
        parts.extensions.insert(Authenticated(caller.clone()));
        Ok(caller)
    }
}

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Tenant, ApiError> {
        Caller::from_request_parts(parts, state)
            .await
            .map(|c| Tenant(c.tenant))
    }
}
