//! `/v1/runs`: start a flow run, read it, read its journal, cancel it — over a
//! [`kindgi_runtime::Runtime`].
//!
//! Mount with [`crate::router_with`]: `router_with(state, runs::routes(rt.clone()).merge(flows::routes(rt)))`.
//! Runs belong to the caller's tenant (the API key's): another tenant's run is `404
//! run-not-found`, exactly as a run that does not exist.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/runs` `{flowId, flowVersion?, input, dryRun?, wait?, waitMs?}` | `201` + the run record |
//! | `GET /v1/runs/{id}[?waitMs=N]` | `200` + the run record |
//! | `GET /v1/runs/{id}/journal[?after=SEQ&limit=N]` | `200` `{"runId", "entries": […]}` |
//! | `POST /v1/runs/{id}/cancel` | `200` + the cancelled run's record |
//!
//! `wait: true` answers when the run has ended (or is suspended). `waitMs` bounds the wait:
//! the answer comes when the run ends or after that many milliseconds, whichever is first —
//! a long poll, which is how `kindgi runs start` follows a run without sleeping past its end.

use std::time::Duration;

use axum::extract::{Extension, Path, Query};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_runtime::{RunOptions, RunRecord, Runtime, RuntimeError};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Tenant;
use crate::cpu;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::state::AppState;

/// The longest `waitMs` honoured (a longer one is cut to this).
pub const MAX_WAIT_MS: u64 = 60_000;
/// Default and maximum journal page sizes.
pub const DEFAULT_JOURNAL_LIMIT: u32 = 500;
pub const MAX_JOURNAL_LIMIT: u32 = 5_000;

/// The run routes over `runtime`.
pub fn routes(runtime: Runtime) -> Router<AppState> {
    Router::new()
        .route("/v1/runs", post(start))
        .route("/v1/runs/{run_id}", get(get_run))
        .route("/v1/runs/{run_id}/journal", get(journal))
        .route("/v1/runs/{run_id}/cancel", post(cancel))
        .layer(Extension(runtime))
}

/// The REST mapping of a runtime refusal.
pub fn runtime_error(e: RuntimeError) -> ApiError {
    // The envelope carries the code on its own; the message is the sentence after it.
    let text = e.to_string();
    let message = text
        .strip_prefix(e.code())
        .and_then(|m| m.strip_prefix(": "))
        .unwrap_or(&text)
        .to_owned();
    match e {
        RuntimeError::FlowNotFound { flow_id, version } => {
            ApiError::new(StatusCode::NOT_FOUND, "flow-not-found", message)
                .with_details(json!({"flowId": flow_id, "flowVersion": version}))
        }
        RuntimeError::FlowUnbound {
            flow_id,
            node_id,
            kind,
            reference,
        } => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "flow-unbound", message).with_details(
            json!({"flowId": flow_id, "nodeId": node_id, "kind": kind, "ref": reference}),
        ),
        RuntimeError::InvalidInput {
            flow_id, issues, ..
        } => ApiError::new(StatusCode::BAD_REQUEST, "input-validation-failed", message)
            .with_details(json!({"flowId": flow_id, "issues": issues})),
        RuntimeError::RunNotFound { run_id } => {
            ApiError::new(StatusCode::NOT_FOUND, "run-not-found", message)
                .with_details(json!({"runId": run_id}))
        }
        RuntimeError::RunAlreadyTerminal { run_id, status } => {
            ApiError::new(StatusCode::CONFLICT, "run-already-terminal", message)
                .with_details(json!({"runId": run_id, "status": status}))
        }
        e @ (RuntimeError::Store(_) | RuntimeError::Lookup { .. }) => ApiError::internal(&e),
    }
}

fn not_found(run_id: &str) -> ApiError {
    runtime_error(RuntimeError::RunNotFound {
        run_id: run_id.to_owned(),
    })
}

/// The run, if it exists and belongs to `tenant`.
async fn owned_run(rt: &Runtime, tenant: &str, run_id: &str) -> Result<RunRecord, ApiError> {
    match rt.get_run(run_id).await {
        Ok(run) if run.tenant_id == tenant => Ok(run),
        Ok(_) => Err(not_found(run_id)),
        Err(e) => Err(runtime_error(e)),
    }
}

/// Waits up to `wait_ms` for the run to leave pending/running, then reads it.
async fn bounded_wait(rt: &Runtime, run: RunRecord, wait_ms: u64) -> Result<RunRecord, ApiError> {
    if wait_ms == 0 || run.status.is_terminal() {
        return Ok(run);
    }
    let limit = Duration::from_millis(wait_ms.min(MAX_WAIT_MS));
    match tokio::time::timeout(limit, rt.wait_for_run(&run.id)).await {
        Ok(r) => r.map_err(runtime_error),
        Err(_) => rt.get_run(&run.id).await.map_err(runtime_error),
    }
}

