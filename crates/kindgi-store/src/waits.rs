//! Approvals and pausing calls' waits (the runtime's `WaitStore`): one `approvals` row per
//! approval — the filterable columns plus the whole approval as JSON (`body`) — and one
//! `wait_pauses` row per pausing call's ticket, keyed by the token's id (40 hex of its
//! sha256: the token itself is never stored).
//!
//! Status changes are compare-and-set on the stored status, so of two concurrent decisions
//! exactly one wins. A change that answers a run's wait (an answer, a decision, a timeout)
//! takes the row and appends its entries to the run's journal in one transaction
//! ([`WaitsStore::update_pause_journaled`], [`WaitsStore::update_approval_journaled`]): the
//! loser of a race — on this process or another one on the same database — changes nothing
//! and journals nothing. Every statement is written once for both databases
//! ([`on_pool!`](crate::on_pool)); times are milliseconds since the epoch.

use kindgi_core::run::JournalEntry;
use sqlx::Row;

use crate::runs::append_after_last;
use crate::sql::{Bind, bind_all};
use crate::{Database, StoreError};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS approvals (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        status TEXT NOT NULL,
        required_rank BIGINT NOT NULL,
        wait_token_id TEXT,
        run_id TEXT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        decided_by TEXT,
        conversation_id TEXT,
        tool_id TEXT,
        args_hash TEXT,
        body TEXT NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS approvals_tenant_created ON approvals (tenant_id, created_at, id)",
    "CREATE INDEX IF NOT EXISTS approvals_token ON approvals (tenant_id, wait_token_id)",
    "CREATE INDEX IF NOT EXISTS approvals_open_expiry ON approvals (status, expires_at)",
    "CREATE INDEX IF NOT EXISTS approvals_conversation ON approvals (tenant_id, conversation_id, tool_id, args_hash)",
    "CREATE TABLE IF NOT EXISTS wait_pauses (
        token_id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        node_id TEXT,
        call_id TEXT NOT NULL,
        tool_id TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS wait_pauses_run ON wait_pauses (run_id, status)",
    "CREATE INDEX IF NOT EXISTS wait_pauses_open_expiry ON wait_pauses (status, expires_at)",
];

const POSTGRES: &[&str] = SQLITE;

/// Creates the tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("waits", SQLITE, POSTGRES).await
}

/// An approval row: what is filtered on, and the approval itself (`body`, JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredApproval {
    pub id: String,
    pub tenant_id: String,
    pub status: String,
    /// 0 standard, 1 senior, 2 admin.
    pub required_rank: i64,
    pub wait_token_id: Option<String>,
    pub run_id: Option<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub decided_by: Option<String>,
    pub conversation_id: Option<String>,
    pub tool_id: Option<String>,
    pub args_hash: Option<String>,
    pub body: String,
}

/// Which approvals to list.
#[derive(Debug, Clone, Default)]
pub struct ApprovalFilter {
    pub tenant_id: String,
    /// Any of these (any when empty).
    pub statuses: Vec<String>,
    pub run_id: Option<String>,
    pub wait_token_ids: Vec<String>,
    pub required_rank: Option<i64>,
    pub max_rank: Option<i64>,
    /// Strictly after.
    pub created_after: Option<i64>,
    pub decided_by: Option<String>,
    pub ascending: bool,
    /// Strictly after `(created_at, id)` in the list's order.
    pub after: Option<(i64, String)>,
    pub limit: usize,
}

/// A pausing call's wait row.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPause {
    pub token_id: String,
    pub tenant_id: String,
    pub run_id: String,
    pub scope: String,
    pub node_id: Option<String>,
    pub call_id: String,
    pub tool_id: String,
    pub tool_version: String,
    pub status: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub updated_at: i64,
}

const APPROVAL_COLUMNS: &str = "id, tenant_id, status, required_rank, wait_token_id, run_id, created_at, expires_at, decided_by, conversation_id, tool_id, args_hash, body";
const PAUSE_COLUMNS: &str = "token_id, tenant_id, run_id, scope, node_id, call_id, tool_id, tool_version, status, created_at, expires_at, updated_at";

