//! `kindgi schedules create|list|get|update|pause|resume|unregister|fires|run-now|
//! take-ownership`: the official CLI's commands, flags and wire (platform-api.md §8, §12.3),
//! through the one API client ([`crate::api`]).
//!
//! * `create --cron … (--agent [--agent-version] | --flow --flow-version) [--timezone]
//!   [--input] [--project] [--catch-up] [--overlap] [--starting-deadline] [--label]
//!   [--run-as]` → `POST /v1/schedules`.
//! * `list [--project] [--status] [--limit] [--cursor]` → `GET /v1/schedules`.
//! * `get <id> [--upcoming=N]` → `GET /v1/schedules/{id}`.
//! * `update <id> [the same flags]` → `PATCH /v1/schedules/{id}` (only what is given).
//! * `pause|resume|unregister|run-now <id>` → `POST /v1/schedules/{id}/<verb>`.
//! * `fires <id> [--limit] [--cursor]` → `GET /v1/schedules/{id}/fires`.
//! * `take-ownership <id> [--run-as]` → `POST /v1/schedules/{id}/owner`.

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use super::args::json_input;
use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, push, segment};

/// What a schedule runs.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TargetFlags {
    /// Run this agent (at its live version, else the latest).
    #[arg(long)]
    agent: Option<String>,
    /// With --agent: run this exact version.
    #[arg(long = "agent-version")]
    agent_version: Option<String>,
    /// Run this flow (with --flow-version).
    #[arg(long)]
    flow: Option<String>,
    /// With --flow: the flow version to run.
    #[arg(long = "flow-version")]
    flow_version: Option<String>,
}

