//! `kindgi mail-triggers create|list|get|update|pause|resume|unregister|fires` (our extension:
//! docs/mail-triggers.md), over `/v1/mail-triggers` through the one API client
//! ([`crate::api`]).
//!
//! * `create --spec=<json|@file>` (`{address, flowId, flowVersion, senders, mailbox, …}`) →
//!   `POST /v1/mail-triggers`.
//! * `list [--status] [--project] [--limit] [--cursor]` → `GET /v1/mail-triggers`.
//! * `get|pause|resume|unregister <trigger-id>` → `GET /{id}`, `POST /{id}/pause|resume|unregister`.
//! * `update <trigger-id> --spec=<json|@file>` (only the fields to change) → `PATCH /{id}`.
//! * `fires <trigger-id> [--limit] [--cursor]` → `GET /{id}/fires`.

use std::process::ExitCode;

use serde_json::{Map, Value};

use super::reviewers::read_spec;
use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, segment};

#[derive(Debug, clap::Subcommand)]
pub enum MailTriggersCommand {
    /// Register a mail trigger: an address whose mail starts a flow run for its sender.
    Create {
        /// The trigger as inline JSON or `@<file>`: `address`, `flowId`, `flowVersion`,
        /// `senders` ([{address, userId}]), `mailbox` ({app, whose}), optional `projectId`,
        /// `config.input`, `toolsAllowedUnattended`, `label`. Required.
        #[arg(long)]
        spec: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List mail triggers.
    List {
        /// Only `active` or `paused` ones.
        #[arg(long)]
        status: Option<String>,
        /// Only this project's.
        #[arg(long)]
        project: Option<String>,
        /// The most to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch a mail trigger by id.
    Get {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Change a mail trigger: the fields to change as inline JSON or `@<file>` (`address`,
    /// `flowVersion`, `senders`, `mailbox`, `config.input`, `toolsAllowedUnattended`,
    /// `label`, `projectId`; the flow id never changes).
    Update {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        /// The fields to change. Required.
        #[arg(long)]
        spec: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Pause a mail trigger: its mail is recorded as `skipped` fires.
    Pause {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Resume a paused mail trigger.
    Resume {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Unregister a mail trigger: its address is free again.
    Unregister {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List a mail trigger's fires, newest first.
    Fires {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: MailTriggersCommand) -> ExitCode {
    use MailTriggersCommand as C;
    let (name, api) = match &command {
        C::Create { api, .. } => ("mail-triggers create", api.clone()),
        C::List { api, .. } => ("mail-triggers list", api.clone()),
        C::Get { api, .. } => ("mail-triggers get", api.clone()),
        C::Update { api, .. } => ("mail-triggers update", api.clone()),
        C::Pause { api, .. } => ("mail-triggers pause", api.clone()),
        C::Resume { api, .. } => ("mail-triggers resume", api.clone()),
        C::Unregister { api, .. } => ("mail-triggers unregister", api.clone()),
        C::Fires { api, .. } => ("mail-triggers fires", api.clone()),
    };
    match dispatch(command, name, &api).await {
        Ok(code) => code,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

fn required(id: Option<String>) -> Result<String, CliError> {
    id.filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::Usage("missing <trigger-id>".into()))
}

fn paging(limit: Option<u32>, cursor: Option<String>) -> Vec<(&'static str, String)> {
    let mut q = Vec::new();
    if let Some(l) = limit {
        q.push(("limit", l.to_string()));
    }
    if let Some(c) = cursor {
        q.push(("cursor", c));
    }
    q
}

async fn dispatch(
    command: MailTriggersCommand,
    name: &str,
    api: &ApiArgs,
) -> Result<ExitCode, CliError> {
    use MailTriggersCommand as C;
    let out = api.output();
    let action = |id: Option<String>, what: &str| -> Result<String, CliError> {
        Ok(format!(
            "/v1/mail-triggers/{}/{what}",
            segment(&required(id)?)
        ))
    };
    let empty = Value::Object(Map::new());
    match command {
        C::Create { spec, .. } => {
            let body = Value::Object(read_spec(spec.as_deref())?);
            out.json(
                &api.connect(name)?
                    .post("/v1/mail-triggers", &body, None)
                    .await?,
            );
        }
        C::List {
            status,
            project,
            limit,
            cursor,
            ..
        } => {
            let mut q = paging(limit, cursor);
            if let Some(s) = status {
                q.push(("status", s));
            }
            if let Some(p) = project {
                q.push(("projectId", p));
            }
            let page = api.connect(name)?.get("/v1/mail-triggers", q).await?;
            out.page(&page, TRIGGER_COLUMNS);
        }
        C::Get { id, .. } => {
            let path = format!("/v1/mail-triggers/{}", segment(&required(id)?));
            out.json(&api.connect(name)?.get(&path, vec![]).await?);
        }
        C::Update { id, spec, .. } => {
            let path = format!("/v1/mail-triggers/{}", segment(&required(id)?));
            let body = Value::Object(read_spec(spec.as_deref())?);
            out.json(&api.connect(name)?.patch(&path, &body).await?);
        }
        C::Pause { id, .. } => {
            let path = action(id, "pause")?;
            out.json(&api.connect(name)?.post(&path, &empty, None).await?);
        }
        C::Resume { id, .. } => {
            let path = action(id, "resume")?;
            out.json(&api.connect(name)?.post(&path, &empty, None).await?);
        }
        C::Unregister { id, .. } => {
            let path = action(id, "unregister")?;
            out.json(&api.connect(name)?.post(&path, &empty, None).await?);
        }
        C::Fires {
            id, limit, cursor, ..
        } => {
            let path = action(id, "fires")?;
            let page = api.connect(name)?.get(&path, paging(limit, cursor)).await?;
            out.page(&page, FIRE_COLUMNS);
        }
    }
    Ok(ExitCode::SUCCESS)
}

const TRIGGER_COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/triggerId")),
    ("ADDRESS", |r| cell(r, "/address")),
    ("FLOW", |r| cell(r, "/flowId")),
    ("VERSION", |r| cell(r, "/flowVersion")),
    ("STATUS", |r| cell(r, "/status")),
    ("LAST FIRED", |r| cell(r, "/lastFiredAt")),
];

const FIRE_COLUMNS: &[Column] = &[
    ("FIRE", |r| cell(r, "/fireId")),
    ("AT", |r| cell(r, "/firedAt")),
    ("OUTCOME", |r| cell(r, "/outcome")),
    ("RUN", |r| cell(r, "/runId")),
    ("DETAIL", |r| cell(r, "/detail")),
    ("FROM", |r| cell(r, "/from")),
];
