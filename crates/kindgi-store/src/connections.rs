//! Connections ([`kindgi_core::ports::ConnectionStore`]) in SQL: `connections`, one row per
//! `(tenant, app, holder)` (a unique index, so two concurrent adds make one row). Adding again
//! replaces the permissions, tokens and refresh client in place, keeps the id and un-revokes;
//! revoking sets `revoked_at` and erases the sealed tokens.
//!
//! The access and refresh tokens are sealed with the secrets key ([`crate::seal`], as secret
//! values are): AES-256-GCM, associated data binding the tenant, the connection's id, which
//! token it is, the app and a `token_version` every token write bumps, so a sealed token
//! copied to another row or column does not open. The other columns are plain: they are what
//! `GET /v1/connections` shows. Every statement is written once for both databases
//! ([`on_pool!`](crate::on_pool)).

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::connection::{
    ConnectionHolder, ConnectionQuery, ConnectionRecord, ConnectionTokens, NewConnection,
    RefreshClient, normalize_permissions,
};
use kindgi_core::ports::ConnectionStore;
use sqlx::Row;

use crate::seal::{KEY_HOWTO, SealContext, SealKey};
use crate::{Database, StoreError};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS connections (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        app TEXT NOT NULL,
        holder_kind TEXT NOT NULL,
        holder_id TEXT NOT NULL,
        permissions TEXT NOT NULL,
        access_sealed TEXT,
        refresh_sealed TEXT,
        token_version BIGINT NOT NULL,
        expires_at BIGINT,
        token_url TEXT,
        client_id TEXT,
        client_secret_name TEXT,
        created_by TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        revoked_at BIGINT
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS connections_holder ON connections (tenant, app, holder_kind, holder_id)",
    "CREATE INDEX IF NOT EXISTS connections_tenant_created ON connections (tenant, created_at, id)",
];

const POSTGRES: &[&str] = SQLITE;

/// Creates the table (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("connections", SQLITE, POSTGRES).await
}

/// The connections over a migrated [`Database`], sealing tokens under `key` (without one,
/// adding and resolving fail saying how to configure it; listing works).
#[derive(Debug, Clone)]
pub struct ConnectionsStore {
    db: Database,
    key: Option<SealKey>,
}

impl ConnectionsStore {
    pub fn new(db: Database, key: Option<SealKey>) -> ConnectionsStore {
        ConnectionsStore { db, key }
    }

    fn key(&self, op: &'static str) -> Result<&SealKey, StorageError> {
        self.key.as_ref().ok_or_else(|| {
            StorageError::backend(
                op,
                format!("connections' tokens are sealed with the secrets key, and this runtime has none: {KEY_HOWTO}"),
            )
        })
    }
}

const COLUMNS: &str = "id, tenant, app, holder_kind, holder_id, permissions, refresh_sealed, \
    token_version, expires_at, token_url, client_id, client_secret_name, created_by, \
    created_at, updated_at, revoked_at";

/// A row: the record, the token version and the sealed tokens.
struct Row_ {
    record: ConnectionRecord,
    version: i64,
    access: Option<String>,
    refresh: Option<String>,
}

