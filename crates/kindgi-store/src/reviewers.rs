//! The reviewer roster ([`kindgi_core::ports::ReviewerRoster`]) in SQL: `reviewers`, one row
//! per `(tenant, user_id)` (a unique index, so two concurrent registrations of one person make
//! one row). Registering again changes the role and display name in place and keeps the id;
//! unregistering sets `deactivated_at`. Every statement is written once for both databases
//! ([`on_pool!`](crate::on_pool)).

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::approval::ReviewerRole;
use kindgi_core::ports::{NewReviewer, ReviewerRecord, ReviewerRoster, RosterQuery};
use sqlx::Row;

use crate::{Database, StoreError};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS reviewers (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        user_id TEXT NOT NULL,
        role TEXT NOT NULL,
        display_name TEXT,
        created_at BIGINT NOT NULL,
        deactivated_at BIGINT
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS reviewers_user ON reviewers (tenant, user_id)",
    "CREATE INDEX IF NOT EXISTS reviewers_tenant_created ON reviewers (tenant, created_at, id)",
];

const POSTGRES: &[&str] = SQLITE;

/// Creates the table (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("reviewers", SQLITE, POSTGRES).await
}

/// The roster over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct ReviewerStore {
    db: Database,
}

impl ReviewerStore {
    pub fn new(db: Database) -> ReviewerStore {
        ReviewerStore { db }
    }
}

const COLUMNS: &str = "id, tenant, user_id, role, display_name, created_at, deactivated_at";

fn from_row<R>(row: &R) -> Result<ReviewerRecord, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let role: String = row.try_get("role")?;
    let role = ReviewerRole::parse(&role)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown reviewer role {role:?}").into()))?;
    Ok(ReviewerRecord {
        id: row.try_get("id")?,
        tenant: row.try_get("tenant")?,
        user_id: row.try_get("user_id")?,
        role,
        display_name: row.try_get("display_name")?,
        created_at: row.try_get("created_at")?,
        deactivated_at: row.try_get("deactivated_at")?,
    })
}

fn failed(op: &'static str) -> impl FnOnce(sqlx::Error) -> StorageError {
    move |source| StoreError::Query { op, source }.into_storage(op)
}

/// The rows `sql` selects, its `$1…` bound to `binds` (text or integer).
macro_rules! select {
    ($db:expr, $pool_kind:ident, $sql:expr, [$($bind:expr),*]) => {
        crate::on_pool!($db, $pool_kind, |pool| {
            match sqlx::query($sql)$(.bind($bind))*.fetch_all(pool).await {
                Ok(rows) => rows.iter().map(from_row).collect::<Result<Vec<_>, _>>(),
                Err(e) => Err(e),
            }
        })
    };
}

impl ReviewerStore {
    async fn by_user_on_writer(
        &self,
        tenant: &str,
        user_id: &str,
        op: &'static str,
    ) -> Result<ReviewerRecord, StorageError> {
        let sql = format!("SELECT {COLUMNS} FROM reviewers WHERE tenant = $1 AND user_id = $2");
        let rows = select!(self.db, write, &sql, [tenant, user_id]).map_err(failed(op))?;
        rows.into_iter()
            .next()
            .ok_or_else(|| StorageError::backend(op, "the reviewer row just written is missing"))
    }

    async fn insert(&self, new: &NewReviewer, update: bool) -> Result<(), StorageError> {
        let op = if update {
            "reviewers.register"
        } else {
            "reviewers.register_if_absent"
        };
        let conflict = if update {
            "DO UPDATE SET role = excluded.role,
                display_name = COALESCE(excluded.display_name, reviewers.display_name),
                deactivated_at = NULL"
        } else {
            "DO NOTHING"
        };
        let sql = format!(
            "INSERT INTO reviewers (id, tenant, user_id, role, display_name, created_at, deactivated_at)
             VALUES ($1, $2, $3, $4, $5, $6, NULL)
             ON CONFLICT (tenant, user_id) {conflict}"
        );
        let id = uuid::Uuid::new_v4().to_string();
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(&sql)
                .bind(&id)
                .bind(&new.tenant)
                .bind(&new.user_id)
                .bind(new.role.as_str())
                .bind(&new.display_name)
                .bind(new.now)
                .execute(pool)
                .await
                .map(drop)
        })
        .map_err(failed(op))
    }
}

