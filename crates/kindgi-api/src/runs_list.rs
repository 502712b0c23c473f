//! `GET /v1/runs` (platform-api.md §3.3): every filter and its `400`, paged
//! `createdAt desc, id desc` with a `{createdAt, id}` cursor; rows carry `output` only with
//! `include=output`. `startedBy` (repeat or comma, like `status`) is our extension. A
//! repeated filter key is read by its last value, as every run
//! route's ([`crate::query::QueryString::last`]).

use kindgi_core::StartedBy;
use kindgi_runtime::{ReplayFilter, RunQuery, RunStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::ApiError;
use crate::page::{clamp_limit, decode_cursor, encode_cursor};
use crate::query::QueryString;

/// Inserts `key` when `value` is `Some`.
pub fn put(o: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        o.insert(key.to_owned(), v);
    }
}

/// Where a runs page ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunCursor {
    created_at: String,
    id: String,
}

/// A parsed `GET /v1/runs` query.
#[derive(Debug, Clone)]
pub struct ListRequest {
    pub query: RunQuery,
    pub limit: usize,
    pub include_output: bool,
}

fn bad(field: &str, message: String) -> ApiError {
    ApiError::bad_input(message).with_details(json!({"field": field}))
}

fn uuid_param(p: &QueryString, field: &str, what: &str) -> Result<Option<String>, ApiError> {
    match p.last(field) {
        None => Ok(None),
        Some(v) if uuid::Uuid::parse_str(v).is_ok() => Ok(Some(v.to_owned())),
        Some(_) => Err(bad(field, format!("`{field}` must be {what} (a UUID)"))),
    }
}

fn time_param(p: &QueryString, field: &str) -> Result<Option<i64>, ApiError> {
    match p.last(field) {
        None => Ok(None),
        Some(v) => chrono::DateTime::parse_from_rfc3339(v)
            .map(|d| Some(d.timestamp_millis()))
            .map_err(|_| {
                bad(
                    field,
                    format!("`{field}` must be an ISO 8601 date-time, e.g. 2026-01-02T03:04:05Z"),
                )
            }),
    }
}

fn text_param(p: &QueryString, field: &str) -> Option<String> {
    p.last(field).filter(|v| !v.is_empty()).map(str::to_owned)
}

fn statuses(p: &QueryString) -> Result<Vec<RunStatus>, ApiError> {
    let mut out: Vec<RunStatus> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for value in p.all("status") {
        for s in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match RunStatus::parse(s) {
                Some(st) if !out.contains(&st) => out.push(st),
                Some(_) => {}
                None if !unknown.iter().any(|u| u == s) => unknown.push(s.to_owned()),
                None => {}
            }
        }
    }
    if !unknown.is_empty() {
        let all: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
        return Err(bad(
            "status",
            format!(
                "Unknown `status` value(s): {}. Expected one or more of: {}",
                unknown.join(", "),
                all.join(", ")
            ),
        ));
    }
    Ok(out)
}

/// `startedBy` (our extension): repeat or comma, deduped, like `status`.
fn started_by(p: &QueryString) -> Result<Vec<StartedBy>, ApiError> {
    let mut out: Vec<StartedBy> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for value in p.all("startedBy") {
        for s in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match StartedBy::parse(s) {
                Some(b) if !out.contains(&b) => out.push(b),
                Some(_) => {}
                None if !unknown.iter().any(|u| u == s) => unknown.push(s.to_owned()),
                None => {}
            }
        }
    }
    if !unknown.is_empty() {
        let all: Vec<&str> = StartedBy::ALL.iter().map(|b| b.as_str()).collect();
        return Err(bad(
            "startedBy",
            format!(
                "Unknown `startedBy` value(s): {}. Expected one or more of: {}",
                unknown.join(", "),
                all.join(", ")
            ),
        ));
    }
    Ok(out)
}

/// `scopeKind`/`scopeId`/`inherit` (§1.8): the project to filter on, if any (also the
/// approvals list's).
pub fn scope_project(p: &QueryString) -> Result<Option<String>, ApiError> {
    scope(p)
}