fn from_row<R>(row: &R) -> Result<Row_, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let kind: String = row.try_get("holder_kind")?;
    let holder_id: String = row.try_get("holder_id")?;
    let holder = ConnectionHolder::from_columns(&kind, &holder_id)
        .ok_or_else(|| sqlx::Error::Decode(format!("unknown connection holder {kind:?}").into()))?;
    let permissions: String = row.try_get("permissions")?;
    let permissions: Vec<String> = serde_json::from_str(&permissions)
        .map_err(|e| sqlx::Error::Decode(format!("connection permissions: {e}").into()))?;
    let token_url: Option<String> = row.try_get("token_url")?;
    let client_id: Option<String> = row.try_get("client_id")?;
    let refresh = match (token_url, client_id) {
        (Some(token_url), Some(client_id)) => Some(RefreshClient {
            token_url,
            client_id,
            client_secret_name: row.try_get("client_secret_name")?,
        }),
        _ => None,
    };
    let refresh_sealed: Option<String> = row.try_get("refresh_sealed")?;
    let access: Option<String> = match row.try_get::<Option<String>, _>("access_sealed") {
        Ok(a) => a,
        // The list's columns leave it out.
        Err(sqlx::Error::ColumnNotFound(_)) => None,
        Err(e) => return Err(e),
    };
    Ok(Row_ {
        record: ConnectionRecord {
            id: row.try_get("id")?,
            tenant: row.try_get("tenant")?,
            app: row.try_get("app")?,
            holder,
            permissions,
            expires_at: row.try_get("expires_at")?,
            refreshable: refresh_sealed.is_some(),
            refresh,
            created_by: row.try_get("created_by")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            revoked_at: row.try_get("revoked_at")?,
        },
        version: row.try_get("token_version")?,
        access,
        refresh: refresh_sealed,
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

/// What a sealed token is bound to.
fn context<'a>(
    tenant: &'a str,
    id: &'a str,
    which: &'a str,
    app: &'a str,
    version: i64,
) -> SealContext<'a> {
    SealContext {
        tenant,
        scope_kind: "connection",
        scope_id: id,
        env_name: which,
        name: app,
        version,
    }
}

const ACCESS: &str = "access";
const REFRESH: &str = "refresh";

impl ConnectionsStore {
    /// Seals `tokens` for the row `id` at `version`.
    fn seal(
        &self,
        op: &'static str,
        tenant: &str,
        id: &str,
        app: &str,
        version: i64,
        tokens: &ConnectionTokens,
    ) -> Result<(String, Option<String>), StorageError> {
        let key = self.key(op)?;
        let access = key
            .seal(
                &context(tenant, id, ACCESS, app, version),
                &tokens.access_token,
            )
            .map_err(StorageError::backend_of(op))?;
        let refresh = match &tokens.refresh_token {
            Some(r) => Some(
                key.seal(&context(tenant, id, REFRESH, app, version), r)
                    .map_err(StorageError::backend_of(op))?,
            ),
            None => None,
        };
        Ok((access, refresh))
    }

    fn open(&self, op: &'static str, row: &Row_) -> Result<Option<ConnectionTokens>, StorageError> {
        let Some(access) = &row.access else {
            return Ok(None);
        };
        let key = self.key(op)?;
        let r = &row.record;
        let opened = |which: &str, sealed: &str| {
            key.open(
                &context(&r.tenant, &r.id, which, &r.app, row.version),
                sealed,
            )
            .map(|v| v.expose().to_owned())
            .map_err(StorageError::backend_of(op))
        };
        Ok(Some(ConnectionTokens {
            access_token: opened(ACCESS, access)?,
            refresh_token: match &row.refresh {
                Some(s) => Some(opened(REFRESH, s)?),
                None => None,
            },
            expires_at: r.expires_at,
        }))
    }

    async fn by_holder(
        &self,
        tenant: &str,
        app: &str,
        holder: &ConnectionHolder,
        op: &'static str,
    ) -> Result<Option<Row_>, StorageError> {
        let sql = format!(
            "SELECT {COLUMNS}, access_sealed FROM connections
             WHERE tenant = $1 AND app = $2 AND holder_kind = $3 AND holder_id = $4"
        );
        let holder_id = holder.user_id().unwrap_or("");
        let rows = select!(
            self.db,
            write,
            &sql,
            [tenant, app, holder.as_str(), holder_id]
        )
        .map_err(failed(op))?;
        Ok(rows.into_iter().next())
    }

    async fn by_id(
        &self,
        tenant: &str,
        id: &str,
        op: &'static str,
    ) -> Result<Option<Row_>, StorageError> {
        let sql = format!(
            "SELECT {COLUMNS}, access_sealed FROM connections WHERE tenant = $1 AND id = $2"
        );
        let rows = select!(self.db, write, &sql, [tenant, id]).map_err(failed(op))?;
        Ok(rows.into_iter().next())
    }

