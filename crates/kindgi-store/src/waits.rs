//! Approvals and pausing calls' waits: [`WaitsStore`] implements `kindgi_core`'s
//! [`WaitStore`] port directly, on core's records ([`Approval`], [`PauseRecord`]). One
//! `approvals` row per approval — the filterable columns plus the whole approval as JSON
//! (`body`, what it is read back from) — and one `wait_pauses` row per pausing call's
//! ticket, keyed by the token's id (40 hex of its sha256: the token itself is never stored);
//! calls waiting for a person's connection are `wait_connections` rows ([`connections`]).
//!
//! Status changes are compare-and-set on the stored status, so of two concurrent decisions
//! exactly one wins. A change that answers a run's wait (an answer, a decision, a timeout)
//! takes the row and appends its entries to the run's journal in one transaction
//! ([`WaitStore::update_pause_journaled`], [`WaitStore::update_approval_journaled`]): the
//! loser of a race — on this process or another one on the same database — changes nothing
//! and journals nothing. Every statement is written once for both databases
//! ([`on_pool!`](crate::on_pool)); times are RFC 3339 in the records and milliseconds since
//! the epoch in the columns.

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::approval::{Approval, ApprovalQuery, ApprovalStatus, ReviewerRole};
use kindgi_core::connection_wait::{ConnectionWait, ConnectionWaitQuery};
use kindgi_core::ids::{format_millis, parse_millis};
use kindgi_core::pause::{PauseRecord, PauseStatus};
use kindgi_core::ports::{WaitJournal, WaitStore, journal_entries};
use sqlx::Row;

use crate::runs::append_after_last;
use crate::sql::{Bind, bind_all};
use crate::{Database, StoreError};

mod connections;

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
    db.apply_schema("waits", SQLITE, POSTGRES).await?;
    db.apply_schema("waits", connections::DDL, connections::DDL)
        .await
}

const APPROVAL_COLUMNS: &str = "id, tenant_id, status, required_rank, wait_token_id, run_id, created_at, expires_at, decided_by, conversation_id, tool_id, args_hash, body";
const PAUSE_COLUMNS: &str = "token_id, tenant_id, run_id, scope, node_id, call_id, tool_id, tool_version, status, created_at, expires_at, updated_at";

const INSERT_APPROVAL: &str = "INSERT INTO approvals (id, tenant_id, status, required_rank, wait_token_id, run_id, created_at, expires_at, decided_by, conversation_id, tool_id, args_hash, body)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";
const UPDATE_APPROVAL_IF: &str = "UPDATE approvals SET status = $3, required_rank = $4, expires_at = $5, decided_by = $6, body = $7
     WHERE tenant_id = $1 AND id = $2 AND status = $8";
const UPDATE_PAUSE_IF: &str = "UPDATE wait_pauses SET status = $2, expires_at = $3, updated_at = $4
     WHERE token_id = $1 AND status = $5";

/// The statuses still waiting for a decision.
const OPEN: [ApprovalStatus; 3] = [
    ApprovalStatus::Pending,
    ApprovalStatus::Assigned,
    ApprovalStatus::InReview,
];

/// The `required_rank` column: 0 standard, 1 senior, 2 admin (ordered, so `<=` filters).
fn rank(role: ReviewerRole) -> i64 {
    match role {
        ReviewerRole::Standard => 0,
        ReviewerRole::Senior => 1,
        ReviewerRole::Admin => 2,
    }
}

/// A string field of the approval's subject (`ask_on_first_use` looks these up).
fn subject<'a>(a: &'a Approval, key: &str) -> Option<&'a str> {
    a.subject_ref.get(key).and_then(serde_json::Value::as_str)
}

/// The `body` column: the whole approval as JSON.
fn encode(a: &Approval) -> Result<String, StorageError> {
    serde_json::to_string(a).map_err(StorageError::backend_of("approvals.encode"))
}

/// The approval a row's `body` holds.
fn decode((id, body): (String, String)) -> Result<Approval, StorageError> {
    serde_json::from_str(&body).map_err(|e| StorageError::corrupt(format!("approval {id}"), e))
}