/// `scopeKind`/`scopeId`/`inherit` (§1.8): the project to filter on, if any.
fn scope(p: &QueryString) -> Result<Option<String>, ApiError> {
    let invalid = |why: &str| {
        ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "scope-invalid",
            format!("scope query parameters malformed: {why}"),
        )
    };
    if let Some(i) = p.last("inherit")
        && i != "true"
        && i != "false"
    {
        return Err(invalid("`inherit` must be `true` or `false`"));
    }
    let id = p.last("scopeId");
    match (p.last("scopeKind"), id) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(invalid("`scopeId` needs `scopeKind`")),
        (Some("tenant"), None) => Ok(None),
        (Some("tenant"), Some(_)) => {
            Err(invalid("`scopeId` is not allowed with `scopeKind=tenant`"))
        }
        (Some(kind @ ("org" | "project")), None) => Err(invalid(&format!(
            "`scopeId` is required with `scopeKind={kind}`"
        ))),
        (Some(kind @ ("org" | "project")), Some(id)) => {
            if uuid::Uuid::parse_str(id).is_err() {
                return Err(invalid("`scopeId` must be a UUID"));
            }
            Ok((kind == "project").then(|| id.to_owned()))
        }
        (Some(_), _) => Err(invalid("`scopeKind` must be one of: tenant, org, project")),
    }
}

fn replays(p: &QueryString) -> Result<ReplayFilter, ApiError> {
    match p.last("replays") {
        None | Some("exclude") => Ok(ReplayFilter::Exclude),
        Some("include") => Ok(ReplayFilter::Include),
        Some("only") => Ok(ReplayFilter::Only),
        Some(_) => Err(bad(
            "replays",
            "`replays` must be one of: exclude, include, only".into(),
        )),
    }
}

fn top_level(p: &QueryString) -> Result<Option<bool>, ApiError> {
    match p.last("topLevel") {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(_) => Err(bad(
            "topLevel",
            "`topLevel` must be `true` or `false`".into(),
        )),
    }
}

/// Parses the query of `GET /v1/runs` for `tenant`.
pub fn parse(tenant: &str, p: &QueryString) -> Result<ListRequest, ApiError> {
    let statuses = statuses(p)?;
    let project_id = scope(p)?;
    let parent_run_id = uuid_param(p, "parentRunId", "a run id")?;
    let top = top_level(p)?;
    if parent_run_id.is_some() && top == Some(true) {
        return Err(bad(
            "topLevel",
            "`parentRunId` and `topLevel=true` cannot be combined".into(),
        ));
    }
    let agent_id = text_param(p, "agentId");
    let agent_version = text_param(p, "agentVersion");
    if agent_version.is_some() && agent_id.is_none() {
        return Err(bad("agentVersion", "`agentVersion` needs `agentId`".into()));
    }
    let flow_id = text_param(p, "flowId");
    let flow_version = text_param(p, "flowVersion");
    if flow_version.is_some() && flow_id.is_none() {
        return Err(bad("flowVersion", "`flowVersion` needs `flowId`".into()));
    }
    let eval_run_id = text_param(p, "evalRunId");
    let mut replays = replays(p)?;
    if eval_run_id.is_some() {
        if p.last("replays") == Some("exclude") {
            return Err(bad(
                "evalRunId",
                "`evalRunId` cannot be combined with `replays=exclude`".into(),
            ));
        }
        if p.last("replays").is_none() {
            replays = ReplayFilter::Include;
        }
    }
    let trigger_id = uuid_param(p, "triggerId", "a trigger id")?;
    let started_by = started_by(p)?;
    let include_output = match p.last("include") {
        None | Some("") => false,
        Some("output") => true,
        Some(_) => return Err(bad("include", "`include` must be `output`".into())),
    };
    let created_after = time_param(p, "createdAfter")?;
    let created_before = time_param(p, "createdBefore")?;
    if let (Some(a), Some(b)) = (created_after, created_before)
        && a >= b
    {
        return Err(bad(
            "createdAfter",
            "`createdAfter` must be before `createdBefore`".into(),
        ));
    }
    let after = decode_cursor::<RunCursor>(p.last("cursor"))?
        .map(|c| {
            chrono::DateTime::parse_from_rfc3339(&c.created_at)
                .map(|d| (d.timestamp_millis(), c.id))
                .map_err(|_| ApiError::bad_input("`cursor` is malformed"))
        })
        .transpose()?;
    let limit = clamp_limit(p.last("limit"));
    let query = RunQuery {
        tenant_id: Some(tenant.to_owned()),
        project_id,
        statuses,
        flow_id,
        flow_version,
        agent_id,
        agent_version,
        parent_run_id,
        top_level_only: top == Some(true),
        children_only: top == Some(false),
        trigger_id,
        started_by,
        replays,
        eval_run_id,
        created_after,
        created_before,
        after,
        limit: Some(limit as u32 + 1),
    };
    Ok(ListRequest {
        query,
        limit,
        include_output,
    })
}

/// The cursor after `run`.
pub fn cursor_after(created_at: &str, id: &str) -> String {
    encode_cursor(&RunCursor {
        created_at: created_at.to_owned(),
        id: id.to_owned(),
    })
}
