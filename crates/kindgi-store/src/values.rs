//! Env values and secrets per tenant, scope and env: the tables behind `/v1/env` and
//! `/v1/secrets`, and the reads a tool call's `needsSpec.env` / `needsSpec.secrets` resolve
//! through ([`ValuesStore::resolve_env`], [`ValuesStore::resolve_secrets`]).
//!
//! Three tables, one statement per operation for both databases ([`crate::on_pool!`]):
//!
//! * `env_values` — one row per (tenant, env, scope, name): the value (not secret: it is
//!   served back and journaled with runs), a `revision` that every write bumps (1 first),
//!   tags (JSON text), times in milliseconds.
//! * `secrets` — one row per secret: its current version, tags, `rotation_due_at`,
//!   `revoked_at` / `revoke_reason`. Never a value.
//! * `secret_versions` — one row per version: the value sealed by [`crate::seal`]
//!   (`v1:` + base64, AES-256-GCM, associated data binding tenant, scope, env, name and
//!   version), `NULL` once hard-revoked.
//!
//! [`ValuesStore`] is also core's [`CallValues`](kindgi_core::ports::CallValues) port (in
//! [`call_values`]): a tool call's env values and secrets in the env it
//! [serves](ValuesStore::serving), the tenant's Default project's beating the tenant's.
//!
//! A scope is the tenant itself (`scope_id` empty), an org or a project ([`ValueScope`]).
//! Names sort byte-wise on both databases (PostgreSQL columns are `COLLATE "C"`), which is
//! the list order and the cursor position.

use std::collections::BTreeMap;

use sqlx::Row as _;

use crate::seal::{SealError, SealKey, SecretValue};
use crate::{Database, StoreError, now_millis};

/// The largest secret value stored, in bytes of UTF-8 (64 KiB).
pub const SECRET_VALUE_MAX_BYTES: usize = 64 * 1024;
/// The largest env value stored, in bytes of UTF-8 (64 KiB).
pub const ENV_VALUE_MAX_BYTES: usize = 64 * 1024;
/// The most names one resolve reads.
pub const MAX_RESOLVE_NAMES: usize = 256;

/// The env tool calls are served from when the host names none (`KINDGI_ENV`).
pub const DEFAULT_SERVED_ENV: &str = "local";

/// Tags: a string map, stored as JSON text.
pub type Tags = BTreeMap<String, String>;

const DDL_SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS env_values (
        tenant TEXT NOT NULL, env_name TEXT NOT NULL, scope_kind TEXT NOT NULL,
        scope_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
        revision BIGINT NOT NULL, tags TEXT, created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, env_name, scope_kind, scope_id, name))",
    "CREATE TABLE IF NOT EXISTS secrets (
        tenant TEXT NOT NULL, env_name TEXT NOT NULL, scope_kind TEXT NOT NULL,
        scope_id TEXT NOT NULL, name TEXT NOT NULL, current_version BIGINT NOT NULL,
        tags TEXT, rotation_due_at BIGINT, revoked_at BIGINT, revoke_reason TEXT,
        created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, env_name, scope_kind, scope_id, name))",
    "CREATE TABLE IF NOT EXISTS secret_versions (
        tenant TEXT NOT NULL, env_name TEXT NOT NULL, scope_kind TEXT NOT NULL,
        scope_id TEXT NOT NULL, name TEXT NOT NULL, version BIGINT NOT NULL,
        sealed TEXT, created_at BIGINT NOT NULL, revoked_at BIGINT,
        PRIMARY KEY (tenant, env_name, scope_kind, scope_id, name, version))",
];

const DDL_POSTGRES: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS env_values (
        tenant TEXT NOT NULL, env_name TEXT NOT NULL, scope_kind TEXT NOT NULL,
        scope_id TEXT NOT NULL, name TEXT COLLATE \"C\" NOT NULL, value TEXT NOT NULL,
        revision BIGINT NOT NULL, tags TEXT, created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, env_name, scope_kind, scope_id, name))",
    "CREATE TABLE IF NOT EXISTS secrets (
        tenant TEXT NOT NULL, env_name TEXT NOT NULL, scope_kind TEXT NOT NULL,
        scope_id TEXT NOT NULL, name TEXT COLLATE \"C\" NOT NULL,
        current_version BIGINT NOT NULL, tags TEXT, rotation_due_at BIGINT,
        revoked_at BIGINT, revoke_reason TEXT, created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, env_name, scope_kind, scope_id, name))",
    "CREATE TABLE IF NOT EXISTS secret_versions (
        tenant TEXT NOT NULL, env_name TEXT NOT NULL, scope_kind TEXT NOT NULL,
        scope_id TEXT NOT NULL, name TEXT COLLATE \"C\" NOT NULL, version BIGINT NOT NULL,
        sealed TEXT, created_at BIGINT NOT NULL, revoked_at BIGINT,
        PRIMARY KEY (tenant, env_name, scope_kind, scope_id, name, version))",
];

