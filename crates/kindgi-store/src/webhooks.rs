//! Webhook triggers and their fires ([`kindgi_core::ports::WebhookStore`]) in SQL.
//!
//! * `webhook_triggers` — one row per trigger; the structured settings (owner, input,
//!   signature, secret scope, unattended tools) as JSON text; `failures_in_row` counts refused
//!   or failed starts toward the auto-pause; `suppressed_since`/`suppressed_count` are the
//!   refusals of this minute that were only counted; `unregistered_at` tombstones it.
//! * `webhook_fires` — one row per delivery taken, with `UNIQUE (trigger_id, dedupe_key)`:
//!   two servers on one database that take the same delivery at once make one fire (the
//!   loser bumps `duplicates` on the winner's). NULL keys (no dedupe) never collide.
//!
//! Every statement is written once for both databases ([`on_pool!`](crate::on_pool)).

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::ports::{FireQuery, WebhookQuery, WebhookStore};
use kindgi_core::trigger::{AUTO_PAUSE_AFTER, FireOutcome, TriggerStatus};
use kindgi_core::webhook::{
    FireFinish, FireRecorded, WebhookFire, WebhookTrigger, auto_pause_reason,
};
use sqlx::Row;

use crate::{Database, StoreError};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS webhook_triggers (
        trigger_id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL,
        tenant TEXT NOT NULL,
        project_id TEXT NOT NULL,
        flow_id TEXT NOT NULL,
        flow_version TEXT NOT NULL,
        owner TEXT NOT NULL,
        input TEXT,
        hmac_secret_name TEXT NOT NULL,
        hmac_secret_scope TEXT,
        signature TEXT NOT NULL,
        delivery_id_header TEXT,
        body_limit_bytes BIGINT NOT NULL,
        rate_limit_per_minute BIGINT NOT NULL,
        label TEXT,
        status TEXT NOT NULL,
        status_reason TEXT,
        tools_allowed TEXT NOT NULL,
        failures_in_row BIGINT NOT NULL DEFAULT 0,
        suppressed_since BIGINT,
        suppressed_count BIGINT NOT NULL DEFAULT 0,
        last_fired_at BIGINT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        unregistered_at BIGINT
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS webhook_triggers_webhook ON webhook_triggers (webhook_id)",
    "CREATE INDEX IF NOT EXISTS webhook_triggers_tenant ON webhook_triggers (tenant, created_at, trigger_id)",
    "CREATE TABLE IF NOT EXISTS webhook_fires (
        fire_id TEXT PRIMARY KEY,
        trigger_id TEXT NOT NULL,
        tenant TEXT NOT NULL,
        fired_at BIGINT NOT NULL,
        outcome TEXT NOT NULL,
        run_id TEXT,
        detail TEXT,
        counts_toward_pause BOOLEAN,
        dedupe_key TEXT,
        duplicates BIGINT NOT NULL DEFAULT 0,
        last_duplicate_at BIGINT,
        UNIQUE (trigger_id, dedupe_key)
    )",
    "CREATE INDEX IF NOT EXISTS webhook_fires_trigger ON webhook_fires (trigger_id, fired_at, fire_id)",
];

const POSTGRES: &[&str] = SQLITE;

/// Creates the tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("webhooks", SQLITE, POSTGRES).await
}

/// The triggers and fires over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct WebhookTriggerStore {
    db: Database,
}

impl WebhookTriggerStore {
    pub fn new(db: Database) -> WebhookTriggerStore {
        WebhookTriggerStore { db }
    }
}

const TRIGGER_COLUMNS: &str = "trigger_id, webhook_id, tenant, project_id, flow_id, flow_version, owner, input, hmac_secret_name, hmac_secret_scope, signature, delivery_id_header, body_limit_bytes, rate_limit_per_minute, label, status, status_reason, tools_allowed, failures_in_row, suppressed_since, suppressed_count, last_fired_at, created_at, updated_at, unregistered_at";

const FIRE_COLUMNS: &str = "fire_id, trigger_id, tenant, fired_at, outcome, run_id, detail, counts_toward_pause, dedupe_key, duplicates, last_duplicate_at";

fn failed(op: &'static str) -> impl FnOnce(sqlx::Error) -> StorageError {
    move |source| StoreError::Query { op, source }.into_storage(op)
}