    async fn insert(&self, new: &NewConnection, permissions: &str) -> Result<(), StorageError> {
        const OP: &str = "connections.add";
        let id = uuid::Uuid::new_v4().to_string();
        let (access, refresh) = self.seal(OP, &new.tenant, &id, &new.app, 1, &new.tokens)?;
        let r = new.refresh.as_ref();
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO connections (id, tenant, app, holder_kind, holder_id, permissions,
                    access_sealed, refresh_sealed, token_version, expires_at, token_url, client_id,
                    client_secret_name, created_by, created_at, updated_at, revoked_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10, $11, $12, $13, $14, $14, NULL)",
            )
            .bind(&id)
            .bind(&new.tenant)
            .bind(&new.app)
            .bind(new.holder.as_str())
            .bind(new.holder.user_id().unwrap_or(""))
            .bind(permissions)
            .bind(&access)
            .bind(&refresh)
            .bind(new.tokens.expires_at)
            .bind(r.map(|r| r.token_url.as_str()))
            .bind(r.map(|r| r.client_id.as_str()))
            .bind(r.and_then(|r| r.client_secret_name.as_deref()))
            .bind(&new.created_by)
            .bind(new.now)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed(OP))
    }

    async fn replace(
        &self,
        row: &Row_,
        new: &NewConnection,
        permissions: &str,
    ) -> Result<bool, StorageError> {
        const OP: &str = "connections.add";
        let version = row.version + 1;
        let id = &row.record.id;
        let (access, refresh) = self.seal(OP, &new.tenant, id, &new.app, version, &new.tokens)?;
        let r = new.refresh.as_ref();
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE connections SET permissions = $3, access_sealed = $4, refresh_sealed = $5,
                    token_version = $6, expires_at = $7, token_url = $8, client_id = $9,
                    client_secret_name = $10, updated_at = $11, revoked_at = NULL
                 WHERE tenant = $1 AND id = $2 AND token_version = $12",
            )
            .bind(&new.tenant)
            .bind(id)
            .bind(permissions)
            .bind(&access)
            .bind(&refresh)
            .bind(version)
            .bind(new.tokens.expires_at)
            .bind(r.map(|r| r.token_url.as_str()))
            .bind(r.map(|r| r.client_id.as_str()))
            .bind(r.and_then(|r| r.client_secret_name.as_deref()))
            .bind(new.now)
            .bind(row.version)
            .execute(pool)
            .await
            .map(|r| r.rows_affected() == 1)
        })
        .map_err(failed(OP))
    }
}

/// How often an add retries when a concurrent add or refresh wrote the row first.
const ADD_ATTEMPTS: usize = 4;

#[async_trait]
impl ConnectionStore for ConnectionsStore {
    async fn add(&self, new: &NewConnection) -> Result<ConnectionRecord, StorageError> {
        const OP: &str = "connections.add";
        self.key(OP)?;
        let permissions = serde_json::to_string(&normalize_permissions(new.permissions.clone()))
            .map_err(StorageError::backend_of(OP))?;
        for _ in 0..ADD_ATTEMPTS {
            match self
                .by_holder(&new.tenant, &new.app, &new.holder, OP)
                .await?
            {
                Some(row) => {
                    if !self.replace(&row, new, &permissions).await? {
                        continue;
                    }
                }
                None => match self.insert(new, &permissions).await {
                    Ok(()) => {}
                    // A concurrent add made the row first: replace it instead.
                    Err(StorageError::Conflict { .. }) => continue,
                    Err(e) => return Err(e),
                },
            }
            if let Some(row) = self
                .by_holder(&new.tenant, &new.app, &new.holder, OP)
                .await?
            {
                return Ok(row.record);
            }
        }
        Err(StorageError::backend(
            OP,
            "the connection kept changing while it was added; try again",
        ))
    }

