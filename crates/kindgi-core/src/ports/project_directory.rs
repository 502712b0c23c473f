//! The project directory port: a tenant's stored projects (beyond its Default project, which
//! is derived from the tenant and needs no row) and the tenant's own settings (its display
//! name and slug, what `PATCH /v1/tenant` changes). The API asks it; kindgi-store keeps it in
//! SQLite or PostgreSQL.
//!
//! Slugs are unique per tenant (projects) and across tenants (tenant slugs); a write that
//! would take a slug already taken answers [`DirectoryWrite::SlugTaken`], decided by the
//! store's unique index so two concurrent writes cannot both win.

use async_trait::async_trait;

use crate::error::StorageError;

/// One stored project of a tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRecord {
    /// The tenant's name (as keys carry it, not its wire UUID).
    pub tenant: String,
    /// The project id (a UUID; the Default project's is `ids::default_project_id`).
    pub id: String,
    pub name: String,
    /// Unique among the tenant's projects.
    pub slug: String,
    pub description: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds.
    pub updated_at: i64,
}

/// A tenant's settings: what the tenant is called and its slug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantSettings {
    pub tenant: String,
    pub name: String,
    /// Unique across tenants.
    pub slug: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds.
    pub updated_at: i64,
}

/// What a write to the directory did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectoryWrite {
    /// Written.
    Written,
    /// Another row (of this tenant for a project, of any tenant for a tenant) has the slug.
    SlugTaken,
}

/// A tenant's projects and settings.
#[async_trait]
pub trait ProjectDirectory: Send + Sync + std::fmt::Debug {
    /// Inserts `project`, or replaces the row with its id (a rename writes the whole record).
    async fn put_project(&self, project: &ProjectRecord) -> Result<DirectoryWrite, StorageError>;

    /// The stored project `id` of `tenant`.
    async fn project(&self, tenant: &str, id: &str) -> Result<Option<ProjectRecord>, StorageError>;

    /// `tenant`'s stored projects by id, after `after`, at most `limit`.
    async fn projects(
        &self,
        tenant: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProjectRecord>, StorageError>;

    /// `tenant`'s stored settings (`None`: never changed).
    async fn tenant_settings(&self, tenant: &str) -> Result<Option<TenantSettings>, StorageError>;

    /// Inserts or replaces `settings`.
    async fn put_tenant_settings(
        &self,
        settings: &TenantSettings,
    ) -> Result<DirectoryWrite, StorageError>;
}
