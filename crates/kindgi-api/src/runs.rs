//! `/v1/runs` (platform-api.md §3) over a [`kindgi_runtime::Runtime`].
//!
//! Mounted by [`crate::router`] over the state's runtime ([`crate::AppState::runtime`]).
//! Runs belong to the caller's tenant (the API key's): another tenant's run is `404 run-not-found`,
//! exactly as a run that does not exist. A key limited to a project
//! ([`crate::key_project`]) starts runs in it (a start without `projectId` is recorded
//! there), lists only its runs, and is refused another project's run as the official
//! authorizer refuses it: `403 permission-denied` ``Permission denied: the API key is limited
//! to project <id>``, `details {action, resource: "project:<run's project>", reason}`.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/runs` `OA:StartRunBody` | `201` Run (ended or suspended), `202` with `options.wait:false` |
//! | `GET /v1/runs` | `OA:RunCollectionPage` (filters: [`crate::runs_list`]) |
//! | `GET /v1/runs/failures` | `501 run-failures-not-supported` |
//! | `GET /v1/runs/{id}` | Run with `output`, and `waitingFor` when suspended |
//! | `GET /v1/runs/{id}/progress` | `OA:RunProgress` |
//! | `GET /v1/runs/{id}/journal` | `OA:RunJournalPage` (`since`, strict `limit`, `{sequence}` cursor) |
//! | `POST /v1/runs/{id}/cancel` | `200` the re-read run; `409 run-already-terminal` |
//! | `POST /v1/runs/{id}/resume` | answers a pausing call's wait (our extension, [`crate::routes::waits`]) |
//! | `GET /v1/runs/{id}/stream`, `…/progress/stream` | SSE ([`crate::sse`]) |
//!
//! The same runtime serves `/v1/approvals` ([`crate::routes::approvals`]) and
//! `/v1/waits/{token}` ([`crate::routes::waits`]).

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::future::BoxFuture;
use kindgi_runtime::{
    JournalEntry, RunMeta, RunOptions, RunRecord, RunStatus, Runtime, RuntimeError, Segment,
};
use serde_json::{Map, Value, json};

use crate::auth::Caller;
use crate::cpu;
use crate::error::ApiError;
use crate::json_body::JsonObject;
use crate::key_project::KeyProject;
use crate::page::encode_cursor;
use crate::paged_body::{self, PageSource};
use crate::query::QueryString;
use crate::request_id::{RequestId, Trace};
use crate::run_wire::{entry_json, progress_json, run_json};
use crate::runs_list::{self, cursor_after};
use crate::sse::{self, Flavour};
use crate::state::AppState;

/// The most segments a run takes.
pub const MAX_SEGMENTS: usize = 8;
/// The largest journal page.
pub const MAX_JOURNAL_LIMIT: usize = 100;

/// The run routes, over the state's runtime.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/runs", post(start).get(list))
        .route("/v1/runs/failures", get(failures))
        .route("/v1/runs/{run_id}", get(get_run))
        .route("/v1/runs/{run_id}/progress", get(progress))
        .route("/v1/runs/{run_id}/journal", get(journal))
        .route("/v1/runs/{run_id}/cancel", post(cancel))
        .route("/v1/runs/{run_id}/resume", post(resume))
        .route("/v1/runs/{run_id}/stream", get(stream))
        .route("/v1/runs/{run_id}/progress/stream", get(progress_stream))
}

/// `400` for a path id that is not a UUID.
fn check_run_id(run_id: &str) -> Result<(), ApiError> {
    if uuid::Uuid::parse_str(run_id).is_ok() {
        Ok(())
    } else {
        Err(ApiError::bad_input("`runId` must be a run id (a UUID)")
            .with_details(json!({"field": "runId"})))
    }
}

