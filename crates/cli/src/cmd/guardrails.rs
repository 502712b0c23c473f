//! `kindgi guardrails list|get|register|unregister`: the official CLI's commands and flags,
//! through the one API client ([`crate::api`]).
//!
//! * `list [--name=<prefix>] [--limit] [--cursor]` → `GET /v1/guardrails` (`--table`: ID,
//!   KIND, CHECK, ACTION, SEVERITY).
//! * `get <id>` → `GET /v1/guardrails/{id}`; `unregister <id>` → `POST …/unregister`.
//! * `register --spec=<json-or-@file> [--project]` → `POST /v1/guardrails` with the spec and
//!   `projectId` (without `--project`, the Default project's, as the official CLI asks for it).

use std::process::ExitCode;

use serde_json::{Value, json};

use super::args::{json_input, required};
use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, ApiClient, CliError, push, segment};

#[derive(Debug, clap::Subcommand)]
pub enum GuardrailsCommand {
    /// List registered guardrails.
    List {
        /// Only the guardrails whose id starts with this prefix.
        #[arg(long)]
        name: Option<String>,
        /// The most guardrails to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch a guardrail by id.
    Get {
        #[arg(value_name = "GUARDRAIL_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Register a guardrail.
    Register {
        /// The guardrail definition as JSON, or `@<file>` to read it from a file. Required.
        #[arg(long)]
        spec: Option<String>,
        /// The project to register it in, by id (default: the tenant's Default project).
        #[arg(long)]
        project: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Unregister a guardrail.
    Unregister {
        #[arg(value_name = "GUARDRAIL_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: GuardrailsCommand) -> ExitCode {
    let (name, api) = match &command {
        GuardrailsCommand::List { api, .. } => ("guardrails list", api.clone()),
        GuardrailsCommand::Get { api, .. } => ("guardrails get", api.clone()),
        GuardrailsCommand::Register { api, .. } => ("guardrails register", api.clone()),
        GuardrailsCommand::Unregister { api, .. } => ("guardrails unregister", api.clone()),
    };
    match dispatch(command, name, &api).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

/// The Default project's id (`GET /v1/projects/default`).
pub(crate) async fn default_project(client: &ApiClient) -> Result<String, CliError> {
    let project = client.get("/v1/projects/default", vec![]).await?;
    project
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| CliError::Local("GET /v1/projects/default answered no `id`".into()))
}

async fn dispatch(command: GuardrailsCommand, name: &str, api: &ApiArgs) -> Result<(), CliError> {
    let out = api.output();
    match command {
        GuardrailsCommand::List {
            name: prefix,
            limit,
            cursor,
            ..
        } => {
            let mut q = Vec::new();
            push(&mut q, "name", prefix);
            push(&mut q, "cursor", cursor);
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            out.page(
                &api.connect(name)?.get("/v1/guardrails", q).await?,
                GUARDRAIL_COLUMNS,
            );
        }
        GuardrailsCommand::Get { id, .. } => {
            let path = format!("/v1/guardrails/{}", segment(&required(id, "guardrail-id")?));
            out.json(&api.connect(name)?.get(&path, vec![]).await?);
        }
        GuardrailsCommand::Register { spec, project, .. } => {
            let Some(spec) = spec.filter(|s| !s.is_empty()) else {
                return Err(CliError::Usage("--spec=<json-or-@file> is required".into()));
            };
            let spec = json_input("spec", &spec)?;
            let Value::Object(mut body) = spec else {
                return Err(CliError::Usage("--spec must be a JSON object".into()));
            };
            let client = api.connect(name)?;
            let project = match project.filter(|p| !p.is_empty()) {
                Some(p) => p,
                None => default_project(&client).await?,
            };
            body.insert("projectId".into(), Value::String(project));
            out.json(
                &client
                    .post("/v1/guardrails", &Value::Object(body), None)
                    .await?,
            );
        }
        GuardrailsCommand::Unregister { id, .. } => {
            let id = required(id, "guardrail-id")?;
            let path = format!("/v1/guardrails/{}/unregister", segment(&id));
            out.json(&api.connect(name)?.post(&path, &json!({}), None).await?);
        }
    }
    Ok(())
}

const GUARDRAIL_COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/id")),
    ("KIND", |r| cell(r, "/kind")),
    ("CHECK", |r| cell(r, "/check")),
    ("ACTION", |r| cell(r, "/action/on-violation")),
    ("SEVERITY", |r| match r.get("severity") {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }),
];
