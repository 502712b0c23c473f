//! Idempotency keys: the stored outcome of a write sent with an `Idempotency-Key` header, so
//! a retry replays the first answer instead of doing the work again. A row is claimed when the
//! request starts (`status` NULL = in flight), filled with the response when it succeeds, and
//! deleted when it fails. Rows expire after 24 hours; a claim left in flight for 30 seconds
//! (a crashed request) may be taken over.

use crate::{Backend, Database, StoreError, now_millis};

/// How long a stored response is replayed.
pub const RETENTION_MS: i64 = 24 * 3600 * 1000;
/// How long an in-flight claim holds the key.
pub const IN_FLIGHT_HOLD_MS: i64 = 30 * 1000;

const SQLITE: &[&str] = &["CREATE TABLE IF NOT EXISTS idempotency_keys (
        tenant       TEXT NOT NULL,
        key          TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        status       INTEGER,
        body         TEXT,
        created_at   INTEGER NOT NULL,
        PRIMARY KEY (tenant, key)
    )"];

const POSTGRES: &[&str] = &["CREATE TABLE IF NOT EXISTS idempotency_keys (
        tenant       TEXT NOT NULL,
        key          TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        status       INTEGER,
        body         TEXT,
        created_at   BIGINT NOT NULL,
        PRIMARY KEY (tenant, key)
    )"];

/// Create the `idempotency_keys` table (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("idempotency", SQLITE, POSTGRES).await
}

/// What to do with a request carrying an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is ours: run the request, then [`IdempotencyStore::complete`] or
    /// [`IdempotencyStore::release`].
    Started,
    /// The same request already succeeded: send this again.
    Replay { status: u16, body: String },
    /// The same key is being processed right now.
    InFlight,
    /// The key was used with a different request.
    BodyMismatch,
}

/// Idempotency-key storage over a [`Database`].
#[derive(Debug, Clone)]
pub struct IdempotencyStore {
    db: Database,
}

impl IdempotencyStore {
    pub fn new(db: Database) -> IdempotencyStore {
        IdempotencyStore { db }
    }

    /// Claim `key` for a request whose method, path and body hash to `request_hash`.
    pub async fn claim(
        &self,
        tenant: &str,
        key: &str,
        request_hash: &str,
    ) -> Result<Claim, StoreError> {
        let now = now_millis();
        let op = StoreError::query("idempotency.claim");
        let (expired, stale) = (now - RETENTION_MS, now - IN_FLIGHT_HOLD_MS);
        let (inserted, row) = match self.db.backend() {
            Backend::Sqlite(p) => {
                let mut tx = p.writer.begin().await.map_err(op)?;
                let op = StoreError::query("idempotency.claim");
                sqlx::query(
                    "DELETE FROM idempotency_keys WHERE tenant = ? AND key = ? AND (created_at < ? OR (status IS NULL AND created_at < ?))",
                )
                .bind(tenant)
                .bind(key)
                .bind(expired)
                .bind(stale)
                .execute(&mut *tx)
                .await
                .map_err(op)?;
                let inserted = sqlx::query(
                    "INSERT INTO idempotency_keys (tenant, key, request_hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                )
                .bind(tenant)
                .bind(key)
                .bind(request_hash)
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query("idempotency.claim"))?
                .rows_affected();
                let row = sqlx::query("SELECT request_hash, status, body FROM idempotency_keys WHERE tenant = ? AND key = ?")
                    .bind(tenant)
                    .bind(key)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(StoreError::query("idempotency.claim"))?;
                tx.commit()
                    .await
                    .map_err(StoreError::query("idempotency.claim"))?;
                (inserted, read(&row)?)
            }
            Backend::Postgres(p) => {
                let mut tx = p.begin().await.map_err(op)?;
                sqlx::query(
                    "DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND (created_at < $3 OR (status IS NULL AND created_at < $4))",
                )
                .bind(tenant)
                .bind(key)
                .bind(expired)
                .bind(stale)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query("idempotency.claim"))?;
                let inserted = sqlx::query(
                    "INSERT INTO idempotency_keys (tenant, key, request_hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                )
                .bind(tenant)
                .bind(key)
                .bind(request_hash)
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query("idempotency.claim"))?
                .rows_affected();
                let row = sqlx::query("SELECT request_hash, status, body FROM idempotency_keys WHERE tenant = $1 AND key = $2")
                    .bind(tenant)
                    .bind(key)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(StoreError::query("idempotency.claim"))?;
                tx.commit()
                    .await
                    .map_err(StoreError::query("idempotency.claim"))?;
                (inserted, read(&row)?)
            }
        };
        let (hash, status, body) = row;
        Ok(if inserted == 1 {
            Claim::Started
        } else if hash != request_hash {
            Claim::BodyMismatch
        } else {
            match status {
                None => Claim::InFlight,
                Some(s) => Claim::Replay {
                    status: u16::try_from(s).unwrap_or(200),
                    body: body.unwrap_or_default(),
                },
            }
        })
    }

    /// Store the successful response of a claimed key.
    pub async fn complete(
        &self,
        tenant: &str,
        key: &str,
        status: u16,
        body: &str,
    ) -> Result<(), StoreError> {
        let op = StoreError::query("idempotency.complete");
        match self.db.backend() {
            Backend::Sqlite(p) => sqlx::query(
                "UPDATE idempotency_keys SET status = ?, body = ? WHERE tenant = ? AND key = ?",
            )
            .bind(i32::from(status))
            .bind(body)
            .bind(tenant)
            .bind(key)
            .execute(&p.writer)
            .await
            .map(drop)
            .map_err(op),
            Backend::Postgres(p) => sqlx::query(
                "UPDATE idempotency_keys SET status = $1, body = $2 WHERE tenant = $3 AND key = $4",
            )
            .bind(i32::from(status))
            .bind(body)
            .bind(tenant)
            .bind(key)
            .execute(p)
            .await
            .map(drop)
            .map_err(op),
        }
    }

    /// Give a claimed key back (the request failed; a retry may run it again).
    pub async fn release(&self, tenant: &str, key: &str) -> Result<(), StoreError> {
        let op = StoreError::query("idempotency.release");
        match self.db.backend() {
            Backend::Sqlite(p) => sqlx::query(
                "DELETE FROM idempotency_keys WHERE tenant = ? AND key = ? AND status IS NULL",
            )
            .bind(tenant)
            .bind(key)
            .execute(&p.writer)
            .await
            .map(drop)
            .map_err(op),
            Backend::Postgres(p) => sqlx::query(
                "DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND status IS NULL",
            )
            .bind(tenant)
            .bind(key)
            .execute(p)
            .await
            .map(drop)
            .map_err(op),
        }
    }
}

type ClaimRow = (String, Option<i32>, Option<String>);

fn read<R>(r: &R) -> Result<ClaimRow, StoreError>
where
    R: sqlx::Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    String: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    Option<i32>: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    Option<String>: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
{
    let corrupt = |e: sqlx::Error| StoreError::Corrupt {
        what: "idempotency_keys row".into(),
        reason: e.to_string(),
    };
    Ok((
        r.try_get("request_hash").map_err(corrupt)?,
        r.try_get("status").map_err(corrupt)?,
        r.try_get("body").map_err(corrupt)?,
    ))
}
