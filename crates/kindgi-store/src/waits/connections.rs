//! Calls waiting for a person to connect an app ([`ConnectionWait`]): one `wait_connections`
//! row per wait, keyed by its token id, found by `(tenant, person, app)` when a connection
//! comes, by run when the run ends and by deadline when the sweeper looks. Moving a row and
//! journaling on its run is one transaction, as for pauses ([`super::WaitsStore`]).

use kindgi_core::StorageError;
use kindgi_core::connection_wait::{ConnectionWait, ConnectionWaitQuery};
use kindgi_core::ids::{format_millis, parse_millis};
use kindgi_core::pause::PauseStatus;
use kindgi_core::ports::WaitJournal;
use sqlx::Row;

use super::{WaitsStore, journal_rows};
use crate::StoreError;
use crate::runs::append_after_last;
use crate::sql::{Bind, bind_all};

/// The table and its indexes (the same on both databases).
pub(super) const DDL: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS wait_connections (
        token_id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        person TEXT NOT NULL,
        app TEXT NOT NULL,
        permissions TEXT NOT NULL,
        tool_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS wait_connections_holder ON wait_connections (tenant_id, person, app, status)",
    "CREATE INDEX IF NOT EXISTS wait_connections_run ON wait_connections (run_id, status)",
    "CREATE INDEX IF NOT EXISTS wait_connections_open_expiry ON wait_connections (status, expires_at)",
];

const COLUMNS: &str = "token_id, tenant_id, run_id, person, app, permissions, tool_id, call_id, status, created_at, expires_at, updated_at";
const UPDATE_IF: &str = "UPDATE wait_connections SET status = $2, expires_at = $3, updated_at = $4
     WHERE token_id = $1 AND status = $5";

/// [`UPDATE_IF`] with the binds of wait `$w` and the expected status `$expected`.
macro_rules! update_if {
    ($w:expr, $expected:expr) => {{
        let w: &ConnectionWait = $w;
        sqlx::query(UPDATE_IF)
            .bind(&w.token_id)
            .bind(w.status.as_str())
            .bind(parse_millis(&w.expires_at))
            .bind(parse_millis(&w.updated_at))
            .bind($expected.as_str())
    }};
}

/// A row (of either database) as its record: `Result<ConnectionWait, StoreError>` (an
/// unknown status or unreadable permissions is a corrupt row).
macro_rules! from_row {
    ($row:expr) => {{
        let r = $row;
        (|| -> Result<ConnectionWait, StoreError> {
            let d = |e| StoreError::query("wait_connections.decode")(e);
            let token_id: String = r.try_get("token_id").map_err(d)?;
            let corrupt = |reason: String| StoreError::Corrupt {
                what: format!("connection wait {token_id}"),
                reason,
            };
            let status: String = r.try_get("status").map_err(d)?;
            let Some(status) = PauseStatus::parse(&status) else {
                return Err(corrupt(format!("unknown status {status:?}")));
            };
            let permissions: String = r.try_get("permissions").map_err(d)?;
            let permissions: Vec<String> = serde_json::from_str(&permissions)
                .map_err(|e| corrupt(format!("its permissions are not a list of strings: {e}")))?;
            let millis = |column: &str| r.try_get::<i64, _>(column).map(format_millis);
            Ok(ConnectionWait {
                tenant_id: r.try_get("tenant_id").map_err(d)?,
                run_id: r.try_get("run_id").map_err(d)?,
                person: r.try_get("person").map_err(d)?,
                app: r.try_get("app").map_err(d)?,
                permissions,
                tool_id: r.try_get("tool_id").map_err(d)?,
                call_id: r.try_get("call_id").map_err(d)?,
                status,
                created_at: millis("created_at").map_err(d)?,
                expires_at: millis("expires_at").map_err(d)?,
                updated_at: millis("updated_at").map_err(d)?,
                token_id,
            })
        })()
    }};
}

