//! Runs and their journal: two tables, `runs` (one row per run, updated as it moves) and
//! `run_journal` (append-only entries keyed by `(run_id, sequence)`).
//!
//! The store is deliberately untyped about the runtime's vocabulary: statuses and journal
//! kinds are strings and payloads are JSON, so the runtime owns their meaning and this module
//! only keeps them durable. The run's executor assigns journal sequence numbers (one executor
//! per run), and the primary key refuses a duplicate, so two writers can never interleave a
//! journal silently. JSON is stored as TEXT on both dialects; timestamps are Unix
//! milliseconds (`BIGINT`).
//!
//! Every statement is written once, with `$N` placeholders, through
//! [`on_pool!`](crate::on_pool). Columns added after the first release (project, segments,
//! trace, who started the run, its agent and trigger, replays) are added by [`migrate`] to
//! an older table: `ADD COLUMN IF NOT EXISTS` on PostgreSQL, a `pragma_table_info` check on
//! SQLite.

use serde_json::Value;
use sqlx::Row;

use crate::sql::{Bind, bind_all};
use crate::{Backend, Database, StoreError};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS runs (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        flow_id TEXT NOT NULL,
        flow_version TEXT NOT NULL,
        status TEXT NOT NULL,
        dry_run INTEGER NOT NULL DEFAULT 0,
        input TEXT NOT NULL,
        output TEXT,
        failure_message TEXT,
        parent_run_id TEXT,
        parent_node_id TEXT,
        options TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        completed_at BIGINT
    )",
    "CREATE INDEX IF NOT EXISTS runs_status_idx ON runs (status)",
    "CREATE INDEX IF NOT EXISTS runs_created_idx ON runs (created_at)",
    "CREATE INDEX IF NOT EXISTS runs_parent_idx ON runs (parent_run_id)",
    "CREATE TABLE IF NOT EXISTS run_journal (
        run_id TEXT NOT NULL,
        sequence BIGINT NOT NULL,
        kind TEXT NOT NULL,
        node_id TEXT,
        scope TEXT,
        payload TEXT,
        timestamp BIGINT NOT NULL,
        PRIMARY KEY (run_id, sequence)
    )",
];

const POSTGRES: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS runs (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        flow_id TEXT NOT NULL,
        flow_version TEXT NOT NULL,
        status TEXT NOT NULL,
        dry_run BOOLEAN NOT NULL DEFAULT FALSE,
        input TEXT NOT NULL,
        output TEXT,
        failure_message TEXT,
        parent_run_id TEXT,
        parent_node_id TEXT,
        options TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        completed_at BIGINT
    )",
    "CREATE INDEX IF NOT EXISTS runs_status_idx ON runs (status)",
    "CREATE INDEX IF NOT EXISTS runs_created_idx ON runs (created_at)",
    "CREATE INDEX IF NOT EXISTS runs_parent_idx ON runs (parent_run_id)",
    "CREATE TABLE IF NOT EXISTS run_journal (
        run_id TEXT NOT NULL,
        sequence BIGINT NOT NULL,
        kind TEXT NOT NULL,
        node_id TEXT,
        scope TEXT,
        payload TEXT,
        timestamp BIGINT NOT NULL,
        PRIMARY KEY (run_id, sequence)
    )",
];

/// Columns added to `runs` after its first release (all nullable TEXT; JSON where noted).
const ADDED_COLUMNS: &[&str] = &[
    "project_id",
    "segments", // JSON array of {key, value}
    "trace_id",
    "started_by", // person | key | schedule | webhook | event
    "agent",      // JSON {id, version, conversationId?, via?}
    "agent_id",
    "agent_version",
    "run_trigger", // JSON {triggerId, kind, fireId, scheduledFor?}
    "trigger_id",
    "replay_of",
    "eval_run_id",
];

/// Indexes over the added columns (created after the columns exist).
const ADDED_INDEXES: &[&str] = &[
    "CREATE INDEX IF NOT EXISTS runs_tenant_created_idx ON runs (tenant_id, created_at, id)",
    "CREATE INDEX IF NOT EXISTS runs_agent_idx ON runs (agent_id)",
    "CREATE INDEX IF NOT EXISTS runs_trigger_idx ON runs (trigger_id)",
];

