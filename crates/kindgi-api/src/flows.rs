//! `/v1/flows`: the flows a [`kindgi_runtime::Runtime`] can run (read-only).
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/flows` | `200` `{"flows": [{"id", "versions": […], "latestVersion", "name"?, "description"?}]}`, sorted by id |
//! | `GET /v1/flows/{id}[?version=V]` | `200` + the flow definition (the highest version unless `version`) |

use axum::extract::{Extension, Path, Query};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use kindgi_runtime::Runtime;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Tenant;
use crate::error::ApiError;
use crate::state::AppState;

/// The flow routes over `runtime`.
pub fn routes(runtime: Runtime) -> Router<AppState> {
    Router::new()
        .route("/v1/flows", get(list))
        .route("/v1/flows/{flow_id}", get(get_flow))
        .layer(Extension(runtime))
}

async fn list(Extension(rt): Extension<Runtime>, _tenant: Tenant) -> Json<Value> {
    let mut flows = Vec::new();
    for (id, versions) in rt.flows().list() {
        let latest = rt.flows().get(&id, None);
        let mut entry = json!({
            "id": id,
            "versions": versions,
            "latestVersion": latest.as_ref().map(|f| f.flow.version.clone()),
        });
        if let (Some(f), Some(obj)) = (latest.as_ref(), entry.as_object_mut()) {
            if let Some(name) = &f.flow.name {
                obj.insert("name".into(), Value::String(name.clone()));
            }
            if let Some(d) = &f.flow.description {
                obj.insert("description".into(), Value::String(d.clone()));
            }
        }
        flows.push(entry);
    }
    Json(json!({ "flows": flows }))
}

#[derive(Debug, Deserialize)]
struct VersionQuery {
    version: Option<String>,
}

async fn get_flow(
    Extension(rt): Extension<Runtime>,
    _tenant: Tenant,
    Path(flow_id): Path<String>,
    Query(query): Query<VersionQuery>,
) -> Result<Json<Value>, ApiError> {
    let version = query.version.filter(|v| !v.is_empty());
    let flow = rt
        .flows()
        .get(&flow_id, version.as_deref())
        .ok_or_else(|| {
            let message = match &version {
                Some(v) => format!("flow-not-found: no flow \"{flow_id}\" version {v}"),
                None => format!("flow-not-found: no flow \"{flow_id}\""),
            };
            ApiError::new(StatusCode::NOT_FOUND, "flow-not-found", message)
                .with_details(json!({"flowId": flow_id, "flowVersion": version}))
        })?;
    serde_json::to_value(&flow.flow)
        .map(Json)
        .map_err(|e| ApiError::internal(&e))
}
