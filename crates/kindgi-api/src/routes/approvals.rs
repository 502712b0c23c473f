//! `/v1/approvals` (platform-api.md §4, `OA approvals.*`) over a [`Runtime`]: list, get and
//! decide the approvals a gated tool call waits on. Mounted by [`crate::router`] over the
//! state's runtime, as the run routes are: an approval belongs to a run.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/approvals` | `OA:ApprovalCollectionPage {data, hasMore, nextCursor?, order, decidedBy?}` |
//! | `GET /v1/approvals/{id}` | `OA:Approval`; `404 approval-not-found` |
//! | `POST /v1/approvals/{id}/complete` | `OA:CompleteApprovalResult` (the run resumed inline) |
//!
//! Every route passes the reviewer gate first ([`super::reviewer`]). An approval of
//! another tenant, above the caller's tier, of a run in a project the caller's key is not
//! limited to ([`crate::key_project`]), or whose id is no UUID is `404
//! approval-not-found` exactly as an unknown one, and a list leaves it out (so does a
//! `scopeKind=project` list, of the approvals of other projects' runs). A decision is checked in the reference's
//! order: a person behind the key (`403`), the body (`400`), visibility (`404`), no `value`
//! for an agent's gate (`400`), a roster row (`403`; unregistered: `409
//! reviewer-deactivated`), then the runtime's refusals (`409 approval-already-decided |
//! approval-terminal | run-already-terminal`, `403 insufficient-role |
//! separate-approver-required`), which record nothing. The roster itself is
//! [`super::reviewers`]; the signed export [`super::audit_bundle`].

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_runtime::approval::{Approval, ApprovalQuery, DecisionInput, DecisionKind};
use kindgi_runtime::{ReplayFilter, RunQuery, Runtime};
use serde_json::{Map, Value, json};

use super::approvals_query::{self, cursor_after};
use super::approvals_wire::{approval_json, completion_json};
use super::key_holder::KeyHolder;
use super::reviewer::{self, Reviewer, Roster};
use crate::error::ApiError;
use crate::json_body::JsonObject;
use crate::query::QueryString;
use crate::state::AppState;

/// The subjects of an agent's gates: they resume on the decision alone.
const TOOL_CALL_GATE: &str = "tool-call:pending";
const SESSION_GATE: &str = "agent-turn:session-hitl-gate";

/// The approvals routes, over the state's runtime.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/approvals", get(list))
        .route("/v1/approvals/{approval_id}", get(get_one))
        .route("/v1/approvals/{approval_id}/complete", post(complete))
}

/// The approval `id` as `reviewer` may see it, else `404`.
pub(crate) async fn visible(
    rt: &Runtime,
    reviewer: &Reviewer,
    id: &str,
) -> Result<Approval, ApiError> {
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(ApiError::approval_not_found(id));
    }
    match rt.approval(&reviewer.tenant, id).await {
        Ok(Some(a))
            if a.required_role <= reviewer.role && reviewer.reaches(a.project_id.as_deref()) =>
        {
            Ok(a)
        }
        Ok(_) => Err(ApiError::approval_not_found(id)),
        Err(e) => Err(ApiError::from(e)),
    }
}

async fn list(
    State(rt): State<Runtime>,
    State(roster): State<Roster>,
    caller: KeyHolder,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let reviewer = reviewer::gate(&caller, &roster, "read").await?;
    let params = QueryString::bounded(raw.as_deref())?;
    let req = approvals_query::parse(&params, &reviewer)?;
    let mut extra = Map::new();
    extra.insert("order".into(), json!(req.order()));
    if req.decided_by_me {
        extra.insert("decidedBy".into(), json!("me"));
    }
    if req.assigned_to_me || req.nobody {
        return Ok(Json(crate::page::page(Vec::new(), None, extra)));
    }
    // A project scope names the project whose runs' approvals are listed (a key limited to
    // a project names no other: the middleware refused that before).
    let scoped = crate::runs_list::scope_project(&params)?;
    let filtering = scoped.is_some() || reviewer.project.is_some();
    let mut rows = matching(&rt, &req, filtering, |a| {
        // The store narrows by tier; this keeps a page right whatever it answers.
        a.required_role <= reviewer.role
            && reviewer.reaches(a.project_id.as_deref())
            && scoped.as_deref().is_none_or(|p| {
                let default = crate::projects::default_project_id(&reviewer.tenant);
                a.project_id
                    .as_deref()
                    .unwrap_or(&default)
                    .eq_ignore_ascii_case(p)
            })
    })
    .await?;
    let more = rows.len() > req.limit;
    rows.truncate(req.limit);
    let next = more
        .then(|| {
            rows.last()
                .map(|a| cursor_after(req.query.ascending, &a.created_at, &a.id))
        })
        .flatten();
    let data = rows.iter().map(approval_json).collect();
    Ok(Json(crate::page::page(data, next, extra)))
}

/// The most approvals one page reads past while filtering (the reference over-fetches
/// `min(4 × limit, 500)` once; this reads on in such batches until the page is full).
const FILTER_BATCH: usize = 500;

/// At most `req.limit + 1` approvals of the request that `keep` keeps, in the page's order:
/// batches after the cursor are read until that many are kept or the store runs out, so a
/// page filtered here (by project, by tier) is as full as an unfiltered one.
async fn matching(
    rt: &Runtime,
    req: &approvals_query::ListRequest,
    filtering: bool,
    keep: impl Fn(&Approval) -> bool,
) -> Result<Vec<Approval>, ApiError> {
    let mut query = req.query.clone();
    if filtering {
        query.limit = (req.limit * 4).clamp(req.limit, FILTER_BATCH.max(req.limit));
    }
    let mut kept = Vec::new();
    loop {
        let batch = if req.include_descendants {
            with_descendants(rt, &query).await?
        } else {
            rt.list_approvals(&query).await?
        };
        let exhausted = batch.len() <= query.limit;
        query.after = batch.last().map(|a| (a.created_at.clone(), a.id.clone()));
        kept.extend(batch.into_iter().filter(|a| keep(a)));
        if exhausted || kept.len() > req.limit {
            kept.truncate(req.limit + 1);
            return Ok(kept);
        }
    }
}