#[async_trait]
impl ReviewerRoster for ReviewerStore {
    async fn register(&self, new: &NewReviewer) -> Result<ReviewerRecord, StorageError> {
        self.insert(new, true).await?;
        self.by_user_on_writer(&new.tenant, &new.user_id, "reviewers.register")
            .await
    }

    async fn register_if_absent(&self, new: &NewReviewer) -> Result<ReviewerRecord, StorageError> {
        self.insert(new, false).await?;
        self.by_user_on_writer(&new.tenant, &new.user_id, "reviewers.register_if_absent")
            .await
    }

    async fn reviewer(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ReviewerRecord>, StorageError> {
        let sql = format!("SELECT {COLUMNS} FROM reviewers WHERE tenant = $1 AND id = $2");
        let rows = select!(self.db, read, &sql, [tenant, id]).map_err(failed("reviewers.get"))?;
        Ok(rows.into_iter().next())
    }

    async fn reviewer_for_user(
        &self,
        tenant: &str,
        user_id: &str,
    ) -> Result<Option<ReviewerRecord>, StorageError> {
        let sql = format!("SELECT {COLUMNS} FROM reviewers WHERE tenant = $1 AND user_id = $2");
        let rows = select!(self.db, read, &sql, [tenant, user_id])
            .map_err(failed("reviewers.for_user"))?;
        Ok(rows.into_iter().next())
    }

    async fn reviewers(&self, q: &RosterQuery) -> Result<Vec<ReviewerRecord>, StorageError> {
        let (after_at, after_id) = q.after.clone().unwrap_or((i64::MIN, String::new()));
        let role = q.role.map(|r| r.as_str()).unwrap_or("");
        let limit = i64::try_from(q.limit.max(1)).unwrap_or(i64::MAX);
        let sql = format!(
            "SELECT {COLUMNS} FROM reviewers WHERE tenant = $1
               AND ($2 = '' OR role = $2)
               AND (created_at > $3 OR (created_at = $3 AND id > $4))
             ORDER BY created_at, id LIMIT $5"
        );
        select!(
            self.db,
            read,
            &sql,
            [&q.tenant, role, after_at, &after_id, limit]
        )
        .map_err(failed("reviewers.list"))
    }

    async fn unregister(
        &self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<ReviewerRecord>, StorageError> {
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE reviewers SET deactivated_at = $3
                 WHERE tenant = $1 AND id = $2 AND deactivated_at IS NULL",
            )
            .bind(tenant)
            .bind(id)
            .bind(now)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed("reviewers.unregister"))?;
        let sql = format!("SELECT {COLUMNS} FROM reviewers WHERE tenant = $1 AND id = $2");
        let rows =
            select!(self.db, write, &sql, [tenant, id]).map_err(failed("reviewers.unregister"))?;
        Ok(rows.into_iter().next())
    }
}

/// Puts the person `user_id` of `tenant` on the roster as an `admin` reviewer unless the roster
/// already names them (registered or unregistered): what minting the operator's key for a person
/// does (`TokenStore::create_for_user`), so the operator's person decides approvals.
pub async fn ensure_admin(db: &Database, tenant: &str, user_id: &str) -> Result<(), StorageError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    ReviewerStore::new(db.clone())
        .register_if_absent(&NewReviewer {
            tenant: tenant.to_owned(),
            user_id: user_id.to_owned(),
            role: ReviewerRole::Admin,
            display_name: None,
            now,
        })
        .await
        .map(drop)
}