fn decode<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, sqlx::Error> {
    serde_json::from_str(text).map_err(|e| sqlx::Error::Decode(format!("{what}: {e}").into()))
}

fn encode<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// The `owner` column: the owner and the key it acts with (which the wire never shows).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredOwner {
    #[serde(flatten)]
    owner: kindgi_core::trigger::TriggerOwner,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_id: Option<String>,
}

fn stored_owner(t: &WebhookTrigger) -> String {
    encode(&StoredOwner {
        owner: t.owner.clone(),
        key_id: t.owner_key_id.clone(),
    })
}

fn to_u32(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

fn trigger_from_row<R>(row: &R) -> Result<WebhookTrigger, sqlx::Error>
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
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown trigger status {status:?}").into()))?;
    let owner: String = row.try_get("owner")?;
    let owner: StoredOwner = decode("owner", &owner)?;
    let signature: String = row.try_get("signature")?;
    let tools: String = row.try_get("tools_allowed")?;
    let input: Option<String> = row.try_get("input")?;
    let scope: Option<String> = row.try_get("hmac_secret_scope")?;
    let since: Option<i64> = row.try_get("suppressed_since")?;
    let count: i64 = row.try_get("suppressed_count")?;
    Ok(WebhookTrigger {
        trigger_id: row.try_get("trigger_id")?,
        webhook_id: row.try_get("webhook_id")?,
        tenant: row.try_get("tenant")?,
        project_id: row.try_get("project_id")?,
        flow_id: row.try_get("flow_id")?,
        flow_version: row.try_get("flow_version")?,
        owner: owner.owner,
        owner_key_id: owner.key_id,
        input: input.map(|i| decode("input", &i)).transpose()?,
        hmac_secret_name: row.try_get("hmac_secret_name")?,
        hmac_secret_scope: scope
            .map(|s| decode::<Option<_>>("hmac_secret_scope", &s))
            .transpose()?
            .flatten(),
        signature: decode("signature", &signature)?,
        delivery_id_header: row.try_get("delivery_id_header")?,
        body_limit_bytes: to_u32(row.try_get("body_limit_bytes")?),
        rate_limit_per_minute: to_u32(row.try_get("rate_limit_per_minute")?),
        label: row.try_get("label")?,
        status,
        status_reason: row.try_get("status_reason")?,
        tools_allowed_unattended: decode("tools_allowed", &tools)?,
        failures_in_row: to_u32(row.try_get("failures_in_row")?),
        suppressed: since.map(|s| (s, u64::try_from(count.max(0)).unwrap_or(0))),
        last_fired_at: row.try_get("last_fired_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        unregistered_at: row.try_get("unregistered_at")?,
    })
}

fn fire_from_row<R>(row: &R) -> Result<WebhookFire, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<bool>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let outcome: String = row.try_get("outcome")?;
    let outcome = FireOutcome::parse(&outcome)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown fire outcome {outcome:?}").into()))?;
    Ok(WebhookFire {
        fire_id: row.try_get("fire_id")?,
        trigger_id: row.try_get("trigger_id")?,
        tenant: row.try_get("tenant")?,
        fired_at: row.try_get("fired_at")?,
        outcome,
        run_id: row.try_get("run_id")?,
        detail: row.try_get("detail")?,
        counts_toward_pause: row.try_get("counts_toward_pause")?,
        dedupe_key: row.try_get("dedupe_key")?,
        duplicates: to_u32(row.try_get("duplicates")?),
        last_duplicate_at: row.try_get("last_duplicate_at")?,
    })
}

/// The rows `sql` selects with `decoder`, its `$1…` bound to `binds`.
macro_rules! select {
    ($db:expr, $pool_kind:ident, $decoder:ident, $sql:expr, [$($bind:expr),*]) => {
        crate::on_pool!($db, $pool_kind, |pool| {
            match sqlx::query($sql)$(.bind($bind))*.fetch_all(pool).await {
                Ok(rows) => rows.iter().map($decoder).collect::<Result<Vec<_>, _>>(),
                Err(e) => Err(e),
            }
        })
    };
}

/// Runs `sql` with `binds` on the writer; the rows it touched.
macro_rules! execute {
    ($db:expr, $sql:expr, [$($bind:expr),*]) => {
        crate::on_pool!($db, write, |pool| {
            sqlx::query($sql)$(.bind($bind))*.execute(pool).await.map(|r| r.rows_affected())
        })
    };
}

