//! The query of `GET /v1/approvals` (platform-api.md §4), checked in the reference's order
//! with its messages: scope, `status` (repeated or comma-separated; unknown → the eight),
//! `assignedTo`/`decidedBy` (`me` only), `order`, `requiredRole` (above the caller → 403),
//! `createdAfter`, `waitTokenId` (≤ 50, 1–512 characters), `runId`/`includeDescendants`,
//! and the cursor (`{createdAt, id}`, base64url; an oldest-first page's starts `a.`).

use kindgi_runtime::approval::{ApprovalQuery, ApprovalStatus, ReviewerRole};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::reviewer::{Reviewer, above_role};
use crate::error::ApiError;
use crate::page::{clamp_limit, decode_cursor, encode_cursor};
use crate::query::QueryString;

/// How many `waitTokenId` values a list takes, and how long each may be.
pub const MAX_WAIT_TOKEN_IDS: usize = 50;
pub const MAX_WAIT_TOKEN_ID_LEN: usize = 512;
/// Marks an oldest-first page's cursor, which only continues that order.
pub const ASC_CURSOR: &str = "a.";

/// Where a page ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApprovalCursor {
    created_at: String,
    id: String,
}

/// A parsed list request.
#[derive(Debug, Clone)]
pub struct ListRequest {
    pub query: ApprovalQuery,
    /// The page size (the store is asked for one more).
    pub limit: usize,
    /// `decidedBy=me` was asked: every page says so.
    pub decided_by_me: bool,
    /// `assignedTo=me` was asked: nobody is assigned approvals here, so the page is empty.
    pub assigned_to_me: bool,
    /// `decidedBy=me` by a key without a person: it decided nothing.
    pub nobody: bool,
    /// `includeDescendants=true` (with `runId`): also the approvals of the run's child runs.
    pub include_descendants: bool,
}

impl ListRequest {
    pub fn order(&self) -> &'static str {
        if self.query.ascending { "asc" } else { "desc" }
    }
}

/// The cursor continuing after `(created_at, id)` in the request's order.
pub fn cursor_after(ascending: bool, created_at: &str, id: &str) -> String {
    let c = encode_cursor(&ApprovalCursor {
        created_at: created_at.to_owned(),
        id: id.to_owned(),
    });
    if ascending {
        format!("{ASC_CURSOR}{c}")
    } else {
        c
    }
}

fn bad(field: &str, message: impl Into<String>) -> ApiError {
    ApiError::bad_input(message).with_details(json!({"field": field}))
}

fn statuses(p: &QueryString) -> Result<Vec<ApprovalStatus>, ApiError> {
    let mut out: Vec<ApprovalStatus> = Vec::new();
    let mut unknown: Vec<&str> = Vec::new();
    for v in p.all("status") {
        for s in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match ApprovalStatus::parse(s) {
                Some(st) if !out.contains(&st) => out.push(st),
                Some(_) => {}
                None => unknown.push(s),
            }
        }
    }
    if unknown.is_empty() {
        return Ok(out);
    }
    let all: Vec<&str> = ApprovalStatus::ALL.iter().map(|s| s.as_str()).collect();
    Err(bad(
        "status",
        format!(
            "Unknown `status` value{}: {}. Expected one or more of: {}",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", "),
            all.join(", ")
        ),
    ))
}

/// `me` or nothing.
fn me(p: &QueryString, field: &str, message: &str) -> Result<bool, ApiError> {
    match p.last(field) {
        None => Ok(false),
        Some("me") => Ok(true),
        Some(_) => Err(bad(field, message)),
    }
}

fn required_role(p: &QueryString, reviewer: &Reviewer) -> Result<Option<ReviewerRole>, ApiError> {
    let Some(raw) = p.last("requiredRole").filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let Some(role) = ReviewerRole::parse(raw) else {
        return Err(bad(
            "requiredRole",
            format!("Unknown `requiredRole` value: {raw}"),
        ));
    };
    if role > reviewer.role {
        return Err(above_role(reviewer, role));
    }
    Ok(Some(role))
}

