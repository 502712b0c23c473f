//! Runs and their journal: two tables, `runs` (one row per run, updated as it moves) and
//! `run_journal` (append-only entries keyed by `(run_id, sequence)`).
//!
//! The store is deliberately untyped about the runtime's vocabulary: statuses and journal
//! kinds are strings and payloads are JSON, so the runtime owns their meaning and this module
//! only keeps them durable. The run's executor assigns journal sequence numbers (one executor
//! per run), and the primary key refuses a duplicate, so two writers can never interleave a
//! journal silently. JSON is stored as TEXT on both dialects; timestamps are Unix
//! milliseconds (`BIGINT`).

use serde_json::Value;
use sqlx::Row;

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

/// Create the runs/journal tables (idempotent). Called by [`Database::migrate`].
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("runs", SQLITE, POSTGRES).await
}

/// One row of `runs`.
#[derive(Debug, Clone, PartialEq)]
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

/// Which runs [`RunsStore::list`] returns, newest first.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only these statuses (any when empty).
    pub statuses: Vec<String>,
    pub flow_id: Option<String>,
    /// Only top-level runs (no parent).
    pub top_level_only: bool,
    /// Only runs created strictly before this many milliseconds (a cursor).
    pub created_before: Option<i64>,
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

macro_rules! run_from_row {
    ($row:expr, $dry:expr) => {{
        let row = $row;
        let id: String = row
            .try_get("id")
            .map_err(StoreError::query("runs.decode"))?;
        let input_text: String = row
            .try_get("input")
            .map_err(StoreError::query("runs.decode"))?;
        let what = format!("run {id}");
        StoredRun {
            tenant_id: row
                .try_get("tenant_id")
                .map_err(StoreError::query("runs.decode"))?,
            flow_id: row
                .try_get("flow_id")
                .map_err(StoreError::query("runs.decode"))?,
            flow_version: row
                .try_get("flow_version")
                .map_err(StoreError::query("runs.decode"))?,
            status: row
                .try_get("status")
                .map_err(StoreError::query("runs.decode"))?,
            dry_run: $dry,
            input: parse_json(&what, Some(input_text))?.unwrap_or(Value::Null),
            output: parse_json(
                &what,
                row.try_get("output")
                    .map_err(StoreError::query("runs.decode"))?,
            )?,
            failure_message: row
                .try_get("failure_message")
                .map_err(StoreError::query("runs.decode"))?,
            parent_run_id: row
                .try_get("parent_run_id")
                .map_err(StoreError::query("runs.decode"))?,
            parent_node_id: row
                .try_get("parent_node_id")
                .map_err(StoreError::query("runs.decode"))?,
            options: parse_json(
                &what,
                row.try_get("options")
                    .map_err(StoreError::query("runs.decode"))?,
            )?,
            created_at: row
                .try_get("created_at")
                .map_err(StoreError::query("runs.decode"))?,
            updated_at: row
                .try_get("updated_at")
                .map_err(StoreError::query("runs.decode"))?,
            completed_at: row
                .try_get("completed_at")
                .map_err(StoreError::query("runs.decode"))?,
            id,
        }
    }};
}

macro_rules! entry_from_row {
    ($row:expr) => {{
        let row = $row;
        let run_id: String = row
            .try_get("run_id")
            .map_err(StoreError::query("run_journal.decode"))?;
        let sequence: i64 = row
            .try_get("sequence")
            .map_err(StoreError::query("run_journal.decode"))?;
        let what = format!("journal entry {run_id}#{sequence}");
        StoredJournalEntry {
            kind: row
                .try_get("kind")
                .map_err(StoreError::query("run_journal.decode"))?,
            node_id: row
                .try_get("node_id")
                .map_err(StoreError::query("run_journal.decode"))?,
            scope: row
                .try_get("scope")
                .map_err(StoreError::query("run_journal.decode"))?,
            payload: parse_json(
                &what,
                row.try_get("payload")
                    .map_err(StoreError::query("run_journal.decode"))?,
            )?,
            timestamp: row
                .try_get("timestamp")
                .map_err(StoreError::query("run_journal.decode"))?,
            run_id,
            sequence,
        }
    }};
}

