//! `kindgi connections add|list|get|revoke|connect`: a tenant's connections to other apps
//! (Kindgi's extension, docs/connections.md), through the one API client ([`crate::api`]).
//!
//! * `add --app --as [--permission…] --access-token-stdin [--expires-in] [--token-url
//!   --client-id [--client-secret-name]]` → `POST /v1/connections`. The tokens come on stdin
//!   only (never a flag, which `ps` shows): a bare access token, or a JSON object — an OAuth 2
//!   token answer (`access_token`, `refresh_token`, `expires_in`) or our body's
//!   (`accessToken`, `refreshToken`, `expiresIn`).
//! * `list [--app] [--as] [--limit] [--cursor]` → `GET /v1/connections`.
//! * `get <connection-id>` → `GET /v1/connections/{id}`.
//! * `revoke <connection-id>` → `POST /v1/connections/{id}/revoke`.
//! * `connect --app [--as] [--permission…]` → `GET /v1/connections/connect`: what to send.

use std::io::Read as _;
use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, segment};

/// The most read from stdin (two tokens and their JSON).
pub const MAX_STDIN_BYTES: u64 = 64 * 1024;

#[derive(Debug, clap::Subcommand)]
pub enum ConnectionsCommand {
    /// Connect an app: add (or replace) your own connection, or the company's.
    Add {
        /// The app's entry id (`google`, `github`).
        #[arg(long)]
        app: String,
        /// Whose: `person` (yours) or `company` (the tenant's; admins only).
        #[arg(long = "as", value_name = "person|company", default_value = "person")]
        as_: String,
        /// A permission key the connection grants (`gmail.send`); repeat for more.
        #[arg(long = "permission", value_name = "KEY")]
        permissions: Vec<String>,
        /// Read the tokens from stdin: a bare access token, or a JSON object (an OAuth 2
        /// token answer, `access_token`/`refresh_token`/`expires_in`). Required.
        #[arg(long)]
        access_token_stdin: bool,
        /// Seconds until the access token expires (overrides stdin's `expires_in`).
        #[arg(long)]
        expires_in: Option<u64>,
        /// The app's OAuth 2 token endpoint, to refresh an expired access token at.
        #[arg(long)]
        token_url: Option<String>,
        /// The OAuth 2 client id the refresh authenticates as (with --token-url).
        #[arg(long)]
        client_id: Option<String>,
        /// The tenant secret holding the OAuth 2 client secret (`kindgi secrets set`).
        #[arg(long)]
        client_secret_name: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List connections (never their tokens).
    List {
        /// Only this app's connections.
        #[arg(long)]
        app: Option<String>,
        /// Only people's (`person`) or only the company's (`company`).
        #[arg(long = "as", value_name = "person|company")]
        as_: Option<String>,
        /// The most to return (default 25, at most 100).
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch a connection by id.
    Get {
        #[arg(value_name = "CONNECTION_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Revoke a connection: its tokens are erased and no call uses it.
    Revoke {
        #[arg(value_name = "CONNECTION_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Show how to connect an app (what a call waiting for a connection points to).
    Connect {
        /// The app's entry id (`google`, `github`).
        #[arg(long)]
        app: String,
        /// Whose: `person` (the default) or `company`.
        #[arg(long = "as", value_name = "person|company")]
        as_: Option<String>,
        /// A permission key the connection must grant; repeat for more.
        #[arg(long = "permission", value_name = "KEY")]
        permissions: Vec<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

impl ConnectionsCommand {
    fn parts(&self) -> (&'static str, &ApiArgs) {
        match self {
            ConnectionsCommand::Add { api, .. } => ("connections add", api),
            ConnectionsCommand::List { api, .. } => ("connections list", api),
            ConnectionsCommand::Get { api, .. } => ("connections get", api),
            ConnectionsCommand::Revoke { api, .. } => ("connections revoke", api),
            ConnectionsCommand::Connect { api, .. } => ("connections connect", api),
        }
    }
}

pub async fn run(command: ConnectionsCommand) -> ExitCode {
    let (name, api) = command.parts();
    let api = api.clone();
    match dispatch(command, name, &api).await {
        Ok(code) => code,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

fn required(id: Option<String>) -> Result<String, CliError> {
    id.filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::Usage("missing <connection-id>".into()))
}

/// The tokens on stdin, as the body's fields (`accessToken`, `refreshToken?`, `expiresIn?`).
pub fn parse_tokens(text: &str) -> Result<Map<String, Value>, CliError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(CliError::Usage("stdin holds no access token".into()));
    }
    let mut out = Map::new();
    if !text.starts_with('{') {
        out.insert("accessToken".into(), json!(text));
        return Ok(out);
    }
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) else {
        // Never echo what was read: it holds tokens.
        return Err(CliError::Usage(
            "stdin starts with `{` but is not a JSON object: give a bare access token, or an object with access_token (or accessToken)".into(),
        ));
    };
    let pick = |a: &str, b: &str| m.get(a).or_else(|| m.get(b)).cloned();
    match pick("access_token", "accessToken") {
        Some(Value::String(t)) if !t.is_empty() => out.insert("accessToken".into(), json!(t)),
        _ => {
            return Err(CliError::Usage(
                "the JSON on stdin has no access_token (or accessToken) string".into(),
            ));
        }
    };
    if let Some(Value::String(r)) = pick("refresh_token", "refreshToken") {
        out.insert("refreshToken".into(), json!(r));
    }
    if let Some(e) = pick("expires_in", "expiresIn").filter(Value::is_u64) {
        out.insert("expiresIn".into(), e);
    }
    Ok(out)
}

fn read_stdin() -> Result<String, CliError> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| CliError::Local(format!("cannot read the tokens from stdin: {e}")))?;
    if text.len() as u64 > MAX_STDIN_BYTES {
        return Err(CliError::Usage(format!(
            "stdin is over {MAX_STDIN_BYTES} bytes: give the access token (or the token answer's JSON) only"
        )));
    }
    Ok(text)
}

/// The `add` body from the flags and stdin's tokens.
#[allow(clippy::too_many_arguments)]
fn add_body(
    app: String,
    as_: String,
    permissions: Vec<String>,
    tokens: Map<String, Value>,
    expires_in: Option<u64>,
    token_url: Option<String>,
    client_id: Option<String>,
    client_secret_name: Option<String>,
) -> Value {
    let mut body = tokens;
    body.insert("app".into(), json!(app));
    body.insert("as".into(), json!(as_));
    body.insert("permissions".into(), json!(permissions));
    if let Some(e) = expires_in {
        body.insert("expiresIn".into(), json!(e));
    }
    for (k, v) in [
        ("tokenUrl", token_url),
        ("clientId", client_id),
        ("clientSecretName", client_secret_name),
    ] {
        if let Some(v) = v {
            body.insert(k.into(), json!(v));
        }
    }
    Value::Object(body)
}

async fn dispatch(
    command: ConnectionsCommand,
    name: &str,
    api: &ApiArgs,
) -> Result<ExitCode, CliError> {
    let out = api.output();
    match command {
        ConnectionsCommand::Add {
            app,
            as_,
            permissions,
            access_token_stdin,
            expires_in,
            token_url,
            client_id,
            client_secret_name,
            ..
        } => {
            if !access_token_stdin {
                return Err(CliError::Usage(
                    "give the tokens on stdin with --access-token-stdin (never as a flag: other users can see a command's flags)".into(),
                ));
            }
            let tokens = parse_tokens(&read_stdin()?)?;
            let body = add_body(
                app,
                as_,
                permissions,
                tokens,
                expires_in,
                token_url,
                client_id,
                client_secret_name,
            );
            out.json(
                &api.connect(name)?
                    .post("/v1/connections", &body, None)
                    .await?,
            );
        }
        ConnectionsCommand::List {
            app,
            as_,
            limit,
            cursor,
            ..
        } => {
            let mut q: Vec<(&'static str, String)> = Vec::new();
            if let Some(a) = app {
                q.push(("app", a));
            }
            if let Some(a) = as_ {
                q.push(("as", a));
            }
            if let Some(l) = limit {
                q.push(("limit", l.to_string()));
            }
            if let Some(c) = cursor {
                q.push(("cursor", c));
            }
            let page = api.connect(name)?.get("/v1/connections", q).await?;
            out.page(&page, CONNECTION_COLUMNS);
        }
        ConnectionsCommand::Get { id, .. } => {
            let path = format!("/v1/connections/{}", segment(&required(id)?));
            out.json(&api.connect(name)?.get(&path, vec![]).await?);
        }
        ConnectionsCommand::Revoke { id, .. } => {
            let path = format!("/v1/connections/{}/revoke", segment(&required(id)?));
            out.json(
                &api.connect(name)?
                    .post(&path, &Value::Object(Map::new()), None)
                    .await?,
            );
        }
        ConnectionsCommand::Connect {
            app,
            as_,
            permissions,
            ..
        } => {
            let mut q: Vec<(&'static str, String)> = vec![("app", app)];
            if let Some(a) = as_ {
                q.push(("as", a));
            }
            if !permissions.is_empty() {
                q.push(("permissions", permissions.join(",")));
            }
            out.json(&api.connect(name)?.get("/v1/connections/connect", q).await?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

const CONNECTION_COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/id")),
    ("APP", |r| cell(r, "/app")),
    ("AS", |r| cell(r, "/as")),
    ("USER", |r| cell(r, "/userId")),
    ("STATUS", |r| cell(r, "/status")),
    ("EXPIRES", |r| cell(r, "/expiresAt")),
    ("CREATED", |r| cell(r, "/createdAt")),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_holds_a_bare_token_or_a_token_answer() {
        let bare = parse_tokens("tok-123\n").unwrap();
        assert_eq!(bare["accessToken"], "tok-123");
        let answer =
            parse_tokens(r#"{"access_token":"a1","refresh_token":"r1","expires_in":3600}"#)
                .unwrap();
        assert_eq!(answer["accessToken"], "a1");
        assert_eq!(answer["refreshToken"], "r1");
        assert_eq!(answer["expiresIn"], 3600);
        let err = format!("{:?}", parse_tokens("{not json secret-xyz").unwrap_err());
        assert!(!err.contains("secret-xyz"), "{err}");
        assert!(parse_tokens("  ").is_err());
        assert!(parse_tokens(r#"{"refresh_token":"r"}"#).is_err());
    }
}