/// Create the runs/journal tables and add the newer columns (idempotent). Called by
/// [`Database::migrate`].
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    let pg_columns: Vec<String> = ADDED_COLUMNS
        .iter()
        .map(|c| format!("ALTER TABLE runs ADD COLUMN IF NOT EXISTS {c} TEXT"))
        .collect();
    let mut postgres: Vec<&str> = POSTGRES.to_vec();
    postgres.extend(pg_columns.iter().map(String::as_str));
    postgres.extend(ADDED_INDEXES);
    if let Backend::Sqlite(pools) = db.backend() {
        db.apply_schema("runs", SQLITE, &[]).await?;
        add_sqlite_columns(&pools.writer).await?;
        return db.apply_schema("runs", ADDED_INDEXES, &[]).await;
    }
    db.apply_schema("runs", &[], &postgres).await
}

/// SQLite has no `ADD COLUMN IF NOT EXISTS`: add the columns `pragma_table_info` lacks. A
/// concurrent migration that added one first is not an error.
async fn add_sqlite_columns(writer: &sqlx::SqlitePool) -> Result<(), StoreError> {
    let err = |source| StoreError::Migrate {
        module: "runs",
        source,
    };
    let present: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info('runs')")
        .fetch_all(writer)
        .await
        .map_err(err)?;
    for column in ADDED_COLUMNS {
        if present.iter().any(|p| p == column) {
            continue;
        }
        let added = sqlx::query(&format!("ALTER TABLE runs ADD COLUMN {column} TEXT"))
            .execute(writer)
            .await;
        match added {
            Ok(_) => {}
            Err(e) if e.to_string().contains("duplicate column") => {}
            Err(e) => return Err(err(e)),
        }
    }
    Ok(())
}

/// One row of `runs`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoredRun {
    pub id: String,
    pub tenant_id: String,
    pub flow_id: String,
    pub flow_version: String,
    pub status: String,
    pub dry_run: bool,
    pub input: Value,
    pub output: Option<Value>,
    pub failure_message: Option<String>,
    pub parent_run_id: Option<String>,
    pub parent_node_id: Option<String>,
    /// The options the run was started with (free-form, runtime-owned).
    pub options: Option<Value>,
    pub created_at: i64,
    pub updated_at: i64,
    pub completed_at: Option<i64>,
    pub project_id: Option<String>,
    /// JSON array of `{key, value}`.
    pub segments: Option<Value>,
    pub trace_id: Option<String>,
    pub started_by: Option<String>,
    /// JSON `{id, version, conversationId?, via?}`; `agent_id`/`agent_version` are its
    /// filterable copy.
    pub agent: Option<Value>,
    pub agent_id: Option<String>,
    pub agent_version: Option<String>,
    /// JSON `{triggerId, kind, fireId, scheduledFor?}`; `trigger_id` is its filterable copy.
    pub trigger: Option<Value>,
    pub trigger_id: Option<String>,
    pub replay_of: Option<String>,
    pub eval_run_id: Option<String>,
}

/// One row of `run_journal`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredJournalEntry {
    pub run_id: String,
    pub sequence: i64,
    pub kind: String,
    pub node_id: Option<String>,
    pub scope: Option<String>,
    pub payload: Option<Value>,
    pub timestamp: i64,
}

// Which replay runs a list holds: core's (the run-store port's query uses it too).
pub use kindgi_core::ports::ReplayFilter;

/// Which runs [`RunsStore::list_runs`] returns, `created_at desc, id desc`.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    pub tenant_id: Option<String>,
    pub project_id: Option<String>,
    /// Only these statuses (any when empty).
    pub statuses: Vec<String>,
    pub flow_id: Option<String>,
    pub flow_version: Option<String>,
    pub agent_id: Option<String>,
    pub agent_version: Option<String>,
    pub parent_run_id: Option<String>,
    /// Only top-level runs (no parent).
    pub top_level_only: bool,
    /// Only child runs (a parent).
    pub children_only: bool,
    pub trigger_id: Option<String>,
    pub replays: ReplayFilter,
    pub eval_run_id: Option<String>,
    /// Only runs created strictly after / before these milliseconds.
    pub created_after: Option<i64>,
    pub created_before: Option<i64>,
    /// A page cursor: only runs strictly after `(created_at, id)` in the list's order.
    pub after: Option<(i64, String)>,
    pub limit: Option<u32>,
}

/// The runs store over a [`Database`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct RunsStore {
    db: Database,
}

fn json_text(v: &Value) -> String {
    v.to_string()
}