/// [`INSERT_APPROVAL`] with the binds of approval `$a` (its JSON `$body`).
macro_rules! insert_approval {
    ($a:expr, $body:expr) => {{
        let a: &Approval = $a;
        sqlx::query(INSERT_APPROVAL)
            .bind(&a.id)
            .bind(&a.tenant_id)
            .bind(a.status.as_str())
            .bind(rank(a.required_role))
            .bind(&a.wait_token_id)
            .bind(&a.run_id)
            .bind(parse_millis(&a.created_at))
            .bind(a.expires_at.as_deref().map(parse_millis))
            .bind(a.decision.as_ref().and_then(|d| d.decided_by.as_deref()))
            .bind(subject(a, "conversationId"))
            .bind(subject(a, "toolId"))
            .bind(subject(a, "argsHash"))
            .bind($body)
    }};
}

/// [`UPDATE_APPROVAL_IF`] with the binds of approval `$a` (its JSON `$body`).
macro_rules! update_approval_if {
    ($a:expr, $body:expr, $expected:expr) => {{
        let a: &Approval = $a;
        sqlx::query(UPDATE_APPROVAL_IF)
            .bind(&a.tenant_id)
            .bind(&a.id)
            .bind(a.status.as_str())
            .bind(rank(a.required_role))
            .bind(a.expires_at.as_deref().map(parse_millis))
            .bind(a.decision.as_ref().and_then(|d| d.decided_by.as_deref()))
            .bind($body)
            .bind($expected.as_str())
    }};
}

/// [`UPDATE_PAUSE_IF`] with pause `$p`'s binds.
macro_rules! update_pause_if {
    ($p:expr, $expected:expr) => {{
        let p: &PauseRecord = $p;
        sqlx::query(UPDATE_PAUSE_IF)
            .bind(&p.token_id)
            .bind(p.status.as_str())
            .bind(parse_millis(&p.expires_at))
            .bind(parse_millis(&p.updated_at))
            .bind($expected.as_str())
    }};
}

/// A row's `(id, body)`: all an approval is read back from.
macro_rules! approval_from_row {
    ($row:expr) => {{
        let r = &$row;
        let d = |e| StoreError::query("approvals.decode")(e);
        let id: String = r.try_get("id").map_err(&d)?;
        let body: String = r.try_get("body").map_err(&d)?;
        (id, body)
    }};
}

/// A `wait_pauses` row as its record (an unknown status is a corrupt row).
macro_rules! pause_from_row {
    ($row:expr) => {{
        let r = &$row;
        let d = |e| StoreError::query("wait_pauses.decode")(e);
        let token_id: String = r.try_get("token_id").map_err(&d)?;
        let status: String = r.try_get("status").map_err(&d)?;
        let Some(status) = PauseStatus::parse(&status) else {
            return Err(StoreError::Corrupt {
                what: format!("pause {token_id}"),
                reason: format!("unknown status {status:?}"),
            });
        };
        let millis = |column: &str| r.try_get::<i64, _>(column).map(format_millis);
        PauseRecord {
            token_id,
            tenant_id: r.try_get("tenant_id").map_err(&d)?,
            run_id: r.try_get("run_id").map_err(&d)?,
            scope: r.try_get("scope").map_err(&d)?,
            node_id: r.try_get("node_id").map_err(&d)?,
            call_id: r.try_get("call_id").map_err(&d)?,
            tool_id: r.try_get("tool_id").map_err(&d)?,
            tool_version: r.try_get("tool_version").map_err(&d)?,
            status,
            created_at: millis("created_at").map_err(&d)?,
            expires_at: millis("expires_at").map_err(&d)?,
            updated_at: millis("updated_at").map_err(&d)?,
        }
    }};
}

/// The journal's entries, for appending after the run's last entry in the change's
/// transaction (their own sequence is ignored there).
fn journal_rows(j: &WaitJournal<'_>) -> Vec<kindgi_core::run::JournalEntry> {
    journal_entries(j.entries, 0)
}

/// Adds a bind and answers its `$N`.
fn mark(binds: &mut Vec<Bind>, b: Bind) -> String {
    binds.push(b);
    format!("${}", binds.len())
}

