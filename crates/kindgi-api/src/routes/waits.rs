//! Answering a run's waits from outside — beyond the reference, which has no way to
//! (platform-api.md §0, §3.4); documented in docs/approvals.md and marked
//! `x-kindgi-extension` in the OpenAPI document.
//!
//! * `POST /v1/waits/{token}` `{value}`: the link a pausing tool hands out. Authenticated
//!   like every `/v1` route; a token of another tenant is `404 wait-not-found`, as an
//!   unknown or malformed one. `200 {runId, runStatus}` once the run has resumed (inline).
//! * `POST /v1/runs/{runId}/resume` `{waitpointId, value}`: the same answer through the
//!   run (`waitpointId` = the pause's wait token), checked against the run first: a run
//!   not suspended is `409 run-not-suspended` (`409 run-already-terminal` once it ended); a
//!   waitpoint that is not one of this run's pauses is `409 approval-required` when the run
//!   waits on an approval (naming it and the route that decides it), else `404
//!   wait-not-found`.
//!
//! Refusals change nothing: `404 wait-not-found`, `409 wait-already-answered`, `410
//! wait-expired`, `400 wait-answer-invalid` (`details.issues`: the answer against the
//! tool's output schema; the run keeps waiting), `409 run-already-terminal`.
//! A token never appears in an answer, a log, the journal or the idempotency store (whose key
//! names the path: [`crate::redact::path_without_token`]) — only its id (the first 40 hex digits of its
//! SHA-256).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use kindgi_runtime::{JournalKind, RunRecord, RunStatus, Runtime};
use serde_json::{Map, Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::json_body::JsonObject;
use crate::redact::token_id;
use crate::state::AppState;

/// The longest token read (a longer one is not a token: `404`).
const MAX_TOKEN_LEN: usize = 256;

/// `POST /v1/waits/{token}`, over the state's runtime.
pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/waits/{token}", post(answer))
}

/// The `value` of an answer body (required: the answer is the call's result).
fn answer_value(body: &mut Map<String, Value>) -> Result<Value, ApiError> {
    body.remove("value").ok_or_else(|| {
        ApiError::bad_input(
            "`value` is required: the answer to the paused call, matching its tool's output schema",
        )
        .with_details(json!({"field": "value"}))
    })
}

async fn answer(
    State(rt): State<Runtime>,
    caller: Caller,
    Path(token): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let JsonObject(mut body) = JsonObject::or_empty(&body)?;
    let value = answer_value(&mut body)?;
    if token.is_empty() || token.len() > MAX_TOKEN_LEN {
        return Err(ApiError::wait_not_found());
    }
    let done = rt.answer_wait(&caller.tenant, &token, value).await?;
    Ok(Json(
        json!({"runId": done.run_id, "runStatus": done.run_status.as_str()}),
    ))
}

/// `POST /v1/runs/{runId}/resume` of `run` (already the caller's): answers one of its
/// pausing calls and answers the re-read run.
pub async fn resume(
    rt: &Runtime,
    run: &RunRecord,
    mut body: Map<String, Value>,
) -> Result<RunRecord, ApiError> {
    let waitpoint = match body.get("waitpointId") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => {
            return Err(ApiError::bad_input(
                "`waitpointId` is required: the wait token a pausing tool's call handed out",
            )
            .with_details(json!({"field": "waitpointId"})));
        }
    };
    if waitpoint.starts_with("child:") {
        return Err(ApiError::bad_input(
            "Waitpoint ids starting with `child:` are the runtime's: the run goes on when its child run ends",
        )
        .with_details(json!({"field": "waitpointId"})));
    }
    check_suspended(run)?;
    // One of this run's pauses is answered; anything else on a run that waits for a
    // reviewer points at the approval; the rest is not this run's wait.
    if waitpoint.len() > MAX_TOKEN_LEN || !waits_on(rt, &run.id, &token_id(&waitpoint)).await? {
        approval_required(rt, run).await?;
        return Err(ApiError::wait_not_found());
    }
    let value = answer_value(&mut body)?;
    rt.answer_wait(&run.tenant_id, &waitpoint, value).await?;
    rt.get_run(&run.id).await.map_err(ApiError::from)
}

/// `409` unless the run is suspended.
fn check_suspended(run: &RunRecord) -> Result<(), ApiError> {
    let status = run.status.as_str();
    match run.status {
        RunStatus::Suspended => Ok(()),
        RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled => Err(ApiError::new(
            StatusCode::CONFLICT,
            "run-already-terminal",
            format!("Cannot resume run: already {status}"),
        )
        .with_details(json!({"runId": run.id, "status": status}))),
        _ => Err(ApiError::new(
            StatusCode::CONFLICT,
            "run-not-suspended",
            format!(
                "Run {} is {status}, not waiting: there is nothing to resume",
                run.id
            ),
        )
        .with_details(json!({"runId": run.id, "status": status}))),
    }
}

/// `409 approval-required` when the run waits on an open approval: a reviewer decides it.
async fn approval_required(rt: &Runtime, run: &RunRecord) -> Result<(), ApiError> {
    let waiting = rt.waiting_for(run).await?;
    let Some(first) = waiting.as_ref().and_then(|w| w.approvals.first()) else {
        return Ok(());
    };
    let id = first
        .get("approvalId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(ApiError::new(
        StatusCode::CONFLICT,
        "approval-required",
        format!(
            "Run {} waits on approval {id}: a reviewer decides it with POST /v1/approvals/{id}/complete (kindgi approvals complete {id} --decision=approve)",
            run.id
        ),
    )
    .with_details(json!({
        "runId": run.id,
        "approvalId": id,
        "route": format!("/v1/approvals/{id}/complete"),
    })))
}

/// Whether the run's journal has ever suspended on the token id `id`.
async fn waits_on(rt: &Runtime, run_id: &str, id: &str) -> Result<bool, ApiError> {
    let journal = rt.journal(run_id, None, None).await?;
    Ok(journal.iter().any(|e| {
        e.kind == JournalKind::WaitSuspended
            && e.payload
                .as_ref()
                .and_then(|p| p.get("tokenId"))
                .and_then(Value::as_str)
                == Some(id)
    }))
}