fn field_error(field: &str, what: &str) -> ApiError {
    ApiError::bad_input(format!("`{field}` {what}")).with_details(json!({"field": field}))
}

async fn start(
    Extension(rt): Extension<Runtime>,
    Tenant(tenant): Tenant,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_input(format!("Request body must be valid JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        return Err(ApiError::bad_input(
            "Request body must be an object: {\"flowId\", \"input\", \"flowVersion\"?, \"dryRun\"?, \"wait\"?}",
        ));
    };
    let flow_id = match object.remove("flowId") {
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        Some(_) => return Err(field_error("flowId", "must be a non-empty string")),
        None => {
            return Err(field_error(
                "flowId",
                "is required: the id of the flow to run",
            ));
        }
    };
    let flow_version = match object.remove("flowVersion") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
        Some(_) => return Err(field_error("flowVersion", "must be a non-empty string")),
    };
    let input = object.remove("input").unwrap_or(Value::Null);
    let flag = |object: &mut serde_json::Map<String, Value>, name: &str| match object.remove(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(_) => Err(field_error(name, "must be true or false")),
    };
    let dry_run = flag(&mut object, "dryRun")?;
    let wait = flag(&mut object, "wait")?;
    let wait_ms = match object.remove("waitMs") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_u64().ok_or_else(|| {
            field_error(
                "waitMs",
                "must be a whole number of milliseconds (0 or more)",
            )
        })?,
    };
    if let Some(unknown) = object.keys().next() {
        return Err(ApiError::bad_input(format!(
            "Unknown field `{unknown}`: a run takes flowId, flowVersion, input, dryRun, wait and waitMs"
        ))
        .with_details(json!({"field": unknown})));
    }
    let options = RunOptions {
        dry_run,
        wait: false,
        tenant_id: Some(tenant),
        ..RunOptions::default()
    };
    // Starting validates the input against the flow's schema (CPU work, possibly long):
    // off the async workers. Waiting for the end is async again, outside the CPU slot.
    let starter = rt.clone();
    let run = cpu::run_async(async move {
        starter
            .start_run(&flow_id, flow_version.as_deref(), input, options)
            .await
    })
    .await?
    .map_err(runtime_error)?;
    let run = if wait {
        rt.wait_for_run(&run.id).await.map_err(runtime_error)?
    } else {
        run
    };
    let run = bounded_wait(&rt, run, wait_ms).await?;
    Ok((StatusCode::CREATED, Json(run)).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WaitQuery {
    wait_ms: Option<String>,
}

async fn get_run(
    Extension(rt): Extension<Runtime>,
    Tenant(tenant): Tenant,
    Path(run_id): Path<String>,
    Query(query): Query<WaitQuery>,
) -> Result<Json<RunRecord>, ApiError> {
    let wait_ms = match query.wait_ms.as_deref() {
        None | Some("") => 0,
        Some(s) => s.parse::<u64>().map_err(|_| {
            field_error(
                "waitMs",
                "must be a whole number of milliseconds (0 or more)",
            )
        })?,
    };
    let run = owned_run(&rt, &tenant, &run_id).await?;
    Ok(Json(bounded_wait(&rt, run, wait_ms).await?))
}

#[derive(Debug, Deserialize)]
struct JournalQuery {
    after: Option<String>,
    limit: Option<String>,
}

async fn journal(
    Extension(rt): Extension<Runtime>,
    Tenant(tenant): Tenant,
    Path(run_id): Path<String>,
    Query(query): Query<JournalQuery>,
) -> Result<Json<Value>, ApiError> {
    let after = match query.after.as_deref() {
        None | Some("") => None,
        Some(s) => Some(
            s.parse::<u64>()
                .map_err(|_| field_error("after", "must be a journal sequence number"))?,
        ),
    };
    let limit = match query.limit.as_deref() {
        None | Some("") => DEFAULT_JOURNAL_LIMIT,
        Some(s) => match s.parse::<u32>() {
            Ok(n) if (1..=MAX_JOURNAL_LIMIT).contains(&n) => n,
            _ => {
                return Err(field_error(
                    "limit",
                    &format!("must be a whole number from 1 to {MAX_JOURNAL_LIMIT}"),
                ));
            }
        },
    };
    owned_run(&rt, &tenant, &run_id).await?;
    let entries = rt
        .journal(&run_id, after, Some(limit))
        .await
        .map_err(runtime_error)?;
    Ok(Json(json!({"runId": run_id, "entries": entries})))
}

async fn cancel(
    Extension(rt): Extension<Runtime>,
    Tenant(tenant): Tenant,
    Path(run_id): Path<String>,
) -> Result<Json<RunRecord>, ApiError> {
    owned_run(&rt, &tenant, &run_id).await?;
    rt.cancel_run(&run_id)
        .await
        .map(Json)
        .map_err(runtime_error)
}
