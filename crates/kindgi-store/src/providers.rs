//! Registered model providers ([`kindgi_core::ports::ProviderRegistry`]) in SQL: one row per
//! `(tenant, id)` — the `ProviderMetadata` as registered (JSON), the adapter, its non-secret
//! `adapter_config` (JSON), the secret reference by name (`secret_env`, `secret_name`; never
//! a value), `send_traceparent`, and the created/unregistered times.
//!
//! Unregistering is a tombstone (`unregistered_at`); registering the id again replaces the
//! tombstoned row. The check "an active row has this id" and the write are one upsert, so two
//! concurrent registrations cannot both win. Every statement is written once for both
//! databases ([`on_pool!`](crate::on_pool)).

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::ports::{ProviderRegistration, ProviderRegistry, ProviderWrite, SecretRef};
use serde_json::{Map, Value};
use sqlx::Row;

use crate::{Database, StoreError};

const SQLITE: &[&str] = &["CREATE TABLE IF NOT EXISTS model_providers (
        tenant TEXT NOT NULL,
        id TEXT NOT NULL,
        adapter_id TEXT NOT NULL,
        metadata TEXT NOT NULL,
        adapter_config TEXT NOT NULL DEFAULT '{}',
        secret_env TEXT,
        secret_name TEXT,
        send_traceparent BOOLEAN NOT NULL DEFAULT FALSE,
        created_at BIGINT NOT NULL,
        unregistered_at BIGINT,
        PRIMARY KEY (tenant, id)
    )"];

const POSTGRES: &[&str] = SQLITE;

/// Creates the table (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("providers", SQLITE, POSTGRES).await
}

/// The registry over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct ProviderStore {
    db: Database,
}

impl ProviderStore {
    pub fn new(db: Database) -> ProviderStore {
        ProviderStore { db }
    }
}

const COLUMNS: &str = "tenant, id, adapter_id, metadata, adapter_config, secret_env, secret_name, send_traceparent, created_at, unregistered_at";

/// The row's text columns and numbers, before the JSON is parsed.
struct RawRow {
    tenant: String,
    id: String,
    adapter_id: String,
    metadata: String,
    adapter_config: String,
    secret_env: Option<String>,
    secret_name: Option<String>,
    send_traceparent: bool,
    created_at: i64,
    unregistered_at: Option<i64>,
}

fn raw_from_row<R>(row: &R) -> Result<RawRow, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> bool: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(RawRow {
        tenant: row.try_get("tenant")?,
        id: row.try_get("id")?,
        adapter_id: row.try_get("adapter_id")?,
        metadata: row.try_get("metadata")?,
        adapter_config: row.try_get("adapter_config")?,
        secret_env: row.try_get("secret_env")?,
        secret_name: row.try_get("secret_name")?,
        send_traceparent: row.try_get("send_traceparent")?,
        created_at: row.try_get("created_at")?,
        unregistered_at: row.try_get("unregistered_at")?,
    })
}

impl RawRow {
    fn parse(self) -> Result<ProviderRegistration, StorageError> {
        let corrupt = |what: &str, e: serde_json::Error| StorageError::Corrupt {
            what: format!("model provider {:?} {what}", self.id),
            reason: e.to_string(),
            source: None,
        };
        let metadata: Value =
            serde_json::from_str(&self.metadata).map_err(|e| corrupt("metadata", e))?;
        let adapter_config: Map<String, Value> =
            serde_json::from_str(&self.adapter_config).map_err(|e| corrupt("adapter_config", e))?;
        let secret_ref = match (self.secret_env, self.secret_name) {
            (Some(env_name), Some(name)) => Some(SecretRef { env_name, name }),
            _ => None,
        };
        Ok(ProviderRegistration {
            tenant: self.tenant,
            id: self.id,
            adapter_id: self.adapter_id,
            metadata,
            secret_ref,
            adapter_config,
            send_traceparent: self.send_traceparent,
            created_at: self.created_at,
            unregistered_at: self.unregistered_at,
        })
    }
}

fn query_error(op: &'static str) -> impl FnOnce(sqlx::Error) -> StorageError {
    move |source| StoreError::Query { op, source }.into_storage(op)
}

#[async_trait]
impl ProviderRegistry for ProviderStore {
    async fn register(&self, r: &ProviderRegistration) -> Result<ProviderWrite, StorageError> {
        let metadata = r.metadata.to_string();
        let config = Value::Object(r.adapter_config.clone()).to_string();
        let (env, name) = match &r.secret_ref {
            Some(s) => (Some(s.env_name.as_str()), Some(s.name.as_str())),
            None => (None, None),
        };
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO model_providers (tenant, id, adapter_id, metadata, adapter_config, secret_env, secret_name, send_traceparent, created_at, unregistered_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL)
                 ON CONFLICT (tenant, id) DO UPDATE SET
                    adapter_id = excluded.adapter_id, metadata = excluded.metadata,
                    adapter_config = excluded.adapter_config, secret_env = excluded.secret_env,
                    secret_name = excluded.secret_name, send_traceparent = excluded.send_traceparent,
                    created_at = excluded.created_at, unregistered_at = NULL
                 WHERE model_providers.unregistered_at IS NOT NULL",
            )
            .bind(&r.tenant)
            .bind(&r.id)
            .bind(&r.adapter_id)
            .bind(&metadata)
            .bind(&config)
            .bind(env)
            .bind(name)
            .bind(r.send_traceparent)
            .bind(r.created_at)
            .execute(pool)
            .await
            .map(|q| q.rows_affected())
        })
        .map_err(query_error("providers.register"))?;
        Ok(if affected > 0 {
            ProviderWrite::Registered
        } else {
            ProviderWrite::AlreadyRegistered
        })
    }

    async fn provider(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ProviderRegistration>, StorageError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM model_providers WHERE tenant = $1 AND id = $2 AND unregistered_at IS NULL"
        );
        let raw = crate::on_pool!(self.db, read, |pool| {
            match sqlx::query(&sql)
                .bind(tenant)
                .bind(id)
                .fetch_optional(pool)
                .await
            {
                Ok(Some(row)) => raw_from_row(&row).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .map_err(query_error("providers.get"))?;
        raw.map(RawRow::parse).transpose()
    }

    async fn providers(
        &self,
        tenant: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProviderRegistration>, StorageError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM model_providers WHERE tenant = $1 AND id > $2 AND unregistered_at IS NULL ORDER BY id LIMIT $3"
        );
        let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
        let rows = crate::on_pool!(self.db, read, |pool| {
            match sqlx::query(&sql)
                .bind(tenant)
                .bind(after.unwrap_or(""))
                .bind(limit)
                .fetch_all(pool)
                .await
            {
                Ok(rows) => rows.iter().map(raw_from_row).collect::<Result<Vec<_>, _>>(),
                Err(e) => Err(e),
            }
        })
        .map_err(query_error("providers.list"))?;
        rows.into_iter().map(RawRow::parse).collect()
    }

    async fn unregister(&self, tenant: &str, id: &str, at: i64) -> Result<bool, StorageError> {
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE model_providers SET unregistered_at = $3
                 WHERE tenant = $1 AND id = $2 AND unregistered_at IS NULL",
            )
            .bind(tenant)
            .bind(id)
            .bind(at)
            .execute(pool)
            .await
            .map(|q| q.rows_affected())
        })
        .map_err(query_error("providers.unregister"))?;
        Ok(affected > 0)
    }
}