/// The run, if the id is a UUID and the run exists, belongs to the caller's tenant and is
/// within its key's project (`action` — `read` or `write` — names what a refusal refused).
async fn owned_run(
    rt: &Runtime,
    caller: &Caller,
    run_id: &str,
    action: &str,
) -> Result<RunRecord, ApiError> {
    check_run_id(run_id)?;
    let run = match rt.get_run(run_id).await {
        Ok(run) if run.tenant_id == caller.tenant => run,
        Ok(_) | Err(RuntimeError::RunNotFound { .. }) => {
            return Err(ApiError::run_not_found(run_id));
        }
        Err(e) => return Err(ApiError::from(e)),
    };
    let project = run
        .meta
        .project_id
        .clone()
        .unwrap_or_else(|| crate::projects::default_project_id(&caller.tenant));
    caller.check_reaches(Some(&project), action, &format!("project:{project}"))?;
    Ok(run)
}

/// What `POST /v1/runs` asks for.
#[derive(Debug)]
struct StartRequest {
    subject: Subject,
    version: Option<String>,
    project_id: Option<String>,
    segments: Vec<Segment>,
    input: Value,
    dry_run: bool,
    wait: bool,
}

#[derive(Debug)]
enum Subject {
    Agent(String),
    Flow(String),
}

/// A subject field: absent, `null` and `""` are "not given"; anything else must be a string.
fn subject_field(body: &Map<String, Value>, field: &str) -> Result<Option<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::bad_input(format!("`{field}` must be a string"))
            .with_details(json!({"field": field}))),
    }
}

fn optional_string(body: &Map<String, Value>, field: &str) -> Result<Option<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::bad_input(format!("`{field}` must be a string"))
            .with_details(json!({"field": field}))),
    }
}

fn segment_key_ok(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

/// `segments`: ≤ 8 `{key, value}`, keys `^[a-z][a-z0-9_-]{0,63}$` and unique, values 1–256
/// characters.
fn segments(body: &Map<String, Value>) -> Result<Vec<Segment>, ApiError> {
    let bad = |m: String| ApiError::bad_input(m).with_details(json!({"field": "segments"}));
    let items = match body.get("segments") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(bad("`segments` must be an array of {key, value}".into())),
    };
    if items.len() > MAX_SEGMENTS {
        return Err(bad(format!(
            "`segments` has {} entries; at most {MAX_SEGMENTS} are allowed",
            items.len()
        )));
    }
    let mut out: Vec<Segment> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = item.get("key").and_then(Value::as_str);
        let value = item.get("value").and_then(Value::as_str);
        let (Some(key), Some(value)) = (key, value) else {
            return Err(bad(format!(
                "`segments[{i}]` must be an object {{key, value}} of strings"
            )));
        };
        if !segment_key_ok(key) {
            return Err(bad(format!(
                "`segments[{i}].key` must match ^[a-z][a-z0-9_-]{{0,63}}$"
            )));
        }
        let len = value.chars().count();
        if !(1..=256).contains(&len) {
            return Err(bad(format!(
                "`segments[{i}].value` must be 1 to 256 characters"
            )));
        }
        if out.iter().any(|s| s.key == key) {
            return Err(bad(format!(
                "`segments` keys must be unique: \"{key}\" appears more than once"
            )));
        }
        out.push(Segment {
            key: key.to_owned(),
            value: value.to_owned(),
        });
    }
    Ok(out)
}

/// `options {dryRun?, wait?}` → `(dry_run, wait)`; `wait` defaults to true.
fn options(body: &Map<String, Value>) -> Result<(bool, bool), ApiError> {
    let options = match body.get("options") {
        None | Some(Value::Null) => return Ok((false, true)),
        Some(Value::Object(o)) => o,
        Some(_) => {
            return Err(
                ApiError::bad_input("`options` must be an object when supplied")
                    .with_details(json!({"field": "options"})),
            );
        }
    };
    let flag = |name: &str, default: bool| match options.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(
            ApiError::bad_input(format!("`options.{name}` must be a boolean"))
                .with_details(json!({"field": format!("options.{name}")})),
        ),
    };
    Ok((flag("dryRun", false)?, flag("wait", true)?))
}

