//! Registered MCP endpoints (platform-api.md §6): one row per `(tenant, endpointId)`, the
//! endpoint as registered (JSON, without its scope), the scope it was registered in, and
//! the tool ids its last `tools/list` sync put into the tool registry (so unregistering can
//! retire exactly those).
//!
//! Unregistering is a soft delete (`unregistered_at`): reads then miss it, and registering
//! the same id again replaces the row (the reference brings its tools back). An active id
//! registered twice is refused ([`RegisterOutcome::AlreadyRegistered`]); the check and the
//! write are one upsert, so two concurrent registrations cannot both win. Every statement is
//! written once for both databases ([`on_pool!`](crate::on_pool)).

use serde_json::Value;
use sqlx::Row;

use crate::{Database, StoreError, now_millis};

const SQLITE: &[&str] = &["CREATE TABLE IF NOT EXISTS mcp_endpoints (
        tenant_id TEXT NOT NULL,
        endpoint_id TEXT NOT NULL,
        name TEXT NOT NULL,
        transport TEXT NOT NULL,
        body TEXT NOT NULL,
        scope_kind TEXT NOT NULL,
        scope_id TEXT NOT NULL DEFAULT '',
        tool_ids TEXT NOT NULL DEFAULT '[]',
        sync_error TEXT,
        created_at BIGINT NOT NULL,
        unregistered_at BIGINT,
        PRIMARY KEY (tenant_id, endpoint_id)
    )"];

const POSTGRES: &[&str] = SQLITE;

/// Creates the table (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("mcp_endpoints", SQLITE, POSTGRES).await
}

/// One registered endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct McpEndpointRecord {
    pub tenant_id: String,
    pub endpoint_id: String,
    pub name: String,
    /// `stdio`, `http-sse` or `streamable-http`.
    pub transport: String,
    /// The endpoint as registered: `endpointId, name, transport, config, secretRef?, auth?,
    /// instructions?, metadata?, sendTraceparent?` (never a secret's value).
    pub body: Value,
    /// `tenant`, `org` or `project`.
    pub scope_kind: String,
    /// The org or project id; empty for `tenant`.
    pub scope_id: String,
    /// The tool ids the last sync registered (`<endpointId>.<tool>`).
    pub tool_ids: Vec<String>,
    /// Why the last sync registered no tools, if it failed.
    pub sync_error: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub unregistered_at: Option<i64>,
}

/// What [`McpEndpointStore::register`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisterOutcome {
    /// Written (new, or replacing an unregistered row).
    Registered,
    /// An active endpoint already has that id.
    AlreadyRegistered,
}

/// A page request for [`McpEndpointStore::list`].
#[derive(Debug, Clone, Default)]
pub struct McpEndpointFilter {
    /// Only this transport.
    pub transport: Option<String>,
    /// Only endpoints registered at one of these `(scope_kind, scope_id)` pairs (`scope_id`
    /// empty for `tenant`); empty = any scope.
    pub scopes: Vec<(String, String)>,
    /// Start after this endpoint id.
    pub after: Option<String>,
    /// Rows to return (at least 1).
    pub limit: usize,
}

/// The store over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct McpEndpointStore {
    db: Database,
}

const COLUMNS: &str = "tenant_id, endpoint_id, name, transport, body, scope_kind, scope_id, tool_ids, sync_error, created_at, unregistered_at";

fn record_from_row<R>(row: &R) -> Result<McpEndpointRecord, StoreError>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let decode = |source: sqlx::Error| StoreError::Query {
        op: "mcp_endpoints.decode",
        source,
    };
    let endpoint_id: String = row.try_get("endpoint_id").map_err(&decode)?;
    let corrupt = |what: &str, e: serde_json::Error| StoreError::Corrupt {
        what: format!("mcp endpoint {endpoint_id:?} {what}"),
        reason: e.to_string(),
    };
    let body: String = row.try_get("body").map_err(&decode)?;
    let tools: String = row.try_get("tool_ids").map_err(&decode)?;
    Ok(McpEndpointRecord {
        tenant_id: row.try_get("tenant_id").map_err(&decode)?,
        name: row.try_get("name").map_err(&decode)?,
        transport: row.try_get("transport").map_err(&decode)?,
        body: serde_json::from_str(&body).map_err(|e| corrupt("body", e))?,
        scope_kind: row.try_get("scope_kind").map_err(&decode)?,
        scope_id: row.try_get("scope_id").map_err(&decode)?,
        tool_ids: serde_json::from_str(&tools).map_err(|e| corrupt("tool_ids", e))?,
        sync_error: row.try_get("sync_error").map_err(&decode)?,
        created_at: row.try_get("created_at").map_err(&decode)?,
        unregistered_at: row.try_get("unregistered_at").map_err(&decode)?,
        endpoint_id,
    })
}

impl McpEndpointStore {
    pub fn new(db: Database) -> McpEndpointStore {
        McpEndpointStore { db }
    }

