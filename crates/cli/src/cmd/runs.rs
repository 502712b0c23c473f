//! `kindgi runs start|get|list|journal|cancel|stream|resume`: the official CLI's commands
//! and flags, with its wire (platform-api.md §12.3), through the one API client
//! ([`crate::api`]). `start` is in [`super::runs_start`], `resume` in [`super::runs_resume`],
//! `stream` in [`super::runs_stream`], reading a journal in [`super::runs_journal`].
//!
//! Exit codes: the table in [`crate::api::errors`]; `start` exits 1 when the run failed,
//! `resume` 0/3/4.

use std::process::ExitCode;

use serde_json::{Value, json};

use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, push, segment};

use super::runs_journal::journal;

#[derive(Debug, clap::Subcommand)]
pub enum RunsCommand {
    /// Start a run for an agent or flow and wait until it finishes or waits on an approval.
    Start(super::runs_start::StartArgs),
    /// Fetch a run snapshot by id.
    Get {
        #[arg(value_name = "RUN_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List runs (paginated).
    List {
        /// Only this agent's turns.
        #[arg(long)]
        agent: Option<String>,
        /// Only the runs this trigger (a schedule, a webhook, a mail trigger) started.
        #[arg(long)]
        trigger: Option<String>,
        /// Only the runs started this way: person, key, schedule, webhook, event, mail
        /// (comma-separated for several).
        #[arg(long = "started-by")]
        started_by: Option<String>,
        /// Replay runs: exclude (the default), include, only.
        #[arg(long, value_parser = ["exclude", "include", "only"])]
        replays: Option<String>,
        /// Only this eval run's replay runs.
        #[arg(long = "eval-run")]
        eval_run: Option<String>,
        /// The most runs to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor (the previous page's `nextCursor`).
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Read the durable journal for a run.
    Journal {
        #[arg(value_name = "RUN_ID")]
        id: Option<String>,
        /// Only the entries after this sequence number.
        #[arg(long, visible_alias = "after")]
        since: Option<u64>,
        /// The most entries to return (1 to 100). Without it, the whole journal.
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor (the previous page's `nextCursor`).
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Request cancellation of a run.
    Cancel {
        #[arg(value_name = "RUN_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Subscribe to a run's event stream (SSE) until it ends.
    Stream {
        #[arg(value_name = "RUN_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Say what a run waits for: exit 0 nothing, 3 an approval, 4 the runtime.
    Resume {
        #[arg(value_name = "RUN_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

fn required(id: Option<String>, what: &str) -> Result<String, CliError> {
    id.filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::Usage(format!("missing <{what}>")))
}

pub async fn run(command: RunsCommand) -> ExitCode {
    let (name, api) = match &command {
        RunsCommand::Start(a) => ("runs start", a.api.clone()),
        RunsCommand::Get { api, .. } => ("runs get", api.clone()),
        RunsCommand::List { api, .. } => ("runs list", api.clone()),
        RunsCommand::Journal { api, .. } => ("runs journal", api.clone()),
        RunsCommand::Cancel { api, .. } => ("runs cancel", api.clone()),
        RunsCommand::Stream { api, .. } => ("runs stream", api.clone()),
        RunsCommand::Resume { api, .. } => ("runs resume", api.clone()),
    };
    match dispatch(command, name, &api).await {
        Ok(code) => code,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

async fn dispatch(command: RunsCommand, name: &str, api: &ApiArgs) -> Result<ExitCode, CliError> {
    let out = api.output();
    match command {
        RunsCommand::Start(args) => super::runs_start::start(args, name).await,
        RunsCommand::Get { id, .. } => {
            let id = required(id, "run-id")?;
            let run = api
                .connect(name)?
                .get(&format!("/v1/runs/{}", segment(&id)), vec![])
                .await?;
            out.json(&run);
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::List {
            agent,
            trigger,
            started_by,
            replays,
            eval_run,
            limit,
            cursor,
            ..
        } => {
            let mut q: Vec<(&'static str, String)> = Vec::new();
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            push(&mut q, "cursor", cursor);
            push(&mut q, "agentId", agent);
            push(&mut q, "replays", replays);
            push(&mut q, "evalRunId", eval_run);
            push(&mut q, "triggerId", trigger);
            push(&mut q, "startedBy", started_by);
            let page = api.connect(name)?.get("/v1/runs", q).await?;
            out.page(&page, RUN_COLUMNS);
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Journal {
            id,
            since,
            limit,
            cursor,
            ..
        } => {
            let id = required(id, "run-id")?;
            let client = api.connect(name)?;
            let page = journal(&client, &id, since, limit, cursor).await?;
            out.page(&page, JOURNAL_COLUMNS);
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Cancel { id, .. } => {
            let id = required(id, "run-id")?;
            let client = api.connect(name)?;
            client
                .post(
                    &format!("/v1/runs/{}/cancel", segment(&id)),
                    &json!({}),
                    None,
                )
                .await?;
            out.json(&json!({"ok": true, "runId": id}));
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Stream { id, .. } => {
            let id = required(id, "run-id")?;
            super::runs_stream::stream(&api.connect(name)?, &id, &out).await
        }
        RunsCommand::Resume { id, .. } => {
            let id = required(id, "run-id")?;
            super::runs_resume::resume(&api.connect(name)?, &id, &out).await
        }
    }
}

fn run_subject(r: &Value) -> String {
    match (
        r.pointer("/agent/id").and_then(Value::as_str),
        r.pointer("/agent/version"),
    ) {
        (Some(a), Some(Value::String(v))) => format!("{a}@{v}"),
        (Some(a), _) => a.to_owned(),
        _ => cell(r, "/flowId"),
    }
}

const RUN_COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/id")),
    ("STATUS", |r| cell(r, "/status")),
    ("AGENT/FLOW", run_subject),
    ("STARTED BY", |r| cell(r, "/startedBy")),
    ("CREATED", |r| cell(r, "/createdAt")),
];

const JOURNAL_COLUMNS: &[Column] = &[
    ("SEQUENCE", |r| cell(r, "/sequence")),
    ("KIND", |r| cell(r, "/kind")),
    ("NODE", |r| cell(r, "/nodeId")),
    ("TIMESTAMP", |r| cell(r, "/timestamp")),
];
