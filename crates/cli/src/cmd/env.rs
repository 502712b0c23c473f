//! `kindgi env list|set|unset --scope …`: the runtime's env values (a tool's `ctx.env`) on a
//! running API, over `/v1/env/*` (the official CLI's names and flags, platform-api.md §7).
//! Ours acts only on the runtime's values, so `--scope` is required; the official CLI's
//! local `.env.<name>` file editing (no `--scope`), `pull`, `init` and `plan` are not here.

use std::process::ExitCode;

use serde_json::json;

use super::secrets::Where;
use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, segment};

#[derive(Debug, clap::Subcommand)]
pub enum EnvCommand {
    /// List the runtime's env values at --scope under --env.
    List {
        #[command(flatten)]
        at: Where,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Set KEY to VALUE at --scope under --env; refuses to change an existing key unless --force.
    Set {
        #[arg(value_name = "KEY")]
        key: String,
        #[arg(value_name = "VALUE")]
        value: String,
        #[command(flatten)]
        at: Where,
        /// Change a key that scope already sets (a new revision).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Remove KEY at --scope under --env. Idempotent: no error if the key is absent.
    Unset {
        #[arg(value_name = "KEY")]
        key: String,
        #[command(flatten)]
        at: Where,
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: EnvCommand) -> ExitCode {
    let (label, api) = match &command {
        EnvCommand::List { api, .. } => ("env list", api.clone()),
        EnvCommand::Set { api, .. } => ("env set", api.clone()),
        EnvCommand::Unset { api, .. } => ("env unset", api.clone()),
    };
    match api_command(command, label, &api).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(label, api.quiet, api.verbose),
    }
}

const COLUMNS: &[Column] = &[
    ("NAME", |r| cell(r, "/name")),
    ("VALUE", |r| cell(r, "/value")),
    ("REVISION", |r| cell(r, "/revision")),
    ("UPDATED", |r| cell(r, "/updatedAt")),
];

/// The wire code of an env value that does not exist.
const NOT_FOUND: &str = "env-not-found";

async fn api_command(command: EnvCommand, label: &str, api: &ApiArgs) -> Result<(), CliError> {
    let out = api.output();
    match command {
        EnvCommand::List { at, .. } => {
            let (env, scope) = at.resolve()?;
            let page = api
                .connect(label)?
                .get("/v1/env", scope.query(&env))
                .await?;
            out.page(&page, COLUMNS);
        }
        EnvCommand::Set {
            key,
            value,
            at,
            force,
            ..
        } => {
            let (env, scope) = at.resolve()?;
            let client = api.connect(label)?;
            let path = format!("/v1/env/{}", segment(&key));
            let mut body = json!({"value": value});
            if !force {
                // `ifRevision: 0` asks the server to write only a key that is not there yet,
                // so the refusal is atomic rather than a read-then-write race.
                body["ifRevision"] = json!(0);
            }
            let call = crate::api::client::Call {
                query: scope.query(&env),
                body: Some(&body),
                ..Default::default()
            };
            let wire = client
                .request(reqwest::Method::PUT, &path, call)
                .await
                .map_err(|e| refuse_overwrite(e, &key))?;
            out.json(&wire);
        }
        EnvCommand::Unset { key, at, .. } => {
            let (env, scope) = at.resolve()?;
            let path = format!("/v1/env/{}", segment(&key));
            let call = crate::api::client::Call {
                query: scope.query(&env),
                ..Default::default()
            };
            let client = api.connect(label)?;
            match client.request(reqwest::Method::DELETE, &path, call).await {
                Ok(_) => {}
                Err(e) if code(&e) == Some(NOT_FOUND) => {}
                Err(e) => return Err(e),
            }
            out.json(&json!({"name": key, "envName": env, "unset": true}));
        }
    }
    Ok(())
}

/// A write conflict without --force is the key already being set: say what to do.
fn refuse_overwrite(e: CliError, key: &str) -> CliError {
    if code(&e) == Some("env-write-conflict") {
        return CliError::Usage(format!(
            "{key} is already set at this scope; pass --force to set it again as a new revision"
        ));
    }
    e
}

/// The wire code of an API error (data from the envelope, never parsed from text).
fn code(e: &CliError) -> Option<&str> {
    match e {
        CliError::Api { code, .. } => code.as_deref(),
        _ => None,
    }
}