/// The most runs `includeDescendants` reads (the run and its child runs, at any depth).
pub const MAX_DESCENDANT_RUNS: usize = 100;

/// The run of `query` and its descendants (sub-flow runs, at any depth), breadth first, at
/// most [`MAX_DESCENDANT_RUNS`].
async fn run_family(rt: &Runtime, tenant: &str, run_id: &str) -> Result<Vec<String>, ApiError> {
    let mut family = vec![run_id.to_owned()];
    let mut next = 0;
    while next < family.len() && family.len() < MAX_DESCENDANT_RUNS {
        let children = rt
            .list_runs(&RunQuery {
                tenant_id: Some(tenant.to_owned()),
                parent_run_id: Some(family[next].clone()),
                replays: ReplayFilter::Include,
                limit: Some((MAX_DESCENDANT_RUNS - family.len()) as u32),
                ..RunQuery::default()
            })
            .await?;
        family.extend(children.into_iter().map(|r| r.id));
        next += 1;
    }
    family.truncate(MAX_DESCENDANT_RUNS);
    Ok(family)
}

/// A page over the approvals of a run and its descendants: each run's first `limit + 1`
/// after the cursor, merged in the page's order (so the merge's first `limit + 1` are the
/// page's).
async fn with_descendants(rt: &Runtime, query: &ApprovalQuery) -> Result<Vec<Approval>, ApiError> {
    let Some(run_id) = &query.run_id else {
        return rt.list_approvals(query).await.map_err(ApiError::from);
    };
    let mut rows = Vec::new();
    for id in run_family(rt, &query.tenant_id, run_id).await? {
        let one = ApprovalQuery {
            run_id: Some(id),
            ..query.clone()
        };
        rows.extend(rt.list_approvals(&one).await?);
    }
    rows.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
    if !query.ascending {
        rows.reverse();
    }
    rows.truncate(query.limit + 1);
    Ok(rows)
}

async fn get_one(
    State(rt): State<Runtime>,
    State(roster): State<Roster>,
    caller: KeyHolder,
    Path(approval_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let reviewer = reviewer::gate(&caller, &roster, "read").await?;
    let approval = visible(&rt, &reviewer, &approval_id).await?;
    Ok(Json(approval_json(&approval)))
}

/// A decision body: `decision` (one of four), `rationale?` (a string), `value?`.
struct Decision {
    decision: DecisionKind,
    rationale: Option<String>,
    has_value: bool,
}

fn parse_decision(body: &Map<String, Value>) -> Result<Decision, ApiError> {
    let decision = body
        .get("decision")
        .and_then(Value::as_str)
        .and_then(DecisionKind::parse)
        .ok_or_else(|| {
            ApiError::bad_input("`decision` must be one of: approve, reject, escalate, withdraw")
                .with_details(json!({"field": "decision"}))
        })?;
    let rationale = match body.get("rationale") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(
                ApiError::bad_input("`rationale` must be a string when supplied")
                    .with_details(json!({"field": "rationale"})),
            );
        }
    };
    Ok(Decision {
        decision,
        rationale,
        has_value: body.contains_key("value"),
    })
}

/// `400` for a `value` on an approval that resumes on the decision alone.
fn value_refused(subject_kind: &str) -> ApiError {
    let what = match subject_kind {
        TOOL_CALL_GATE => "An approval of an agent's tool call",
        SESSION_GATE => "An approval of an agent's session",
        _ => "An approval on this runtime",
    };
    ApiError::bad_input(format!(
        "{what} takes a decision (approve or reject) and an optional rationale, not a `value`: the turn resumes on the decision alone."
    ))
    .with_details(json!({"field": "value", "subjectKind": subject_kind}))
}

async fn complete(
    State(rt): State<Runtime>,
    State(roster): State<Roster>,
    caller: KeyHolder,
    Path(approval_id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let reviewer = reviewer::gate(&caller, &roster, "admin").await?;
    let Some(decided_by) = reviewer.decided_by() else {
        return Err(reviewer::no_user(&reviewer));
    };
    let JsonObject(body) = JsonObject::or_empty(&body)?;
    let decision = parse_decision(&body)?;
    let approval = visible(&rt, &reviewer, &approval_id).await?;
    if decision.has_value {
        return Err(value_refused(&approval.subject_kind));
    }
    let row = reviewer::deciding_row(&reviewer)?;
    let input = DecisionInput {
        decision: decision.decision,
        rationale: decision.rationale,
        decided_by,
        reviewer_id: row.id.clone(),
        reviewer_role: row.role,
    };
    let done = rt
        .complete_approval(&reviewer.tenant, &approval.id, input)
        .await?;
    Ok(Json(completion_json(&done)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_checked_with_the_references_messages() {
        let body = |v: Value| v.as_object().cloned().unwrap_or_default();
        let e = parse_decision(&body(json!({"decision": "ok"})))
            .err()
            .map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some("`decision` must be one of: approve, reject, escalate, withdraw")
        );
        let e = parse_decision(&body(json!({"decision": "approve", "rationale": 5})))
            .err()
            .map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some("`rationale` must be a string when supplied")
        );
        let ok = parse_decision(&body(
            json!({"decision": "reject", "rationale": "no", "value": null}),
        ));
        assert!(ok.is_ok_and(|d| d.has_value && d.decision == DecisionKind::Reject));
    }
}