/// Create the env and secret tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("values", DDL_SQLITE, DDL_POSTGRES).await
}

/// Where a value lives inside its tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueScope {
    Tenant,
    Org(String),
    Project(String),
}

impl ValueScope {
    /// `tenant`, `org` or `project`.
    pub fn kind(&self) -> &'static str {
        match self {
            ValueScope::Tenant => "tenant",
            ValueScope::Org(_) => "org",
            ValueScope::Project(_) => "project",
        }
    }

    /// The org or project id; empty for the tenant.
    pub fn id(&self) -> &str {
        match self {
            ValueScope::Tenant => "",
            ValueScope::Org(id) | ValueScope::Project(id) => id,
        }
    }

    fn from_columns(kind: &str, id: String) -> ValueScope {
        match kind {
            "org" => ValueScope::Org(id),
            "project" => ValueScope::Project(id),
            _ => ValueScope::Tenant,
        }
    }
}

/// The key of one env value or secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueKey {
    pub tenant: String,
    pub scope: ValueScope,
    pub env_name: String,
    pub name: String,
}

/// A stored env value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvRecord {
    pub key: ValueKey,
    pub value: String,
    pub revision: i64,
    pub tags: Option<Tags>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A secret's metadata (never its value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRecord {
    pub key: ValueKey,
    pub current_version: i64,
    pub tags: Option<Tags>,
    pub rotation_due_at: Option<i64>,
    pub revoked_at: Option<i64>,
    pub revoke_reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One version's metadata (never its value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretVersion {
    pub key: ValueKey,
    pub version: i64,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

/// How a secret write treats an existing name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Refused (`SecretExists`) when the name is stored and not revoked.
    CreateNew,
    /// A new version; creates the secret when the name is not stored.
    AddVersion,
}

/// An env write.
#[derive(Debug, Clone)]
pub struct EnvWrite {
    pub value: String,
    /// Replaces the stored tags when given; kept otherwise.
    pub tags: Option<Tags>,
    /// The revision the caller saw (0: not stored); another one is `EnvConflict`.
    pub if_revision: Option<i64>,
}

/// A secret write. `Debug` redacts the value.
#[derive(Debug, Clone)]
pub struct SecretWrite {
    pub value: SecretValue,
    pub mode: WriteMode,
    pub tags: Option<Tags>,
    pub rotation_due_at: Option<i64>,
    /// The version the caller saw (0: not stored); another one is `SecretVersionConflict`.
    pub if_version: Option<i64>,
}

/// Which page of a list: the names after `after`, starting with `name_prefix`.
#[derive(Debug, Clone)]
pub struct ListQuery<'a> {
    pub tenant: &'a str,
    pub scope: &'a ValueScope,
    pub env_name: &'a str,
    pub name_prefix: Option<&'a str>,
    pub after: Option<&'a str>,
    pub limit: usize,
    /// Secrets only: list revoked ones too.
    pub include_revoked: bool,
}

/// A failed values operation: a domain outcome or a storage failure. No variant carries a
/// value.
#[derive(Debug, thiserror::Error)]
pub enum ValuesError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "secrets cannot be stored or read: this runtime has no secrets key; {}",
        crate::seal::KEY_HOWTO
    )]
    NoKey,
    #[error(transparent)]
    Seal(#[from] SealError),
    #[error("the stored revision is {current}")]
    EnvConflict { current: i64 },
    #[error("the secret already exists at version {current}")]
    SecretExists { current: i64 },
    #[error("the stored version is {current}")]
    SecretVersionConflict { current: i64 },
    #[error("the value is {len} bytes; at most {max} are stored")]
    ValueTooLarge { len: usize, max: usize },
    #[error("{count} names asked for at once; at most {max}")]
    TooManyNames { count: usize, max: usize },
}

