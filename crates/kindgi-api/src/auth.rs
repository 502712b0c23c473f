//! Bearer API keys: the [`Tenant`] extractor. `Authorization: Bearer <key>`; the tenant comes
//! from the key. Missing or malformed → `401 auth-missing`; unknown → `401 auth-invalid`;
//! expired → `401 auth-expired`; revoked → `401 auth-revoked`.

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use kindgi_store::tokens::KeyStatus;

use crate::error::ApiError;
use crate::state::AppState;

/// The authenticated caller's tenant.
#[derive(Debug, Clone)]
pub struct Tenant(pub String);

fn unauthorized(code: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
}

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Tenant, ApiError> {
        let missing = || {
            unauthorized(
                "auth-missing",
                "Missing or malformed Authorization header; send `Authorization: Bearer <api-key>`",
            )
        };
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(missing)?;
        let value = header.to_str().map_err(|_| missing())?;
        let (scheme, key) = value.split_once(' ').ok_or_else(missing)?;
        let key = key.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || key.is_empty() {
            return Err(missing());
        }
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
