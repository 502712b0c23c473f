//! `kindgi tenant get|rename`: the official CLI's commands and checks, through the one API
//! client ([`crate::api`]); `update` is another name for `rename`.
//!
//! * `get` → `GET /v1/tenant`.
//! * `rename [--name] [--slug]` → `PATCH /v1/tenant {name?, slug?}`, then prints the tenant
//!   as `get` does (a read back that fails still exits 0, saying so on stderr). The slug is
//!   checked as the server checks it: lowercase letters, digits and single hyphens.
//! * `suspend|resume|close --database D --tenant T`: the operator's, on the database
//!   ([`super::tenant_state`]).
//! * `permission-denied` and `tenant-not-found` print `Error [<code>]: <message>`.

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use super::args::{given, is_tenant_slug};
use crate::api::{ApiArgs, CliError};

#[derive(Debug, clap::Subcommand)]
pub enum TenantCommand {
    /// Your workspace: its id, name and slug.
    Get {
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Change your workspace's name, its slug, or both. Prints it. For tenant admins.
    #[command(visible_alias = "update")]
    Rename {
        /// The new name, at most 100 characters.
        #[arg(long)]
        name: Option<String>,
        /// The new slug: lowercase letters, digits and single hyphens, at most 63 characters.
        #[arg(long)]
        slug: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// The operator's: suspend the tenant, or one of its projects, in the server's database.
    /// Reads and exports go on; nothing is written or run (docs/tenancy.md).
    Suspend(super::tenant_state::StateArgs),
    /// The operator's: lift a tenant's or a project's suspension.
    Resume(super::tenant_state::StateArgs),
    /// The operator's: start closing the tenant (one-way).
    Close(super::tenant_state::StateArgs),
}

pub async fn run(command: TenantCommand) -> ExitCode {
    use super::tenant_state::{Change, run as change};
    let (name, api) = match command {
        TenantCommand::Get { ref api } => ("tenant get", api.clone()),
        TenantCommand::Rename { ref api, .. } => ("tenant rename", api.clone()),
        TenantCommand::Suspend(a) => return change(Change::Suspend, a).await,
        TenantCommand::Resume(a) => return change(Change::Resume, a).await,
        TenantCommand::Close(a) => return change(Change::Close, a).await,
    };
    match dispatch(command, name, &api).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            super::projects::report(&e, name, &api, &["permission-denied", "tenant-not-found"])
        }
    }
}

async fn dispatch(command: TenantCommand, name: &str, api: &ApiArgs) -> Result<(), CliError> {
    let out = api.output();
    match command {
        TenantCommand::Get { .. } => out.json(&api.connect(name)?.get("/v1/tenant", vec![]).await?),
        TenantCommand::Rename {
            name: new_name,
            slug,
            ..
        } => {
            let new_name = given(new_name, "name")?;
            let slug = given(slug, "slug")?;
            if new_name.is_none() && slug.is_none() {
                return Err(CliError::Usage("Give --name, --slug, or both".into()));
            }
            let mut body = Map::new();
            if let Some(n) = new_name {
                body.insert("name".into(), json!(n));
            }
            if let Some(s) = slug {
                if !is_tenant_slug(&s) {
                    return Err(CliError::Usage(format!(
                        "--slug={s}: lowercase letters, digits and single hyphens, starting and ending with a letter or digit, at most 63 characters"
                    )));
                }
                body.insert("slug".into(), json!(s));
            }
            let client = api.connect(name)?;
            client.patch("/v1/tenant", &Value::Object(body)).await?;
            match client.get("/v1/tenant", vec![]).await {
                Ok(tenant) => out.json(&tenant),
                Err(e) => {
                    let why = match &e {
                        CliError::Api { message, .. } => message.clone(),
                        other => other.render(name),
                    };
                    eprintln!(
                        "Renamed your workspace, but couldn't read it back: {why}. `kindgi tenant get` shows it."
                    );
                }
            }
        }
        // The operator's commands work on the database, never through the API.
        TenantCommand::Suspend(_) | TenantCommand::Resume(_) | TenantCommand::Close(_) => {}
    }
    Ok(())
}
