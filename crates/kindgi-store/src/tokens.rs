//! API keys: bearer tokens that name a tenant, stored only as SHA-256 hashes.
//!
//! A key is `kgi_` followed by 43 base64url characters (32 random bytes from the OS-seeded
//! CSPRNG), so hashing without a salt is safe: there is nothing to guess. The hash is the
//! primary key, so a lookup is one indexed read; the stored hash is then compared in
//! constant time. A key is shown once, at creation; `key_id` (the first 16 hex digits of the
//! hash) names it afterwards, e.g. to revoke it.

use base64::Engine as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq as _;
use thiserror::Error;

use crate::{Backend, Database, StoreError, now_millis};

/// The prefix of every key (recognizable in logs and secret scanners).
pub const KEY_PREFIX: &str = "kgi_";

const SQLITE: &[&str] = &["CREATE TABLE IF NOT EXISTS api_keys (
        key_hash   TEXT PRIMARY KEY,
        key_id     TEXT NOT NULL UNIQUE,
        tenant     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
    )"];

const POSTGRES: &[&str] = &["CREATE TABLE IF NOT EXISTS api_keys (
        key_hash   TEXT PRIMARY KEY,
        key_id     TEXT NOT NULL UNIQUE,
        tenant     TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        revoked_at BIGINT
    )"];

/// Create the `api_keys` table (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("tokens", SQLITE, POSTGRES).await
}

/// A key just created: `key` is the secret, shown once.
#[derive(Debug, Clone)]
pub struct CreatedKey {
    pub key: String,
    pub key_id: String,
    pub tenant: String,
}

/// What a presented key turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStatus {
    Valid { tenant: String, key_id: String },
    Unknown,
    Revoked,
    Expired,
}