const RUN_COLUMNS: &str = "id, tenant_id, flow_id, flow_version, status, dry_run, input, output, \
     failure_message, parent_run_id, parent_node_id, options, created_at, updated_at, completed_at";

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
        let sql_sqlite = format!(
            "INSERT INTO runs ({RUN_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
        );
        let sql_pg = format!(
            "INSERT INTO runs ({RUN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
        );
        match self.db.backend() {
            Backend::Sqlite(p) => {
                sqlx::query(&sql_sqlite)
                    .bind(&run.id)
                    .bind(&run.tenant_id)
                    .bind(&run.flow_id)
                    .bind(&run.flow_version)
                    .bind(&run.status)
                    .bind(i64::from(run.dry_run))
                    .bind(&input)
                    .bind(&output)
                    .bind(&run.failure_message)
                    .bind(&run.parent_run_id)
                    .bind(&run.parent_node_id)
                    .bind(&options)
                    .bind(run.created_at)
                    .bind(run.updated_at)
                    .bind(run.completed_at)
                    .execute(&p.writer)
                    .await
                    .map_err(StoreError::query("runs.insert"))?;
            }
            Backend::Postgres(pool) => {
                sqlx::query(&sql_pg)
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
                    .execute(pool)
                    .await
                    .map_err(StoreError::query("runs.insert"))?;
            }
        }
        Ok(())
    }

    /// Writes a run's moving parts: status, output, failure message, timestamps.
    /// Returns false when no run has that id.
    pub async fn update_run(&self, run: &StoredRun) -> Result<bool, StoreError> {
        let output = run.output.as_ref().map(json_text);
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE runs SET status = $2, output = $3, failure_message = $4, updated_at = $5, completed_at = $6 WHERE id = $1",
            )
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
                Some(row) => {
                    let dry: bool = row
                        .try_get("dry_run")
                        .map_err(StoreError::query("runs.decode"))?;
                    Ok(Some(run_from_row!(row, dry)))
                }
            }
        })
    }

    /// Runs matching `filter`, newest first.
    pub async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<StoredRun>, StoreError> {
        // Build the WHERE clause with numbered placeholders for the dialect.
        let pg = matches!(self.db.backend(), Backend::Postgres(_));
        let mut clauses: Vec<String> = Vec::new();
        let mut n = 0;
        let ph = |n: &mut usize| {
            *n += 1;
            if pg { format!("${n}") } else { format!("?{n}") }
        };
        if !filter.statuses.is_empty() {
            let list: Vec<String> = filter.statuses.iter().map(|_| ph(&mut n)).collect();
            clauses.push(format!("status IN ({})", list.join(", ")));
        }
        if filter.flow_id.is_some() {
            clauses.push(format!("flow_id = {}", ph(&mut n)));
        }
        if filter.top_level_only {
            clauses.push("parent_run_id IS NULL".to_owned());
        }
        if filter.created_before.is_some() {
            clauses.push(format!("created_at < {}", ph(&mut n)));
        }
        let mut sql = format!("SELECT {RUN_COLUMNS} FROM runs");
        if !clauses.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&clauses.join(" AND "));
        }
        sql.push_str(" ORDER BY created_at DESC, id DESC");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        macro_rules! bind_all {
            ($q:expr) => {{
                let mut q = $q;
                for s in &filter.statuses {
                    q = q.bind(s);
                }
                if let Some(f) = &filter.flow_id {
                    q = q.bind(f);
                }
                if let Some(c) = filter.created_before {
                    q = q.bind(c);
                }
                q
            }};
        }
        let mut out = Vec::new();
        match self.db.backend() {
            Backend::Sqlite(p) => {
                let rows = bind_all!(sqlx::query(&sql))
                    .fetch_all(&p.reader)
                    .await
                    .map_err(StoreError::query("runs.list"))?;
                for row in rows {
                    let dry: i64 = row
                        .try_get("dry_run")
                        .map_err(StoreError::query("runs.decode"))?;
                    out.push(run_from_row!(row, dry != 0));
                }
            }
            Backend::Postgres(pool) => {
                let rows = bind_all!(sqlx::query(&sql))
                    .fetch_all(pool)
                    .await
                    .map_err(StoreError::query("runs.list"))?;
                for row in rows {
                    let dry: bool = row
                        .try_get("dry_run")
                        .map_err(StoreError::query("runs.decode"))?;
                    out.push(run_from_row!(row, dry));
                }
            }
        }
        Ok(out)
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
        match self.db.backend() {
            Backend::Sqlite(p) => {
                let mut tx = p.writer.begin().await.map_err(StoreError::query(op))?;
                for e in entries {
                    sqlx::query(
                        "INSERT INTO run_journal (run_id, sequence, kind, node_id, scope, payload, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )
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
                    sqlx::query(
                        "UPDATE runs SET status = ?2, output = ?3, failure_message = ?4, updated_at = ?5, completed_at = ?6 WHERE id = ?1",
                    )
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
                tx.commit().await.map_err(StoreError::query(op))?;
            }
            Backend::Postgres(pool) => {
                let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
                for e in entries {
                    sqlx::query(
                        "INSERT INTO run_journal (run_id, sequence, kind, node_id, scope, payload, timestamp) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    )
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
                    sqlx::query(
                        "UPDATE runs SET status = $2, output = $3, failure_message = $4, updated_at = $5, completed_at = $6 WHERE id = $1",
                    )
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
                tx.commit().await.map_err(StoreError::query(op))?;
            }
        }
        Ok(())
    }

    /// A run's journal entries with `sequence > after`, in order, at most `limit`.
    pub async fn journal(
        &self,
        run_id: &str,
        after: Option<i64>,
        limit: Option<u32>,
    ) -> Result<Vec<StoredJournalEntry>, StoreError> {
        let after = after.unwrap_or(0);
        let limit = i64::from(limit.unwrap_or(u32::MAX));
        let mut out = Vec::new();
        match self.db.backend() {
            Backend::Sqlite(p) => {
                let rows = sqlx::query(
                    "SELECT run_id, sequence, kind, node_id, scope, payload, timestamp FROM run_journal WHERE run_id = ?1 AND sequence > ?2 ORDER BY sequence LIMIT ?3",
                )
                .bind(run_id)
                .bind(after)
                .bind(limit)
                .fetch_all(&p.reader)
                .await
                .map_err(StoreError::query("run_journal.read"))?;
                for row in rows {
                    out.push(entry_from_row!(row));
                }
            }
            Backend::Postgres(pool) => {
                let rows = sqlx::query(
                    "SELECT run_id, sequence, kind, node_id, scope, payload, timestamp FROM run_journal WHERE run_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3",
                )
                .bind(run_id)
                .bind(after)
                .bind(limit)
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("run_journal.read"))?;
                for row in rows {
                    out.push(entry_from_row!(row));
                }
            }
        }
        Ok(out)
    }
}
