//! The project directory ([`kindgi_core::ports::ProjectDirectory`]) in SQL: `projects`, one
//! row per stored project of a tenant (the Default project has a row only once renamed), and
//! `tenant_settings`, one row per tenant whose name or slug was changed. Slug uniqueness is
//! the tables' unique indexes, so the check and the write are one statement. Every statement
//! is written once for both databases ([`on_pool!`](crate::on_pool)).

use async_trait::async_trait;
use kindgi_core::StorageError;
pub use kindgi_core::ports::{DirectoryWrite, ProjectDirectory, ProjectRecord, TenantSettings};
use sqlx::Row;

use crate::{Database, StoreError};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS projects (
        tenant TEXT NOT NULL,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        slug TEXT NOT NULL,
        description TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, id)
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS projects_slug ON projects (tenant, slug)",
    "CREATE TABLE IF NOT EXISTS tenant_settings (
        tenant TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        slug TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS tenant_settings_slug ON tenant_settings (slug)",
];

const POSTGRES: &[&str] = SQLITE;

/// Creates the tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("projects", SQLITE, POSTGRES).await
}

/// The directory over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct ProjectStore {
    db: Database,
}

impl ProjectStore {
    pub fn new(db: Database) -> ProjectStore {
        ProjectStore { db }
    }
}

fn project_from_row<R>(row: &R) -> Result<ProjectRecord, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(ProjectRecord {
        tenant: row.try_get("tenant")?,
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        slug: row.try_get("slug")?,
        description: row.try_get("description")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn settings_from_row<R>(row: &R) -> Result<TenantSettings, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    Ok(TenantSettings {
        tenant: row.try_get("tenant")?,
        name: row.try_get("name")?,
        slug: row.try_get("slug")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// A write's outcome: a unique-slug violation is [`DirectoryWrite::SlugTaken`].
fn written(
    op: &'static str,
    result: Result<(), sqlx::Error>,
) -> Result<DirectoryWrite, StorageError> {
    match result.map_err(StoreError::query(op)) {
        Ok(()) => Ok(DirectoryWrite::Written),
        Err(e) if e.is_unique_violation() => Ok(DirectoryWrite::SlugTaken),
        Err(e) => Err(e.into_storage(op)),
    }
}

const PROJECT_COLUMNS: &str = "tenant, id, name, slug, description, created_at, updated_at";

#[async_trait]
impl ProjectDirectory for ProjectStore {
    async fn put_project(&self, p: &ProjectRecord) -> Result<DirectoryWrite, StorageError> {
        let result = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO projects (tenant, id, name, slug, description, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (tenant, id) DO UPDATE SET name = excluded.name,
                    slug = excluded.slug, description = excluded.description,
                    updated_at = excluded.updated_at",
            )
            .bind(&p.tenant)
            .bind(&p.id)
            .bind(&p.name)
            .bind(&p.slug)
            .bind(&p.description)
            .bind(p.created_at)
            .bind(p.updated_at)
            .execute(pool)
            .await
            .map(drop)
        });
        written("projects.put", result)
    }

    async fn project(&self, tenant: &str, id: &str) -> Result<Option<ProjectRecord>, StorageError> {
        let sql = format!("SELECT {PROJECT_COLUMNS} FROM projects WHERE tenant = $1 AND id = $2");
        crate::on_pool!(self.db, read, |pool| {
            match sqlx::query(&sql)
                .bind(tenant)
                .bind(id)
                .fetch_optional(pool)
                .await
            {
                Ok(Some(row)) => project_from_row(&row).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .map_err(|e| {
            StoreError::Query {
                op: "projects.get",
                source: e,
            }
            .into_storage("projects.get")
        })
    }

    async fn projects(
        &self,
        tenant: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProjectRecord>, StorageError> {
        let sql = format!(
            "SELECT {PROJECT_COLUMNS} FROM projects WHERE tenant = $1 AND id > $2 ORDER BY id LIMIT $3"
        );
        let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
        crate::on_pool!(self.db, read, |pool| {
            match sqlx::query(&sql)
                .bind(tenant)
                .bind(after.unwrap_or(""))
                .bind(limit)
                .fetch_all(pool)
                .await
            {
                Ok(rows) => rows.iter().map(project_from_row).collect(),
                Err(e) => Err(e),
            }
        })
        .map_err(|e| {
            StoreError::Query {
                op: "projects.list",
                source: e,
            }
            .into_storage("projects.list")
        })
    }

    async fn tenant_settings(&self, tenant: &str) -> Result<Option<TenantSettings>, StorageError> {
        crate::on_pool!(self.db, read, |pool| {
            match sqlx::query(
                "SELECT tenant, name, slug, created_at, updated_at FROM tenant_settings WHERE tenant = $1",
            )
            .bind(tenant)
            .fetch_optional(pool)
            .await
            {
                Ok(Some(row)) => settings_from_row(&row).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .map_err(|e| {
            StoreError::Query { op: "tenant_settings.get", source: e }
                .into_storage("tenant_settings.get")
        })
    }

    async fn put_tenant_settings(
        &self,
        s: &TenantSettings,
    ) -> Result<DirectoryWrite, StorageError> {
        let result = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO tenant_settings (tenant, name, slug, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (tenant) DO UPDATE SET name = excluded.name,
                    slug = excluded.slug, updated_at = excluded.updated_at",
            )
            .bind(&s.tenant)
            .bind(&s.name)
            .bind(&s.slug)
            .bind(s.created_at)
            .bind(s.updated_at)
            .execute(pool)
            .await
            .map(drop)
        });
        written("tenant_settings.put", result)
    }
}
