//! `kindgi providers list|get|register|check|capabilities|unregister`: a tenant's model
//! providers on a running API, over `/v1/providers/*`, with the official CLI's names and
//! flags (`register --spec=<json-or-@file>`; its `--preset` flags are the official CLI's
//! built-in presets, which this CLI does not carry). A registration names its key's secret
//! (`secret_ref`); no command sends or prints a key.

use std::process::ExitCode;

use serde_json::Value;

use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, push, segment};

#[derive(Debug, clap::Subcommand)]
pub enum ProvidersCommand {
    /// List model providers.
    List {
        /// Only the providers with a model that has this feature (e.g. `tool-use`).
        #[arg(long)]
        feature: Option<String>,
        /// The most providers to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch a provider by id.
    Get {
        #[arg(value_name = "PROVIDER_ID")]
        provider_id: String,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Register a model provider from a spec (the `POST /v1/providers` body).
    Register {
        /// The registration body as JSON, or `@<file>` to read it from a file.
        #[arg(long, value_name = "JSON_OR_@FILE")]
        spec: Option<String>,
        /// The official CLI's built-in presets: not carried by this CLI (give --spec).
        #[arg(long)]
        preset: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Check a provider's registration (the adapter's static check; the key's secret by name).
    Check {
        #[arg(value_name = "PROVIDER_ID")]
        provider_id: String,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List the capabilities a provider's models satisfy.
    Capabilities {
        #[arg(value_name = "PROVIDER_ID")]
        provider_id: String,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Unregister a model provider.
    Unregister {
        #[arg(value_name = "PROVIDER_ID")]
        provider_id: String,
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: ProvidersCommand) -> ExitCode {
    let (label, api) = match &command {
        ProvidersCommand::List { api, .. } => ("providers list", api.clone()),
        ProvidersCommand::Get { api, .. } => ("providers get", api.clone()),
        ProvidersCommand::Register { api, .. } => ("providers register", api.clone()),
        ProvidersCommand::Check { api, .. } => ("providers check", api.clone()),
        ProvidersCommand::Capabilities { api, .. } => ("providers capabilities", api.clone()),
        ProvidersCommand::Unregister { api, .. } => ("providers unregister", api.clone()),
    };
    match api_command(command, label, &api).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(label, api.quiet, api.verbose),
    }
}

const COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/id")),
    ("REGION", |r| cell(r, "/region")),
    ("DEFAULT MODEL", |r| cell(r, "/defaultModel")),
    ("FALLBACK", |r| cell(r, "/fallback")),
];

/// `--spec`: inline JSON, or `@<file>`.
fn read_spec(spec: Option<String>, preset: Option<String>) -> Result<Value, CliError> {
    let text = match (spec, preset) {
        (Some(s), None) => match s.strip_prefix('@') {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| CliError::Local(format!("cannot read --spec @{path}: {e}")))?,
            None => s,
        },
        (None, Some(p)) => {
            return Err(CliError::Usage(format!(
                "--preset {p}: this CLI carries no provider presets; give the registration with --spec=<json-or-@file>"
            )));
        }
        (Some(_), Some(_)) => {
            return Err(CliError::Usage("give --spec or --preset, not both".into()));
        }
        (None, None) => {
            return Err(CliError::Usage(
                "give the registration with --spec=<json-or-@file>".into(),
            ));
        }
    };
    serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("--spec is not valid JSON: {e}")))
}

async fn api_command(
    command: ProvidersCommand,
    label: &str,
    api: &ApiArgs,
) -> Result<(), CliError> {
    let out = api.output();
    match command {
        ProvidersCommand::List {
            feature,
            limit,
            cursor,
            ..
        } => {
            let mut q = Vec::new();
            push(&mut q, "feature", feature);
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            push(&mut q, "cursor", cursor);
            let page = api.connect(label)?.get("/v1/providers", q).await?;
            out.page(&page, COLUMNS);
        }
        ProvidersCommand::Get { provider_id, .. } => {
            let path = format!("/v1/providers/{}", segment(&provider_id));
            out.json(&api.connect(label)?.get(&path, Vec::new()).await?);
        }
        ProvidersCommand::Register { spec, preset, .. } => {
            let body = read_spec(spec, preset)?;
            let wire = api
                .connect(label)?
                .post("/v1/providers", &body, None)
                .await?;
            out.json(&wire);
        }
        ProvidersCommand::Check { provider_id, .. } => {
            let path = format!("/v1/providers/{}/check", segment(&provider_id));
            out.json(&api.connect(label)?.get(&path, Vec::new()).await?);
        }
        ProvidersCommand::Capabilities { provider_id, .. } => {
            let path = format!("/v1/providers/{}/capabilities", segment(&provider_id));
            out.json(&api.connect(label)?.get(&path, Vec::new()).await?);
        }
        ProvidersCommand::Unregister { provider_id, .. } => {
            let path = format!("/v1/providers/{}/unregister", segment(&provider_id));
            let empty = Value::Object(Default::default());
            out.json(&api.connect(label)?.post(&path, &empty, None).await?);
        }
    }
    Ok(())
}