/// The env and secret tables over a [`Database`], with the key secrets are sealed under and
/// the env tool calls are served from.
#[derive(Debug, Clone)]
pub struct ValuesStore {
    db: Database,
    key: Option<SealKey>,
    served_env: String,
}

fn tags_text(tags: &Option<Tags>) -> Option<String> {
    tags.as_ref()
        .map(|t| serde_json::to_string(t).unwrap_or_else(|_| "{}".into()))
}

fn parse_tags(what: &str, text: Option<String>) -> Result<Option<Tags>, StoreError> {
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| StoreError::Corrupt {
            what: format!("tags of {what}"),
            reason: e.to_string(),
        })
    })
    .transpose()
}

/// Decode the key columns (`scope_kind`, `scope_id`, `name`) of a row under `tenant`/`env`.
macro_rules! key_from_row {
    ($row:expr, $tenant:expr, $env:expr, $op:expr) => {{
        let kind: String = $row.try_get("scope_kind").map_err(StoreError::query($op))?;
        ValueKey {
            tenant: $tenant.to_owned(),
            scope: ValueScope::from_columns(
                &kind,
                $row.try_get("scope_id").map_err(StoreError::query($op))?,
            ),
            env_name: $env.to_owned(),
            name: $row.try_get("name").map_err(StoreError::query($op))?,
        }
    }};
}

macro_rules! env_from_row {
    ($row:expr, $tenant:expr, $env:expr) => {{
        let key = key_from_row!($row, $tenant, $env, "env.decode");
        let tags = parse_tags(
            &key.name,
            $row.try_get("tags")
                .map_err(StoreError::query("env.decode"))?,
        )?;
        EnvRecord {
            value: $row
                .try_get("value")
                .map_err(StoreError::query("env.decode"))?,
            revision: $row
                .try_get("revision")
                .map_err(StoreError::query("env.decode"))?,
            created_at: $row
                .try_get("created_at")
                .map_err(StoreError::query("env.decode"))?,
            updated_at: $row
                .try_get("updated_at")
                .map_err(StoreError::query("env.decode"))?,
            tags,
            key,
        }
    }};
}

macro_rules! secret_from_row {
    ($row:expr, $tenant:expr, $env:expr) => {{
        const OP: &str = "secrets.decode";
        let key = key_from_row!($row, $tenant, $env, OP);
        let tags = parse_tags(
            &key.name,
            $row.try_get("tags").map_err(StoreError::query(OP))?,
        )?;
        SecretRecord {
            current_version: $row
                .try_get("current_version")
                .map_err(StoreError::query(OP))?,
            rotation_due_at: $row
                .try_get("rotation_due_at")
                .map_err(StoreError::query(OP))?,
            revoked_at: $row.try_get("revoked_at").map_err(StoreError::query(OP))?,
            revoke_reason: $row
                .try_get("revoke_reason")
                .map_err(StoreError::query(OP))?,
            created_at: $row.try_get("created_at").map_err(StoreError::query(OP))?,
            updated_at: $row.try_get("updated_at").map_err(StoreError::query(OP))?,
            tags,
            key,
        }
    }};
}

const ENV_COLUMNS: &str =
    "scope_kind, scope_id, name, value, revision, tags, created_at, updated_at";
const SECRET_COLUMNS: &str = "scope_kind, scope_id, name, current_version, tags, rotation_due_at, revoked_at, revoke_reason, created_at, updated_at";
/// The primary key of a row, placeholders `$1`..`$5`.
const KEY_WHERE: &str =
    "tenant = $1 AND env_name = $2 AND scope_kind = $3 AND scope_id = $4 AND name = $5";

/// Bind `$1`..`$5` of [`KEY_WHERE`].
macro_rules! bind_key {
    ($q:expr, $k:expr) => {
        $q.bind(&$k.tenant)
            .bind(&$k.env_name)
            .bind($k.scope.kind())
            .bind($k.scope.id())
            .bind(&$k.name)
    };
}

/// The page of `rows` (fetched `limit + 1`): the first `limit`, and whether there is more.
fn page_of<T>(mut rows: Vec<T>, limit: usize) -> (Vec<T>, bool) {
    let more = rows.len() > limit;
    rows.truncate(limit);
    (rows, more)
}

pub mod call_values;
mod secrets;

/// `IN ($from, $from+1, …)` for `n` names.
fn in_list(from: usize, n: usize) -> String {
    let list: Vec<String> = (from..from + n).map(|i| format!("${i}")).collect();
    format!("({})", list.join(", "))
}