fn parse_json(what: &str, text: Option<String>) -> Result<Option<Value>, StoreError> {
    match text {
        None => Ok(None),
        Some(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                what: what.to_owned(),
                reason: e.to_string(),
            }),
    }
}

macro_rules! col {
    ($row:expr, $name:literal) => {
        $row.try_get($name)
            .map_err(StoreError::query("runs.decode"))?
    };
}

macro_rules! run_from_row {
    ($row:expr) => {{
        let row = $row;
        let id: String = col!(row, "id");
        let what = format!("run {id}");
        let input_text: String = col!(row, "input");
        StoredRun {
            tenant_id: col!(row, "tenant_id"),
            flow_id: col!(row, "flow_id"),
            flow_version: col!(row, "flow_version"),
            status: col!(row, "status"),
            dry_run: col!(row, "dry_run"),
            input: parse_json(&what, Some(input_text))?.unwrap_or(Value::Null),
            output: parse_json(&what, col!(row, "output"))?,
            failure_message: col!(row, "failure_message"),
            parent_run_id: col!(row, "parent_run_id"),
            parent_node_id: col!(row, "parent_node_id"),
            options: parse_json(&what, col!(row, "options"))?,
            created_at: col!(row, "created_at"),
            updated_at: col!(row, "updated_at"),
            completed_at: col!(row, "completed_at"),
            project_id: col!(row, "project_id"),
            segments: parse_json(&what, col!(row, "segments"))?,
            trace_id: col!(row, "trace_id"),
            started_by: col!(row, "started_by"),
            agent: parse_json(&what, col!(row, "agent"))?,
            agent_id: col!(row, "agent_id"),
            agent_version: col!(row, "agent_version"),
            trigger: parse_json(&what, col!(row, "run_trigger"))?,
            trigger_id: col!(row, "trigger_id"),
            replay_of: col!(row, "replay_of"),
            eval_run_id: col!(row, "eval_run_id"),
            id,
        }
    }};
}

macro_rules! entry_from_row {
    ($row:expr) => {{
        let row = $row;
        let run_id: String = col!(row, "run_id");
        let sequence: i64 = col!(row, "sequence");
        let what = format!("journal entry {run_id}#{sequence}");
        StoredJournalEntry {
            kind: col!(row, "kind"),
            node_id: col!(row, "node_id"),
            scope: col!(row, "scope"),
            payload: parse_json(&what, col!(row, "payload"))?,
            timestamp: col!(row, "timestamp"),
            run_id,
            sequence,
        }
    }};
}

const RUN_COLUMNS: &str = "id, tenant_id, flow_id, flow_version, status, dry_run, input, output, \
     failure_message, parent_run_id, parent_node_id, options, created_at, updated_at, completed_at, \
     project_id, segments, trace_id, started_by, agent, agent_id, agent_version, run_trigger, \
     trigger_id, replay_of, eval_run_id";

const INSERT_RUN: &str = "INSERT INTO runs (id, tenant_id, flow_id, flow_version, status, dry_run, \
     input, output, failure_message, parent_run_id, parent_node_id, options, created_at, updated_at, \
     completed_at, project_id, segments, trace_id, started_by, agent, agent_id, agent_version, \
     run_trigger, trigger_id, replay_of, eval_run_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
     $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)";

const UPDATE_RUN: &str = "UPDATE runs SET status = $2, output = $3, failure_message = $4, \
     updated_at = $5, completed_at = $6 WHERE id = $1";

pub(crate) const INSERT_ENTRY: &str = "INSERT INTO run_journal (run_id, sequence, kind, node_id, scope, \
     payload, timestamp) VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Inside the open transaction `$tx`, appends `$entries` (`&[StoredJournalEntry]`) after the
