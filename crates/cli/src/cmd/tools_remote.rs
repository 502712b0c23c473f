//! `kindgi tools register FILE [--project ID]`: register a tool manifest on a running API
//! (`POST /v1/tools`), through the one API client. Without `--project` and without a
//! `projectId` in the file it asks for the Default project first (`GET
//! /v1/projects/default`), as the official `tools publish` does. The read commands (`list`,
//! `get`, `versions`, `get-version`) are [`super::registry`]'s.

use std::process::ExitCode;

use serde_json::Value;

use crate::api::{ApiArgs, CliError};

/// The largest manifest file read.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, clap::Args)]
pub struct RegisterArgs {
    /// A tool manifest JSON file (`-` for stdin).
    #[arg(value_name = "FILE")]
    pub file: String,
    /// The project, when the file has no `projectId` (default: the Default project).
    #[arg(long)]
    pub project: Option<String>,
    /// A retry with the same key returns the first answer.
    #[arg(long = "idempotency-key")]
    pub idempotency_key: Option<String>,
    #[command(flatten)]
    pub api: ApiArgs,
}

fn read_manifest(file: &str) -> Result<serde_json::Map<String, Value>, CliError> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(std::io::stdin(), MAX_MANIFEST_BYTES + 1),
            &mut s,
        )
        .map_err(|e| CliError::Usage(format!("cannot read the manifest from stdin: {e}")))?;
        s
    } else {
        let len = std::fs::metadata(file)
            .map_err(|e| CliError::Usage(format!("cannot read {file}: {e}")))?
            .len();
        if len > MAX_MANIFEST_BYTES {
            return Err(CliError::Usage(format!(
                "{file} is over {MAX_MANIFEST_BYTES} bytes"
            )));
        }
        std::fs::read_to_string(file)
            .map_err(|e| CliError::Usage(format!("cannot read {file}: {e}")))?
    };
    if text.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(CliError::Usage(format!(
            "{file} is over {MAX_MANIFEST_BYTES} bytes"
        )));
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(CliError::Usage(format!(
            "{file} must hold a JSON object (a tool manifest)"
        ))),
        Err(e) => Err(CliError::Usage(format!("{file} is not JSON: {e}"))),
    }
}

/// The Default project's id; a server without `/v1/projects/default` (an older `kindgi
/// server`) gets the project named `default`, as before.
async fn default_project(client: &crate::api::ApiClient) -> Result<String, CliError> {
    match client.get("/v1/projects/default", vec![]).await {
        Ok(p) => p
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| CliError::Local("GET /v1/projects/default answered no `id`".into())),
        Err(CliError::Api { status: 404, .. }) => Ok("default".into()),
        Err(e) => Err(e),
    }
}

pub async fn register(args: RegisterArgs) -> ExitCode {
    let label = "tools register";
    let (quiet, verbose) = (args.api.quiet, args.api.verbose);
    match register_inner(args, label).await {
        Ok(code) => code,
        Err(e) => e.report(label, quiet, verbose),
    }
}

async fn register_inner(args: RegisterArgs, label: &str) -> Result<ExitCode, CliError> {
    let mut manifest = read_manifest(&args.file)?;
    let client = args.api.connect(label)?;
    if !manifest.contains_key("projectId") {
        let project = match args.project.clone().filter(|p| !p.is_empty()) {
            Some(p) => p,
            None => default_project(&client).await?,
        };
        manifest.insert("projectId".into(), Value::String(project));
    }
    let answer = client
        .post(
            "/v1/tools",
            &Value::Object(manifest),
            args.idempotency_key.as_deref(),
        )
        .await?;
    args.api.output().json(&answer);
    Ok(ExitCode::SUCCESS)
}