/// When it runs, with what, and its policies.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WhenFlags {
    /// A cron expression: `0 7 * * 1-5` (07:00 on weekdays), `@daily`, …; 6 fields for seconds.
    #[arg(long)]
    cron: Option<String>,
    /// An IANA timezone, such as America/Toronto (default UTC).
    #[arg(long)]
    timezone: Option<String>,
    /// The input each run gets, as JSON or `@<file>`. An agent needs `{"userMessage": "…"}`.
    #[arg(long)]
    input: Option<String>,
    /// After a gap: `latest` runs once for the latest missed time (default); `skip` drops them.
    #[arg(long = "catch-up", value_parser = ["latest", "skip"])]
    catch_up: Option<String>,
    /// While the previous run is still going: `skip` (default) or `allow` another run.
    #[arg(long, value_parser = ["skip", "allow"])]
    overlap: Option<String>,
    /// Seconds a run may start late and still count as on time (default 600).
    #[arg(long = "starting-deadline")]
    starting_deadline: Option<u32>,
    /// A short label.
    #[arg(long)]
    label: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum SchedulesCommand {
    /// Create a schedule.
    Create {
        #[command(flatten)]
        target: TargetFlags,
        #[command(flatten)]
        when: WhenFlags,
        /// The schedule's project (default: the tenant's Default project).
        #[arg(long)]
        project: Option<String>,
        /// A service account its runs act as, instead of you (tenant admins).
        #[arg(long = "run-as")]
        run_as: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List schedules.
    List {
        /// Only this project's schedules.
        #[arg(long)]
        project: Option<String>,
        /// Only `active` or only `paused` schedules.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch a schedule.
    Get {
        #[arg(value_name = "SCHEDULE_ID")]
        id: Option<String>,
        /// Also show the next N times it runs (1 to 20).
        #[arg(long)]
        upcoming: Option<u32>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Change a schedule (a flag left out keeps its value).
    Update {
        #[arg(value_name = "SCHEDULE_ID")]
        id: Option<String>,
        #[command(flatten)]
        target: TargetFlags,
        #[command(flatten)]
        when: WhenFlags,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Pause a schedule.
    Pause(ById),
    /// Resume a paused schedule (missed times are not replayed).
    Resume(ById),
    /// Unregister a schedule.
    Unregister(ById),
    /// Run a schedule now, outside its schedule (its next occurrence is unchanged).
    #[command(name = "run-now")]
    RunNow(ById),
    /// A schedule's fires, newest first.
    Fires {
        #[arg(value_name = "SCHEDULE_ID")]
        id: Option<String>,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Take a schedule over: its runs act as you, or as --run-as (tenant admins).
    #[command(name = "take-ownership")]
    TakeOwnership {
        #[arg(value_name = "SCHEDULE_ID")]
        id: Option<String>,
        #[arg(long = "run-as")]
        run_as: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// A command that takes only the schedule's id.
#[derive(Debug, clap::Args)]
pub struct ById {
    #[arg(value_name = "SCHEDULE_ID")]
    id: Option<String>,
    #[command(flatten)]
    api: ApiArgs,
}

impl SchedulesCommand {
    fn name_and_api(&self) -> (&'static str, &ApiArgs) {
        match self {
            SchedulesCommand::Create { api, .. } => ("schedules create", api),
            SchedulesCommand::List { api, .. } => ("schedules list", api),
            SchedulesCommand::Get { api, .. } => ("schedules get", api),
            SchedulesCommand::Update { api, .. } => ("schedules update", api),
            SchedulesCommand::Pause(b) => ("schedules pause", &b.api),
            SchedulesCommand::Resume(b) => ("schedules resume", &b.api),
            SchedulesCommand::Unregister(b) => ("schedules unregister", &b.api),
            SchedulesCommand::RunNow(b) => ("schedules run-now", &b.api),
            SchedulesCommand::Fires { api, .. } => ("schedules fires", api),
            SchedulesCommand::TakeOwnership { api, .. } => ("schedules take-ownership", api),
        }
    }
}

pub async fn run(command: SchedulesCommand) -> ExitCode {
    let (name, api) = command.name_and_api();
    let api = api.clone();
    match dispatch(command, name, &api).await {
        Ok(code) => code,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

fn required(id: Option<String>) -> Result<String, CliError> {
    id.filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::Usage("missing <schedule-id>".into()))
}

/// The target, `config` and policy fields the flags give.
fn body_of(target: TargetFlags, when: WhenFlags) -> Result<Map<String, Value>, CliError> {
    let mut body = Map::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            body.insert(k.into(), Value::String(v));
        }
    };
    put("agentId", target.agent);
    put("agentVersion", target.agent_version);
    put("flowId", target.flow);
    put("flowVersion", target.flow_version);
    put("catchUp", when.catch_up);
    put("overlap", when.overlap);
    put("label", when.label);
    if let Some(d) = when.starting_deadline {
        body.insert("startingDeadlineSeconds".into(), json!(d));
    }
    let mut config = Map::new();
    if let Some(c) = when.cron {
        config.insert("cronExpression".into(), Value::String(c));
    }
    if let Some(tz) = when.timezone {
        config.insert("timezone".into(), Value::String(tz));
    }
    if let Some(input) = when.input {
        config.insert("input".into(), json_input("input", &input)?);
    }
    if !config.is_empty() {
        body.insert("config".into(), Value::Object(config));
    }
    Ok(body)
}

async fn dispatch(
    command: SchedulesCommand,
    name: &str,
    api: &ApiArgs,
) -> Result<ExitCode, CliError> {
    let out = api.output();
    let post_to = |id: String, verb: &'static str| {
        let path = format!("/v1/schedules/{}/{verb}", segment(&id));
        async move {
            api.connect(name)?
                .post(&path, &Value::Object(Map::new()), None)
                .await
        }
    };
    match command {
        SchedulesCommand::Create {
            target,
            when,
            project,
            run_as,
            ..
        } => {
            if when.cron.is_none() {
                return Err(CliError::Usage("--cron=<expr> is required".into()));
            }
            if target.agent.is_none() && target.flow.is_none() {
                return Err(CliError::Usage(
                    "name what it runs: --agent=<id> or --flow=<id> --flow-version=<v>".into(),
                ));
            }
            let mut body = body_of(target, when)?;
            if let Some(p) = project {
                body.insert("projectId".into(), Value::String(p));
            }
            if let Some(sa) = run_as {
                body.insert("runAsServiceAccountId".into(), Value::String(sa));
            }
            let created = api
                .connect(name)?
                .post("/v1/schedules", &Value::Object(body), None)
                .await?;
            out.json(&created);
        }
        SchedulesCommand::List {
            project,
            status,
            limit,
            cursor,
            ..
        } => {
            let mut q = Vec::new();
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            push(&mut q, "cursor", cursor);
            push(&mut q, "status", status);
            push(&mut q, "projectId", project);
            let page = api.connect(name)?.get("/v1/schedules", q).await?;
            out.page(&page, SCHEDULE_COLUMNS);
        }
        SchedulesCommand::Get { id, upcoming, .. } => {
            let path = format!("/v1/schedules/{}", segment(&required(id)?));
            let mut q = Vec::new();
            push(&mut q, "upcoming", upcoming.map(|n| n.to_string()));
            out.json(&api.connect(name)?.get(&path, q).await?);
        }
        SchedulesCommand::Update {
            id, target, when, ..
        } => {
            let path = format!("/v1/schedules/{}", segment(&required(id)?));
            let body = body_of(target, when)?;
            out.json(
                &api.connect(name)?
                    .patch(&path, &Value::Object(body))
                    .await?,
            );
        }
        SchedulesCommand::Pause(b) => out.json(&post_to(required(b.id)?, "pause").await?),
        SchedulesCommand::Resume(b) => out.json(&post_to(required(b.id)?, "resume").await?),
        SchedulesCommand::Unregister(b) => {
            out.json(&post_to(required(b.id)?, "unregister").await?);
        }
        SchedulesCommand::RunNow(b) => out.json(&post_to(required(b.id)?, "run-now").await?),
        SchedulesCommand::Fires {
            id, limit, cursor, ..
        } => {
            let path = format!("/v1/schedules/{}/fires", segment(&required(id)?));
            let mut q = Vec::new();
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            push(&mut q, "cursor", cursor);
            let page = api.connect(name)?.get(&path, q).await?;
            out.page(&page, FIRE_COLUMNS);
        }
        SchedulesCommand::TakeOwnership { id, run_as, .. } => {
            let path = format!("/v1/schedules/{}/owner", segment(&required(id)?));
            let mut body = Map::new();
            if let Some(sa) = run_as {
                body.insert("runAsServiceAccountId".into(), Value::String(sa));
            }
            out.json(
                &api.connect(name)?
                    .post(&path, &Value::Object(body), None)
                    .await?,
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

const SCHEDULE_COLUMNS: &[Column] = &[
    ("ID", |s| cell(s, "/scheduleId")),
    ("RUNS", |s| match s.get("agentId").and_then(Value::as_str) {
        Some(a) => match s.get("agentVersion").and_then(Value::as_str) {
            Some(v) => format!("agent {a}@{v}"),
            None => format!("agent {a}"),
        },
        None => format!("flow {}@{}", cell(s, "/flowId"), cell(s, "/flowVersion")),
    }),
    ("CRON", |s| cell(s, "/cronExpression")),
    // A schedule without a zone runs in UTC.
    ("TIMEZONE", |s| {
        text(s, "/timezone").unwrap_or_else(|| "UTC".into())
    }),
    ("STATUS", |s| cell(s, "/status")),
    ("OWNER", |s| {
        text(s, "/owner/displayName").unwrap_or_else(|| cell(s, "/owner/id"))
    }),
    ("NEXT", |s| cell(s, "/nextFireAt")),
    ("LABEL", |s| cell(s, "/label")),
];

const FIRE_COLUMNS: &[Column] = &[
    ("FIRED", |f| cell(f, "/firedAt")),
    ("FOR", |f| {
        if f.get("manual") == Some(&Value::Bool(true)) {
            "run-now".into()
        } else {
            cell(f, "/scheduledFor")
        }
    }),
    ("OUTCOME", |f| cell(f, "/outcome")),
    ("STARTED", |f| cell(f, "/runId")),
    ("NOTE", |f| {
        match (text(f, "/detail"), f.get("missedCount")) {
            (Some(d), _) => d,
            (None, Some(m)) => format!("stood in for {m} missed"),
            (None, None) => "-".into(),
        }
    }),
];

/// A non-empty string field of a row (`cell` shows a missing one as `-`, which a fallback
/// must not mistake for a value).
fn text(row: &Value, pointer: &str) -> Option<String> {
    row.pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(columns: &[Column], name: &str, row: &Value) -> String {
        let (_, f) = columns.iter().find(|(h, _)| *h == name).unwrap();
        f(row)
    }

    #[test]
    fn table_cells_fall_back_when_a_field_is_absent() {
        let bare = json!({"scheduleId": "s1", "owner": {"kind": "user", "id": "u1"}});
        assert_eq!(column(SCHEDULE_COLUMNS, "TIMEZONE", &bare), "UTC");
        assert_eq!(column(SCHEDULE_COLUMNS, "OWNER", &bare), "u1");
        let named =
            json!({"timezone": "Europe/Berlin", "owner": {"id": "u1", "displayName": "Ada"}});
        assert_eq!(
            column(SCHEDULE_COLUMNS, "TIMEZONE", &named),
            "Europe/Berlin"
        );
        assert_eq!(column(SCHEDULE_COLUMNS, "OWNER", &named), "Ada");
        let late = json!({"outcome": "started", "missedCount": 3});
        assert_eq!(column(FIRE_COLUMNS, "NOTE", &late), "stood in for 3 missed");
        let refused = json!({"outcome": "refused", "detail": "owner-revoked", "missedCount": 3});
        assert_eq!(column(FIRE_COLUMNS, "NOTE", &refused), "owner-revoked");
        assert_eq!(column(FIRE_COLUMNS, "NOTE", &json!({})), "-");
    }
}