impl ValuesStore {
    /// The store without a secrets key: env values and secret metadata work; secret writes
    /// and resolves answer [`ValuesError::NoKey`].
    pub fn new(db: Database) -> ValuesStore {
        ValuesStore::with_key(db, None)
    }

    /// The store sealing secrets under `key`.
    pub fn with_key(db: Database, key: Option<SealKey>) -> ValuesStore {
        ValuesStore {
            db,
            key,
            served_env: DEFAULT_SERVED_ENV.to_owned(),
        }
    }

    /// The store serving tool calls' values from env `env` (`KINDGI_ENV`; default
    /// [`DEFAULT_SERVED_ENV`]).
    pub fn serving(mut self, env: impl Into<String>) -> ValuesStore {
        self.served_env = env.into();
        self
    }

    /// Whether secret values can be written and read.
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    fn key(&self) -> Result<&SealKey, ValuesError> {
        self.key.as_ref().ok_or(ValuesError::NoKey)
    }

    // ------------------------------------------------------------------ env

    /// The env value at `key`.
    pub async fn env_get(&self, key: &ValueKey) -> Result<Option<EnvRecord>, ValuesError> {
        let sql = format!("SELECT {ENV_COLUMNS} FROM env_values WHERE {KEY_WHERE}");
        let record = crate::on_pool!(self.db, read, |pool| {
            let row = bind_key!(sqlx::query(&sql), key)
                .fetch_optional(pool)
                .await
                .map_err(StoreError::query("env.get"))?;
            match row {
                Some(row) => Some(env_from_row!(row, key.tenant, key.env_name)),
                None => None,
            }
        });
        Ok(record)
    }