    async fn connection(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ConnectionRecord>, StorageError> {
        let sql = format!("SELECT {COLUMNS} FROM connections WHERE tenant = $1 AND id = $2");
        let rows = select!(self.db, read, &sql, [tenant, id]).map_err(failed("connections.get"))?;
        Ok(rows.into_iter().next().map(|r| r.record))
    }

    async fn connections(
        &self,
        q: &ConnectionQuery,
    ) -> Result<Vec<ConnectionRecord>, StorageError> {
        let (after_at, after_id) = q.after.clone().unwrap_or((i64::MIN, String::new()));
        let app = q.app.as_deref().unwrap_or("");
        let (kind, holder_id) = match &q.holder {
            Some(h) => (h.as_str(), h.user_id().unwrap_or("")),
            None => ("", ""),
        };
        let with_company: i64 = q.with_company.into();
        let limit = i64::try_from(q.limit.max(1)).unwrap_or(i64::MAX);
        let sql = format!(
            "SELECT {COLUMNS} FROM connections WHERE tenant = $1
               AND ($2 = '' OR app = $2)
               AND ($3 = '' OR (holder_kind = $3 AND holder_id = $4)
                    OR ($5 = 1 AND holder_kind = 'company'))
               AND (created_at > $6 OR (created_at = $6 AND id > $7))
             ORDER BY created_at, id LIMIT $8"
        );
        let rows = select!(
            self.db,
            read,
            &sql,
            [
                &q.tenant,
                app,
                kind,
                holder_id,
                with_company,
                after_at,
                &after_id,
                limit
            ]
        )
        .map_err(failed("connections.list"))?;
        Ok(rows.into_iter().map(|r| r.record).collect())
    }

    async fn revoke(
        &self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<ConnectionRecord>, StorageError> {
        const OP: &str = "connections.revoke";
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE connections SET revoked_at = COALESCE(revoked_at, $3),
                    updated_at = CASE WHEN revoked_at IS NULL THEN $3 ELSE updated_at END,
                    access_sealed = NULL, refresh_sealed = NULL
                 WHERE tenant = $1 AND id = $2",
            )
            .bind(tenant)
            .bind(id)
            .bind(now)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed(OP))?;
        Ok(self.by_id(tenant, id, OP).await?.map(|r| r.record))
    }

    async fn resolve(
        &self,
        tenant: &str,
        app: &str,
        holder: &ConnectionHolder,
    ) -> Result<Option<(ConnectionRecord, Option<ConnectionTokens>)>, StorageError> {
        const OP: &str = "connections.resolve";
        let Some(row) = self.by_holder(tenant, app, holder, OP).await? else {
            return Ok(None);
        };
        if row.record.revoked_at.is_some() {
            return Ok(Some((row.record, None)));
        }
        let tokens = self.open(OP, &row)?;
        Ok(Some((row.record, tokens)))
    }

    async fn update_tokens(
        &self,
        tenant: &str,
        id: &str,
        tokens: &ConnectionTokens,
        now: i64,
    ) -> Result<bool, StorageError> {
        const OP: &str = "connections.update_tokens";
        let Some(row) = self.by_id(tenant, id, OP).await? else {
            return Ok(false);
        };
        if row.record.revoked_at.is_some() {
            return Ok(false);
        }
        // A refresh token the endpoint did not rotate stays.
        let kept = match (&tokens.refresh_token, self.open(OP, &row)?) {
            (Some(_), _) => tokens.clone(),
            (None, Some(old)) => ConnectionTokens {
                refresh_token: old.refresh_token,
                ..tokens.clone()
            },
            (None, None) => tokens.clone(),
        };
        let version = row.version + 1;
        let (access, refresh) = self.seal(OP, tenant, id, &row.record.app, version, &kept)?;
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE connections SET access_sealed = $3, refresh_sealed = $4, token_version = $5,
                    expires_at = $6, updated_at = $7
                 WHERE tenant = $1 AND id = $2 AND token_version = $8 AND revoked_at IS NULL",
            )
            .bind(tenant)
            .bind(id)
            .bind(&access)
            .bind(&refresh)
            .bind(version)
            .bind(kept.expires_at)
            .bind(now)
            .bind(row.version)
            .execute(pool)
            .await
            .map(|r| r.rows_affected() == 1)
        })
        .map_err(failed(OP))
    }
}