/// `$a, $b, …` for each value.
fn marks<'a>(binds: &mut Vec<Bind>, values: impl IntoIterator<Item = &'a str>) -> String {
    values
        .into_iter()
        .map(|v| mark(binds, Bind::Text(v.to_owned())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `SELECT … WHERE … ORDER BY … LIMIT` of a list, with its binds.
fn approval_query(q: &ApprovalQuery) -> (String, Vec<Bind>) {
    let mut binds = vec![Bind::Text(q.tenant_id.clone())];
    let mut clauses = vec!["tenant_id = $1".to_owned()];
    let push = mark;
    if !q.statuses.is_empty() {
        let p = marks(&mut binds, q.statuses.iter().map(|s| s.as_str()));
        clauses.push(format!("status IN ({p})"));
    }
    if !q.wait_token_ids.is_empty() {
        let p = marks(&mut binds, q.wait_token_ids.iter().map(String::as_str));
        clauses.push(format!("wait_token_id IN ({p})"));
    }
    if let Some(r) = &q.run_id {
        let p = push(&mut binds, Bind::Text(r.clone()));
        clauses.push(format!("run_id = {p}"));
    }
    if let Some(r) = q.required_role {
        let p = push(&mut binds, Bind::Int(rank(r)));
        clauses.push(format!("required_rank = {p}"));
    }
    if let Some(r) = q.max_role {
        let p = push(&mut binds, Bind::Int(rank(r)));
        clauses.push(format!("required_rank <= {p}"));
    }
    if let Some(t) = &q.created_after {
        let p = push(&mut binds, Bind::Int(parse_millis(t)));
        clauses.push(format!("created_at > {p}"));
    }
    if let Some(d) = &q.decided_by {
        let p = push(&mut binds, Bind::Text(d.clone()));
        clauses.push(format!("decided_by = {p}"));
    }
    let (cmp, dir) = if q.ascending {
        (">", "ASC")
    } else {
        ("<", "DESC")
    };
    if let Some((at, id)) = &q.after {
        let a = push(&mut binds, Bind::Int(parse_millis(at)));
        let i = push(&mut binds, Bind::Text(id.clone()));
        clauses.push(format!(
            "(created_at {cmp} {a} OR (created_at = {a} AND id {cmp} {i}))"
        ));
    }
    let sql = format!(
        "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE {} ORDER BY created_at {dir}, id {dir} LIMIT {}",
        clauses.join(" AND "),
        q.limit.saturating_add(1)
    );
    (sql, binds)
}

/// Approvals and pauses over a migrated [`Database`]; the runtime's [`WaitStore`]. Its
/// journaled moves append in their own transaction, so its database must be the one the
/// run's journal is in (`Runtime::over(db.ports())` builds both over one).
#[derive(Debug, Clone)]
pub struct WaitsStore {
    db: Database,
}

impl WaitsStore {
    pub fn new(db: Database) -> WaitsStore {
        WaitsStore { db }
    }

    /// `(id, body)` of the approvals `sql` selects, its `$1…` bound to `binds`.
    async fn approval_rows(
        &self,
        op: &'static str,
        sql: &str,
        binds: &[Bind],
    ) -> Result<Vec<Approval>, StorageError> {
        let rows = crate::on_pool!(self.db, read, |pool| async {
            let q = bind_all!(sqlx::query(sql), binds);
            let rows = q.fetch_all(pool).await.map_err(StoreError::query(op))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(approval_from_row!(row));
            }
            Ok(out)
        }
        .await)
        .map_err(StoreError::storage(op))?;
        rows.into_iter().map(decode).collect()
    }

    /// Open pauses due at `due_at` (`run_id: None`), or the open pauses of a run; failures
    /// are reported as `outer`'s.
    async fn open_pauses(
        &self,
        outer: &'static str,
        due_at: Option<i64>,
        run_id: Option<&str>,
    ) -> Result<Vec<PauseRecord>, StorageError> {
        let sql = format!(
            "SELECT {PAUSE_COLUMNS} FROM wait_pauses WHERE status = 'open'
             AND ($1 IS NULL OR expires_at <= $1) AND ($2 IS NULL OR run_id = $2) ORDER BY expires_at"
        );
        crate::on_pool!(self.db, read, |pool| async {
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
        }
        .await)
        .map_err(StoreError::storage(outer))
    }
}

#[async_trait]
impl WaitStore for WaitsStore {
    async fn insert_approval(&self, approval: &Approval) -> Result<(), StorageError> {
        let op = "approvals.insert";
        let body = encode(approval)?;
        crate::on_pool!(self.db, write, |pool| {
            insert_approval!(approval, &body)
                .execute(pool)
                .await
                .map(drop)
        })
        .map_err(StoreError::query(op))
        .map_err(StoreError::storage(op))
    }

    async fn get_approval(&self, tenant: &str, id: &str) -> Result<Option<Approval>, StorageError> {
        let op = "approvals.get";
        let sql =
            format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE tenant_id = $1 AND id = $2");
        let binds = [Bind::Text(tenant.to_owned()), Bind::Text(id.to_owned())];
        Ok(self
            .approval_rows(op, &sql, &binds)
            .await?
            .into_iter()
            .next())
    }

    /// At most `query.limit + 1` approvals, in the query's order.
    async fn list_approvals(&self, query: &ApprovalQuery) -> Result<Vec<Approval>, StorageError> {
        let (sql, binds) = approval_query(query);
        self.approval_rows("approvals.list", &sql, &binds).await
    }

    async fn update_approval_if(
        &self,
        approval: &Approval,
        expected: ApprovalStatus,
    ) -> Result<bool, StorageError> {
        let op = "approvals.update";
        let body = encode(approval)?;
        let n = crate::on_pool!(self.db, write, |pool| {
            update_approval_if!(approval, &body, expected)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query(op))
        .map_err(StoreError::storage(op))?;
        Ok(n > 0)
    }

    /// Open approvals (any tenant) whose `expires_at` is at or before `at_ms`.
    async fn approvals_due(&self, at_ms: i64) -> Result<Vec<Approval>, StorageError> {
        let mut binds = vec![Bind::Int(at_ms)];
        let open = marks(&mut binds, OPEN.iter().map(|s| s.as_str()));
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE expires_at <= $1 AND status IN ({open}) ORDER BY expires_at"
        );
        self.approval_rows("approvals.due", &sql, &binds).await
    }

    /// The earliest `expires_at` of an open approval or an `open` pause.
    async fn next_deadline(&self) -> Result<Option<i64>, StorageError> {
        let op = "waits.next_deadline";
        let mut binds = Vec::new();
        let open = marks(&mut binds, OPEN.iter().map(|s| s.as_str()));
        let sql = format!(
            "SELECT MIN(t) AS t FROM (
                SELECT MIN(expires_at) AS t FROM approvals WHERE status IN ({open})
                UNION ALL
                SELECT MIN(expires_at) AS t FROM wait_pauses WHERE status = 'open'
                UNION ALL
                SELECT MIN(expires_at) AS t FROM wait_connections WHERE status = 'open'
             ) AS deadlines"
        );
        crate::on_pool!(self.db, read, |pool| async {
            let q = bind_all!(sqlx::query(&sql), &binds);
            let row = q.fetch_one(pool).await?;
            row.try_get::<Option<i64>, _>("t")
        }
        .await)
        .map_err(StoreError::query(op))
        .map_err(StoreError::storage(op))
    }

    /// Whether an approved row of the conversation names `tool_id` and `args_hash`.
    async fn approved_in_conversation(
        &self,
        tenant: &str,
        conversation_id: &str,
        tool_id: &str,
        args_hash: &str,
    ) -> Result<bool, StorageError> {
        let op = "approvals.approved_in_conversation";
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
        .map_err(StoreError::query(op))
        .map_err(StoreError::storage(op))
    }

    /// Inserts a pause, closing (one transaction) any open pause of the same call.
    async fn insert_pause(&self, p: &PauseRecord) -> Result<(), StorageError> {
        let op = "wait_pauses.insert";
        crate::on_pool!(self.db, write, |pool| async {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "UPDATE wait_pauses SET status = 'closed', updated_at = $4
                 WHERE run_id = $1 AND scope = $2 AND call_id = $3 AND status = 'open'",
            )
            .bind(&p.run_id)
            .bind(&p.scope)
            .bind(&p.call_id)
            .bind(parse_millis(&p.created_at))
            .execute(&mut *tx)
            .await?;
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
            .bind(p.status.as_str())
            .bind(parse_millis(&p.created_at))
            .bind(parse_millis(&p.expires_at))
            .bind(parse_millis(&p.updated_at))
            .execute(&mut *tx)
            .await?;
            tx.commit().await
        }.await)
        .map_err(StoreError::query(op))
        .map_err(StoreError::storage(op))
    }

    async fn get_pause(&self, token_id: &str) -> Result<Option<PauseRecord>, StorageError> {
        let op = "wait_pauses.get";
        let sql = format!("SELECT {PAUSE_COLUMNS} FROM wait_pauses WHERE token_id = $1");
        crate::on_pool!(self.db, read, |pool| async {
            let row = sqlx::query(&sql)
                .bind(token_id)
                .fetch_optional(pool)
                .await
                .map_err(StoreError::query(op))?;
            Ok(match row {
                Some(row) => Some(pause_from_row!(row)),
                None => None,
            })
        }
        .await)
        .map_err(StoreError::storage(op))
    }

    async fn update_pause_if(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
    ) -> Result<bool, StorageError> {
        let op = "wait_pauses.update";
        let n = crate::on_pool!(self.db, write, |pool| {
            update_pause_if!(pause, expected)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query(op))
        .map_err(StoreError::storage(op))?;
        Ok(n > 0)
    }

    async fn pauses_due(&self, at_ms: i64) -> Result<Vec<PauseRecord>, StorageError> {
        self.open_pauses("wait_pauses.due", Some(at_ms), None).await
    }

    async fn open_pauses_of_run(&self, run_id: &str) -> Result<Vec<PauseRecord>, StorageError> {
        self.open_pauses("wait_pauses.of_run", None, Some(run_id))
            .await
    }

    async fn insert_connection_wait(&self, wait: &ConnectionWait) -> Result<(), StorageError> {
        self.insert_connection_wait_row(wait).await
    }

    async fn get_connection_wait(
        &self,
        token_id: &str,
    ) -> Result<Option<ConnectionWait>, StorageError> {
        self.get_connection_wait_row(token_id).await
    }

    async fn update_connection_wait_if(
        &self,
        wait: &ConnectionWait,
        expected: PauseStatus,
    ) -> Result<bool, StorageError> {
        self.update_connection_wait_row(wait, expected).await
    }

    async fn open_connection_waits(
        &self,
        query: &ConnectionWaitQuery,
    ) -> Result<Vec<ConnectionWait>, StorageError> {
        self.open_connection_wait_rows(query).await
    }

    /// One transaction, as [`WaitStore::update_pause_journaled`] is here.
    async fn update_connection_wait_journaled(
        &self,
        wait: &ConnectionWait,
        expected: PauseStatus,
        journal: WaitJournal<'_>,
    ) -> Result<bool, StorageError> {
        self.update_connection_wait_row_journaled(wait, expected, journal)
            .await
    }

    /// In one transaction: moves the pause on when its stored status is still `expected`
    /// (`open → answered` takes the token) and appends `journal` after the run's last
    /// entry (`journal.runs` is not used: the journal is in this database). False: the
    /// status was not `expected` (answered, timed out or closed meanwhile), and nothing was
    /// written.
    async fn update_pause_journaled(
        &self,
        pause: &PauseRecord,
        expected: PauseStatus,
        journal: WaitJournal<'_>,
    ) -> Result<bool, StorageError> {
        let op = "wait_pauses.answer";
        let entries = journal_rows(&journal);
        crate::on_pool!(self.db, write, |pool| async {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            let taken = update_pause_if!(pause, expected)
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

    /// In one transaction: replaces the approval's row when its stored status is still
    /// `expected`, inserts `successor` (an escalation's next tier) and appends `journal` as
    /// [`WaitStore::update_pause_journaled`] does. False: the status was not `expected`
    /// (another decision, a timeout came first), and nothing was written.
    async fn update_approval_journaled(
        &self,
        approval: &Approval,
        expected: ApprovalStatus,
        successor: Option<&Approval>,
        journal: Option<WaitJournal<'_>>,
    ) -> Result<bool, StorageError> {
        let op = "approvals.decide";
        let body = encode(approval)?;
        let next = successor.map(|s| encode(s).map(|b| (s, b))).transpose()?;
        let entries = journal.as_ref().map(journal_rows).unwrap_or_default();
        crate::on_pool!(self.db, write, |pool| async {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            let taken = update_approval_if!(approval, &body, expected)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query(op))?
                .rows_affected();
            if taken == 0 {
                tx.rollback().await.map_err(StoreError::query(op))?;
                return Ok(false);
            }
            if let Some((next, next_body)) = &next {
                insert_approval!(next, next_body)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::query(op))?;
            }
            if let Some(j) = &journal {
                append_after_last!(tx, j.run_id, &entries, op)?;
            }
            tx.commit().await.map_err(StoreError::query(op))?;
            Ok(true)
        }
        .await)
        .map_err(StoreError::storage(op))
    }
}
