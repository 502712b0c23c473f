//! Mail triggers and their fires ([`kindgi_core::ports::MailTriggerStore`]) in SQL:
//! `mail_triggers` (the columns lists and lookups use, and the admin's settings as one JSON
//! document, `config`) and `mail_fires`. An address is unique among live triggers (a partial
//! unique index, so two concurrent registrations of one address make one trigger); a fire is
//! unique per `(trigger_id, dedupe_key)` (the hashed `Message-ID`, set only once the sender
//! was authenticated), so a repeat counts a duplicate on the first fire instead of starting
//! a second run. Every statement is written once for both databases
//! ([`on_pool!`](crate::on_pool)).

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::mail_trigger::{
    FireEnd, FireRecorded, MailFire, MailFireQuery, MailTrigger, MailTriggerConfig,
    MailTriggerQuery,
};
use kindgi_core::ports::MailTriggerStore;
use kindgi_core::trigger::{FireOutcome, TriggerStatus};
use sqlx::Row;

use crate::{Database, StoreError};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS mail_triggers (
        trigger_id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        address TEXT NOT NULL,
        project_id TEXT NOT NULL,
        config TEXT NOT NULL,
        status TEXT NOT NULL,
        status_reason TEXT,
        consecutive_failures BIGINT NOT NULL DEFAULT 0,
        last_fired_at BIGINT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        unregistered_at BIGINT
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS mail_triggers_address ON mail_triggers (address)
        WHERE unregistered_at IS NULL",
    "CREATE INDEX IF NOT EXISTS mail_triggers_tenant_created
        ON mail_triggers (tenant, created_at, trigger_id)",
    "CREATE TABLE IF NOT EXISTS mail_fires (
        fire_id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        trigger_id TEXT NOT NULL,
        fired_at BIGINT NOT NULL,
        outcome TEXT NOT NULL,
        run_id TEXT,
        detail TEXT,
        sender TEXT,
        message_id TEXT,
        dedupe_key TEXT,
        duplicates BIGINT NOT NULL DEFAULT 0,
        last_duplicate_at BIGINT
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS mail_fires_dedupe ON mail_fires (trigger_id, dedupe_key)",
    "CREATE INDEX IF NOT EXISTS mail_fires_trigger_fired
        ON mail_fires (tenant, trigger_id, fired_at, fire_id)",
];

const POSTGRES: &[&str] = SQLITE;

/// Creates the tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("mail_triggers", SQLITE, POSTGRES).await
}

/// Mail triggers over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct MailTriggerSql {
    db: Database,
}

impl MailTriggerSql {
    pub fn new(db: Database) -> MailTriggerSql {
        MailTriggerSql { db }
    }
}

const TRIGGER_COLUMNS: &str = "trigger_id, tenant, address, project_id, config, status, status_reason, consecutive_failures, last_fired_at, created_at, updated_at";

const FIRE_COLUMNS: &str = "fire_id, tenant, trigger_id, fired_at, outcome, run_id, detail, sender, message_id, dedupe_key, duplicates, last_duplicate_at";

fn decode_error(what: String) -> sqlx::Error {
    sqlx::Error::Decode(what.into())
}