const INSERT_APPROVAL: &str = "INSERT INTO approvals (id, tenant_id, status, required_rank, wait_token_id, run_id, created_at, expires_at, decided_by, conversation_id, tool_id, args_hash, body)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";
const UPDATE_APPROVAL_IF: &str = "UPDATE approvals SET status = $3, required_rank = $4, expires_at = $5, decided_by = $6, body = $7
     WHERE tenant_id = $1 AND id = $2 AND status = $8";
const UPDATE_PAUSE_IF: &str = "UPDATE wait_pauses SET status = $2, expires_at = $3, updated_at = $4
     WHERE token_id = $1 AND status = $5";

/// [`INSERT_APPROVAL`] with `$a`'s binds.
macro_rules! insert_approval {
    ($a:expr) => {{
        let a: &StoredApproval = $a;
        sqlx::query(INSERT_APPROVAL)
            .bind(&a.id)
            .bind(&a.tenant_id)
            .bind(&a.status)
            .bind(a.required_rank)
            .bind(&a.wait_token_id)
            .bind(&a.run_id)
            .bind(a.created_at)
            .bind(a.expires_at)
            .bind(&a.decided_by)
            .bind(&a.conversation_id)
            .bind(&a.tool_id)
            .bind(&a.args_hash)
            .bind(&a.body)
    }};
}

/// [`UPDATE_APPROVAL_IF`] with `$a`'s binds.
macro_rules! update_approval_if {
    ($a:expr, $expected:expr) => {{
        let a: &StoredApproval = $a;
        sqlx::query(UPDATE_APPROVAL_IF)
            .bind(&a.tenant_id)
            .bind(&a.id)
            .bind(&a.status)
            .bind(a.required_rank)
            .bind(a.expires_at)
            .bind(&a.decided_by)
            .bind(&a.body)
            .bind($expected)
    }};
}

/// [`UPDATE_PAUSE_IF`] with `$p`'s binds.
macro_rules! update_pause_if {
    ($p:expr, $expected:expr) => {{
        let p: &StoredPause = $p;
        sqlx::query(UPDATE_PAUSE_IF)
            .bind(&p.token_id)
            .bind(&p.status)
            .bind(p.expires_at)
            .bind(p.updated_at)
            .bind($expected)
    }};
}

/// Entries a status change appends to its run's journal, in the change's transaction, after
/// the journal's last entry (their own `sequence` is ignored).
#[derive(Debug, Clone, Copy)]
pub struct JournalTail<'a> {
    pub run_id: &'a str,
    pub entries: &'a [JournalEntry],
}

macro_rules! approval_from_row {
    ($row:expr) => {{
        let r = &$row;
        let d = |e| StoreError::query("approvals.decode")(e);
        StoredApproval {
            id: r.try_get("id").map_err(&d)?,
            tenant_id: r.try_get("tenant_id").map_err(&d)?,
            status: r.try_get("status").map_err(&d)?,
            required_rank: r.try_get("required_rank").map_err(&d)?,
            wait_token_id: r.try_get("wait_token_id").map_err(&d)?,
            run_id: r.try_get("run_id").map_err(&d)?,
            created_at: r.try_get("created_at").map_err(&d)?,
            expires_at: r.try_get("expires_at").map_err(&d)?,
            decided_by: r.try_get("decided_by").map_err(&d)?,
            conversation_id: r.try_get("conversation_id").map_err(&d)?,
            tool_id: r.try_get("tool_id").map_err(&d)?,
            args_hash: r.try_get("args_hash").map_err(&d)?,
            body: r.try_get("body").map_err(&d)?,
        }
    }};
}