    /// A page of env values in name order.
    pub async fn env_list(&self, q: &ListQuery<'_>) -> Result<(Vec<EnvRecord>, bool), ValuesError> {
        let sql = format!(
            "SELECT {ENV_COLUMNS} FROM env_values WHERE tenant = $1 AND env_name = $2 AND scope_kind = $3 AND scope_id = $4 AND name > $5 AND substr(name, 1, $6) = $7 ORDER BY name LIMIT $8"
        );
        let prefix = q.name_prefix.unwrap_or("");
        let prefix_len = i32::try_from(prefix.chars().count()).unwrap_or(i32::MAX);
        let fetch = i64::try_from(q.limit.saturating_add(1)).unwrap_or(i64::MAX);
        let rows = crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(&sql)
                .bind(q.tenant)
                .bind(q.env_name)
                .bind(q.scope.kind())
                .bind(q.scope.id())
                .bind(q.after.unwrap_or(""))
                .bind(prefix_len)
                .bind(prefix)
                .bind(fetch)
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("env.list"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(env_from_row!(row, q.tenant, q.env_name));
            }
            out
        });
        Ok(page_of(rows, q.limit))
    }

    /// Set the env value at `key`: revision 1 when new, else the stored one plus 1.
    pub async fn env_set(
        &self,
        key: &ValueKey,
        write: &EnvWrite,
    ) -> Result<EnvRecord, ValuesError> {
        if write.value.len() > ENV_VALUE_MAX_BYTES {
            return Err(ValuesError::ValueTooLarge {
                len: write.value.len(),
                max: ENV_VALUE_MAX_BYTES,
            });
        }
        // Without `ifRevision` the write wins over a racing one: a lost race is retried.
        for _ in 0..3 {
            if let Some(record) = self.env_set_once(key, write).await? {
                return Ok(record);
            }
        }
        let current = self.env_get(key).await?.map_or(0, |r| r.revision);
        Err(ValuesError::EnvConflict { current })
    }

    /// One attempt of [`ValuesStore::env_set`]; `None`: another write raced it.
    async fn env_set_once(
        &self,
        key: &ValueKey,
        write: &EnvWrite,
    ) -> Result<Option<EnvRecord>, ValuesError> {
        const OP: &str = "env.set";
        let select = format!("SELECT revision, created_at, tags FROM env_values WHERE {KEY_WHERE}");
        let update = format!(
            "UPDATE env_values SET value = $6, revision = $7, tags = $8, updated_at = $9 WHERE {KEY_WHERE} AND revision = $10"
        );
        let insert = "INSERT INTO env_values (tenant, env_name, scope_kind, scope_id, name, value, revision, tags, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $8) ON CONFLICT DO NOTHING";
        let now = now_millis();
        let outcome = crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(OP))?;
            let current = bind_key!(sqlx::query(&select), key)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::query(OP))?;
            let stored: Option<(i64, i64, Option<String>)> = match current {
                Some(row) => Some((
                    row.try_get("revision").map_err(StoreError::query(OP))?,
                    row.try_get("created_at").map_err(StoreError::query(OP))?,
                    row.try_get("tags").map_err(StoreError::query(OP))?,
                )),
                None => None,
            };
            let revision = stored.as_ref().map_or(0, |s| s.0);
            if write.if_revision.is_some_and(|want| want != revision) {
                return Err(ValuesError::EnvConflict { current: revision });
            }
            let new_tags = match &write.tags {
                Some(_) => tags_text(&write.tags),
                None => stored.as_ref().and_then(|s| s.2.clone()),
            };
            let written = match &stored {
                Some(_) => bind_key!(sqlx::query(&update), key)
                    .bind(&write.value)
                    .bind(revision + 1)
                    .bind(&new_tags)
                    .bind(now)
                    .bind(revision)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::query(OP))?
                    .rows_affected(),
                None => bind_key!(sqlx::query(insert), key)
                    .bind(&write.value)
                    .bind(&new_tags)
                    .bind(now)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::query(OP))?
                    .rows_affected(),
            };
            if written == 0 {
                None
            } else {
                tx.commit().await.map_err(StoreError::query(OP))?;
                Some((revision + 1, stored.map_or(now, |s| s.1), new_tags))
            }
        });
        let Some((revision, created_at, tags)) = outcome else {
            if let Some(want) = write.if_revision {
                let current = self.env_get(key).await?.map_or(0, |r| r.revision);
                if current != want {
                    return Err(ValuesError::EnvConflict { current });
                }
            }
            return Ok(None);
        };
        Ok(Some(EnvRecord {
            key: key.clone(),
            value: write.value.clone(),
            revision,
            tags: parse_tags(&key.name, tags)?,
            created_at,
            updated_at: now,
        }))
    }

    /// Delete the env value at `key`; `false` when there was none.
    pub async fn env_delete(&self, key: &ValueKey) -> Result<bool, ValuesError> {
        let sql = format!("DELETE FROM env_values WHERE {KEY_WHERE}");
        let n = crate::on_pool!(self.db, write, |pool| {
            bind_key!(sqlx::query(&sql), key)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("env.delete"))?;
        Ok(n > 0)
    }

    /// The env values `names` for a call of `tenant` in `project_id` (if any) under
    /// `env_name`: a project value beats the tenant's. Names with no value are absent.
    pub async fn resolve_env(
        &self,
        tenant: &str,
        project_id: Option<&str>,
        env_name: &str,
        names: &[&str],
    ) -> Result<BTreeMap<String, String>, ValuesError> {
        if names.is_empty() {
            return Ok(BTreeMap::new());
        }
        if names.len() > MAX_RESOLVE_NAMES {
            return Err(ValuesError::TooManyNames {
                count: names.len(),
                max: MAX_RESOLVE_NAMES,
            });
        }
        let sql = format!(
            "SELECT scope_kind, name, value FROM env_values WHERE tenant = $1 AND env_name = $2 AND ((scope_kind = 'tenant' AND scope_id = '') OR (scope_kind = 'project' AND scope_id = $3)) AND name IN {}",
            in_list(4, names.len())
        );
        let rows: Vec<(String, String, String)> = crate::on_pool!(self.db, read, |pool| {
            let mut q = sqlx::query(&sql)
                .bind(tenant)
                .bind(env_name)
                .bind(project_id.unwrap_or(""));
            for n in names {
                q = q.bind(*n);
            }
            let rows = q
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("env.resolve"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push((
                    row.try_get("scope_kind")
                        .map_err(StoreError::query("env.resolve"))?,
                    row.try_get("name")
                        .map_err(StoreError::query("env.resolve"))?,
                    row.try_get("value")
                        .map_err(StoreError::query("env.resolve"))?,
                ));
            }
            out
        });
        let mut out = BTreeMap::new();
        // Tenant values first, so a project value overwrites its name.
        for (_, name, value) in rows.iter().filter(|r| r.0 == "tenant") {
            out.insert(name.clone(), value.clone());
        }
        for (_, name, value) in rows.iter().filter(|r| r.0 == "project") {
            out.insert(name.clone(), value.clone());
        }
        Ok(out)
    }
}