/// Validates a start body with the reference's messages (unknown fields are ignored).
fn parse_start(mut body: Map<String, Value>) -> Result<StartRequest, ApiError> {
    let agent = subject_field(&body, "agent")?;
    let flow = subject_field(&body, "flow")?;
    let subject = match (agent, flow) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_input(
                "Provide exactly one of `agent` or `flow`, not both",
            ));
        }
        (None, None) => {
            return Err(ApiError::bad_input(
                "Request body must include `agent` or `flow`",
            ));
        }
        (Some(a), None) => Subject::Agent(a),
        (None, Some(f)) => Subject::Flow(f),
    };
    let Some(input) = body.remove("input") else {
        return Err(
            ApiError::bad_input("`input` is required").with_details(json!({"field": "input"}))
        );
    };
    let (dry_run, wait) = options(&body)?;
    let version = match subject {
        Subject::Agent(_) => optional_string(&body, "agentVersion")?,
        Subject::Flow(_) => optional_string(&body, "flowVersion")?,
    }
    .filter(|v| !v.is_empty());
    let segments = segments(&body)?;
    let project_id = match body.get("projectId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(
                ApiError::bad_input("`projectId` must be a project id (a UUID)")
                    .with_details(json!({"field": "projectId"})),
            );
        }
    };
    Ok(StartRequest {
        subject,
        version,
        project_id,
        segments,
        input,
        dry_run,
        wait,
    })
}

async fn start(
    State(state): State<AppState>,
    State(rt): State<Runtime>,
    State(projects): State<crate::projects::Projects>,
    trace: Trace,
    caller: Caller,
    JsonObject(body): JsonObject,
) -> Result<Response, ApiError> {
    let mut req = parse_start(body)?;
    // A key limited to a project runs there (a body naming another never got here).
    let named = req.project_id.as_deref().or(caller.project_id.as_deref());
    let project_id = projects.check(&caller.tenant, named).await?;
    // An agent run naming `input.conversationId` is that conversation's next turn
    // (platform-api.md §3.1, §11): in the run's project and the key's, then the runtime
    // checks and records it.
    if matches!(req.subject, Subject::Agent(_)) {
        crate::routes::conversations::check_turn(&state, &caller, &req.input, &project_id).await?;
    }
    // The handler's first refusal: nothing runs in a suspended project (§3.1).
    crate::tenant_state::refuse_run_start(&state, &caller.tenant, &project_id).await?;
    if let Subject::Agent(agent) = &req.subject {
        req.version = rt
            .begin_conversation_turn(&caller.tenant, agent, req.version.take(), &req.input)
            .await?;
    }
    let options = RunOptions {
        dry_run: req.dry_run,
        wait: false,
        tenant_id: Some(caller.tenant.clone()),
        meta: RunMeta {
            project_id: Some(project_id),
            segments: req.segments,
            trace_id: Some(trace.trace_id),
            started_by: Some(caller.started_by()),
            started_by_actor: caller.actor(),
            ..RunMeta::default()
        },
        ..RunOptions::default()
    };
    // Starting validates the input against the flow's schema (CPU work, possibly long):
    // off the async workers. Waiting for the end is async again, outside the CPU slot.
    let starter = rt.clone();
    let (subject, version, input) = (req.subject, req.version, req.input);
    let run = cpu::run_async(async move {
        match subject {
            Subject::Flow(f) => {
                starter
                    .start_run(&f, version.as_deref(), input, options)
                    .await
            }
            Subject::Agent(a) => {
                starter
                    .start_agent_turn(&a, version.as_deref(), input, options)
                    .await
            }
        }
    })
    .await??;
    if !req.wait {
        return Ok((StatusCode::ACCEPTED, Json(run_json(&run, false))).into_response());
    }
    let run = rt.wait_for_run(&run.id).await.map_err(|e| match e {
        RuntimeError::RunNotFound { .. } => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "journal-error",
            "The new run could not be read back",
        ),
        e => ApiError::from(e),
    })?;
    Ok((StatusCode::CREATED, Json(run_json(&run, true))).into_response())
}

/// Runs read per store query of `GET /v1/runs`: with `include=output` each may carry a
/// large output, so a stalled reader pins at most this many.
pub const RUNS_BODY_PAGE: u32 = 10;
/// Entries read per store query of `GET /v1/runs/{id}/journal` (a whole journal is
/// written page by page).
pub const JOURNAL_BODY_PAGE: u32 = 100;

