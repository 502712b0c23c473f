//! Service accounts (platform-api.md §10.3): named, non-human principals of a tenant
//! (`service_account:<id>`) that act through API keys minted for them. Each has grants —
//! tenant admin, tenant member, or a role on one project — kept as a JSON array. An
//! unregistered account is a tombstone: no grants, and its keys stop authenticating (the key
//! lookup in [`crate::tokens`] joins this table). Names are unique among a tenant's active
//! accounts (a partial unique index, so a name frees up when its account is unregistered).

use serde::{Deserialize, Serialize};
use sqlx::Row as _;
use thiserror::Error;

use crate::epoch::EpochKind;
use crate::{Database, StoreError, now_millis};

const TABLE: &str = "CREATE TABLE IF NOT EXISTS service_accounts (
        id              TEXT PRIMARY KEY,
        tenant          TEXT NOT NULL,
        name            TEXT NOT NULL,
        description     TEXT,
        grants          TEXT NOT NULL,
        created_by      TEXT,
        created_at      BIGINT NOT NULL,
        unregistered_at BIGINT
    )";

const INDEXES: &[&str] = &[
    "CREATE UNIQUE INDEX IF NOT EXISTS service_accounts_active_name ON service_accounts (tenant, name) WHERE unregistered_at IS NULL",
    "CREATE INDEX IF NOT EXISTS service_accounts_tenant_created ON service_accounts (tenant, created_at, id)",
];

/// Create the `service_accounts` table (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    let mut all = vec![TABLE];
    all.extend_from_slice(INDEXES);
    db.apply_schema("service_accounts", &all, &all).await
}

/// One grant (`OA:ServiceAccountGrant`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Grant {
    TenantAdmin,
    TenantMember,
    Project {
        #[serde(rename = "projectId")]
        project_id: String,
        role: String,
    },
}

impl Grant {
    /// True when `self` and `other` name the same thing to hold (a project grant is one per
    /// project, whatever its role).
    pub fn same_slot(&self, other: &Grant) -> bool {
        match (self, other) {
            (Grant::Project { project_id: a, .. }, Grant::Project { project_id: b, .. }) => a == b,
            (a, b) => a == b,
        }
    }
}

/// True when a stored grants array holds `tenant-admin`.
pub fn grants_tenant_admin(grants_json: &str) -> bool {
    serde_json::from_str::<Vec<Grant>>(grants_json).is_ok_and(|g| g.contains(&Grant::TenantAdmin))
}

/// A service account (`OA:ServiceAccount`); times are ms since the epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAccount {
    pub id: String,
    pub tenant: String,
    pub name: String,
    pub description: Option<String>,
    pub grants: Vec<Grant>,
    pub created_by: Option<String>,
    pub created_at: i64,
    pub unregistered_at: Option<i64>,
}

