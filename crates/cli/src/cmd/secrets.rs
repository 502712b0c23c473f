//! `kindgi secrets list|get|set|revoke`: secrets on a running API, over `/v1/secrets/*`
//! (the official CLI's names and flags, platform-api.md §7). The value goes one way only:
//! `set` reads it from stdin or a 0600 file and sends it; no command prints a value back,
//! only metadata (name, version, timestamps), as the official CLI does.

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, push, segment};

/// Where a value lives and under which env: `--scope` and `--env`, shared by every subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct Where {
    /// The environment the secret belongs to, e.g. `local`.
    #[arg(long = "env", value_name = "NAME")]
    pub env: Option<String>,
    /// Where the secret lives: `tenant`, `org:<orgId>` or `project:<projectId>`.
    #[arg(long, value_name = "KIND[:ID]")]
    pub scope: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum SecretsCommand {
    /// List secret metadata under --scope + --env. Never returns values.
    List {
        #[command(flatten)]
        at: Where,
        /// Include revoked secrets, with their `revokedAt` and `revokeReason`.
        #[arg(long)]
        include_revoked: bool,
        /// Only the secrets whose name starts with this prefix.
        #[arg(long)]
        name_prefix: Option<String>,
        #[arg(long)]
        cursor: Option<String>,
        /// The most secrets to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch secret metadata (name, version, timestamps; never the value).
    Get {
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        at: Where,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Write a new secret value, read from stdin or a file (mode 0600).
    Set(Box<SetArgs>),
    /// Revoke a secret: soft by default (an audit tombstone stays), --hard erases it.
    Revoke {
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        at: Where,
        /// Erase the value for good instead of keeping an audit tombstone.
        #[arg(long)]
        hard: bool,
        /// Why the secret is revoked; kept on the record as `revokeReason`.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

#[derive(Debug, clap::Args)]
pub struct SetArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    #[command(flatten)]
    pub at: Where,
    /// `create-new` (the default) refuses a secret that exists; `add-version` adds a version.
    #[arg(long, value_parser = ["create-new", "add-version"], default_value = "create-new")]
    pub write_mode: String,
    /// Read the value from stdin.
    #[arg(long, conflicts_with = "from_file")]
    pub from_stdin: bool,
    /// Read the value from this file; one that group or others can read is refused.
    #[arg(long, value_name = "PATH")]
    pub from_file: Option<std::path::PathBuf>,
    /// When the secret is due for rotation (ISO 8601), kept with its metadata.
    #[arg(long, value_name = "ISO")]
    pub rotation_due_at: Option<String>,
    /// Write only if the secret is still at this version (`0` when it does not exist yet).
    #[arg(long, value_name = "N")]
    pub if_version: Option<u64>,
    #[command(flatten)]
    pub api: ApiArgs,
}

/// A parsed `--scope`: the query's `scopeKind`/`scopeId` and the body's `scope` object.
#[derive(Debug, PartialEq)]
pub struct Scope {
    pub kind: &'static str,
    pub id: Option<String>,
}

impl Scope {
    /// `tenant`, `org:<id>` or `project:<id>`; anything else is a usage error naming the flag.
    pub fn parse(raw: Option<&str>) -> Result<Scope, CliError> {
        let raw = raw.ok_or_else(|| {
            CliError::Usage(
                "--scope is required: tenant, org:<orgId> or project:<projectId>".into(),
            )
        })?;
        let bad = || {
            CliError::Usage(format!(
                "--scope must be tenant, org:<orgId> or project:<projectId>, got \"{raw}\""
            ))
        };
        let (kind, id) = match raw.split_once(':') {
            None => (raw, None),
            Some((k, id)) if !id.is_empty() => (k, Some(id.to_owned())),
            Some(_) => return Err(bad()),
        };
        let kind = match (kind, &id) {
            ("tenant", None) => "tenant",
            ("org", Some(_)) => "org",
            ("project", Some(_)) => "project",
            _ => return Err(bad()),
        };
        Ok(Scope { kind, id })
    }

    /// `?scopeKind=…&scopeId=…` with `?envName=…`.
    pub fn query(&self, env: &str) -> Vec<(&'static str, String)> {
        let mut q = vec![("envName", env.to_owned()), ("scopeKind", self.kind.into())];
        push(&mut q, "scopeId", self.id.clone());
        q
    }

    /// The body's `scope`: `{kind}`, `{kind, orgId}` or `{kind, projectId}`.
    pub fn body(&self) -> Value {
        let mut o = Map::new();
        o.insert("kind".into(), json!(self.kind));
        if let Some(id) = &self.id {
            let field = if self.kind == "org" {
                "orgId"
            } else {
                "projectId"
            };
            o.insert(field.into(), json!(id));
        }
        Value::Object(o)
    }
}

impl Where {
    /// The env name and scope, both required.
    pub fn resolve(&self) -> Result<(String, Scope), CliError> {
        let env = self
            .env
            .clone()
            .filter(|e| !e.is_empty())
            .ok_or_else(|| CliError::Usage("--env is required, e.g. --env local".into()))?;
        Ok((env, Scope::parse(self.scope.as_deref())?))
    }
}

pub async fn run(command: SecretsCommand) -> ExitCode {
    let (label, api) = match &command {
        SecretsCommand::List { api, .. } => ("secrets list", api.clone()),
        SecretsCommand::Get { api, .. } => ("secrets get", api.clone()),
        SecretsCommand::Set(a) => ("secrets set", a.api.clone()),
        SecretsCommand::Revoke { api, .. } => ("secrets revoke", api.clone()),
    };
    match api_command(command, label, &api).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(label, api.quiet, api.verbose),
    }
}

const COLUMNS: &[Column] = &[
    ("NAME", |r| cell(r, "/name")),
    ("VERSION", |r| cell(r, "/version")),
    ("UPDATED", |r| cell(r, "/updatedAt")),
    ("REVOKED", |r| cell(r, "/revokedAt")),
];

async fn api_command(command: SecretsCommand, label: &str, api: &ApiArgs) -> Result<(), CliError> {
    let out = api.output();
    match command {
        SecretsCommand::List {
            at,
            include_revoked,
            name_prefix,
            cursor,
            limit,
            ..
        } => {
            let (env, scope) = at.resolve()?;
            let mut q = scope.query(&env);
            if include_revoked {
                q.push(("includeRevoked", "true".into()));
            }
            push(&mut q, "namePrefix", name_prefix);
            push(&mut q, "cursor", cursor);
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            let page = api.connect(label)?.get("/v1/secrets", q).await?;
            out.page(&page, COLUMNS);
        }
        SecretsCommand::Get { name, at, .. } => {
            let (env, scope) = at.resolve()?;
            let path = format!("/v1/secrets/{}", segment(&name));
            out.json(&api.connect(label)?.get(&path, scope.query(&env)).await?);
        }
        SecretsCommand::Set(a) => {
            let (env, scope) = a.at.resolve()?;
            let value = read_value(a.from_stdin, a.from_file.as_deref())?;
            let mut body = Map::new();
            body.insert("scope".into(), scope.body());
            body.insert("envName".into(), json!(env));
            body.insert("name".into(), json!(a.name));
            body.insert("value".into(), json!(value));
            body.insert("writeMode".into(), json!(a.write_mode));
            if let Some(t) = &a.rotation_due_at {
                body.insert("rotationDueAt".into(), json!(t));
            }
            if let Some(v) = a.if_version {
                body.insert("ifVersion".into(), json!(v));
            }
            let wire = api
                .connect(label)?
                .post("/v1/secrets", &Value::Object(body), None)
                .await?;
            out.json(&wire);
        }
        SecretsCommand::Revoke {
            name,
            at,
            hard,
            reason,
            ..
        } => {
            let (env, scope) = at.resolve()?;
            let mut q = scope.query(&env);
            if hard {
                q.push(("hard", "true".into()));
            }
            push(&mut q, "reason", reason);
            let path = format!("/v1/secrets/{}", segment(&name));
            let call = crate::api::client::Call {
                query: q,
                ..Default::default()
            };
            let wire = api
                .connect(label)?
                .request(reqwest::Method::DELETE, &path, call)
                .await?;
            out.json(&wire);
        }
    }
    Ok(())
}

/// The value to set: from stdin or a file no one else can read. There is no prompt here
/// (ours is non-interactive), so one of the two is required.
fn read_value(from_stdin: bool, from_file: Option<&std::path::Path>) -> Result<String, CliError> {
    let text = match (from_stdin, from_file) {
        (true, _) => std::io::read_to_string(std::io::stdin())
            .map_err(|e| CliError::Local(format!("cannot read the value from stdin: {e}")))?,
        (false, Some(path)) => read_private_file(path)?,
        (false, None) => {
            return Err(CliError::Usage(
                "give the value with --from-stdin or --from-file <path> (there is no prompt)"
                    .into(),
            ));
        }
    };
    // A trailing newline is the shell's, not the secret's.
    Ok(text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text)
        .to_owned())
}

fn read_private_file(path: &std::path::Path) -> Result<String, CliError> {
    use std::os::unix::fs::PermissionsExt as _;
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| CliError::Local(format!("cannot read --from-file {shown}: {e}")))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(CliError::Usage(format!(
            "--from-file {shown} can be read by group or others: run `chmod 600 {shown}` first"
        )));
    }
    std::fs::read_to_string(path)
        .map_err(|e| CliError::Local(format!("cannot read --from-file {shown}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes() {
        assert_eq!(
            Scope::parse(Some("tenant")).ok(),
            Some(Scope {
                kind: "tenant",
                id: None
            })
        );
        let p = Scope::parse(Some("project:p1")).ok();
        assert_eq!(
            p.as_ref().map(Scope::body),
            Some(json!({"kind": "project", "projectId": "p1"}))
        );
        assert!(Scope::parse(Some("org")).is_err());
        assert!(Scope::parse(Some("tenant:x")).is_err());
        assert!(Scope::parse(Some("team:x")).is_err());
        assert!(Scope::parse(None).is_err());
    }
}