/// `GET /v1/runs` read [`RUNS_BODY_PAGE`] at a time (see [`crate::paged_body`]).
struct RunPages {
    rt: Runtime,
    query: kindgi_runtime::RunQuery,
    include_output: bool,
}

impl PageSource for RunPages {
    type Item = RunRecord;
    /// `(createdAt, id)`.
    type Pos = (String, String);

    fn fetch(
        &self,
        after: Option<(String, String)>,
        n: u32,
    ) -> BoxFuture<'_, Result<Vec<RunRecord>, RuntimeError>> {
        let mut query = self.query.clone();
        if let Some((created_at, id)) = after {
            // The store wrote `createdAt` from these very milliseconds.
            let millis = chrono::DateTime::parse_from_rfc3339(&created_at)
                .map_or(0, |d| d.timestamp_millis());
            query.after = Some((millis, id));
        }
        query.limit = Some(n);
        Box::pin(async move { self.rt.list_runs(&query).await })
    }

    fn pos(&self, run: &RunRecord) -> (String, String) {
        (run.created_at.clone(), run.id.clone())
    }

    fn write(&self, run: &RunRecord, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        paged_body::write_json(&run_json(run, self.include_output), out)
    }

    fn cursor(&self, (created_at, id): &(String, String)) -> String {
        cursor_after(created_at, id)
    }
}

async fn list(
    State(state): State<AppState>,
    State(rt): State<Runtime>,
    caller: Caller,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let params = QueryString::bounded(raw.as_deref())?;
    let mut req = runs_list::parse(&caller.tenant, &params)?;
    // A key limited to a project lists its runs only (naming another was refused before).
    if let Some(limit) = &caller.project_id {
        req.query.project_id = Some(limit.clone());
    }
    let source = RunPages {
        rt,
        query: req.query,
        include_output: req.include_output,
    };
    paged_body::answer(source, RUNS_BODY_PAGE, Some(req.limit), state.body_budget)
        .await
        .map_err(ApiError::from)
}

async fn failures(_caller: Caller) -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "run-failures-not-supported",
        "Grouping run failures is not supported by this runtime",
    )
}

