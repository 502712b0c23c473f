//! `kindgi flows|agents list|get|versions` and `kindgi tools list|get|versions|get-version`:
//! read the registries with the official CLI's flags and wire (platform-api.md §12.3) —
//! `GET /v1/<kind>?name&includeRetired=true&limit&cursor`, `GET /v1/<kind>/{id}` or
//! `…/versions/{v}`, `GET /v1/<kind>/{id}/versions?includeTombstoned=true&limit&cursor`.
//! Whole bodies, pretty JSON (pages as `data, hasMore, nextCursor`).

use std::process::ExitCode;

use crate::api::output::{Column, cell};
use crate::api::push;
use crate::api::{ApiArgs, CliError, segment};

/// The read commands every registry has.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ReadCommand {
    /// List the registered ones (the latest version of each).
    List {
        /// Only ids that start with this.
        #[arg(long)]
        name: Option<String>,
        /// Include retired ones (every version unregistered).
        #[arg(long = "include-retired")]
        include_retired: bool,
        /// The most to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor (the previous page's `nextCursor`).
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch one: its latest version, or the version given.
    Get {
        #[arg(value_name = "ID")]
        id: Option<String>,
        #[arg(value_name = "VERSION")]
        version: Option<String>,
        /// The version (as the second argument; ours).
        #[arg(long = "version", hide = true)]
        version_flag: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List the registered versions of one.
    Versions {
        #[arg(value_name = "ID")]
        id: Option<String>,
        /// Include unregistered versions too.
        #[arg(long = "include-unregistered")]
        include_unregistered: bool,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch one version by exact semver.
    #[command(name = "get-version")]
    GetVersion {
        #[arg(value_name = "ID")]
        id: Option<String>,
        #[arg(value_name = "VERSION")]
        version: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

impl ReadCommand {
    pub fn api(&self) -> &ApiArgs {
        match self {
            ReadCommand::List { api, .. }
            | ReadCommand::Get { api, .. }
            | ReadCommand::Versions { api, .. }
            | ReadCommand::GetVersion { api, .. } => api,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            ReadCommand::List { .. } => "list",
            ReadCommand::Get { .. } => "get",
            ReadCommand::Versions { .. } => "versions",
            ReadCommand::GetVersion { .. } => "get-version",
        }
    }
}

const COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/id")),
    ("VERSION", |r| cell(r, "/version")),
    ("DESCRIPTION", |r| cell(r, "/description")),
];

/// Run `command` against `/v1/<kind>` (`flows`, `agents`, `tools`).
pub async fn run(kind: &str, command: ReadCommand) -> ExitCode {
    let label = format!("{kind} {}", command.name());
    let api = command.api().clone();
    match read(kind, &label, command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(&label, api.quiet, api.verbose),
    }
}

fn required(v: Option<String>, what: &str) -> Result<String, CliError> {
    v.filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::Usage(format!("missing <{what}>")))
}

async fn read(kind: &str, label: &str, command: ReadCommand) -> Result<(), CliError> {
    let out = command.api().output();
    let (path, query, is_page) = match &command {
        ReadCommand::List {
            name,
            include_retired,
            limit,
            cursor,
            ..
        } => {
            let mut q = Vec::new();
            push(&mut q, "name", name.clone());
            push(
                &mut q,
                "includeRetired",
                include_retired.then(|| "true".into()),
            );
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            push(&mut q, "cursor", cursor.clone());
            (format!("/v1/{kind}"), q, true)
        }
        ReadCommand::Get {
            id,
            version,
            version_flag,
            ..
        } => {
            let id = required(id.clone(), "id")?;
            let path = match version.clone().or_else(|| version_flag.clone()) {
                Some(v) => format!("/v1/{kind}/{}/versions/{}", segment(&id), segment(&v)),
                None => format!("/v1/{kind}/{}", segment(&id)),
            };
            (path, Vec::new(), false)
        }
        ReadCommand::Versions {
            id,
            include_unregistered,
            limit,
            cursor,
            ..
        } => {
            let id = required(id.clone(), "id")?;
            let mut q = Vec::new();
            push(
                &mut q,
                "includeTombstoned",
                include_unregistered.then(|| "true".into()),
            );
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            push(&mut q, "cursor", cursor.clone());
            (format!("/v1/{kind}/{}/versions", segment(&id)), q, true)
        }
        ReadCommand::GetVersion { id, version, .. } => {
            let id = required(id.clone(), "id")?;
            let v = required(version.clone(), "version")?;
            (
                format!("/v1/{kind}/{}/versions/{}", segment(&id), segment(&v)),
                Vec::new(),
                false,
            )
        }
    };
    let body = command.api().connect(label)?.get(&path, query).await?;
    if is_page {
        out.page(&body, COLUMNS);
    } else {
        out.json(&body);
    }
    Ok(())
}
