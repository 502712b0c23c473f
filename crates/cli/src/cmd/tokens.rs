//! `kindgi tokens create|list|get|revoke`: API keys. On a running API (the official CLI's
//! commands and wire, platform-api.md §10.1 and §12.3) — `create` prints
//! `{meta: {id, principal?, role, capabilities, …}, secret}`, the secret once. With
//! `--database` they work on the database directly instead, to make the first key of a
//! deployment (`tokens create --database D --tenant T`, a tenant admin's key, printed alone
//! on its line) or revoke one by `--key-id`; only a key's SHA-256 hash is stored.

use std::process::ExitCode;

use anyhow::Context as _;
use kindgi_store::Database;
use kindgi_store::tokens::{TokenError, TokenStore};
use serde_json::{Map, Value, json};

use super::server::DEFAULT_DATABASE;
use crate::api::output::{Column, cell};
use crate::api::push;
use crate::api::{ApiArgs, CliError, segment};

#[derive(Debug, clap::Subcommand)]
pub enum TokensCommand {
    /// Create an API key, for you or (a tenant admin) for someone else; its secret is printed once.
    Create(Box<CreateArgs>),
    /// List API keys, newest first, revoked ones included; never secrets.
    List {
        /// Only this principal's keys (tenant admins): user:<id> or sa:<id>.
        #[arg(long = "for")]
        for_: Option<String>,
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// One API key, by id. No secret.
    Get {
        #[arg(value_name = "TOKEN_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Revoke an API key: from its next request on, it is refused.
    Revoke {
        #[arg(value_name = "TOKEN_ID")]
        id: Option<String>,
        /// Instead of one key: revoke every key this principal minted (user:<id> or
        /// sa:<id>), e.g. after its own key leaked (tenant admins).
        #[arg(long, conflicts_with = "id")]
        created_by: Option<String>,
        /// Revoke in this database directly (with --key-id) instead of through the API.
        #[arg(long)]
        database: Option<String>,
        /// The key id (16 hex digits) printed by `tokens create --database`.
        #[arg(long)]
        key_id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// Whom it acts for: user:<id> or sa:<service-account-id> (default: you). Through the
    /// API only yourself or (a tenant admin) a service account; with --database, user:<id>
    /// makes that person's tenant-admin key.
    #[arg(long = "for")]
    pub for_: Option<String>,
    /// member (the default) or admin.
    #[arg(long, value_parser = ["member", "admin"])]
    pub role: Option<String>,
    /// Limit the key to this project.
    #[arg(long)]
    pub project: Option<String>,
    /// When it stops working: 30d, 12h, 90m from now, or an ISO date.
    #[arg(long)]
    pub expires: Option<String>,
    /// What the key is for, e.g. `ci`.
    #[arg(long)]
    pub label: Option<String>,
    /// A capability it carries (repeatable); you must hold it.
    #[arg(long = "capability")]
    pub capabilities: Vec<String>,
    /// Make the key in this database directly (a SQLite path or postgres:// URL): the
    /// first key of a deployment, a tenant admin's.
    #[arg(long)]
    pub database: Option<String>,
    /// With --database: the tenant the key acts for (A-Z a-z 0-9 . _ -, at most 128).
    #[arg(long)]
    pub tenant: Option<String>,
    /// With --database: expire the key after this many days.
    #[arg(long)]
    pub expires_in_days: Option<u32>,
    #[command(flatten)]
    pub api: ApiArgs,
}

pub fn run(command: TokensCommand, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    match command {
        TokensCommand::Create(a) if a.database.is_some() => runtime.block_on(create_offline(*a)),
        TokensCommand::Revoke {
            database: Some(database),
            key_id,
            ..
        } => runtime.block_on(revoke_offline(&database, key_id)),
        command => Ok(runtime.block_on(run_api(command))),
    }
}

async fn run_api(command: TokensCommand) -> ExitCode {
    let (label, api) = match &command {
        TokensCommand::Create(a) => ("tokens create", a.api.clone()),
        TokensCommand::List { api, .. } => ("tokens list", api.clone()),
        TokensCommand::Get { api, .. } => ("tokens get", api.clone()),
        TokensCommand::Revoke { api, .. } => ("tokens revoke", api.clone()),
    };
    match api_command(command, label, &api).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(label, api.quiet, api.verbose),
    }
}

/// `user:<id>` / `sa:<id>` / `service-account:<id>` → `(kind, id)` on the wire.
fn principal(raw: &str) -> Result<(&'static str, String), CliError> {
    let (kind, id) = raw.split_once(':').unwrap_or((raw, ""));
    let kind = match kind {
        "user" => "user",
        "sa" | "service-account" => "service-account",
        _ => {
            return Err(CliError::Usage(format!(
                "--for must be user:<id> or sa:<id>, got \"{raw}\""
            )));
        }
    };
    if id.is_empty() {
        return Err(CliError::Usage(format!(
            "--for must be user:<id> or sa:<id>, got \"{raw}\""
        )));
    }
    Ok((kind, id.to_owned()))
}

/// `30d`, `12h`, `90m` from now, or an ISO date, as RFC 3339.
pub fn expiry(raw: &str, now: chrono::DateTime<chrono::Utc>) -> Result<String, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "--expires must be like 30d, 12h, 90m or an ISO date, got \"{raw}\""
        ))
    };
    let (n, unit) = raw.split_at(raw.len().saturating_sub(1));
    if let Ok(n) = n.parse::<i64>()
        && n > 0
        && n <= 100 * 365 * 24 * 60
    {
        let d = match unit {
            "d" => chrono::Duration::days(n),
            "h" => chrono::Duration::hours(n),
            "m" => chrono::Duration::minutes(n),
            _ => return Err(bad()),
        };
        return Ok((now + d).to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(raw) {
        return Ok(t
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        let t = d.and_hms_opt(0, 0, 0).ok_or_else(bad)?.and_utc();
        return Ok(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    Err(bad())
}

/// The official client's mapping of `OA:ApiToken` (`tokenId` → `id`).
fn meta(wire: &Value) -> Value {
    let mut m = Map::new();
    m.insert(
        "id".into(),
        wire.get("tokenId").cloned().unwrap_or(Value::Null),
    );
    for k in [
        "principal",
        "role",
        "capabilities",
        "label",
        "projectId",
        "createdBy",
        "createdAt",
        "lastUsedAt",
        "expiresAt",
        "revokedAt",
    ] {
        if let Some(v) = wire.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    Value::Object(m)
}

const COLUMNS: &[Column] = &[
    ("ID", |r| cell(r, "/id")),
    ("PRINCIPAL", |r| {
        format!(
            "{}:{}",
            cell(r, "/principal/kind"),
            cell(r, "/principal/id")
        )
    }),
    ("ROLE", |r| cell(r, "/role")),
    ("LABEL", |r| cell(r, "/label")),
    ("CREATED", |r| cell(r, "/createdAt")),
    ("EXPIRES", |r| cell(r, "/expiresAt")),
    ("REVOKED", |r| cell(r, "/revokedAt")),
];

async fn api_command(command: TokensCommand, label: &str, api: &ApiArgs) -> Result<(), CliError> {
    let out = api.output();
    match command {
        TokensCommand::Create(a) => {
            let mut body = Map::new();
            if let Some(f) = &a.for_ {
                let (kind, id) = principal(f)?;
                body.insert("for".into(), json!({"kind": kind, "id": id}));
            }
            if let Some(r) = &a.role {
                body.insert("role".into(), json!(r));
            }
            if !a.capabilities.is_empty() {
                body.insert("capabilities".into(), json!(a.capabilities));
            }
            if let Some(l) = &a.label {
                body.insert("label".into(), json!(l));
            }
            if let Some(e) = &a.expires {
                body.insert("expiresAt".into(), json!(expiry(e, chrono::Utc::now())?));
            }
            if let Some(p) = &a.project {
                body.insert("projectId".into(), json!(p));
            }
            let wire = api
                .connect(label)?
                .post("/v1/tokens", &Value::Object(body), None)
                .await?;
            let secret = wire.get("token").cloned().unwrap_or(Value::Null);
            out.json(&json!({"meta": meta(&wire), "secret": secret}));
            if !api.quiet {
                let id = wire.get("tokenId").and_then(Value::as_str).unwrap_or("?");
                eprintln!("⚠ The secret of key {id} is shown once, above: store it now.");
            }
        }
        TokensCommand::List {
            for_,
            limit,
            cursor,
            ..
        } => {
            let mut q = Vec::new();
            push(&mut q, "limit", limit.map(|l| l.to_string()));
            push(&mut q, "cursor", cursor);
            if let Some(f) = for_ {
                let (kind, id) = principal(&f)?;
                q.push(("principal", format!("{kind}:{id}")));
            }
            let mut page = api.connect(label)?.get("/v1/tokens", q).await?;
            if let Some(data) = page.get_mut("data").and_then(Value::as_array_mut) {
                for t in data.iter_mut() {
                    *t = meta(t);
                }
            }
            out.page(&page, COLUMNS);
        }
        TokensCommand::Get { id, .. } => {
            let id = id
                .filter(|s| !s.is_empty())
                .ok_or_else(|| CliError::Usage("missing <token-id>".into()))?;
            let wire = api
                .connect(label)?
                .get(&format!("/v1/tokens/{}", segment(&id)), vec![])
                .await?;
            out.json(&meta(&wire));
        }
        TokensCommand::Revoke {
            created_by: Some(minter),
            ..
        } => {
            let revoked = revoke_created_by(&api.connect(label)?, &minter).await?;
            out.json(&json!({"createdBy": actor(&minter)?, "revoked": revoked}));
        }
        TokensCommand::Revoke { id, .. } => {
            let id = id.filter(|s| !s.is_empty()).ok_or_else(|| {
                CliError::Usage(
                    "missing <token-id> (or --database D --key-id K to revoke in the database)"
                        .into(),
                )
            })?;
            api.connect(label)?
                .post(
                    &format!("/v1/tokens/{}/revoke", segment(&id)),
                    &json!({}),
                    None,
                )
                .await?;
            out.json(&json!({"tokenId": id, "revoked": true}));
        }
    }
    Ok(())
}

/// `user:<id>` / `sa:<id>` as the actor string `createdBy` holds.
fn actor(raw: &str) -> Result<String, CliError> {
    let (kind, id) = principal(raw)?;
    Ok(match kind {
        "user" => format!("user:{id}"),
        _ => format!("service_account:{id}"),
    })
}

/// Revokes every key `minter` minted that is not revoked yet; their ids, oldest page last.
async fn revoke_created_by(
    client: &crate::api::ApiClient,
    minter: &str,
) -> Result<Vec<Value>, CliError> {
    let by = actor(minter)?;
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut q = vec![("createdBy", by.clone()), ("limit", "100".to_owned())];
        push(&mut q, "cursor", cursor.take());
        let page = client.get("/v1/tokens", q).await?;
        for t in page["data"].as_array().into_iter().flatten() {
            if t.get("revokedAt").is_none()
                && let Some(id) = t["tokenId"].as_str()
            {
                ids.push(id.to_owned());
            }
        }
        match page["nextCursor"].as_str() {
            Some(c) if page["hasMore"] == true => cursor = Some(c.to_owned()),
            _ => break,
        }
    }
    for id in &ids {
        client
            .post(
                &format!("/v1/tokens/{}/revoke", segment(id)),
                &json!({}),
                None,
            )
            .await?;
    }
    Ok(ids.into_iter().map(Value::String).collect())
}

async fn create_offline(a: CreateArgs) -> anyhow::Result<ExitCode> {
    let database = a.database.unwrap_or_else(|| DEFAULT_DATABASE.to_owned());
    let Some(tenant) = a.tenant else {
        eprintln!(
            "Error: --tenant is required with --database\nUsage: kindgi tokens create --help"
        );
        return Ok(ExitCode::from(2));
    };
    let user = match a.for_.as_deref().map(principal) {
        None => kindgi_store::tokens::operator_user_id(&tenant),
        Some(Ok(("user", id))) => id,
        Some(_) => {
            eprintln!(
                "Error: with --database, --for must be user:<id> (a service account's keys are minted through the API)\nUsage: kindgi tokens create --help"
            );
            return Ok(ExitCode::from(2));
        }
    };
    let db = open(&database).await?;
    let expires_at = a
        .expires_in_days
        .map(|d| kindgi_store::now_millis() + i64::from(d) * 86_400_000);
    let result = TokenStore::new(db.clone())
        .create_for_user(&tenant, &user, expires_at)
        .await;
    db.close().await;
    match result {
        Ok(key) => {
            println!("{}", key.key);
            eprintln!(
                "created API key {} (tokenId {}) for tenant {:?}, the tenant admin user:{user}'s; it is shown only now",
                key.key_id, key.token_id, key.tenant
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ TokenError::InvalidTenant { .. }) => {
            eprintln!("kindgi: {e}");
            Ok(ExitCode::from(2))
        }
        Err(e) => Err(e.into()),
    }
}

async fn revoke_offline(database: &str, key_id: Option<String>) -> anyhow::Result<ExitCode> {
    let Some(key_id) = key_id else {
        eprintln!(
            "Error: --key-id is required with --database\nUsage: kindgi tokens revoke --help"
        );
        return Ok(ExitCode::from(2));
    };
    let db = open(database).await?;
    let result = TokenStore::new(db.clone()).revoke(&key_id).await;
    db.close().await;
    match result {
        Ok(()) => {
            eprintln!("revoked API key {key_id}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ TokenError::UnknownKey { .. }) => {
            eprintln!("kindgi: {e}");
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.into()),
    }
}

async fn open(url: &str) -> anyhow::Result<Database> {
    let db = Database::connect(url)
        .await
        .context("cannot open the database")?;
    db.migrate().await?;
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiries() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default();
        assert_eq!(
            expiry("30d", now).ok().as_deref(),
            Some("2026-01-31T00:00:00.000Z")
        );
        assert_eq!(
            expiry("12h", now).ok().as_deref(),
            Some("2026-01-01T12:00:00.000Z")
        );
        assert_eq!(
            expiry("90m", now).ok().as_deref(),
            Some("2026-01-01T01:30:00.000Z")
        );
        assert_eq!(
            expiry("2027-02-03", now).ok().as_deref(),
            Some("2027-02-03T00:00:00.000Z")
        );
        assert!(expiry("soon", now).is_err());
        assert!(expiry("0d", now).is_err());
    }

    #[test]
    fn principals() {
        assert_eq!(
            principal("sa:x").ok(),
            Some(("service-account", "x".to_owned()))
        );
        assert_eq!(principal("user:u1").ok(), Some(("user", "u1".to_owned())));
        assert!(principal("robot:x").is_err());
        assert!(principal("user:").is_err());
    }
}
