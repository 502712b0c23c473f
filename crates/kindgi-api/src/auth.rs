//! Bearer API keys: the [`Tenant`] extractor. `Authorization: Bearer <key>`; the tenant comes
//! from the key. Missing or malformed → `401 auth-missing`; unknown → `401 auth-invalid`;
//! expired → `401 auth-expired`; revoked → `401 auth-revoked`.
//!
//! A key is checked against the database on every request (no cache; see
//! [`AppState::authenticate`]). When the idempotency middleware has already checked the same
//! request's key, it leaves an [`Authenticated`] extension and the extractor uses it instead
//! of reading the row twice.

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use kindgi_store::tokens::KeyStatus;

use crate::error::ApiError;
use crate::state::AppState;

/// The authenticated caller's tenant.
#[derive(Debug, Clone)]
pub struct Tenant(pub String);

/// The tenant of this request's key, already checked earlier in the same request.
#[derive(Debug, Clone)]
pub(crate) struct Authenticated(pub(crate) String);

fn unauthorized(code: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
}

/// The key of an `Authorization: Bearer <key>` header, if the header has that shape.
pub(crate) fn bearer_key(headers: &axum::http::HeaderMap) -> Option<&str> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, key) = value.split_once(' ')?;
    let key = key.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !key.is_empty()).then_some(key)
}

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Tenant, ApiError> {
        if let Some(Authenticated(tenant)) = parts.extensions.get::<Authenticated>() {
            return Ok(Tenant(tenant.clone()));
        }
        let key = bearer_key(&parts.headers).ok_or_else(|| {
            unauthorized(
                "auth-missing",
                "Missing or malformed Authorization header; send `Authorization: Bearer <api-key>`",
            )
        })?;
        match state
            .authenticate(key)
            .await
            .map_err(|e| ApiError::internal(&e))?
        {
            KeyStatus::Valid { tenant, .. } => Ok(Tenant(tenant)),
            KeyStatus::Unknown => Err(unauthorized(
                "auth-invalid",
                "The API key is not valid; create one with `kindgi tokens create`",
            )),
            KeyStatus::Expired => Err(unauthorized("auth-expired", "The API key has expired")),
            KeyStatus::Revoked => Err(unauthorized("auth-revoked", "The API key has been revoked")),
        }
    }
}
