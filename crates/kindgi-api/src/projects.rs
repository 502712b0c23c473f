//! Projects, as far as this runtime has them: every tenant has exactly one, its *Default*
//! project, whose id is a UUID derived from the tenant (v5), so it is stable across restarts,
//! processes and databases without being stored. `GET /v1/projects/default` answers it (the
//! official CLI reads it before a publish); a body or query `projectId` must be a UUID
//! (`400 bad-input`) and name it (`404 project-not-found`, platform-api.md §1.6).
//!
//! Tenants are names here (`acme`); on the wire a `tenantId` is a UUID (`format: uuid`, which
//! the official SDK checks): [`tenant_uuid`] derives a stable one from the name.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::error::ApiError;

/// The namespace of wire tenant ids derived from tenant names (a fixed random UUID).
const TENANT_NAMESPACE: uuid::Uuid =
    uuid::Uuid::from_u128(0x3e0f_9a7d_5c21_4b86_a4d3_17c9_e2b0_6f58);

/// `tenant` as the wire's `tenantId` (`format: uuid`; the official SDK refuses anything
/// else): the tenant itself when it is a UUID, else a UUID v5 derived from its name, stable
/// across restarts and databases.
pub fn tenant_uuid(tenant: &str) -> String {
    match uuid::Uuid::parse_str(tenant) {
        Ok(u) => u.to_string(),
        Err(_) => uuid::Uuid::new_v5(
            &TENANT_NAMESPACE,
            format!("kindgi-tenant:{tenant}").as_bytes(),
        )
        .to_string(),
    }
}

/// The id of `tenant`'s Default project (core's one copy; the store resolves a call's
/// values under it too).
pub use kindgi_core::ids::default_project_id;

/// Checks a `projectId` the caller sent: `None` is the Default project; anything else must
/// be a UUID naming it. Returns the project id to record.
pub fn check_project_id(tenant: &str, project_id: Option<&str>) -> Result<String, ApiError> {
    let default = default_project_id(tenant);
    let Some(id) = project_id else {
        return Ok(default);
    };
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(
            ApiError::bad_input("`projectId` must be a project id (a UUID)")
                .with_details(json!({"field": "projectId"})),
        );
    }
    if id.eq_ignore_ascii_case(&default) {
        return Ok(default);
    }
    Err(ApiError::new(
        StatusCode::NOT_FOUND,
        "project-not-found",
        format!("No project with id \"{id}\" in this tenant"),
    )
    .with_details(json!({"projectId": id})))
}

/// The `OA:Project` body of `tenant`'s Default project (`created_at`: RFC 3339).
pub fn default_project(tenant: &str, created_at: &str) -> Value {
    json!({
        "id": default_project_id(tenant),
        "tenantId": tenant_uuid(tenant),
        "name": "Default",
        "slug": "default",
        "isDefault": true,
        "createdAt": created_at,
        "updatedAt": created_at,
    })
}
