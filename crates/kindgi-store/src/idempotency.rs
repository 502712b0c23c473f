//! Idempotency keys: the stored answer of a write sent with an `Idempotency-Key` header, so a
//! retry replays the first answer instead of doing the work again.
//!
//! A row is written only with a complete answer (status and body), and — where the store does
//! the write — **in the same transaction as the write it guards** ([`AnswerToRecord`], used by
//! [`crate::tools::StoreRegistry::register_answered`]). So after any crash a key either has its
//! answer (the write committed) or nothing at all (the write did not happen, and a retry does
//! it now); there is no "in flight" row that could outlive its process. Requests that overlap
//! while the first is still running are detected in the serving process (see the API's
//! idempotency middleware); on PostgreSQL a duplicate racing from another server waits on the
//! first one's row and then finds the key taken.
//!
//! Both databases run the same statements (only the placeholders differ): delete this key's
//! row if it has expired (or is a pre-0.2 in-flight claim), then
//! `INSERT … ON CONFLICT DO NOTHING`; zero rows inserted means another request recorded the
//! key first, and the caller rolls its write back and replays that answer.

use crate::{Database, StoreError, now_millis};

/// How long a stored answer is replayed.
pub const RETENTION_MS: i64 = 24 * 3600 * 1000;

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

/// The two statements that record an answer (one text for both databases): delete an
/// expired (or legacy in-flight) row of the key, then insert unless the key is taken.
pub(crate) const RECORD: [&str; 2] = [
    "DELETE FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND (created_at < $3 OR status IS NULL)",
    "INSERT INTO idempotency_keys (tenant, key, request_hash, status, body, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
];

/// Create the `idempotency_keys` table (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("idempotency", SQLITE, POSTGRES).await
}

/// A stored answer for a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    /// SHA-256 of the request (method, path, body) that produced it.
    pub request_hash: String,
    pub status: u16,
    pub body: String,
}

/// The answer to record for `(tenant, key)`, given to a write so both commit together.
#[derive(Debug, Clone)]
pub struct AnswerToRecord {
    pub tenant: String,
    pub key: String,
    pub request_hash: String,
    pub status: u16,
    pub body: String,
}

/// Run the record statements on one connection or transaction (`$ph` is [`RECORD`]; `$map($op)` maps a `sqlx::Error`); evaluates to `true` when the answer
/// was inserted.
macro_rules! record_answer {
    ($conn:expr, $ph:expr, $answer:expr, $map:path, $op:expr) => {{
        let a: &$crate::idempotency::AnswerToRecord = $answer;
        let now = $crate::now_millis();
        sqlx::query($ph[0])
            .bind(&a.tenant)
            .bind(&a.key)
            .bind(now - $crate::idempotency::RETENTION_MS)
            .execute(&mut *$conn)
            .await
            .map_err($map($op))?;
        sqlx::query($ph[1])
            .bind(&a.tenant)
            .bind(&a.key)
            .bind(&a.request_hash)
            .bind(i32::from(a.status))
            .bind(&a.body)
            .bind(now)
            .execute(&mut *$conn)
            .await
            .map_err($map($op))?
            .rows_affected()
            == 1
    }};
}
pub(crate) use record_answer;

/// Idempotency-key storage over a [`Database`].
#[derive(Debug, Clone)]
pub struct IdempotencyStore {
    db: Database,
}

impl IdempotencyStore {
    pub fn new(db: Database) -> IdempotencyStore {
        IdempotencyStore { db }
    }

    /// The live answer stored for `key`, if any (expired rows and legacy in-flight claims
    /// count as none).
    pub async fn lookup(
        &self,
        tenant: &str,
        key: &str,
    ) -> Result<Option<StoredAnswer>, StoreError> {
        let op = StoreError::query("idempotency.lookup");
        let since = now_millis() - RETENTION_MS;
        let row = crate::on_pool!(self.db, read, |pool| {
            sqlx::query(
                "SELECT request_hash, status, body FROM idempotency_keys WHERE tenant = $1 AND key = $2 AND created_at >= $3 AND status IS NOT NULL",
            )
            .bind(tenant)
            .bind(key)
            .bind(since)
            .fetch_optional(pool)
            .await
            .map_err(op)?
            .map(|r| read(&r))
        });
        row.transpose()
    }

    /// Record an answer on its own, after a write the store did not do itself (so not
    /// crash-atomic with it). `false`: another request recorded the key first.
    pub async fn record(&self, answer: &AnswerToRecord) -> Result<bool, StoreError> {
        const OP: &str = "idempotency.record";
        crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(OP))?;
            let inserted = record_answer!(tx, RECORD, answer, StoreError::query, OP);
            tx.commit().await.map_err(StoreError::query(OP))?;
            Ok(inserted)
        })
    }
}

fn read<R>(r: &R) -> Result<StoredAnswer, StoreError>
where
    R: sqlx::Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    String: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    i32: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
{
    let corrupt = |reason: String| StoreError::Corrupt {
        what: "idempotency_keys row".into(),
        reason,
    };
    let status: i32 = r.try_get("status").map_err(|e| corrupt(e.to_string()))?;
    Ok(StoredAnswer {
        request_hash: r
            .try_get("request_hash")
            .map_err(|e| corrupt(e.to_string()))?,
        status: u16::try_from(status).map_err(|_| corrupt(format!("status {status}")))?,
        body: r.try_get("body").map_err(|e| corrupt(e.to_string()))?,
    })
}
