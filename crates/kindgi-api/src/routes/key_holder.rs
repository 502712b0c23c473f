//! [`KeyHolder`]: the caller of the key and service-account routes, with everything its key
//! says — principal, role, capabilities, project, expiry, and whether it is a tenant admin —
//! from the token store's [`ValidKey`]. The 401s are [`Tenant`]'s (the one place that words
//! them); this extractor runs it first, then reads the key's record. Also the small body and
//! time helpers these routes share.

use axum::body::Bytes;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use kindgi_store::tokens::{KeyStatus, Principal, PrincipalKind, ValidKey};
use serde_json::{Map, Value, json};

use crate::auth::Tenant;
use crate::error::ApiError;
use crate::state::AppState;

/// The authenticated caller and its key.
#[derive(Debug, Clone)]
pub struct KeyHolder {
    pub tenant: String,
    pub key: ValidKey,
}

impl KeyHolder {
    pub fn principal(&self) -> Option<&Principal> {
        self.key.record.principal.as_ref()
    }

    pub fn is_admin(&self) -> bool {
        self.key.tenant_admin
    }

    /// `createdBy` for what this caller makes.
    pub fn actor(&self) -> String {
        self.key.record.actor()
    }
}

/// The raw key of an `Authorization: Bearer` header (its shape was checked by [`Tenant`]).
fn raw_key(parts: &Parts) -> Option<&str> {
    let value = parts
        .headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (_, key) = value.trim().split_once(' ')?;
    Some(key.trim())
}

impl FromRequestParts<AppState> for KeyHolder {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<KeyHolder, ApiError> {
        let Tenant(tenant) = Tenant::from_request_parts(parts, state).await?;
        let gone = || {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "auth-revoked",
                "Bearer token has been revoked",
            )
        };
        let key = raw_key(parts).ok_or_else(gone)?;
        match state
            .authenticate(key)
            .await
            .map_err(|e| ApiError::internal(&e))?
        {
            KeyStatus::Valid { key, .. } => Ok(KeyHolder { tenant, key: *key }),
            // Revoked between the two reads of this request.
            _ => Err(gone()),
        }
    }
}

/// `403 permission-denied` with `details {action, resource, reason}`.
pub fn denied(message: impl Into<String>, action: &str, resource: &str, reason: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "permission-denied", message)
        .with_details(json!({"action": action, "resource": resource, "reason": reason}))
}

/// A JSON object body; no body at all (or only whitespace) is `{}` when `optional`.
pub fn object_body(bytes: &Bytes, optional: bool) -> Result<Map<String, Value>, ApiError> {
    if optional && bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_input("Request body must be an object")),
        Err(e) if e.to_string().contains("recursion limit") => {
            Err(ApiError::bad_input("Request body is nested too deeply")
                .with_details(json!({"maxDepth": 128})))
        }
        Err(_) => Err(ApiError::bad_input("Request body must be valid JSON")),
    }
}

/// An optional string field; another type is `400 bad-input` naming it.
pub fn opt_str<'a>(
    body: &'a Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<Option<&'a str>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.chars().count() <= max => Ok(Some(s)),
        Some(Value::String(_)) => Err(ApiError::bad_input(format!(
            "`{field}` must be at most {max} characters"
        ))
        .with_details(json!({"field": field}))),
        Some(_) => Err(ApiError::bad_input(format!("`{field}` must be a string"))
            .with_details(json!({"field": field}))),
    }
}

/// Milliseconds since the epoch → RFC 3339 with milliseconds, UTC.
pub fn iso(ms: i64) -> String {
    kindgi_runtime::record::format_millis(ms)
}

/// A principal's wire object `{kind, id}`.
pub fn principal_json(p: &Principal) -> Value {
    json!({"kind": p.kind.as_str(), "id": p.id})
}

/// `user:<id>` or `service-account:<id>` (the `?principal=` form), or `None`.
pub fn parse_principal_ref(s: &str) -> Option<Principal> {
    let (kind, id) = s.split_once(':')?;
    let kind = PrincipalKind::parse(kind)?;
    (!id.is_empty() && id.len() <= 200).then(|| Principal {
        kind,
        id: id.to_owned(),
    })
}
