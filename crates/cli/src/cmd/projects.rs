//! `kindgi projects list|get-default|get|create|rename`: the official CLI's commands, flags
//! and checks, through the one API client ([`crate::api`]). (`update` is another name for
//! `rename`; `production` stays the official CLI's — this runtime does not serve it.)
//!
//! * `list [--limit] [--cursor]` → `GET /v1/projects`; `get-default` →
//!   `GET /v1/projects/default`; `get <id>` → `GET /v1/projects/{id}`.
//! * `create --name [--slug] [--description] [--org]` → `POST /v1/projects {name, slug,
//!   description?, orgId?}` (the slug defaults to the name made a slug), then prints the
//!   project as `get` does; `rename <id> [--name] [--slug]` → `PATCH /v1/projects/{id}`, the
//!   same. A read back that fails still exits 0, saying so on stderr.
//! * The refusals the official CLI names by the server's own code (`permission-denied`,
//!   `project-not-found`, `org-not-found`, …) print `Error [<code>]: <message>`.

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use super::args::{given, is_project_slug, required, slug_of};
use crate::api::{ApiArgs, ApiClient, CliError, push, segment};

/// The codes printed as themselves (the client's families would mislead).
const REFUSALS: [&str; 6] = [
    "production-not-allowed",
    "permission-denied",
    "tenant-not-found",
    "project-not-found",
    "org-not-found",
    "tenant-slug-taken",
];

#[derive(Debug, clap::Subcommand)]
pub enum ProjectsCommand {
    /// List the tenant's projects.
    List {
        /// The most projects to return.
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// The tenant's Default project, the one used when none is named.
    #[command(name = "get-default")]
    GetDefault {
        #[command(flatten)]
        api: ApiArgs,
    },
    /// One project, by id.
    Get {
        #[arg(value_name = "PROJECT_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Make a project. Prints it, with its id for the `--project=<id>` flags. For tenant admins.
    Create {
        /// What people see, e.g. `Support bot`. Required.
        #[arg(long)]
        name: Option<String>,
        /// The project's short name (default: the name as a slug).
        #[arg(long)]
        slug: Option<String>,
        /// What the project is for.
        #[arg(long)]
        description: Option<String>,
        /// The org it belongs to, by id.
        #[arg(long)]
        org: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Change a project's name, its slug, or both. Prints the project.
    #[command(visible_alias = "update")]
    Rename {
        #[arg(value_name = "PROJECT_ID")]
        id: Option<String>,
        /// The new name.
        #[arg(long)]
        name: Option<String>,
        /// The new slug.
        #[arg(long)]
        slug: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: ProjectsCommand) -> ExitCode {
    let (name, api) = match &command {
        ProjectsCommand::List { api, .. } => ("projects list", api.clone()),
        ProjectsCommand::GetDefault { api } => ("projects get-default", api.clone()),
        ProjectsCommand::Get { api, .. } => ("projects get", api.clone()),
        ProjectsCommand::Create { api, .. } => ("projects create", api.clone()),
        ProjectsCommand::Rename { api, .. } => ("projects rename", api.clone()),
    };
    match dispatch(command, name, &api).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(&e, name, &api, &REFUSALS),
    }
}

/// Print a refusal: one of `named` as `Error [<code>]: <message>`, else as every command does.
pub(crate) fn report(e: &CliError, name: &str, api: &ApiArgs, named: &[&str]) -> ExitCode {
    if let CliError::Api {
        code: Some(code),
        message,
        raw,
        ..
    } = e
        && named.contains(&code.as_str())
    {
        if !api.quiet {
            eprintln!("Error [{code}]: {message}");
            if api.verbose {
                eprintln!("{}", serde_json::to_string_pretty(raw).unwrap_or_default());
            }
        }
        return ExitCode::from(1);
    }
    e.report(name, api.quiet, api.verbose)
}

fn check_slug(slug: String) -> Result<String, CliError> {
    if is_project_slug(&slug) {
        Ok(slug)
    } else {
        Err(CliError::Usage(format!(
            "--slug={slug}: lowercase letters, digits and hyphens, starting with a letter or digit, at most 63 characters"
        )))
    }
}

/// The project as `get` prints it; a read that fails after the change says so instead.
async fn print_project(client: &ApiClient, api: &ApiArgs, id: &str, done: &str) {
    match client
        .get(&format!("/v1/projects/{}", segment(id)), vec![])
        .await
    {
        Ok(project) => api.output().json(&project),
        Err(e) => {
            api.output().json(&json!({"id": id}));
            let why = match &e {
                CliError::Api { message, .. } => message.clone(),
                other => other.render("projects get"),
            };
            eprintln!(
                "{done}, but couldn't read it back: {why}. `kindgi projects get {id}` shows it."
            );
        }
    }
}

async fn dispatch(command: ProjectsCommand, name: &str, api: &ApiArgs) -> Result<(), CliError> {
    let out = api.output();
    match command {
        ProjectsCommand::List { limit, cursor, .. } => {
            let mut q = Vec::new();
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            push(&mut q, "cursor", cursor);
            out.json(&api.connect(name)?.get("/v1/projects", q).await?);
        }
        ProjectsCommand::GetDefault { .. } => {
            out.json(
                &api.connect(name)?
                    .get("/v1/projects/default", vec![])
                    .await?,
            );
        }
        ProjectsCommand::Get { id, .. } => {
            let path = format!("/v1/projects/{}", segment(&required(id, "project-id")?));
            out.json(&api.connect(name)?.get(&path, vec![]).await?);
        }
        ProjectsCommand::Create {
            name: project_name,
            slug,
            description,
            org,
            ..
        } => {
            let Some(project_name) = given(project_name, "name")? else {
                return Err(CliError::Usage("--name=<name> is required".into()));
            };
            let slug = match given(slug, "slug")? {
                Some(s) => check_slug(s)?,
                None => slug_of(&project_name),
            };
            if slug.is_empty() {
                return Err(CliError::Usage(format!(
                    "\"{project_name}\" has no letters or digits to make a slug of: give --slug=<slug>"
                )));
            }
            let mut body = Map::new();
            body.insert("name".into(), json!(project_name));
            body.insert("slug".into(), json!(slug));
            if let Some(d) = given(description, "description")? {
                body.insert("description".into(), json!(d));
            }
            if let Some(o) = given(org, "org")? {
                body.insert("orgId".into(), json!(o));
            }
            let client = api.connect(name)?;
            let made = client
                .post("/v1/projects", &Value::Object(body), None)
                .await?;
            let Some(id) = made.get("id").and_then(Value::as_str) else {
                return Err(CliError::Local("POST /v1/projects answered no `id`".into()));
            };
            print_project(&client, api, id, &format!("Made project {id}")).await;
        }
        ProjectsCommand::Rename {
            id,
            name: new_name,
            slug,
            ..
        } => {
            let id = required(id, "project-id")?;
            let new_name = given(new_name, "name")?;
            let slug = given(slug, "slug")?.map(check_slug).transpose()?;
            if new_name.is_none() && slug.is_none() {
                return Err(CliError::Usage("Give --name, --slug, or both".into()));
            }
            let mut body = Map::new();
            if let Some(n) = new_name {
                body.insert("name".into(), json!(n));
            }
            if let Some(s) = slug {
                body.insert("slug".into(), json!(s));
            }
            let client = api.connect(name)?;
            let path = format!("/v1/projects/{}", segment(&id));
            client.patch(&path, &Value::Object(body)).await?;
            print_project(&client, api, &id, &format!("Changed project {id}")).await;
        }
    }
    Ok(())
}