fn limit_of(n: usize) -> i64 {
    i64::try_from(n.max(1)).unwrap_or(i64::MAX)
}

#[async_trait]
impl WebhookStore for WebhookTriggerStore {
    async fn register(&self, t: &WebhookTrigger) -> Result<(), StorageError> {
        const OP: &str = "webhooks.register";
        let sql = format!(
            "INSERT INTO webhook_triggers ({TRIGGER_COLUMNS}) VALUES
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
              $19, $20, $21, $22, $23, $24, $25)"
        );
        let (since, count) = t.suppressed.map_or((None, 0), |(s, n)| {
            (Some(s), i64::try_from(n).unwrap_or(i64::MAX))
        });
        let result = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(&sql)
                .bind(&t.trigger_id)
                .bind(&t.webhook_id)
                .bind(&t.tenant)
                .bind(&t.project_id)
                .bind(&t.flow_id)
                .bind(&t.flow_version)
                .bind(stored_owner(t))
                .bind(t.input.as_ref().map(encode))
                .bind(&t.hmac_secret_name)
                .bind(Some(encode(&t.hmac_secret_scope)))
                .bind(encode(&t.signature))
                .bind(&t.delivery_id_header)
                .bind(i64::from(t.body_limit_bytes))
                .bind(i64::from(t.rate_limit_per_minute))
                .bind(&t.label)
                .bind(t.status.as_str())
                .bind(&t.status_reason)
                .bind(encode(&t.tools_allowed_unattended))
                .bind(i64::from(t.failures_in_row))
                .bind(since)
                .bind(count)
                .bind(t.last_fired_at)
                .bind(t.created_at)
                .bind(t.updated_at)
                .bind(t.unregistered_at)
                .execute(pool)
                .await
                .map(drop)
        });
        match result {
            Ok(()) => Ok(()),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(StorageError::Conflict {
                    op: OP,
                    what: format!("webhook trigger {}", t.trigger_id),
                    source: Some(Box::new(sqlx::Error::Database(e))),
                })
            }
            Err(e) => Err(failed(OP)(e)),
        }
    }

    async fn trigger(
        &self,
        tenant: &str,
        trigger_id: &str,
    ) -> Result<Option<WebhookTrigger>, StorageError> {
        let sql = format!(
            "SELECT {TRIGGER_COLUMNS} FROM webhook_triggers WHERE tenant = $1 AND trigger_id = $2"
        );
        let rows = select!(self.db, read, trigger_from_row, &sql, [tenant, trigger_id])
            .map_err(failed("webhooks.get"))?;
        Ok(rows.into_iter().next())
    }

    async fn by_webhook_id(
        &self,
        webhook_id: &str,
    ) -> Result<Option<WebhookTrigger>, StorageError> {
        let sql = format!("SELECT {TRIGGER_COLUMNS} FROM webhook_triggers WHERE webhook_id = $1");
        let rows = select!(self.db, read, trigger_from_row, &sql, [webhook_id])
            .map_err(failed("webhooks.by_webhook_id"))?;
        Ok(rows.into_iter().next())
    }

    async fn triggers(&self, q: &WebhookQuery) -> Result<Vec<WebhookTrigger>, StorageError> {
        let (before_at, before_id) = q.before.clone().unwrap_or((i64::MAX, String::new()));
        let status = q.status.map(TriggerStatus::as_str).unwrap_or("");
        let project = q.project_id.clone().unwrap_or_default();
        let sql = format!(
            "SELECT {TRIGGER_COLUMNS} FROM webhook_triggers
             WHERE tenant = $1 AND unregistered_at IS NULL
               AND ($2 = '' OR status = $2) AND ($3 = '' OR project_id = $3)
               AND (created_at < $4 OR (created_at = $4 AND ($5 = '' OR trigger_id < $5)))
             ORDER BY created_at DESC, trigger_id DESC LIMIT $6"
        );
        select!(
            self.db,
            read,
            trigger_from_row,
            &sql,
            [
                &q.tenant,
                status,
                &project,
                before_at,
                &before_id,
                limit_of(q.limit)
            ]
        )
        .map_err(failed("webhooks.list"))
    }

    async fn update(&self, t: &WebhookTrigger) -> Result<bool, StorageError> {
        let sql = "UPDATE webhook_triggers SET flow_version = $3, owner = $4, input = $5,
                hmac_secret_name = $6, hmac_secret_scope = $7, signature = $8,
                delivery_id_header = $9, body_limit_bytes = $10, rate_limit_per_minute = $11,
                label = $12, tools_allowed = $13, updated_at = $14
             WHERE tenant = $1 AND trigger_id = $2 AND unregistered_at IS NULL";
        let n = execute!(
            self.db,
            sql,
            [
                &t.tenant,
                &t.trigger_id,
                &t.flow_version,
                stored_owner(t),
                t.input.as_ref().map(encode),
                &t.hmac_secret_name,
                Some(encode(&t.hmac_secret_scope)),
                encode(&t.signature),
                &t.delivery_id_header,
                i64::from(t.body_limit_bytes),
                i64::from(t.rate_limit_per_minute),
                &t.label,
                encode(&t.tools_allowed_unattended),
                t.updated_at
            ]
        )
        .map_err(failed("webhooks.update"))?;
        Ok(n > 0)
    }

    async fn set_status(
        &self,
        tenant: &str,
        trigger_id: &str,
        from: TriggerStatus,
        to: TriggerStatus,
        now: i64,
    ) -> Result<bool, StorageError> {
        // Resuming clears why the runtime paused it and the failures it counted.
        let sql = if to == TriggerStatus::Active {
            "UPDATE webhook_triggers SET status = $4, updated_at = $5, status_reason = NULL,
                failures_in_row = 0
             WHERE tenant = $1 AND trigger_id = $2 AND status = $3 AND unregistered_at IS NULL"
        } else {
            "UPDATE webhook_triggers SET status = $4, updated_at = $5
             WHERE tenant = $1 AND trigger_id = $2 AND status = $3 AND unregistered_at IS NULL"
        };
        let n = execute!(
            self.db,
            sql,
            [tenant, trigger_id, from.as_str(), to.as_str(), now]
        )
        .map_err(failed("webhooks.set_status"))?;
        Ok(n > 0)
    }

    async fn unregister(
        &self,
        tenant: &str,
        trigger_id: &str,
        now: i64,
    ) -> Result<bool, StorageError> {
        let n = execute!(
            self.db,
            "UPDATE webhook_triggers SET unregistered_at = $3, updated_at = $3
             WHERE tenant = $1 AND trigger_id = $2 AND unregistered_at IS NULL",
            [tenant, trigger_id, now]
        )
        .map_err(failed("webhooks.unregister"))?;
        Ok(n > 0)
    }

    async fn record_fire(&self, f: &WebhookFire) -> Result<FireRecorded, StorageError> {
        const OP: &str = "webhooks.record_fire";
        let sql = format!(
            "INSERT INTO webhook_fires ({FIRE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, NULL)
             ON CONFLICT (trigger_id, dedupe_key) DO NOTHING"
        );
        let inserted = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(&sql)
                .bind(&f.fire_id)
                .bind(&f.trigger_id)
                .bind(&f.tenant)
                .bind(f.fired_at)
                .bind(f.outcome.as_str())
                .bind(&f.run_id)
                .bind(&f.detail)
                .bind(f.counts_toward_pause)
                .bind(&f.dedupe_key)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(failed(OP))?;
        if inserted > 0 {
            execute!(
                self.db,
                "UPDATE webhook_triggers SET last_fired_at = $2 WHERE trigger_id = $1",
                [&f.trigger_id, f.fired_at]
            )
            .map_err(failed(OP))?;
            return Ok(FireRecorded::New);
        }
        let key = f.dedupe_key.clone().unwrap_or_default();
        execute!(
            self.db,
            "UPDATE webhook_fires SET duplicates = duplicates + 1, last_duplicate_at = $3
             WHERE trigger_id = $1 AND dedupe_key = $2",
            [&f.trigger_id, &key, f.fired_at]
        )
        .map_err(failed(OP))?;
        let sql = format!(
            "SELECT {FIRE_COLUMNS} FROM webhook_fires WHERE trigger_id = $1 AND dedupe_key = $2"
        );
        let rows = select!(self.db, write, fire_from_row, &sql, [&f.trigger_id, &key])
            .map_err(failed(OP))?;
        let first = rows
            .into_iter()
            .next()
            .ok_or_else(|| StorageError::backend(OP, "the first fire of a duplicate is missing"))?;
        Ok(FireRecorded::Duplicate {
            first_fire_id: first.fire_id,
        })
    }

    async fn finish_fire(
        &self,
        tenant: &str,
        trigger_id: &str,
        fire_id: &str,
        finish: &FireFinish,
    ) -> Result<bool, StorageError> {
        const OP: &str = "webhooks.finish_fire";
        execute!(
            self.db,
            "UPDATE webhook_fires SET outcome = $3, run_id = $4, detail = $5, counts_toward_pause = $6
             WHERE tenant = $1 AND fire_id = $2",
            [
                tenant,
                fire_id,
                finish.outcome.as_str(),
                &finish.run_id,
                &finish.detail,
                Some(finish.counts_toward_pause)
            ]
        )
        .map_err(failed(OP))?;
        let counted = matches!(finish.outcome, FireOutcome::Refused | FireOutcome::Failed)
            && finish.counts_toward_pause;
        if finish.outcome == FireOutcome::Started {
            execute!(
                self.db,
                "UPDATE webhook_triggers SET failures_in_row = 0
                 WHERE tenant = $1 AND trigger_id = $2 AND failures_in_row <> 0",
                [tenant, trigger_id]
            )
            .map_err(failed(OP))?;
            return Ok(false);
        }
        if !counted {
            return Ok(false);
        }
        execute!(
            self.db,
            "UPDATE webhook_triggers SET failures_in_row = failures_in_row + 1
             WHERE tenant = $1 AND trigger_id = $2",
            [tenant, trigger_id]
        )
        .map_err(failed(OP))?;
        // One statement decides the pause, so two servers counting the fifth failure at once
        // pause it once.
        let reason = auto_pause_reason(finish.detail.as_deref().unwrap_or("unknown"));
        let paused = execute!(
            self.db,
            "UPDATE webhook_triggers SET status = 'paused', status_reason = $3, updated_at = $4
             WHERE tenant = $1 AND trigger_id = $2 AND status = 'active'
               AND unregistered_at IS NULL AND failures_in_row >= $5",
            [
                tenant,
                trigger_id,
                &reason,
                finish.now,
                i64::from(AUTO_PAUSE_AFTER)
            ]
        )
        .map_err(failed(OP))?;
        Ok(paused > 0)
    }

    async fn count_suppressed(
        &self,
        tenant: &str,
        trigger_id: &str,
        minute: i64,
    ) -> Result<(), StorageError> {
        execute!(
            self.db,
            "UPDATE webhook_triggers SET
                suppressed_count = CASE WHEN suppressed_since = $3 THEN suppressed_count + 1 ELSE 1 END,
                suppressed_since = $3
             WHERE tenant = $1 AND trigger_id = $2",
            [tenant, trigger_id, minute]
        )
        .map_err(failed("webhooks.count_suppressed"))
        .map(drop)
    }

    async fn fires(&self, q: &FireQuery) -> Result<Vec<WebhookFire>, StorageError> {
        let (before_at, before_id) = q.before.clone().unwrap_or((i64::MAX, String::new()));
        let sql = format!(
            "SELECT {FIRE_COLUMNS} FROM webhook_fires
             WHERE tenant = $1 AND trigger_id = $2
               AND (fired_at < $3 OR (fired_at = $3 AND ($4 = '' OR fire_id < $4)))
             ORDER BY fired_at DESC, fire_id DESC LIMIT $5"
        );
        select!(
            self.db,
            read,
            fire_from_row,
            &sql,
            [
                &q.tenant,
                &q.trigger_id,
                before_at,
                &before_id,
                limit_of(q.limit)
            ]
        )
        .map_err(failed("webhooks.fires"))
    }

    async fn fire(&self, tenant: &str, fire_id: &str) -> Result<Option<WebhookFire>, StorageError> {
        let sql =
            format!("SELECT {FIRE_COLUMNS} FROM webhook_fires WHERE tenant = $1 AND fire_id = $2");
        let rows = select!(self.db, read, fire_from_row, &sql, [tenant, fire_id])
            .map_err(failed("webhooks.fire"))?;
        Ok(rows.into_iter().next())
    }
}
