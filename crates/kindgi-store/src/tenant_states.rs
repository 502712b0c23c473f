//! Tenants' and projects' states ([`kindgi_core::ports::TenantStates`]) in SQL:
//! `tenant_states`, one row per tenant ever suspended or closed, and `project_suspensions`,
//! one row per suspended project (restoring deletes it). New tables, so the migration is
//! additive: a database without rows has every tenant and project active. "A second suspend
//! keeps the first" is the upsert's `COALESCE`, so two operators racing cannot move the time.
//! Every statement is written once for both databases ([`on_pool!`](crate::on_pool)).

use crate::{Database, StoreError};
use async_trait::async_trait;
use kindgi_core::StorageError;
pub use kindgi_core::ports::{Standing, Suspension, TenantStanding, TenantState, TenantStates};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS tenant_states (
        tenant TEXT PRIMARY KEY,
        closing_at BIGINT,
        suspended_at BIGINT,
        suspended_reason TEXT
    )",
    "CREATE TABLE IF NOT EXISTS project_suspensions (
        tenant TEXT NOT NULL,
        project_id TEXT NOT NULL,
        suspended_at BIGINT NOT NULL,
        reason TEXT,
        PRIMARY KEY (tenant, project_id)
    )",
];

const POSTGRES: &[&str] = SQLITE;

/// Creates the tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("tenant_states", SQLITE, POSTGRES).await
}

/// The states over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct TenantStateStore {
    db: Database,
}

impl TenantStateStore {
    pub fn new(db: Database) -> TenantStateStore {
        TenantStateStore { db }
    }
}

fn failed(op: &'static str) -> impl FnOnce(sqlx::Error) -> StorageError {
    move |source| StoreError::Query { op, source }.into_storage(op)
}

/// Project ids are UUIDs, compared without case.
fn project_key(project: &str) -> String {
    project.to_ascii_lowercase()
}

type StandingRow = (Option<i64>, Option<i64>, Option<String>);

#[async_trait]
impl TenantStates for TenantStateStore {
    async fn tenant_standing(&self, tenant: &str) -> Result<TenantStanding, StorageError> {
        let row: Option<StandingRow> = crate::on_pool!(self.db, read, |pool| {
            sqlx::query_as(
                "SELECT closing_at, suspended_at, suspended_reason FROM tenant_states WHERE tenant = $1",
            )
            .bind(tenant)
            .fetch_optional(pool)
            .await
        })
        .map_err(failed("tenant_states.get"))?;
        let Some((closing_at, suspended_at, reason)) = row else {
            return Ok(TenantStanding::default());
        };
        Ok(TenantStanding {
            closing_at,
            suspended: suspended_at.map(|at| Suspension { at, reason }),
        })
    }

    async fn standing(
        &self,
        tenant: &str,
        project: Option<&str>,
    ) -> Result<Standing, StorageError> {
        // One statement: the tenant's row and, when a project is named, its suspension.
        let project = project.map(project_key).unwrap_or_default();
        let rows: Vec<(String, Option<i64>, Option<i64>)> =
            crate::on_pool!(self.db, read, |pool| {
                sqlx::query_as(
                    "SELECT 't' AS what, closing_at, suspended_at FROM tenant_states WHERE tenant = $1
                     UNION ALL
                     SELECT 'p' AS what, NULL AS closing_at, suspended_at FROM project_suspensions
                         WHERE tenant = $1 AND project_id = $2",
                )
                .bind(tenant)
                .bind(&project)
                .fetch_all(pool)
                .await
            })
            .map_err(failed("tenant_states.standing"))?;
        let (mut closing, mut suspended, mut project_suspended) = (false, false, false);
        for (what, closing_at, suspended_at) in rows {
            if what == "t" {
                closing = closing_at.is_some();
                suspended = suspended_at.is_some();
            } else {
                project_suspended = true;
            }
        }
        Ok(if closing {
            Standing::TenantClosing
        } else if suspended {
            Standing::TenantSuspended
        } else if project_suspended {
            Standing::ProjectSuspended
        } else {
            Standing::Active
        })
    }