macro_rules! pause_from_row {
    ($row:expr) => {{
        let r = &$row;
        let d = |e| StoreError::query("wait_pauses.decode")(e);
        StoredPause {
            token_id: r.try_get("token_id").map_err(&d)?,
            tenant_id: r.try_get("tenant_id").map_err(&d)?,
            run_id: r.try_get("run_id").map_err(&d)?,
            scope: r.try_get("scope").map_err(&d)?,
            node_id: r.try_get("node_id").map_err(&d)?,
            call_id: r.try_get("call_id").map_err(&d)?,
            tool_id: r.try_get("tool_id").map_err(&d)?,
            tool_version: r.try_get("tool_version").map_err(&d)?,
            status: r.try_get("status").map_err(&d)?,
            created_at: r.try_get("created_at").map_err(&d)?,
            expires_at: r.try_get("expires_at").map_err(&d)?,
            updated_at: r.try_get("updated_at").map_err(&d)?,
        }
    }};
}

/// Adds a bind and answers its `$N`.
fn mark(binds: &mut Vec<Bind>, b: Bind) -> String {
    binds.push(b);
    format!("${}", binds.len())
}

/// `$a, $b, …` for each value.
fn marks(binds: &mut Vec<Bind>, values: &[String]) -> String {
    values
        .iter()
        .map(|v| mark(binds, Bind::Text(v.clone())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `WHERE … ORDER BY … LIMIT` of a list, with its binds.
fn approval_query(f: &ApprovalFilter) -> (String, Vec<Bind>) {
    let mut binds = vec![Bind::Text(f.tenant_id.clone())];
    let mut clauses = vec!["tenant_id = $1".to_owned()];
    let push = mark;
    if !f.statuses.is_empty() {
        let p = marks(&mut binds, &f.statuses);
        clauses.push(format!("status IN ({p})"));
    }
    if !f.wait_token_ids.is_empty() {
        let p = marks(&mut binds, &f.wait_token_ids);
        clauses.push(format!("wait_token_id IN ({p})"));
    }
    if let Some(r) = &f.run_id {
        let p = push(&mut binds, Bind::Text(r.clone()));
        clauses.push(format!("run_id = {p}"));
    }
    if let Some(r) = f.required_rank {
        let p = push(&mut binds, Bind::Int(r));
        clauses.push(format!("required_rank = {p}"));
    }
    if let Some(r) = f.max_rank {
        let p = push(&mut binds, Bind::Int(r));
        clauses.push(format!("required_rank <= {p}"));
    }
    if let Some(t) = f.created_after {
        let p = push(&mut binds, Bind::Int(t));
        clauses.push(format!("created_at > {p}"));
    }
    if let Some(d) = &f.decided_by {
        let p = push(&mut binds, Bind::Text(d.clone()));
        clauses.push(format!("decided_by = {p}"));
    }
    let (cmp, dir) = if f.ascending {
        (">", "ASC")
    } else {
        ("<", "DESC")
    };
    if let Some((at, id)) = &f.after {
        let a = push(&mut binds, Bind::Int(*at));
        let i = push(&mut binds, Bind::Text(id.clone()));
        clauses.push(format!(
            "(created_at {cmp} {a} OR (created_at = {a} AND id {cmp} {i}))"
        ));
    }
    let sql = format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE {} ORDER BY created_at {dir}, id {dir} LIMIT {}",
        clauses.join(" AND "),
        f.limit.saturating_add(1)
    );
    (sql, binds)
}

/// The store over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct WaitsStore {
    db: Database,
}

impl WaitsStore {
    pub fn new(db: Database) -> WaitsStore {
        WaitsStore { db }
    }

    pub async fn insert_approval(&self, a: &StoredApproval) -> Result<(), StoreError> {
        crate::on_pool!(self.db, write, |pool| {
            insert_approval!(a).execute(pool).await.map(drop)
        })
        .map_err(StoreError::query("approvals.insert"))
    }

    pub async fn get_approval(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<StoredApproval>, StoreError> {
        let sql =
            format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE tenant_id = $1 AND id = $2");
        crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(&sql)
                .bind(tenant)
                .bind(id)
                .fetch_optional(pool)
                .await
                .map_err(StoreError::query("approvals.get"))?;
            Ok(match row {
                Some(row) => Some(approval_from_row!(row)),
                None => None,
            })
        })
    }

    /// At most `filter.limit + 1` rows, in the filter's order.
    pub async fn list_approvals(
        &self,
        filter: &ApprovalFilter,
    ) -> Result<Vec<StoredApproval>, StoreError> {
        let (sql, binds) = approval_query(filter);
        crate::on_pool!(self.db, read, |pool| {
            let q = bind_all!(sqlx::query(&sql), &binds);
            let rows = q
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("approvals.list"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(approval_from_row!(row));
            }
            Ok(out)
        })
    }

    /// Replaces the approval's row when its stored status is still `expected`.
    pub async fn update_approval_if(
        &self,
        a: &StoredApproval,
        expected: &str,
    ) -> Result<bool, StoreError> {
        let n = crate::on_pool!(self.db, write, |pool| {
            update_approval_if!(a, expected)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("approvals.update"))?;
        Ok(n > 0)
    }

    /// In one transaction: replaces the approval's row when its stored status is still
    /// `expected`, inserts `successor` (an escalation's next tier) and appends `journal`.
    /// False: the status was not `expected` (another decision, a timeout came first), and
    /// nothing was written.
    pub async fn update_approval_journaled(
        &self,
        a: &StoredApproval,
        expected: &str,
        successor: Option<&StoredApproval>,
        journal: Option<JournalTail<'_>>,
    ) -> Result<bool, StoreError> {
        let op = "approvals.decide";
        crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            let taken = update_approval_if!(a, expected)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query(op))?
                .rows_affected();
            if taken == 0 {
                tx.rollback().await.map_err(StoreError::query(op))?;
                return Ok(false);
            }
            if let Some(next) = successor {
                insert_approval!(next)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::query(op))?;
            }
            if let Some(j) = journal {
                append_after_last!(tx, j.run_id, j.entries, op)?;
            }
            tx.commit().await.map_err(StoreError::query(op))?;
            Ok(true)
        })
    }

    /// Rows in one of `statuses` whose `expires_at` is at or before `at` (any tenant).
    pub async fn approvals_due(
        &self,
        at: i64,
        statuses: &[&str],
    ) -> Result<Vec<StoredApproval>, StoreError> {
        let marks: Vec<String> = (0..statuses.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE expires_at <= $1 AND status IN ({}) ORDER BY expires_at",
            marks.join(", ")
        );
        crate::on_pool!(self.db, read, |pool| {
            let mut q = sqlx::query(&sql).bind(at);
            for s in statuses {
                q = q.bind(*s);
            }
            let rows = q
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("approvals.due"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(approval_from_row!(row));
            }
            Ok(out)
        })
    }

    /// The earliest `expires_at` of an approval in `statuses` or an `open` pause.
    pub async fn next_deadline(&self, statuses: &[&str]) -> Result<Option<i64>, StoreError> {
        let marks: Vec<String> = (0..statuses.len()).map(|i| format!("${}", i + 1)).collect();
        let sql = format!(
            "SELECT MIN(t) AS t FROM (
                SELECT MIN(expires_at) AS t FROM approvals WHERE status IN ({})
                UNION ALL
                SELECT MIN(expires_at) AS t FROM wait_pauses WHERE status = 'open'
             ) AS deadlines",
            marks.join(", ")
        );
        crate::on_pool!(self.db, read, |pool| {
            let mut q = sqlx::query(&sql);
            for s in statuses {
                q = q.bind(*s);
            }
            let row = q
                .fetch_one(pool)
                .await
                .map_err(StoreError::query("waits.next_deadline"))?;
            row.try_get::<Option<i64>, _>("t")
                .map_err(StoreError::query("waits.next_deadline"))
        })
    }

    /// Whether an approved row of the conversation names `tool_id` and `args_hash`.
    pub async fn approved_in_conversation(
        &self,
        tenant: &str,
        conversation_id: &str,
        tool_id: &str,
        args_hash: &str,
    ) -> Result<bool, StoreError> {
        crate::on_pool!(self.db, read, |pool| {
            sqlx::query(
                "SELECT id FROM approvals WHERE tenant_id = $1 AND conversation_id = $2
                 AND tool_id = $3 AND args_hash = $4 AND status = 'approved' LIMIT 1",
            )
            .bind(tenant)
            .bind(conversation_id)
            .bind(tool_id)
            .bind(args_hash)
            .fetch_optional(pool)
            .await
            .map(|r| r.is_some())
        })
        .map_err(StoreError::query("approvals.approved_in_conversation"))
    }

    /// Inserts a pause, closing (one transaction) any open pause of the same call.
    pub async fn insert_pause(&self, p: &StoredPause) -> Result<(), StoreError> {
        let op = "wait_pauses.insert";
        crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            sqlx::query(
                "UPDATE wait_pauses SET status = 'closed', updated_at = $4
                 WHERE run_id = $1 AND scope = $2 AND call_id = $3 AND status = 'open'",
            )
            .bind(&p.run_id)
            .bind(&p.scope)
            .bind(&p.call_id)
            .bind(p.created_at)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::query(op))?;
            sqlx::query(
                "INSERT INTO wait_pauses (token_id, tenant_id, run_id, scope, node_id, call_id, tool_id, tool_version, status, created_at, expires_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            )
            .bind(&p.token_id)
            .bind(&p.tenant_id)
            .bind(&p.run_id)
            .bind(&p.scope)
            .bind(&p.node_id)
            .bind(&p.call_id)
            .bind(&p.tool_id)
            .bind(&p.tool_version)
            .bind(&p.status)
            .bind(p.created_at)
            .bind(p.expires_at)
            .bind(p.updated_at)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::query(op))?;
            tx.commit().await.map_err(StoreError::query(op))
        })
    }

    pub async fn get_pause(&self, token_id: &str) -> Result<Option<StoredPause>, StoreError> {
        let sql = format!("SELECT {PAUSE_COLUMNS} FROM wait_pauses WHERE token_id = $1");
        crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(&sql)
                .bind(token_id)
                .fetch_optional(pool)
                .await
                .map_err(StoreError::query("wait_pauses.get"))?;
            Ok(match row {
                Some(row) => Some(pause_from_row!(row)),
                None => None,
            })
        })
    }

    /// Moves the pause on when its stored status is still `expected`.
    pub async fn update_pause_if(
        &self,
        p: &StoredPause,
        expected: &str,
    ) -> Result<bool, StoreError> {
        let n = crate::on_pool!(self.db, write, |pool| {
            update_pause_if!(p, expected)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("wait_pauses.update"))?;
        Ok(n > 0)
    }

    /// In one transaction: moves the pause on when its stored status is still `expected`
    /// (`open → answered` takes the token) and appends `journal`. False: the status was not
    /// `expected` (answered, timed out or closed meanwhile), and nothing was written.
    pub async fn update_pause_journaled(
        &self,
        p: &StoredPause,
        expected: &str,
        journal: JournalTail<'_>,
    ) -> Result<bool, StoreError> {
        let op = "wait_pauses.answer";
        crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            let taken = update_pause_if!(p, expected)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query(op))?
                .rows_affected();
            if taken == 0 {
                tx.rollback().await.map_err(StoreError::query(op))?;
                return Ok(false);
            }
            append_after_last!(tx, journal.run_id, journal.entries, op)?;
            tx.commit().await.map_err(StoreError::query(op))?;
            Ok(true)
        })
    }

    /// Open pauses due at `at` (`run_id: None`), or the open pauses of a run.
    pub async fn open_pauses(
        &self,
        due_at: Option<i64>,
        run_id: Option<&str>,
    ) -> Result<Vec<StoredPause>, StoreError> {
        let sql = format!(
            "SELECT {PAUSE_COLUMNS} FROM wait_pauses WHERE status = 'open'
             AND ($1 IS NULL OR expires_at <= $1) AND ($2 IS NULL OR run_id = $2) ORDER BY expires_at"
        );
        crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(&sql)
                .bind(due_at)
                .bind(run_id)
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("wait_pauses.open"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(pause_from_row!(row));
            }
            Ok(out)
        })
    }
}
