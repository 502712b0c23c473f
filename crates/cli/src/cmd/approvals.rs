//! `kindgi approvals list|get|complete`: the official CLI's commands, flags, checks and wire
//! (platform-api.md §12.3), through the one API client ([`crate::api`]).
//!
//! * `list [--status=a,b] [--assigned-to=me] [--decided-by=me] [--order=asc|desc]
//!   [--limit] [--cursor]` → `GET /v1/approvals` (statuses comma-joined); with
//!   `--decided-by` the page must say `decidedBy:"me"`, else exit 1.
//! * `get <id>` → `GET /v1/approvals/{id}`.
//! * `complete <id> --decision=approve|reject|escalate|withdraw [--rationale]` →
//!   `POST /v1/approvals/{id}/complete {decision, rationale?}` (never `value`).
//!
//! A flag value outside its set is a usage error (exit 2) worded as the official CLI
//! words it: ``--status must be one of pending, …, got "x"``.

use std::process::ExitCode;

use serde_json::{Value, json};

use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, segment};

const STATUSES: [&str; 8] = [
    "pending",
    "assigned",
    "in_review",
    "approved",
    "rejected",
    "escalated",
    "expired",
    "withdrawn",
];
const DECISIONS: [&str; 4] = ["approve", "reject", "escalate", "withdraw"];

#[derive(Debug, clap::Subcommand)]
pub enum ApprovalsCommand {
    /// List the approvals your reviewer role can see.
    List {
        /// Only approvals in these statuses, comma-separated (pending,assigned,in_review are the open ones).
        #[arg(long)]
        status: Option<String>,
        /// `me`: only the approvals assigned to you.
        #[arg(long = "assigned-to")]
        assigned_to: Option<String>,
        /// `me`: only the approvals you decided.
        #[arg(long = "decided-by")]
        decided_by: Option<String>,
        /// `asc` (oldest first) or `desc` (newest first, the default).
        #[arg(long)]
        order: Option<String>,
        /// The most approvals to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch an approval by id.
    Get {
        #[arg(value_name = "APPROVAL_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Decide an approval. Approving or rejecting resumes the run that waits on it.
    Complete {
        #[arg(value_name = "APPROVAL_ID")]
        id: Option<String>,
        /// The decision: approve, reject, escalate or withdraw. Required.
        #[arg(long)]
        decision: Option<String>,
        /// Why, recorded with the decision.
        #[arg(long)]
        rationale: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: ApprovalsCommand) -> ExitCode {
    let (name, api) = match &command {
        ApprovalsCommand::List { api, .. } => ("approvals list", api.clone()),
        ApprovalsCommand::Get { api, .. } => ("approvals get", api.clone()),
        ApprovalsCommand::Complete { api, .. } => ("approvals complete", api.clone()),
    };
    match dispatch(command, name, &api).await {
        Ok(code) => code,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

/// `value` when it is one of `allowed`, else the official CLI's usage error.
fn one_of(flag: &str, value: &str, allowed: &[&str]) -> Result<String, CliError> {
    if allowed.contains(&value) {
        Ok(value.to_owned())
    } else {
        Err(CliError::Usage(format!(
            "--{flag} must be one of {}, got \"{value}\"",
            allowed.join(", ")
        )))
    }
}

fn required(id: Option<String>) -> Result<String, CliError> {
    id.filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::Usage("missing <approval-id>".into()))
}

/// The query of `list`, checked.
fn list_query(
    status: Option<String>,
    assigned_to: Option<String>,
    decided_by: Option<String>,
    order: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
) -> Result<Vec<(&'static str, String)>, CliError> {
    let mut q: Vec<(&'static str, String)> = Vec::new();
    if let Some(l) = limit {
        q.push(("limit", l.to_string()));
    }
    if let Some(c) = cursor {
        q.push(("cursor", c));
    }
    if let Some(s) = status {
        let statuses = s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| one_of("status", s, &STATUSES))
            .collect::<Result<Vec<_>, _>>()?;
        if !statuses.is_empty() {
            q.push(("status", statuses.join(",")));
        }
    }
    if let Some(a) = assigned_to {
        q.push(("assignedTo", one_of("assigned-to", &a, &["me"])?));
    }
    if let Some(d) = decided_by {
        q.push(("decidedBy", one_of("decided-by", &d, &["me"])?));
    }
    if let Some(o) = order {
        q.push(("order", one_of("order", &o, &["asc", "desc"])?));
    }
    Ok(q)
}

async fn dispatch(
    command: ApprovalsCommand,
    name: &str,
    api: &ApiArgs,
) -> Result<ExitCode, CliError> {
    let out = api.output();
    match command {
        ApprovalsCommand::List {
            status,
            assigned_to,
            decided_by,
            order,
            limit,
            cursor,
            ..
        } => {
            let decided = decided_by.is_some();
            let q = list_query(status, assigned_to, decided_by, order, limit, cursor)?;
            let page = api.connect(name)?.get("/v1/approvals", q).await?;
            if decided && page.get("decidedBy").and_then(Value::as_str) != Some("me") {
                return Err(CliError::Local(
                    "--decided-by needs a runtime on Kindgi 0.1.9 or later.".into(),
                ));
            }
            out.page(&page, APPROVAL_COLUMNS);
        }
        ApprovalsCommand::Get { id, .. } => {
            let id = required(id)?;
            let path = format!("/v1/approvals/{}", segment(&id));
            out.json(&api.connect(name)?.get(&path, vec![]).await?);
        }
        ApprovalsCommand::Complete {
            id,
            decision,
            rationale,
            ..
        } => {
            let id = required(id)?;
            let Some(decision) = decision else {
                return Err(CliError::Usage(format!(
                    "--decision={} is required",
                    DECISIONS.join("|")
                )));
            };
            let mut body = json!({"decision": one_of("decision", &decision, &DECISIONS)?});
            if let (Some(r), Some(o)) = (rationale, body.as_object_mut()) {
                o.insert("rationale".into(), Value::String(r));
            }
            let path = format!("/v1/approvals/{}/complete", segment(&id));
            out.json(&api.connect(name)?.post(&path, &body, None).await?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

const APPROVAL_COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/id")),
    ("STATUS", |r| cell(r, "/status")),
    ("ROLE", |r| cell(r, "/requiredRole")),
    ("SUBJECT", |r| cell(r, "/subjectKind")),
    ("RUN", |r| cell(r, "/provenanceRef/runId")),
    ("CREATED", |r| cell(r, "/createdAt")),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_checked_as_the_official_cli_checks_them() {
        let q = list_query(
            Some("pending, approved".into()),
            None,
            Some("me".into()),
            Some("asc".into()),
            Some(5),
            None,
        )
        .unwrap();
        assert_eq!(
            q,
            vec![
                ("limit", "5".to_owned()),
                ("status", "pending,approved".to_owned()),
                ("decidedBy", "me".to_owned()),
                ("order", "asc".to_owned()),
            ]
        );
        let e = list_query(Some("open".into()), None, None, None, None, None).unwrap_err();
        assert_eq!(
            e,
            CliError::Usage(
                "--status must be one of pending, assigned, in_review, approved, rejected, escalated, expired, withdrawn, got \"open\"".into()
            )
        );
        assert!(list_query(None, Some("you".into()), None, None, None, None).is_err());
    }
}
