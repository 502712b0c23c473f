//! The reviewer roster port (platform-api.md §4, "Reviewers"): who of a tenant may decide
//! approvals, and at which tier. One row per `(tenant, user)`: registering again changes the
//! role (and display name) and keeps the id; unregistering is soft (`deactivated_at`), so the
//! decisions a reviewer made still name a row. The API asks it; kindgi-store keeps it in SQLite
//! or PostgreSQL.

use async_trait::async_trait;

use crate::approval::ReviewerRole;
use crate::error::StorageError;

/// One roster row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewerRecord {
    /// The reviewer id (a UUID).
    pub id: String,
    /// The tenant's name (as keys carry it, not its wire UUID).
    pub tenant: String,
    /// The person's user id (the `<id>` of `user:<id>`).
    pub user_id: String,
    pub role: ReviewerRole,
    pub display_name: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds; set once unregistered.
    pub deactivated_at: Option<i64>,
}

/// What to register: `(tenant, user_id)` is the row's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReviewer {
    pub tenant: String,
    pub user_id: String,
    pub role: ReviewerRole,
    pub display_name: Option<String>,
    /// Unix milliseconds (the new row's `created_at`).
    pub now: i64,
}

/// A page of the roster: oldest first, after `(created_at, id)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RosterQuery {
    pub tenant: String,
    pub role: Option<ReviewerRole>,
    pub after: Option<(i64, String)>,
    /// At most this many rows.
    pub limit: usize,
}

/// A tenant's reviewers.
#[async_trait]
pub trait ReviewerRoster: Send + Sync + std::fmt::Debug {
    /// Registers `new.user_id`: a new row, or the existing row of that person with the new role
    /// and display name (reactivated if it was unregistered). Returns the row as stored.
    async fn register(&self, new: &NewReviewer) -> Result<ReviewerRecord, StorageError>;

    /// Registers `new` only when the person has no row at all (an unregistered one stays
    /// unregistered). Returns the person's row either way.
    async fn register_if_absent(&self, new: &NewReviewer) -> Result<ReviewerRecord, StorageError>;

    /// The row `id` of `tenant`.
    async fn reviewer(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ReviewerRecord>, StorageError>;

    /// The row of the person `user_id` of `tenant` (active or not).
    async fn reviewer_for_user(
        &self,
        tenant: &str,
        user_id: &str,
    ) -> Result<Option<ReviewerRecord>, StorageError>;

    /// A page of `query.tenant`'s rows (unregistered ones included).
    async fn reviewers(&self, query: &RosterQuery) -> Result<Vec<ReviewerRecord>, StorageError>;

    /// Marks the row `id` unregistered at `now` (kept when it already was). `None`: no such row.
    async fn unregister(
        &self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<ReviewerRecord>, StorageError>;
}