/// last entry of run `$run_id`'s journal, evaluating to `Result<(), StoreError>`. For a writer
/// from outside the run's executor (an answer to its wait, a decision): the run's row is
/// taken first (a no-op `UPDATE`, a row lock on PostgreSQL), so two such writers of one run
/// append one after the other, then the sequences are read and assigned in the transaction
/// (each entry's own `sequence` is ignored).
macro_rules! append_after_last {
    ($tx:expr, $run_id:expr, $entries:expr, $op:expr) => {{
        async {
            sqlx::query("UPDATE runs SET updated_at = updated_at WHERE id = $1")
                .bind($run_id)
                .execute(&mut *$tx)
                .await
                .map_err($crate::StoreError::query($op))?;
            let row = sqlx::query(
                "SELECT COALESCE(MAX(sequence), 0) AS last FROM run_journal WHERE run_id = $1",
            )
            .bind($run_id)
            .fetch_one(&mut *$tx)
            .await
            .map_err($crate::StoreError::query($op))?;
            let last: i64 =
                sqlx::Row::try_get(&row, "last").map_err($crate::StoreError::query($op))?;
            for (e, sequence) in $entries.iter().zip(last + 1..) {
                sqlx::query($crate::runs::INSERT_ENTRY)
                    .bind($run_id)
                    .bind(sequence)
                    .bind(&e.kind)
                    .bind(&e.node_id)
                    .bind(&e.scope)
                    .bind(e.payload.as_ref().map(|v| v.to_string()))
                    .bind(e.timestamp)
                    .execute(&mut *$tx)
                    .await
                    .map_err($crate::StoreError::query($op))?;
            }
            Ok::<(), $crate::StoreError>(())
        }
        .await
    }};
}
pub(crate) use append_after_last;

/// `WHERE …` (or "") and its binds, numbered from `$1`, for `filter`.
fn where_clause(filter: &RunFilter) -> (String, Vec<Bind>) {
    let mut clauses: Vec<String> = Vec::new();
    let mut binds: Vec<Bind> = Vec::new();
    let push = |clauses: &mut Vec<String>, binds: &mut Vec<Bind>, sql: &str, b: Bind| {
        binds.push(b);
        clauses.push(sql.replace('?', &format!("${}", binds.len())));
    };
    let text = |s: &Option<String>| s.clone().map(Bind::Text);
    for (column, value) in [
        ("tenant_id", text(&filter.tenant_id)),
        ("project_id", text(&filter.project_id)),
        ("flow_id", text(&filter.flow_id)),
        ("flow_version", text(&filter.flow_version)),
        ("agent_id", text(&filter.agent_id)),
        ("agent_version", text(&filter.agent_version)),
        ("parent_run_id", text(&filter.parent_run_id)),
        ("trigger_id", text(&filter.trigger_id)),
        ("eval_run_id", text(&filter.eval_run_id)),
    ] {
        if let Some(v) = value {
            push(&mut clauses, &mut binds, &format!("{column} = ?"), v);
        }
    }
    if !filter.statuses.is_empty() {
        let mut marks = Vec::new();
        for s in &filter.statuses {
            binds.push(Bind::Text(s.clone()));
            marks.push(format!("${}", binds.len()));
        }
        clauses.push(format!("status IN ({})", marks.join(", ")));
    }
    if filter.top_level_only {
        clauses.push("parent_run_id IS NULL".into());
    }
    if filter.children_only {
        clauses.push("parent_run_id IS NOT NULL".into());
    }
    match filter.replays {
        ReplayFilter::Include => {}
        ReplayFilter::Exclude => clauses.push("replay_of IS NULL".into()),
        ReplayFilter::Only => clauses.push("replay_of IS NOT NULL".into()),
    }
    if let Some(t) = filter.created_after {
        push(&mut clauses, &mut binds, "created_at > ?", Bind::Int(t));
    }
    if let Some(t) = filter.created_before {
        push(&mut clauses, &mut binds, "created_at < ?", Bind::Int(t));
    }
    if let Some((at, id)) = &filter.after {
        binds.push(Bind::Int(*at));
        let a = binds.len();
        binds.push(Bind::Text(id.clone()));
        let b = binds.len();
        clauses.push(format!(
            "(created_at < ${a} OR (created_at = ${a} AND id < ${b}))"
        ));
    }
    if clauses.is_empty() {
        (String::new(), binds)
    } else {
        (format!(" WHERE {}", clauses.join(" AND ")), binds)
    }
}

