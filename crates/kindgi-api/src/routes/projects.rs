//! `GET /v1/projects/default`: the tenant's Default project (`OA:Project`), which the
//! official CLI reads before a publish without `--project`. The project is derived from the
//! tenant, not stored ([`crate::projects`]), so it has no creation time of its own: its
//! `createdAt`/`updatedAt` are the Unix epoch, the same on every server and restart.

use axum::routing::get;
use axum::{Json, Router};
use serde_json::Value;

use crate::auth::Tenant;
use crate::projects::default_project;
use crate::routes::registry::rfc3339;
use crate::state::AppState;

/// The project routes.
pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/projects/default", get(get_default))
}

async fn get_default(Tenant(tenant): Tenant) -> Json<Value> {
    Json(default_project(&tenant, &rfc3339(0)))
}