fn created_after(p: &QueryString) -> Result<Option<String>, ApiError> {
    let Some(raw) = p.last("createdAfter").filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    chrono::DateTime::parse_from_rfc3339(raw)
        .map(|d| Some(kindgi_runtime::record::format_millis(d.timestamp_millis())))
        .map_err(|_| bad("createdAfter", "`createdAfter` must be an ISO date string"))
}

fn wait_tokens(p: &QueryString) -> Result<Vec<String>, ApiError> {
    let tokens = p.all("waitTokenId");
    if tokens.len() > MAX_WAIT_TOKEN_IDS
        || tokens
            .iter()
            .any(|t| t.is_empty() || t.chars().count() > MAX_WAIT_TOKEN_ID_LEN)
    {
        return Err(bad(
            "waitTokenId",
            format!(
                "`waitTokenId` takes at most {MAX_WAIT_TOKEN_IDS} values, each 1–{MAX_WAIT_TOKEN_ID_LEN} characters"
            ),
        ));
    }
    Ok(tokens.into_iter().map(str::to_owned).collect())
}

/// `runId` and whether `includeDescendants=true`.
fn run_filter(p: &QueryString) -> Result<(Option<String>, bool), ApiError> {
    let run = p.last("runId");
    let descendants = p.last("includeDescendants");
    if run.is_some_and(|r| uuid::Uuid::parse_str(r).is_err()) {
        return Err(bad("runId", "`runId` must be a run id (a UUID)"));
    }
    if descendants.is_some_and(|d| d != "true" && d != "false") {
        return Err(bad(
            "includeDescendants",
            "`includeDescendants` must be `true` or `false`",
        ));
    }
    if descendants == Some("true") && run.is_none() {
        return Err(bad(
            "includeDescendants",
            "`includeDescendants` needs a `runId`",
        ));
    }
    Ok((run.map(str::to_owned), descendants == Some("true")))
}

/// `(ascending, after)` from `order` and `cursor`.
fn order_and_cursor(p: &QueryString) -> Result<(bool, Option<(String, String)>), ApiError> {
    let order = p.last("order");
    if order.is_some_and(|o| o != "asc" && o != "desc") {
        return Err(bad(
            "order",
            "`order` is `asc` (oldest first) or `desc` (newest first)",
        ));
    }
    let (cursor_asc, after) = match p.last("cursor").filter(|c| !c.is_empty()) {
        None => (None, None),
        Some(raw) => {
            let (asc, body) = match raw.strip_prefix(ASC_CURSOR) {
                Some(rest) => (true, rest),
                None => (false, raw),
            };
            let c = decode_cursor::<ApprovalCursor>(Some(body))?
                .filter(|c| chrono::DateTime::parse_from_rfc3339(&c.created_at).is_ok())
                .ok_or_else(|| bad("cursor", "`cursor` is malformed"))?;
            (Some(asc), Some((c.created_at, c.id)))
        }
    };
    let ascending = match (order, cursor_asc) {
        (Some(o), _) => o == "asc",
        (None, Some(a)) => a,
        (None, None) => false,
    };
    if cursor_asc.is_some_and(|a| a != ascending) {
        return Err(bad(
            "cursor",
            "`cursor` continues a list in the other order: drop `order`, or start again without `cursor`",
        ));
    }
    Ok((ascending, after))
}