    async fn set_tenant_suspended(
        &self,
        tenant: &str,
        suspension: Option<&Suspension>,
    ) -> Result<TenantStanding, StorageError> {
        match suspension {
            Some(s) => crate::on_pool!(self.db, write, |pool| {
                sqlx::query(
                    "INSERT INTO tenant_states (tenant, closing_at, suspended_at, suspended_reason)
                     VALUES ($1, NULL, $2, $3)
                     ON CONFLICT (tenant) DO UPDATE SET
                        suspended_reason = CASE WHEN tenant_states.suspended_at IS NULL
                            THEN excluded.suspended_reason ELSE tenant_states.suspended_reason END,
                        suspended_at = COALESCE(tenant_states.suspended_at, excluded.suspended_at)",
                )
                .bind(tenant)
                .bind(s.at)
                .bind(&s.reason)
                .execute(pool)
                .await
                .map(drop)
            }),
            None => crate::on_pool!(self.db, write, |pool| {
                sqlx::query(
                    "UPDATE tenant_states SET suspended_at = NULL, suspended_reason = NULL
                     WHERE tenant = $1",
                )
                .bind(tenant)
                .execute(pool)
                .await
                .map(drop)
            }),
        }
        .map_err(failed("tenant_states.suspend"))?;
        self.tenant_standing(tenant).await
    }

    async fn close_tenant(&self, tenant: &str, at: i64) -> Result<TenantStanding, StorageError> {
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO tenant_states (tenant, closing_at, suspended_at, suspended_reason)
                 VALUES ($1, $2, NULL, NULL)
                 ON CONFLICT (tenant) DO UPDATE SET
                    closing_at = COALESCE(tenant_states.closing_at, excluded.closing_at)",
            )
            .bind(tenant)
            .bind(at)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed("tenant_states.close"))?;
        self.tenant_standing(tenant).await
    }

    async fn project_suspension(
        &self,
        tenant: &str,
        project: &str,
    ) -> Result<Option<Suspension>, StorageError> {
        let row: Option<(i64, Option<String>)> = crate::on_pool!(self.db, read, |pool| {
            sqlx::query_as(
                "SELECT suspended_at, reason FROM project_suspensions
                 WHERE tenant = $1 AND project_id = $2",
            )
            .bind(tenant)
            .bind(project_key(project))
            .fetch_optional(pool)
            .await
        })
        .map_err(failed("project_suspensions.get"))?;
        Ok(row.map(|(at, reason)| Suspension { at, reason }))
    }

    async fn set_project_suspended(
        &self,
        tenant: &str,
        project: &str,
        suspension: Option<&Suspension>,
    ) -> Result<Option<Suspension>, StorageError> {
        let project_id = project_key(project);
        match suspension {
            // A second suspend keeps the first row as it is.
            Some(s) => crate::on_pool!(self.db, write, |pool| {
                sqlx::query(
                    "INSERT INTO project_suspensions (tenant, project_id, suspended_at, reason)
                     VALUES ($1, $2, $3, $4)
                     ON CONFLICT (tenant, project_id) DO NOTHING",
                )
                .bind(tenant)
                .bind(&project_id)
                .bind(s.at)
                .bind(&s.reason)
                .execute(pool)
                .await
                .map(drop)
            }),
            None => crate::on_pool!(self.db, write, |pool| {
                sqlx::query("DELETE FROM project_suspensions WHERE tenant = $1 AND project_id = $2")
                    .bind(tenant)
                    .bind(&project_id)
                    .execute(pool)
                    .await
                    .map(drop)
            }),
        }
        .map_err(failed("project_suspensions.set"))?;
        self.project_suspension(tenant, project).await
    }
}
