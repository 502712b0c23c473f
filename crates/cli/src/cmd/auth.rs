//! `kindgi auth whoami`: the official CLI's check of the configured key — `GET
//! /v1/identity/whoami` with it, printing `{ok, apiUrl, tokenSource, apiUrlSource, identity}`
//! (`flag`, `env`, `file` or `unset`, as the official CLI names where each came from). A
//! refusal is ``whoami failed: HTTP <status>`` (with the official hint on 401/403), exit 1.
//! `auth login` and `auth registry` stay the official CLI's.

use std::process::ExitCode;

use serde_json::json;

use crate::api::{ApiArgs, CliError};

#[derive(Debug, clap::Subcommand)]
pub enum AuthCommand {
    /// Verify the configured token by hitting the API.
    Whoami {
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: AuthCommand) -> ExitCode {
    let AuthCommand::Whoami { api } = command;
    match whoami(&api).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Api { status, .. }) => {
            let hint = if status == 401 || status == 403 {
                " (the token is wrong, revoked, or for another server)"
            } else {
                ""
            };
            if !api.quiet {
                eprintln!("whoami failed: HTTP {status}{hint}");
            }
            ExitCode::from(1)
        }
        Err(CliError::Network(m)) => {
            if !api.quiet {
                eprintln!("whoami failed: {m}");
            }
            ExitCode::from(1)
        }
        Err(e) => e.report("auth whoami", api.quiet, api.verbose),
    }
}

/// Where a setting came from: the flag, the environment, else a config file (or nowhere).
fn source(flag: bool, env: &str, found: bool) -> &'static str {
    let from_env = std::env::var(env).is_ok_and(|v| !v.is_empty());
    match (flag, from_env, found) {
        (true, _, _) => "flag",
        (false, true, _) => "env",
        (false, false, true) => "file",
        _ => "unset",
    }
}

async fn whoami(api: &ApiArgs) -> Result<(), CliError> {
    let client = api.connect("auth whoami")?;
    let identity = client.get("/v1/identity/whoami", vec![]).await?;
    api.output().json(&json!({
        "ok": true,
        "apiUrl": client.base,
        "tokenSource": source(api.token.is_some(), "KINDGI_API_TOKEN", client.has_token()),
        "apiUrlSource": source(api.url.is_some(), "KINDGI_API_URL", true),
        "identity": identity,
    }));
    Ok(())
}