/// Parses a list query for `reviewer`.
pub fn parse(p: &QueryString, reviewer: &Reviewer) -> Result<ListRequest, ApiError> {
    // Scope: checked as the runs list checks it; the route filters on its project.
    crate::runs_list::scope_project(p)?;
    let statuses = statuses(p)?;
    let assigned_to_me = me(
        p,
        "assignedTo",
        "`assignedTo` takes `me` (the approvals assigned to you)",
    )?;
    let decided_by_me = me(
        p,
        "decidedBy",
        "`decidedBy` takes `me` (the approvals you decided)",
    )?;
    let (ascending, after) = order_and_cursor(p)?;
    let required_role = required_role(p, reviewer)?;
    let created_after = created_after(p)?;
    let wait_token_ids = wait_tokens(p)?;
    let (run_id, include_descendants) = run_filter(p)?;
    let limit = clamp_limit(p.last("limit"));
    let decided_by = if decided_by_me {
        reviewer.decided_by()
    } else {
        None
    };
    Ok(ListRequest {
        nobody: decided_by_me && decided_by.is_none(),
        include_descendants,
        query: ApprovalQuery {
            tenant_id: reviewer.tenant.clone(),
            statuses,
            run_id,
            wait_token_ids,
            required_role,
            max_role: Some(reviewer.role),
            created_after,
            decided_by,
            ascending,
            after,
            limit,
        },
        limit,
        decided_by_me,
        assigned_to_me,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reviewer(role: ReviewerRole) -> Reviewer {
        Reviewer {
            tenant: "acme".into(),
            role,
            user_id: Some("u1".into()),
            row: None,
            project: None,
        }
    }

    fn parse_q(q: &str, role: ReviewerRole) -> Result<ListRequest, ApiError> {
        parse(&QueryString::bounded(Some(q)).unwrap(), &reviewer(role))
    }

    #[test]
    fn unknown_statuses_name_the_eight() {
        let e = parse_q("status=open", ReviewerRole::Admin).unwrap_err();
        assert_eq!(
            e.message,
            "Unknown `status` value: open. Expected one or more of: pending, assigned, in_review, approved, rejected, escalated, expired, withdrawn"
        );
        let ok = parse_q(
            "status=pending,approved&status=pending",
            ReviewerRole::Admin,
        )
        .unwrap();
        assert_eq!(
            ok.query.statuses,
            vec![ApprovalStatus::Pending, ApprovalStatus::Approved]
        );
    }

    #[test]
    fn a_tier_above_the_caller_is_refused() {
        let e = parse_q("requiredRole=admin", ReviewerRole::Standard).unwrap_err();
        assert_eq!(e.status, axum::http::StatusCode::FORBIDDEN);
        assert_eq!(e.code, "permission-denied");
        assert_eq!(
            e.message,
            "Role standard cannot query approvals scoped to admin."
        );
        assert!(parse_q("requiredRole=senior", ReviewerRole::Senior).is_ok());
    }

    #[test]
    fn cursors_keep_their_order() {
        let asc = cursor_after(true, "2026-01-01T00:00:00.000Z", "x");
        assert!(asc.starts_with("a."));
        let r = parse_q(&format!("cursor={asc}"), ReviewerRole::Admin).unwrap();
        assert!(r.query.ascending);
        assert_eq!(
            r.query.after,
            Some(("2026-01-01T00:00:00.000Z".into(), "x".into()))
        );
        let e = parse_q(&format!("cursor={asc}&order=desc"), ReviewerRole::Admin).unwrap_err();
        assert!(e.message.contains("other order"), "{}", e.message);
        let e = parse_q("cursor=zzz", ReviewerRole::Admin).unwrap_err();
        assert_eq!(e.message, "`cursor` is malformed");
    }

    #[test]
    fn filters_are_checked() {
        let many: Vec<String> = (0..51).map(|i| format!("waitTokenId=t{i}")).collect();
        assert!(parse_q(&many.join("&"), ReviewerRole::Admin).is_err());
        assert!(parse_q("includeDescendants=true", ReviewerRole::Admin).is_err());
        assert!(parse_q("runId=x", ReviewerRole::Admin).is_err());
        assert!(parse_q("assignedTo=you", ReviewerRole::Admin).is_err());
        assert!(parse_q("createdAfter=yesterday", ReviewerRole::Admin).is_err());
        let r = parse_q("decidedBy=me&limit=500", ReviewerRole::Admin).unwrap();
        assert_eq!(r.limit, 100);
        assert_eq!(r.query.decided_by.as_deref(), Some("user:u1"));
    }
}
