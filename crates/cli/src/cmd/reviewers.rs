//! `kindgi reviewers list|get|register|unregister`: the official CLI's commands, flags and wire
//! (platform-api.md §4 "Reviewers"), through the one API client ([`crate::api`]).
//!
//! * `list [--limit] [--cursor]` → `GET /v1/approvals/reviewers`.
//! * `get <reviewer-id>` → `GET /v1/approvals/reviewers/{id}`.
//! * `register --spec=<json|@file>` (`{role, userId?, displayName?}`) → `POST
//!   /v1/approvals/reviewers`; without `userId`, the caller's own, from `GET
//!   /v1/identity/whoami`.
//! * `unregister <reviewer-id>` → `POST /v1/approvals/reviewers/{id}/unregister`.

use std::process::ExitCode;

use serde_json::{Map, Value};

use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, segment};

/// The largest `--spec=@file` read.
pub const MAX_SPEC_BYTES: u64 = 64 * 1024;

#[derive(Debug, clap::Subcommand)]
pub enum ReviewersCommand {
    /// List reviewers.
    List {
        /// The most reviewers to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch a reviewer by id.
    Get {
        #[arg(value_name = "REVIEWER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Register a reviewer — `{ userId?, role, displayName? }`; without `userId`, you.
    /// Registering again changes the role.
    Register {
        /// The reviewer as inline JSON or `@<file>`: `role` (`standard`, `senior` or `admin`),
        /// plus optional `userId` (default: you) and `displayName`. Required.
        #[arg(long)]
        spec: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Unregister a reviewer: their decisions stay, no new approvals go to them.
    Unregister {
        #[arg(value_name = "REVIEWER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: ReviewersCommand) -> ExitCode {
    let (name, api) = match &command {
        ReviewersCommand::List { api, .. } => ("reviewers list", api.clone()),
        ReviewersCommand::Get { api, .. } => ("reviewers get", api.clone()),
        ReviewersCommand::Register { api, .. } => ("reviewers register", api.clone()),
        ReviewersCommand::Unregister { api, .. } => ("reviewers unregister", api.clone()),
    };
    match dispatch(command, name, &api).await {
        Ok(code) => code,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

fn required(id: Option<String>) -> Result<String, CliError> {
    id.filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::Usage("missing <reviewer-id>".into()))
}

/// `--spec`: inline JSON or `@<file>`, an object.
pub fn read_spec(raw: Option<&str>) -> Result<Map<String, Value>, CliError> {
    let Some(raw) = raw.filter(|s| !s.is_empty()) else {
        return Err(CliError::Usage("--spec=<json-or-@file> is required".into()));
    };
    let (text, from) = match raw.strip_prefix('@') {
        Some(path) => {
            let unreadable = |e: std::io::Error| {
                CliError::Usage(format!("--spec @{path}: cannot read the file: {e}"))
            };
            let len = std::fs::metadata(path).map_err(unreadable)?.len();
            if len > MAX_SPEC_BYTES {
                return Err(CliError::Usage(format!(
                    "--spec @{path}: the file is over {MAX_SPEC_BYTES} bytes"
                )));
            }
            (
                std::fs::read_to_string(path).map_err(unreadable)?,
                format!("the file {path}"),
            )
        }
        None => (raw.to_owned(), "--spec".to_owned()),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(CliError::Usage(format!("{from} must be a JSON object"))),
        Err(e) => Err(CliError::Usage(format!("{from} is not valid JSON: {e}"))),
    }
}

async fn dispatch(
    command: ReviewersCommand,
    name: &str,
    api: &ApiArgs,
) -> Result<ExitCode, CliError> {
    let out = api.output();
    match command {
        ReviewersCommand::List { limit, cursor, .. } => {
            let mut q: Vec<(&'static str, String)> = Vec::new();
            if let Some(l) = limit {
                q.push(("limit", l.to_string()));
            }
            if let Some(c) = cursor {
                q.push(("cursor", c));
            }
            let page = api.connect(name)?.get("/v1/approvals/reviewers", q).await?;
            out.page(&page, REVIEWER_COLUMNS);
        }
        ReviewersCommand::Get { id, .. } => {
            let path = format!("/v1/approvals/reviewers/{}", segment(&required(id)?));
            out.json(&api.connect(name)?.get(&path, vec![]).await?);
        }
        ReviewersCommand::Register { spec, .. } => {
            let mut body = read_spec(spec.as_deref())?;
            let client = api.connect(name)?;
            if !body.contains_key("userId") {
                let me = client.get("/v1/identity/whoami", vec![]).await?;
                let Some(user) = me.get("userId").and_then(Value::as_str) else {
                    return Err(CliError::Local(
                        "Your token names no user (GET /v1/identity/whoami has no userId): give `userId` in --spec".into(),
                    ));
                };
                body.insert("userId".into(), Value::String(user.to_owned()));
            }
            let created = client
                .post("/v1/approvals/reviewers", &Value::Object(body), None)
                .await?;
            out.json(&created);
        }
        ReviewersCommand::Unregister { id, .. } => {
            let path = format!(
                "/v1/approvals/reviewers/{}/unregister",
                segment(&required(id)?)
            );
            out.json(
                &api.connect(name)?
                    .post(&path, &Value::Object(Map::new()), None)
                    .await?,
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

const REVIEWER_COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/id")),
    ("USER", |r| cell(r, "/userId")),
    ("ROLE", |r| cell(r, "/role")),
    ("NAME", |r| cell(r, "/displayName")),
    ("CREATED", |r| cell(r, "/createdAt")),
    ("DEACTIVATED", |r| cell(r, "/deactivatedAt")),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_is_an_object() {
        let m = read_spec(Some(r#"{"role":"standard"}"#)).unwrap();
        assert_eq!(m.get("role").and_then(Value::as_str), Some("standard"));
        assert!(read_spec(Some("[1]")).is_err());
        assert!(read_spec(None).is_err());
        assert!(read_spec(Some("@/nonexistent/spec.json")).is_err());
    }
}