/// A service-account operation that did not happen.
#[derive(Debug, Error)]
pub enum ServiceAccountError {
    #[error("a service account named {name:?} already exists in this tenant")]
    NameTaken { name: String },
    #[error("no service account with id {id:?}")]
    NotFound { id: String },
    #[error("service account {id:?} is unregistered")]
    Unregistered { id: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

const COLUMNS: &str =
    "id, tenant, name, description, grants, created_by, created_at, unregistered_at";

macro_rules! account_from_row {
    ($row:expr) => {{
        let row = &$row;
        let corrupt = |e: sqlx::Error| StoreError::Corrupt {
            what: "service_accounts row".into(),
            reason: e.to_string(),
        };
        let grants: String = row.try_get("grants").map_err(corrupt)?;
        ServiceAccount {
            id: row.try_get("id").map_err(corrupt)?,
            tenant: row.try_get("tenant").map_err(corrupt)?,
            name: row.try_get("name").map_err(corrupt)?,
            description: row.try_get("description").map_err(corrupt)?,
            grants: serde_json::from_str(&grants).map_err(|e| StoreError::Corrupt {
                what: "service_accounts.grants".into(),
                reason: e.to_string(),
            })?,
            created_by: row.try_get("created_by").map_err(corrupt)?,
            created_at: row.try_get("created_at").map_err(corrupt)?,
            unregistered_at: row.try_get("unregistered_at").map_err(corrupt)?,
        }
    }};
}

/// Which accounts [`ServiceAccountStore::list`] returns (oldest first).
#[derive(Debug, Clone, Default)]
pub struct AccountFilter {
    pub include_unregistered: bool,
    /// Only accounts after this `(created_at, id)` (the previous page's last).
    pub after: Option<(i64, String)>,
    pub limit: usize,
}

/// A new account's fields (already checked by the caller).
#[derive(Debug, Clone)]
pub struct NewAccount {
    pub tenant: String,
    pub name: String,
    pub description: Option<String>,
    pub grants: Vec<Grant>,
    pub created_by: Option<String>,
}

/// Service-account storage over a [`Database`].
#[derive(Debug, Clone)]
pub struct ServiceAccountStore {
    db: Database,
}

fn grants_text(grants: &[Grant]) -> String {
    serde_json::to_string(grants).unwrap_or_else(|_| "[]".into())
}

impl ServiceAccountStore {
    pub fn new(db: Database) -> ServiceAccountStore {
        ServiceAccountStore { db }
    }

    /// Create an account; a name taken by an active account is [`ServiceAccountError::NameTaken`].
    pub async fn create(&self, new: &NewAccount) -> Result<ServiceAccount, ServiceAccountError> {
        let mut grants: Vec<Grant> = Vec::new();
        for g in &new.grants {
            grants.retain(|h| !h.same_slot(g));
            grants.push(g.clone());
        }
        let account = ServiceAccount {
            id: uuid::Uuid::new_v4().to_string(),
            tenant: new.tenant.clone(),
            name: new.name.clone(),
            description: new.description.clone(),
            grants,
            created_by: new.created_by.clone(),
            created_at: now_millis(),
            unregistered_at: None,
        };
        let text = grants_text(&account.grants);
        let result = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO service_accounts (id, tenant, name, description, grants, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(&account.id)
            .bind(&account.tenant)
            .bind(&account.name)
            .bind(&account.description)
            .bind(&text)
            .bind(&account.created_by)
            .bind(account.created_at)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(StoreError::query("service_accounts.create"));
        match result {
            Ok(()) => Ok(account),
            Err(e) if e.is_unique_violation() => Err(ServiceAccountError::NameTaken {
                name: new.name.clone(),
            }),
            Err(e) => Err(e.into()),
        }
    }

    /// `tenant`'s account `id`, unregistered or not.
    pub async fn get(&self, tenant: &str, id: &str) -> Result<Option<ServiceAccount>, StoreError> {
        crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM service_accounts WHERE tenant = $1 AND id = $2"
            ))
            .bind(tenant)
            .bind(id)
            .fetch_optional(pool)
            .await
            .map_err(StoreError::query("service_accounts.get"))?;
            match row {
                None => Ok(None),
                Some(row) => Ok(Some(account_from_row!(row))),
            }
        })
    }

    /// `tenant`'s accounts, oldest first.
    pub async fn list(
        &self,
        tenant: &str,
        filter: &AccountFilter,
    ) -> Result<Vec<ServiceAccount>, StoreError> {
        let (after_at, after_id) = match &filter.after {
            Some((at, id)) => (Some(*at), Some(id.clone())),
            None => (None, None),
        };
        let limit = i64::try_from(filter.limit).unwrap_or(i64::MAX);
        crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM service_accounts WHERE tenant = $1 \
                 AND ($2 OR unregistered_at IS NULL) \
                 AND ($3 IS NULL OR created_at > $3 OR (created_at = $3 AND id > $4)) \
                 ORDER BY created_at, id LIMIT $5"
            ))
            .bind(tenant)
            .bind(filter.include_unregistered)
            .bind(after_at)
            .bind(&after_id)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("service_accounts.list"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(account_from_row!(row));
            }
            Ok(out)
        })
    }

    /// Add `grant` (replacing the grant of the same slot); refused on an unregistered account.
    pub async fn grant(
        &self,
        tenant: &str,
        id: &str,
        grant: &Grant,
    ) -> Result<ServiceAccount, ServiceAccountError> {
        self.change_grants(tenant, id, |grants| {
            grants.retain(|g| !g.same_slot(grant));
            grants.push(grant.clone());
        })
        .await
    }

    /// Remove the grant in `grant`'s slot (a no-op when there is none).
    pub async fn ungrant(
        &self,
        tenant: &str,
        id: &str,
        grant: &Grant,
    ) -> Result<ServiceAccount, ServiceAccountError> {
        self.change_grants(tenant, id, |grants| grants.retain(|g| !g.same_slot(grant)))
            .await
    }

    /// Read, change and write an active account's grants in one transaction.
    async fn change_grants(
        &self,
        tenant: &str,
        id: &str,
        change: impl Fn(&mut Vec<Grant>),
    ) -> Result<ServiceAccount, ServiceAccountError> {
        let op = "service_accounts.grant";
        crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            let row = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM service_accounts WHERE tenant = $1 AND id = $2"
            ))
            .bind(tenant)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::query(op))?;
            let Some(row) = row else {
                return Err(ServiceAccountError::NotFound { id: id.to_owned() });
            };
            let mut account = account_from_row!(row);
            if account.unregistered_at.is_some() {
                return Err(ServiceAccountError::Unregistered { id: id.to_owned() });
            }
            change(&mut account.grants);
            sqlx::query("UPDATE service_accounts SET grants = $1 WHERE tenant = $2 AND id = $3")
                .bind(grants_text(&account.grants))
                .bind(tenant)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query(op))?;
            tx.commit().await.map_err(StoreError::query(op))?;
            self.db.epochs().bump(EpochKind::Keys);
            Ok(account)
        })
    }

    /// Tombstone an account: no grants, its keys no longer authenticate. Twice is not an error.
    pub async fn unregister(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<ServiceAccount, ServiceAccountError> {
        let now = now_millis();
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE service_accounts SET unregistered_at = COALESCE(unregistered_at, $1), grants = '[]' WHERE tenant = $2 AND id = $3",
            )
            .bind(now)
            .bind(tenant)
            .bind(id)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(StoreError::query("service_accounts.unregister"))?;
        self.db.epochs().bump(EpochKind::Keys);
        self.get(tenant, id)
            .await?
            .ok_or_else(|| ServiceAccountError::NotFound { id: id.to_owned() })
    }
}