async fn get_run(
    State(rt): State<Runtime>,
    caller: Caller,
    Path(run_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let run = owned_run(&rt, &caller, &run_id, "read").await?;
    let mut body = run_json(&run, true);
    if run.status == RunStatus::Failed {
        // Which field failed validation is the failure's cause: kept by its `step.failed`.
        let journal = rt.journal(&run.id, None, None).await?;
        crate::run_wire::add_failure_issues(&mut body, &journal);
    }
    // Omitted when it cannot be read, as the reference does (`kindgi runs resume` then
    // works it out from the journal).
    if run.status == RunStatus::Suspended
        && let Ok(Some(w)) = rt.waiting_for(&run).await
        && let (Ok(w), Some(o)) = (serde_json::to_value(w), body.as_object_mut())
    {
        o.insert("waitingFor".into(), w);
    }
    Ok(Json(body))
}

async fn progress(
    State(rt): State<Runtime>,
    caller: Caller,
    Path(run_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let run = owned_run(&rt, &caller, &run_id, "read").await?;
    Ok(Json(progress_json(&run)))
}

/// `?limit` of the journal: strict `^[1-9][0-9]*$`, capped at 100.
fn journal_limit(raw: Option<&str>) -> Result<Option<usize>, ApiError> {
    let Some(raw) = raw else { return Ok(None) };
    let digits =
        !raw.is_empty() && !raw.starts_with('0') && raw.bytes().all(|b| b.is_ascii_digit());
    if !digits {
        return Err(ApiError::bad_input(
            "`limit` must be a whole number, 1 or more (a page holds at most 100)",
        )
        .with_details(json!({"field": "limit"})));
    }
    Ok(Some(
        raw.parse::<usize>()
            .map_or(MAX_JOURNAL_LIMIT, |n| n.min(MAX_JOURNAL_LIMIT)),
    ))
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct JournalCursor {
    sequence: u64,
}

/// A run's journal read [`JOURNAL_BODY_PAGE`] at a time (see [`crate::paged_body`]).
struct JournalPages {
    rt: Runtime,
    run_id: String,
    /// The sequence the answer starts after (`cursor` or `since`).
    start: Option<u64>,
}

impl PageSource for JournalPages {
    type Item = JournalEntry;
    type Pos = u64;

    fn fetch(
        &self,
        after: Option<u64>,
        n: u32,
    ) -> BoxFuture<'_, Result<Vec<JournalEntry>, RuntimeError>> {
        Box::pin(self.rt.journal(&self.run_id, after.or(self.start), Some(n)))
    }

    fn pos(&self, e: &JournalEntry) -> u64 {
        e.sequence
    }

    fn write(&self, e: &JournalEntry, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        paged_body::write_json(&entry_json(e), out)
    }

    fn cursor(&self, sequence: &u64) -> String {
        encode_cursor(&JournalCursor {
            sequence: *sequence,
        })
    }
}

async fn journal(
    State(state): State<AppState>,
    State(rt): State<Runtime>,
    caller: Caller,
    Path(run_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let params = QueryString::bounded(raw.as_deref())?;
    let limit = journal_limit(params.last("limit"))?;
    let cursor = crate::page::decode_cursor::<JournalCursor>(params.last("cursor"))?;
    let since = params
        .last("since")
        .and_then(|s| s.trim().parse::<u64>().ok());
    owned_run(&rt, &caller, &run_id, "read").await?;
    let start = cursor.map(|c| c.sequence).or(since);
    let source = JournalPages { rt, run_id, start };
    paged_body::answer(source, JOURNAL_BODY_PAGE, limit, state.body_budget)
        .await
        .map_err(ApiError::from)
}

async fn cancel(
    State(rt): State<Runtime>,
    caller: Caller,
    Path(run_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    owned_run(&rt, &caller, &run_id, "write").await?;
    rt.cancel_run(&run_id).await?;
    let run = rt.get_run(&run_id).await?;
    Ok(Json(run_json(&run, true)))
}

/// `POST /v1/runs/{id}/resume` `{waitpointId, value}`: answers one of the run's pausing
/// calls ([`crate::routes::waits::resume`]) and answers the re-read run.
async fn resume(
    State(rt): State<Runtime>,
    caller: Caller,
    Path(run_id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let run = owned_run(&rt, &caller, &run_id, "write").await?;
    let JsonObject(body) = JsonObject::or_empty(&body)?;
    let run = crate::routes::waits::resume(&rt, &run, body).await?;
    Ok(Json(run_json(&run, true)))
}

async fn open_stream(
    state: AppState,
    rt: Runtime,
    caller: Caller,
    run_id: String,
    headers: &HeaderMap,
    request_id: RequestId,
    flavour: Flavour,
) -> Result<Response, ApiError> {
    owned_run(&rt, &caller, &run_id, "read").await?;
    let slot = match state.streams.open(&caller.tenant, &caller.key_id) {
        Ok(slot) => slot,
        Err(full) => return Ok(full.into_response()),
    };
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(sse::last_event_sequence);
    Ok(sse::stream(
        rt,
        flavour,
        run_id,
        caller.tenant,
        request_id.0,
        after,
        sse::Allowance {
            slot,
            budget: state.body_budget.clone(),
        },
    ))
}

async fn stream(
    State(state): State<AppState>,
    State(rt): State<Runtime>,
    request_id: RequestId,
    caller: Caller,
    Path(run_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    open_stream(
        state,
        rt,
        caller,
        run_id,
        &headers,
        request_id,
        Flavour::Events,
    )
    .await
}

async fn progress_stream(
    State(state): State<AppState>,
    State(rt): State<Runtime>,
    request_id: RequestId,
    caller: Caller,
    Path(run_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    open_stream(
        state,
        rt,
        caller,
        run_id,
        &headers,
        request_id,
        Flavour::Progress,
    )
    .await
}