fn trigger_from_row<R>(row: &R) -> Result<MailTrigger, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let status: String = row.try_get("status")?;
    let status = TriggerStatus::parse(&status)
        .ok_or_else(|| decode_error(format!("unknown mail trigger status {status:?}")))?;
    let config: String = row.try_get("config")?;
    let config: MailTriggerConfig = serde_json::from_str(&config)
        .map_err(|e| decode_error(format!("mail trigger config: {e}")))?;
    let failures: i64 = row.try_get("consecutive_failures")?;
    Ok(MailTrigger {
        trigger_id: row.try_get("trigger_id")?,
        tenant: row.try_get("tenant")?,
        address: row.try_get("address")?,
        project_id: row.try_get("project_id")?,
        config,
        status,
        status_reason: row.try_get("status_reason")?,
        consecutive_failures: u32::try_from(failures).unwrap_or(u32::MAX),
        last_fired_at: row.try_get("last_fired_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn fire_from_row<R>(row: &R) -> Result<MailFire, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let outcome: String = row.try_get("outcome")?;
    let outcome = FireOutcome::parse(&outcome)
        .ok_or_else(|| decode_error(format!("unknown fire outcome {outcome:?}")))?;
    let duplicates: i64 = row.try_get("duplicates")?;
    Ok(MailFire {
        fire_id: row.try_get("fire_id")?,
        tenant: row.try_get("tenant")?,
        trigger_id: row.try_get("trigger_id")?,
        fired_at: row.try_get("fired_at")?,
        outcome,
        run_id: row.try_get("run_id")?,
        detail: row.try_get("detail")?,
        from: row.try_get("sender")?,
        message_id: row.try_get("message_id")?,
        dedupe_key: row.try_get("dedupe_key")?,
        duplicates: u32::try_from(duplicates).unwrap_or(u32::MAX),
        last_duplicate_at: row.try_get("last_duplicate_at")?,
    })
}

fn failed(op: &'static str) -> impl FnOnce(sqlx::Error) -> StorageError {
    move |source| StoreError::Query { op, source }.into_storage(op)
}

/// An address conflict as the port words it.
fn address_conflict(op: &'static str, address: &str) -> impl FnOnce(StorageError) -> StorageError {
    let what = format!("a mail trigger for {address}");
    move |e| match e {
        StorageError::Conflict { source, .. } => StorageError::Conflict { op, what, source },
        other => other,
    }
}

fn config_json(t: &MailTrigger, op: &'static str) -> Result<String, StorageError> {
    serde_json::to_string(&t.config).map_err(StorageError::backend_of(op))
}

/// The rows `sql` selects, its `$1…` bound to `binds` (text or integer), decoded by `$decode`.
macro_rules! select {
    ($db:expr, $pool_kind:ident, $decode:ident, $sql:expr, [$($bind:expr),*]) => {
        crate::on_pool!($db, $pool_kind, |pool| {
            match sqlx::query($sql)$(.bind($bind))*.fetch_all(pool).await {
                Ok(rows) => rows.iter().map($decode).collect::<Result<Vec<_>, _>>(),
                Err(e) => Err(e),
            }
        })
    };
}

#[async_trait]
impl MailTriggerStore for MailTriggerSql {
    async fn create(&self, t: &MailTrigger) -> Result<(), StorageError> {
        const OP: &str = "mail_triggers.create";
        let config = config_json(t, OP)?;
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO mail_triggers (trigger_id, tenant, address, project_id, config, status,
                    status_reason, consecutive_failures, last_fired_at, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 0, NULL, $8, $9)",
            )
            .bind(&t.trigger_id)
            .bind(&t.tenant)
            .bind(&t.address)
            .bind(&t.project_id)
            .bind(&config)
            .bind(t.status.as_str())
            .bind(&t.status_reason)
            .bind(t.created_at)
            .bind(t.updated_at)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed(OP))
        .map_err(address_conflict(OP, &t.address))
    }

    async fn get(
        &self,
        tenant: &str,
        trigger_id: &str,
    ) -> Result<Option<MailTrigger>, StorageError> {
        let sql = format!(
            "SELECT {TRIGGER_COLUMNS} FROM mail_triggers
             WHERE tenant = $1 AND trigger_id = $2 AND unregistered_at IS NULL"
        );
        let rows = select!(self.db, read, trigger_from_row, &sql, [tenant, trigger_id])
            .map_err(failed("mail_triggers.get"))?;
        Ok(rows.into_iter().next())
    }

    async fn by_address(&self, address: &str) -> Result<Option<MailTrigger>, StorageError> {
        let sql = format!(
            "SELECT {TRIGGER_COLUMNS} FROM mail_triggers
             WHERE address = $1 AND unregistered_at IS NULL"
        );
        let rows = select!(self.db, read, trigger_from_row, &sql, [address])
            .map_err(failed("mail_triggers.by_address"))?;
        Ok(rows.into_iter().next())
    }

    async fn list(&self, q: &MailTriggerQuery) -> Result<Vec<MailTrigger>, StorageError> {
        let (after_at, after_id) = q.after.clone().unwrap_or((i64::MIN, String::new()));
        let status = q.status.map(|s| s.as_str()).unwrap_or("");
        let project = q.project_id.clone().unwrap_or_default();
        let limit = i64::try_from(q.limit.max(1)).unwrap_or(i64::MAX);
        let sql = format!(
            "SELECT {TRIGGER_COLUMNS} FROM mail_triggers
             WHERE tenant = $1 AND unregistered_at IS NULL
               AND ($2 = '' OR status = $2)
               AND ($3 = '' OR project_id = $3)
               AND (created_at > $4 OR (created_at = $4 AND trigger_id > $5))
             ORDER BY created_at, trigger_id LIMIT $6"
        );
        select!(
            self.db,
            read,
            trigger_from_row,
            &sql,
            [&q.tenant, status, &project, after_at, &after_id, limit]
        )
        .map_err(failed("mail_triggers.list"))
    }

    async fn update(&self, t: &MailTrigger) -> Result<bool, StorageError> {
        const OP: &str = "mail_triggers.update";
        let config = config_json(t, OP)?;
        let n = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE mail_triggers SET address = $3, project_id = $4, config = $5, status = $6,
                    status_reason = $7, updated_at = $8,
                    consecutive_failures = CASE WHEN $6 = 'active' THEN 0 ELSE consecutive_failures END
                 WHERE tenant = $1 AND trigger_id = $2 AND unregistered_at IS NULL",
            )
            .bind(&t.tenant)
            .bind(&t.trigger_id)
            .bind(&t.address)
            .bind(&t.project_id)
            .bind(&config)
            .bind(t.status.as_str())
            .bind(&t.status_reason)
            .bind(t.updated_at)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(failed(OP))
        .map_err(address_conflict(OP, &t.address))?;
        Ok(n > 0)
    }

    async fn unregister(
        &self,
        tenant: &str,
        trigger_id: &str,
        now: i64,
    ) -> Result<bool, StorageError> {
        let n = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE mail_triggers SET unregistered_at = $3, updated_at = $3
                 WHERE tenant = $1 AND trigger_id = $2 AND unregistered_at IS NULL",
            )
            .bind(tenant)
            .bind(trigger_id)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(failed("mail_triggers.unregister"))?;
        Ok(n > 0)
    }

    async fn record_fire(&self, f: &MailFire) -> Result<FireRecorded, StorageError> {
        const OP: &str = "mail_triggers.record_fire";
        // A repeat of a deduplicated message counts on the first fire, in the same statement.
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO mail_fires (fire_id, tenant, trigger_id, fired_at, outcome, run_id,
                    detail, sender, message_id, dedupe_key, duplicates, last_duplicate_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, NULL)
                 ON CONFLICT (trigger_id, dedupe_key) DO UPDATE SET
                    duplicates = mail_fires.duplicates + 1,
                    last_duplicate_at = excluded.fired_at",
            )
            .bind(&f.fire_id)
            .bind(&f.tenant)
            .bind(&f.trigger_id)
            .bind(f.fired_at)
            .bind(f.outcome.as_str())
            .bind(&f.run_id)
            .bind(&f.detail)
            .bind(&f.from)
            .bind(&f.message_id)
            .bind(&f.dedupe_key)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed(OP))?;
        let Some(key) = &f.dedupe_key else {
            return Ok(FireRecorded::New);
        };
        let sql = format!(
            "SELECT {FIRE_COLUMNS} FROM mail_fires WHERE trigger_id = $1 AND dedupe_key = $2"
        );
        let first = select!(self.db, write, fire_from_row, &sql, [&f.trigger_id, key])
            .map_err(failed(OP))?
            .into_iter()
            .next()
            .ok_or_else(|| StorageError::backend(OP, "the fire just written is missing"))?;
        Ok(if first.fire_id == f.fire_id {
            FireRecorded::New
        } else {
            FireRecorded::Duplicate(Box::new(first))
        })
    }

    async fn end_fire(
        &self,
        tenant: &str,
        fire_id: &str,
        end: &FireEnd,
    ) -> Result<(), StorageError> {
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE mail_fires SET outcome = $3, run_id = $4, detail = $5
                 WHERE tenant = $1 AND fire_id = $2",
            )
            .bind(tenant)
            .bind(fire_id)
            .bind(end.outcome.as_str())
            .bind(&end.run_id)
            .bind(&end.detail)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed("mail_triggers.end_fire"))
    }

    async fn count_start(
        &self,
        tenant: &str,
        trigger_id: &str,
        failed_start: bool,
        pause_after: u32,
        reason: &str,
        now: i64,
    ) -> Result<Option<MailTrigger>, StorageError> {
        const OP: &str = "mail_triggers.count_start";
        // Every SET expression reads the row as it was, on both databases.
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE mail_triggers SET last_fired_at = $3,
                    consecutive_failures = CASE WHEN $4 = 1 THEN consecutive_failures + 1 ELSE 0 END,
                    status_reason = CASE WHEN $4 = 1 AND consecutive_failures + 1 >= $5
                        AND status = 'active' THEN $6 ELSE status_reason END,
                    updated_at = CASE WHEN $4 = 1 AND consecutive_failures + 1 >= $5
                        AND status = 'active' THEN $3 ELSE updated_at END,
                    status = CASE WHEN $4 = 1 AND consecutive_failures + 1 >= $5
                        THEN 'paused' ELSE status END
                 WHERE tenant = $1 AND trigger_id = $2 AND unregistered_at IS NULL",
            )
            .bind(tenant)
            .bind(trigger_id)
            .bind(now)
            .bind(i64::from(failed_start))
            .bind(i64::from(pause_after))
            .bind(reason)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed(OP))?;
        let sql = format!(
            "SELECT {TRIGGER_COLUMNS} FROM mail_triggers
             WHERE tenant = $1 AND trigger_id = $2 AND unregistered_at IS NULL"
        );
        let rows = select!(self.db, write, trigger_from_row, &sql, [tenant, trigger_id])
            .map_err(failed(OP))?;
        Ok(rows.into_iter().next())
    }

    async fn fires(&self, q: &MailFireQuery) -> Result<Vec<MailFire>, StorageError> {
        let (before_at, before_id) = q.before.clone().unwrap_or((i64::MAX, String::new()));
        // No cursor: everything is before (i64::MAX, ''), ids being non-empty.
        let open = i64::from(q.before.is_none());
        let limit = i64::try_from(q.limit.max(1)).unwrap_or(i64::MAX);
        let sql = format!(
            "SELECT {FIRE_COLUMNS} FROM mail_fires
             WHERE tenant = $1 AND trigger_id = $2
               AND ($3 = 1 OR fired_at < $4 OR (fired_at = $4 AND fire_id < $5))
             ORDER BY fired_at DESC, fire_id DESC LIMIT $6"
        );
        select!(
            self.db,
            read,
            fire_from_row,
            &sql,
            [&q.tenant, &q.trigger_id, open, before_at, &before_id, limit]
        )
        .map_err(failed("mail_triggers.fires"))
    }
}
