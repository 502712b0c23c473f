//! Suspended and closing tenants and suspended projects (platform-api.md §1.9, §3.1, §9.2
//! step 5; docs/tenancy.md). A closing or suspended tenant is readable and exportable with its
//! own keys, but nothing is written but deletes: this one middleware refuses every other write
//! of an authenticated caller, `409 tenant-closing` or `409 tenant-suspended`, before any route
//! reads it. A suspended project runs nothing: a run start in it is `409 project-suspended`
//! ([`refuse_run_start`]), its webhook deliveries and schedule and mail fires are skipped.
//!
//! What passes a closing or suspended tenant: reads (`GET`, `HEAD`), deletes (`DELETE`,
//! `POST …/unregister`, `POST …/revoke`), cancelling a run (`POST …/cancel`: it stops work)
//! and the audit-bundle export (`POST …/audit-bundle`). The public receivers
//! (`/v1/hooks/…`, `/v1/mail/inbound/…`) carry no key and answer by the state themselves.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kindgi_core::StorageError;
use kindgi_core::ports::{Standing, TenantStates};
use kindgi_store::tenant_states::TenantStateStore;
use serde_json::json;

use crate::auth::Authenticated;
use crate::error::ApiError;
use crate::state::AppState;

/// The path endings of writes a closing or suspended tenant may still make.
const LET_THROUGH: &[&str] = &["/unregister", "/revoke", "/cancel", "/audit-bundle"];

/// The states over the server's database.
pub fn states(state: &AppState) -> TenantStateStore {
    TenantStateStore::new(state.db.clone())
}

/// The middleware (layered inside the key-project middleware, which authenticated the caller).
pub async fn middleware(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let writes = matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH
    );
    let path = request.uri().path();
    let public = path.starts_with("/v1/hooks/") || path.starts_with("/v1/mail/inbound/");
    if !writes || public || LET_THROUGH.iter().any(|e| path.ends_with(e)) {
        return next.run(request).await;
    }
    let Some(Authenticated(caller)) = request.extensions().get::<Authenticated>() else {
        // A public route, or the route answers the 401.
        return next.run(request).await;
    };
    match states(&state).standing(&caller.tenant, None).await {
        Ok(Standing::Active | Standing::ProjectSuspended) => next.run(request).await,
        Ok(standing) => refusal(standing, None).into_response(),
        Err(e) => ApiError::internal(&e).into_response(),
    }
}

/// The `409` for what `standing` stops (`None` when active); `project` names the project a
/// `project-suspended` is about.
pub fn refusal(standing: Standing, project: Option<&str>) -> ApiError {
    let (code, message) = match standing {
        Standing::Active => return ApiError::internal(&"refusal asked of an active tenant"),
        Standing::TenantClosing => (
            "tenant-closing",
            "This tenant is closing: it can be read and exported, but nothing is written or run any more".to_owned(),
        ),
        Standing::TenantSuspended => (
            "tenant-suspended",
            "This tenant is suspended: it can be read and exported, but nothing is written or run until the operator restores it".to_owned(),
        ),
        Standing::ProjectSuspended => (
            "project-suspended",
            format!(
                "Project {} is suspended: nothing runs in it until the operator restores it",
                project.unwrap_or("")
            ),
        ),
    };
    // As the receiver's contract words it: the tenant's `state`, or the project.
    let details = match standing {
        Standing::TenantClosing => json!({"state": "closing"}),
        Standing::TenantSuspended => json!({"state": "suspended"}),
        _ => json!({"projectId": project.unwrap_or("")}),
    };
    ApiError::new(StatusCode::CONFLICT, code, message).with_details(details)
}

/// `409 project-suspended` (or the tenant's `409`) when a run may not start in `tenant`'s
/// `project`.
pub async fn refuse_run_start(
    state: &AppState,
    tenant: &str,
    project: &str,
) -> Result<(), ApiError> {
    match states(state)
        .standing(tenant, Some(project))
        .await
        .map_err(|e: StorageError| ApiError::internal(&e))?
    {
        Standing::Active => Ok(()),
        standing => Err(refusal(standing, Some(project))),
    }
}