/// A failure creating or revoking a key.
#[derive(Debug, Error)]
pub enum TokenError {
    #[error("tenant name {tenant:?} is not valid: use 1 to 128 characters from A-Z a-z 0-9 . _ -")]
    InvalidTenant { tenant: String },
    #[error("no API key with id {key_id:?}")]
    UnknownKey { key_id: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// True when `tenant` is an acceptable tenant name.
pub fn valid_tenant(tenant: &str) -> bool {
    !tenant.is_empty()
        && tenant.len() <= 128
        && tenant
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// SHA-256 of a key, lowercase hex.
pub fn hash_key(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// A fresh random key.
pub fn generate_key() -> String {
    let bytes: [u8; 32] = rand::random();
    format!(
        "{KEY_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// API-key storage over a [`Database`].
#[derive(Debug, Clone)]
pub struct TokenStore {
    db: Database,
}

impl TokenStore {
    pub fn new(db: Database) -> TokenStore {
        TokenStore { db }
    }

    /// Create a key for `tenant`, optionally expiring at `expires_at` (ms since the epoch).
    pub async fn create(
        &self,
        tenant: &str,
        expires_at: Option<i64>,
    ) -> Result<CreatedKey, TokenError> {
        if !valid_tenant(tenant) {
            return Err(TokenError::InvalidTenant {
                tenant: tenant.to_owned(),
            });
        }
        let key = generate_key();
        let hash = hash_key(&key);
        let key_id = hash[..16].to_owned();
        let now = now_millis();
        let sql = match self.db.backend() {
            Backend::Sqlite(_) => {
                "INSERT INTO api_keys (key_hash, key_id, tenant, created_at, expires_at) VALUES (?, ?, ?, ?, ?)"
            }
            Backend::Postgres(_) => {
                "INSERT INTO api_keys (key_hash, key_id, tenant, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)"
            }
        };
        let op = StoreError::query("tokens.create");
        match self.db.backend() {
            Backend::Sqlite(p) => {
                sqlx::query(sql)
                    .bind(&hash)
                    .bind(&key_id)
                    .bind(tenant)
                    .bind(now)
                    .bind(expires_at)
                    .execute(&p.writer)
                    .await
                    .map_err(op)?;
            }
            Backend::Postgres(p) => {
                sqlx::query(sql)
                    .bind(&hash)
                    .bind(&key_id)
                    .bind(tenant)
                    .bind(now)
                    .bind(expires_at)
                    .execute(p)
                    .await
                    .map_err(op)?;
            }
        }
        Ok(CreatedKey {
            key,
            key_id,
            tenant: tenant.to_owned(),
        })
    }

    /// Look a presented key up.
    pub async fn authenticate(&self, key: &str) -> Result<KeyStatus, StoreError> {
        if !key.starts_with(KEY_PREFIX) || key.len() > 256 {
            return Ok(KeyStatus::Unknown);
        }
        let hash = hash_key(key);
        let op = StoreError::query("tokens.authenticate");
        let row = match self.db.backend() {
            Backend::Sqlite(p) => sqlx::query(
                "SELECT key_hash, key_id, tenant, expires_at, revoked_at FROM api_keys WHERE key_hash = ?",
            )
            .bind(&hash)
            .fetch_optional(&p.reader)
            .await
            .map_err(op)?
            .map(|r| read_key_row(&r)),
            Backend::Postgres(p) => sqlx::query(
                "SELECT key_hash, key_id, tenant, expires_at, revoked_at FROM api_keys WHERE key_hash = $1",
            )
            .bind(&hash)
            .fetch_optional(p)
            .await
            .map_err(op)?
            .map(|r| read_key_row(&r)),
        };
        let Some(row) = row.transpose()? else {
            return Ok(KeyStatus::Unknown);
        };
        if !bool::from(row.hash.as_bytes().ct_eq(hash.as_bytes())) {
            return Ok(KeyStatus::Unknown);
        }
        if row.revoked_at.is_some() {
            return Ok(KeyStatus::Revoked);
        }
        if row.expires_at.is_some_and(|t| t <= now_millis()) {
            return Ok(KeyStatus::Expired);
        }
        Ok(KeyStatus::Valid {
            tenant: row.tenant,
            key_id: row.key_id,
        })
    }

    /// Revoke the key named `key_id`. Revoking twice is not an error.
    pub async fn revoke(&self, key_id: &str) -> Result<(), TokenError> {
        let now = now_millis();
        let op = StoreError::query("tokens.revoke");
        let affected = match self.db.backend() {
            Backend::Sqlite(p) => sqlx::query(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?",
            )
            .bind(now)
            .bind(key_id)
            .execute(&p.writer)
            .await
            .map_err(op)?
            .rows_affected(),
            Backend::Postgres(p) => sqlx::query(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE key_id = $2",
            )
            .bind(now)
            .bind(key_id)
            .execute(p)
            .await
            .map_err(op)?
            .rows_affected(),
        };
        if affected == 0 {
            return Err(TokenError::UnknownKey {
                key_id: key_id.to_owned(),
            });
        }
        Ok(())
    }
}

/// A key that still authenticates, as [`TokenStore::active_keys`] lists it (never the
/// secret or its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveKey {
    pub key_id: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

impl TokenStore {
    /// The keys of `tenant` that are neither revoked nor expired, oldest first.
    pub async fn active_keys(&self, tenant: &str) -> Result<Vec<ActiveKey>, StoreError> {
        use sqlx::Row as _;
        let now = now_millis();
        let op = StoreError::query("tokens.active_keys");
        let rows: Vec<(String, i64, Option<i64>)> = match self.db.backend() {
            Backend::Sqlite(p) => sqlx::query(
                "SELECT key_id, created_at, expires_at FROM api_keys WHERE tenant = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at, key_id",
            )
            .bind(tenant)
            .bind(now)
            .fetch_all(&p.reader)
            .await
            .map_err(op)?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect::<Result<_, sqlx::Error>>(),
            Backend::Postgres(p) => sqlx::query(
                "SELECT key_id, created_at, expires_at FROM api_keys WHERE tenant = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2) ORDER BY created_at, key_id",
            )
            .bind(tenant)
            .bind(now)
            .fetch_all(p)
            .await
            .map_err(op)?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect::<Result<_, sqlx::Error>>(),
        }
        .map_err(|e| StoreError::Corrupt {
            what: "api_keys row".into(),
            reason: e.to_string(),
        })?;
        Ok(rows
            .into_iter()
            .map(|(key_id, created_at, expires_at)| ActiveKey {
                key_id,
                created_at,
                expires_at,
            })
            .collect())
    }
}

struct KeyRow {
    hash: String,
    key_id: String,
    tenant: String,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
}

fn read_key_row<R>(r: &R) -> Result<KeyRow, StoreError>
where
    R: sqlx::Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    String: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    Option<i64>: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
{
    let corrupt = |e: sqlx::Error| StoreError::Corrupt {
        what: "api_keys row".into(),
        reason: e.to_string(),
    };
    Ok(KeyRow {
        hash: r.try_get("key_hash").map_err(corrupt)?,
        key_id: r.try_get("key_id").map_err(corrupt)?,
        tenant: r.try_get("tenant").map_err(corrupt)?,
        expires_at: r.try_get("expires_at").map_err(corrupt)?,
        revoked_at: r.try_get("revoked_at").map_err(corrupt)?,
    })
}