impl RunsStore {
    pub fn new(db: Database) -> Self {
        Self { db }
    }

    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Inserts a new run.
    pub async fn insert_run(&self, run: &StoredRun) -> Result<(), StoreError> {
        let input = json_text(&run.input);
        let output = run.output.as_ref().map(json_text);
        let options = run.options.as_ref().map(json_text);
        let segments = run.segments.as_ref().map(json_text);
        let agent = run.agent.as_ref().map(json_text);
        let trigger = run.trigger.as_ref().map(json_text);
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(INSERT_RUN)
                .bind(&run.id)
                .bind(&run.tenant_id)
                .bind(&run.flow_id)
                .bind(&run.flow_version)
                .bind(&run.status)
                .bind(run.dry_run)
                .bind(&input)
                .bind(&output)
                .bind(&run.failure_message)
                .bind(&run.parent_run_id)
                .bind(&run.parent_node_id)
                .bind(&options)
                .bind(run.created_at)
                .bind(run.updated_at)
                .bind(run.completed_at)
                .bind(&run.project_id)
                .bind(&segments)
                .bind(&run.trace_id)
                .bind(&run.started_by)
                .bind(&agent)
                .bind(&run.agent_id)
                .bind(&run.agent_version)
                .bind(&trigger)
                .bind(&run.trigger_id)
                .bind(&run.replay_of)
                .bind(&run.eval_run_id)
                .execute(pool)
                .await
                .map(|_| ())
        })
        .map_err(StoreError::query("runs.insert"))
    }

    /// Writes a run's moving parts: status, output, failure message, timestamps.
    /// Returns false when no run has that id.
    pub async fn update_run(&self, run: &StoredRun) -> Result<bool, StoreError> {
        let output = run.output.as_ref().map(json_text);
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(UPDATE_RUN)
                .bind(&run.id)
                .bind(&run.status)
                .bind(&output)
                .bind(&run.failure_message)
                .bind(run.updated_at)
                .bind(run.completed_at)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("runs.update"))?;
        Ok(affected > 0)
    }

    pub async fn get_run(&self, id: &str) -> Result<Option<StoredRun>, StoreError> {
        crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"))
                .bind(id)
                .fetch_optional(pool)
                .await
                .map_err(StoreError::query("runs.get"))?;
            match row {
                None => Ok(None),
                Some(row) => Ok(Some(run_from_row!(row))),
            }
        })
    }

    /// Runs matching `filter`, `created_at desc, id desc`.
    pub async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<StoredRun>, StoreError> {
        let (clause, binds) = where_clause(filter);
        let mut sql =
            format!("SELECT {RUN_COLUMNS} FROM runs{clause} ORDER BY created_at DESC, id DESC");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        crate::on_pool!(self.db, read, |pool| {
            let q = bind_all!(sqlx::query(&sql), &binds);
            let rows = q
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("runs.list"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(run_from_row!(row));
            }
            Ok(out)
        })
    }

    /// Appends journal entries (in one transaction). Each carries its sequence; a duplicate
    /// `(run_id, sequence)` is refused.
    pub async fn append_journal(&self, entries: &[StoredJournalEntry]) -> Result<(), StoreError> {
        self.append_journal_and_update(entries, None).await
    }

    /// Appends journal entries and, in the same transaction, writes the run's moving parts
    /// (as [`RunsStore::update_run`]) — one commit for "these steps happened, and the run is
    /// now in this state".
    pub async fn append_journal_and_update(
        &self,
        entries: &[StoredJournalEntry],
        run: Option<&StoredRun>,
    ) -> Result<(), StoreError> {
        if entries.is_empty() && run.is_none() {
            return Ok(());
        }
        let op = "run_journal.append";
        crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            for e in entries {
                sqlx::query(INSERT_ENTRY)
                    .bind(&e.run_id)
                    .bind(e.sequence)
                    .bind(&e.kind)
                    .bind(&e.node_id)
                    .bind(&e.scope)
                    .bind(e.payload.as_ref().map(json_text))
                    .bind(e.timestamp)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::query(op))?;
            }
            if let Some(run) = run {
                sqlx::query(UPDATE_RUN)
                    .bind(&run.id)
                    .bind(&run.status)
                    .bind(run.output.as_ref().map(json_text))
                    .bind(&run.failure_message)
                    .bind(run.updated_at)
                    .bind(run.completed_at)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::query("runs.update"))?;
            }
            tx.commit().await.map_err(StoreError::query(op))
        })
    }

    /// A run's journal entries with `sequence > after`, in order, at most `limit`.
    pub async fn journal(
        &self,
        run_id: &str,
        after: Option<i64>,
        limit: Option<u32>,
    ) -> Result<Vec<StoredJournalEntry>, StoreError> {
        let after = after.unwrap_or(-1);
        let limit = i64::from(limit.unwrap_or(u32::MAX));
        crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(
                "SELECT run_id, sequence, kind, node_id, scope, payload, timestamp FROM run_journal WHERE run_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3",
            )
            .bind(run_id)
            .bind(after)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("run_journal.read"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(entry_from_row!(row));
            }
            Ok(out)
        })
    }
}