impl WaitsStore {
    /// The rows `sql` selects, its `$1…` bound to `binds`.
    async fn connection_wait_rows(
        &self,
        op: &'static str,
        sql: &str,
        binds: &[Bind],
    ) -> Result<Vec<ConnectionWait>, StorageError> {
        crate::on_pool!(self.db, read, |pool| async {
            let q = bind_all!(sqlx::query(sql), binds);
            let rows = q.fetch_all(pool).await.map_err(StoreError::query(op))?;
            rows.iter()
                .map(|r| from_row!(r))
                .collect::<Result<Vec<_>, _>>()
        }
        .await)
        .map_err(StoreError::storage(op))
    }

    pub(super) async fn insert_connection_wait_row(
        &self,
        w: &ConnectionWait,
    ) -> Result<(), StorageError> {
        let op = "wait_connections.insert";
        let permissions = serde_json::to_string(&w.permissions)
            .map_err(StorageError::backend_of("wait_connections.encode"))?;
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO wait_connections (token_id, tenant_id, run_id, person, app, permissions, tool_id, call_id, status, created_at, expires_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                 ON CONFLICT (token_id) DO NOTHING",
            )
            .bind(&w.token_id)
            .bind(&w.tenant_id)
            .bind(&w.run_id)
            .bind(&w.person)
            .bind(&w.app)
            .bind(&permissions)
            .bind(&w.tool_id)
            .bind(&w.call_id)
            .bind(w.status.as_str())
            .bind(parse_millis(&w.created_at))
            .bind(parse_millis(&w.expires_at))
            .bind(parse_millis(&w.updated_at))
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(StoreError::query(op))
        .map_err(StoreError::storage(op))
    }

    pub(super) async fn get_connection_wait_row(
        &self,
        token_id: &str,
    ) -> Result<Option<ConnectionWait>, StorageError> {
        let sql = format!("SELECT {COLUMNS} FROM wait_connections WHERE token_id = $1");
        let binds = [Bind::Text(token_id.to_owned())];
        Ok(self
            .connection_wait_rows("wait_connections.get", &sql, &binds)
            .await?
            .into_iter()
            .next())
    }

    pub(super) async fn update_connection_wait_row(
        &self,
        w: &ConnectionWait,
        expected: PauseStatus,
    ) -> Result<bool, StorageError> {
        let op = "wait_connections.update";
        let n = crate::on_pool!(self.db, write, |pool| {
            update_if!(w, expected)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query(op))
        .map_err(StoreError::storage(op))?;
        Ok(n > 0)
    }

    pub(super) async fn open_connection_wait_rows(
        &self,
        q: &ConnectionWaitQuery,
    ) -> Result<Vec<ConnectionWait>, StorageError> {
        let mut binds = Vec::new();
        let mut sql = format!("SELECT {COLUMNS} FROM wait_connections WHERE status = 'open'");
        for (column, value) in [
            ("tenant_id", &q.tenant_id),
            ("person", &q.person),
            ("app", &q.app),
            ("run_id", &q.run_id),
        ] {
            if let Some(v) = value {
                binds.push(Bind::Text(v.clone()));
                sql.push_str(&format!(" AND {column} = ${}", binds.len()));
            }
        }
        if let Some(at) = q.due_at {
            binds.push(Bind::Int(at));
            sql.push_str(&format!(" AND expires_at <= ${}", binds.len()));
        }
        sql.push_str(" ORDER BY expires_at, token_id");
        self.connection_wait_rows("wait_connections.open", &sql, &binds)
            .await
    }

    /// In one transaction: moves the wait on when its stored status is still `expected` and
    /// appends `journal` after the run's last entry. False: it was not, and nothing was
    /// written.
    pub(super) async fn update_connection_wait_row_journaled(
        &self,
        w: &ConnectionWait,
        expected: PauseStatus,
        journal: WaitJournal<'_>,
    ) -> Result<bool, StorageError> {
        let op = "wait_connections.resume";
        let entries = journal_rows(&journal);
        crate::on_pool!(self.db, write, |pool| async {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            let taken = update_if!(w, expected)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query(op))?
                .rows_affected();
            if taken == 0 {
                tx.rollback().await.map_err(StoreError::query(op))?;
                return Ok(false);
            }
            append_after_last!(tx, journal.run_id, &entries, op)?;
            tx.commit().await.map_err(StoreError::query(op))?;
            Ok(true)
        }
        .await)
        .map_err(StoreError::storage(op))
    }
}