    /// Registers `record` (its `created_at` is set now, its sync fields cleared). An
    /// unregistered row with the same id is replaced; an active one is left alone.
    pub async fn register(
        &self,
        record: &McpEndpointRecord,
    ) -> Result<RegisterOutcome, StoreError> {
        let body = record.body.to_string();
        let now = now_millis();
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO mcp_endpoints (tenant_id, endpoint_id, name, transport, body, scope_kind, scope_id, tool_ids, sync_error, created_at, unregistered_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, '[]', NULL, $8, NULL)
                 ON CONFLICT (tenant_id, endpoint_id) DO UPDATE SET
                    name = excluded.name, transport = excluded.transport, body = excluded.body,
                    scope_kind = excluded.scope_kind, scope_id = excluded.scope_id,
                    tool_ids = '[]', sync_error = NULL, created_at = excluded.created_at,
                    unregistered_at = NULL
                 WHERE mcp_endpoints.unregistered_at IS NOT NULL",
            )
            .bind(&record.tenant_id)
            .bind(&record.endpoint_id)
            .bind(&record.name)
            .bind(&record.transport)
            .bind(&body)
            .bind(&record.scope_kind)
            .bind(&record.scope_id)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("mcp_endpoints.register"))?;
        Ok(if affected > 0 {
            RegisterOutcome::Registered
        } else {
            RegisterOutcome::AlreadyRegistered
        })
    }

    /// Records what a sync did: the tool ids it registered, or why it registered none.
    pub async fn record_sync(
        &self,
        tenant: &str,
        endpoint_id: &str,
        tool_ids: &[String],
        sync_error: Option<&str>,
    ) -> Result<bool, StoreError> {
        let tools = serde_json::to_string(tool_ids).unwrap_or_else(|_| "[]".to_owned());
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE mcp_endpoints SET tool_ids = $3, sync_error = $4
                 WHERE tenant_id = $1 AND endpoint_id = $2 AND unregistered_at IS NULL",
            )
            .bind(tenant)
            .bind(endpoint_id)
            .bind(&tools)
            .bind(sync_error)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("mcp_endpoints.record_sync"))?;
        Ok(affected > 0)
    }

    /// The active endpoint `endpoint_id` of `tenant`.
    pub async fn get(
        &self,
        tenant: &str,
        endpoint_id: &str,
    ) -> Result<Option<McpEndpointRecord>, StoreError> {
        crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM mcp_endpoints WHERE tenant_id = $1 AND endpoint_id = $2 AND unregistered_at IS NULL"
            ))
            .bind(tenant)
            .bind(endpoint_id)
            .fetch_optional(pool)
            .await
            .map_err(StoreError::query("mcp_endpoints.get"))?;
            row.as_ref().map(record_from_row).transpose()
        })
    }

    /// A page of `tenant`'s active endpoints, by id.
    pub async fn list(
        &self,
        tenant: &str,
        filter: &McpEndpointFilter,
    ) -> Result<Vec<McpEndpointRecord>, StoreError> {
        let mut sql = format!(
            "SELECT {COLUMNS} FROM mcp_endpoints WHERE tenant_id = $1 AND unregistered_at IS NULL"
        );
        let mut n = 1;
        let mut next = || {
            n += 1;
            format!("${n}")
        };
        if filter.transport.is_some() {
            sql.push_str(&format!(" AND transport = {}", next()));
        }
        if !filter.scopes.is_empty() {
            let alternatives: Vec<String> = filter
                .scopes
                .iter()
                .map(|_| format!("(scope_kind = {} AND scope_id = {})", next(), next()))
                .collect();
            sql.push_str(&format!(" AND ({})", alternatives.join(" OR ")));
        }
        if filter.after.is_some() {
            sql.push_str(&format!(" AND endpoint_id > {}", next()));
        }
        let limit = next();
        sql.push_str(&format!(" ORDER BY endpoint_id ASC LIMIT {limit}"));
        let limit = i64::try_from(filter.limit.max(1)).unwrap_or(i64::MAX);
        crate::on_pool!(self.db, read, |pool| {
            let mut q = sqlx::query(&sql).bind(tenant);
            if let Some(t) = &filter.transport {
                q = q.bind(t);
            }
            for (kind, id) in &filter.scopes {
                q = q.bind(kind).bind(id);
            }
            if let Some(id) = &filter.after {
                q = q.bind(id);
            }
            let rows = q
                .bind(limit)
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("mcp_endpoints.list"))?;
            rows.iter().map(record_from_row).collect()
        })
    }

    /// Every active endpoint of every tenant (for a host to sync them at boot).
    pub async fn all_active(&self) -> Result<Vec<McpEndpointRecord>, StoreError> {
        crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM mcp_endpoints WHERE unregistered_at IS NULL ORDER BY tenant_id, endpoint_id"
            ))
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("mcp_endpoints.all_active"))?;
            rows.iter().map(record_from_row).collect()
        })
    }

    /// Unregisters an active endpoint; returns it (with the tool ids to retire), or `None`
    /// when there is no active endpoint with that id.
    pub async fn unregister(
        &self,
        tenant: &str,
        endpoint_id: &str,
    ) -> Result<Option<McpEndpointRecord>, StoreError> {
        let Some(record) = self.get(tenant, endpoint_id).await? else {
            return Ok(None);
        };
        let now = now_millis();
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE mcp_endpoints SET unregistered_at = $3
                 WHERE tenant_id = $1 AND endpoint_id = $2 AND unregistered_at IS NULL",
            )
            .bind(tenant)
            .bind(endpoint_id)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("mcp_endpoints.unregister"))?;
        Ok((affected > 0).then_some(McpEndpointRecord {
            unregistered_at: Some(now),
            ..record
        }))
    }
}
