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
//! names the path: [`path_without_token`]) — only its id (the first 40 hex digits of its
//! SHA-256).

use axum::body::Bytes;
use axum::extract::{Extension, Path};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use kindgi_runtime::wait::WaitError;
use kindgi_runtime::{JournalKind, RunRecord, RunStatus, Runtime};
use serde_json::{Map, Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::json_body::JsonObject;
use crate::state::AppState;

/// The longest token read (a longer one is not a token: `404`).
const MAX_TOKEN_LEN: usize = 256;

/// `POST /v1/waits/{token}` (add an `Extension(runtime)` layer, as [`crate::runs::routes`]
/// does).
pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/waits/{token}", post(answer))
}

/// The id a token is journaled under: the first 40 hex digits of its SHA-256 (core's, the
/// one the runtime stores waits under).
pub use kindgi_core::ids::token_id;

/// `path` with a `/v1/waits/{token}` token replaced by its id, for what is kept about a
/// request (the idempotency store's key): the token itself is a secret and is never stored.
pub fn path_without_token(path: &str) -> std::borrow::Cow<'_, str> {
    match path.strip_prefix("/v1/waits/") {
        Some(token) => format!("/v1/waits/{}", token_id(token)).into(),
        None => path.into(),
    }
}

/// The REST answer of a refused answer.
pub fn wait_error(e: WaitError) -> ApiError {
    let message = e.to_string();
    match e {
        WaitError::NotFound => wait_not_found(),
        WaitError::AlreadyAnswered => {
            ApiError::new(StatusCode::CONFLICT, "wait-already-answered", message)
        }
        WaitError::Expired { expired_at } => {
            ApiError::new(StatusCode::GONE, "wait-expired", message)
                .with_details(json!({"expiredAt": expired_at}))
        }
        WaitError::Invalid {
            tool_id, issues, ..
        } => ApiError::new(StatusCode::BAD_REQUEST, "wait-answer-invalid", message)
            .with_details(json!({"toolId": tool_id, "issues": issues})),
        WaitError::RunTerminal { run_id, status } => {
            ApiError::new(StatusCode::CONFLICT, "run-already-terminal", message)
                .with_details(json!({"runId": run_id, "status": status}))
        }
        WaitError::Store(cause) => {
            tracing::error!(%cause, "wait store unavailable");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "store-unavailable",
                "The wait store is unavailable; nothing was answered. Retry shortly",
            )
        }
    }
}

fn wait_not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "wait-not-found",
        WaitError::NotFound.to_string(),
    )
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
    Extension(rt): Extension<Runtime>,
    caller: Caller,
    Path(token): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let JsonObject(mut body) = JsonObject::or_empty(&body)?;
    let value = answer_value(&mut body)?;
    if token.is_empty() || token.len() > MAX_TOKEN_LEN {
        return Err(wait_not_found());
    }
    let done = rt
        .answer_wait(&caller.tenant, &token, value)
        .await
        .map_err(wait_error)?;
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
        return Err(wait_not_found());
    }
    let value = answer_value(&mut body)?;
    rt.answer_wait(&run.tenant_id, &waitpoint, value)
        .await
        .map_err(wait_error)?;
    rt.get_run(&run.id)
        .await
        .map_err(crate::runs::runtime_error)
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
    let waiting = rt
        .waiting_for(run)
        .await
        .map_err(crate::runs::runtime_error)?;
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
    let journal = rt
        .journal(run_id, None, None)
        .await
        .map_err(crate::runs::runtime_error)?;
    Ok(journal.iter().any(|e| {
        e.kind == JournalKind::WaitSuspended
            && e.payload
                .as_ref()
                .and_then(|p| p.get("tokenId"))
                .and_then(Value::as_str)
                == Some(id)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_named_by_its_hash() {
        let id = token_id("kgw_abc");
        assert_eq!(id.len(), 40);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(id, token_id("kgw_abd"));
    }

    #[test]
    fn the_idempotency_key_of_an_answer_holds_no_token() {
        let kept = path_without_token("/v1/waits/kgw_secret");
        assert!(!kept.contains("kgw_secret"));
        assert_eq!(kept, format!("/v1/waits/{}", token_id("kgw_secret")));
        assert_eq!(path_without_token("/v1/runs"), "/v1/runs");
    }

    #[test]
    fn refusals_map_to_their_statuses() {
        assert_eq!(
            wait_error(WaitError::NotFound).status,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            wait_error(WaitError::AlreadyAnswered).status,
            StatusCode::CONFLICT
        );
        let gone = wait_error(WaitError::Expired {
            expired_at: "2026-01-01T00:00:00.000Z".into(),
        });
        assert_eq!((gone.status, gone.code), (StatusCode::GONE, "wait-expired"));
        let invalid = wait_error(WaitError::Invalid {
            tool_id: "t".into(),
            summary: "bad".into(),
            issues: vec![],
        });
        assert_eq!(invalid.status, StatusCode::BAD_REQUEST);
        assert_eq!(invalid.details.unwrap()["issues"], json!([]));
        let store = wait_error(WaitError::Store(kindgi_core::StorageError::backend(
            "waits.get_pause",
            "secret",
        )));
        assert!(!store.message.contains("secret"));
    }
}
