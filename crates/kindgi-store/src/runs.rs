//! Runs and their journal: two tables, `runs` (one row per run, updated as it moves) and
//! `run_journal` (append-only entries keyed by `(run_id, sequence)`). [`RunsStore`] is
//! `kindgi_core`'s [`RunStore`] port on them: it reads and writes core's [`RunRecord`] and
//! [`JournalEntry`] and answers core's [`RunQuery`], with no row type of its own between.
//!
//! Statuses and journal kinds are stored as their wire strings and payloads as JSON; a row
//! whose status or kind core does not know is [`StorageError::Corrupt`]. The run's executor
//! assigns journal sequence numbers (one executor per run), and the primary key refuses a
//! duplicate ([`StorageError::DuplicateSequence`]), so two writers can never interleave a
//! journal silently. JSON is stored as TEXT on both dialects; timestamps are Unix
//! milliseconds (`BIGINT`), the record's RFC 3339 times converted at this boundary.
//!
//! Every statement is written once, with `$N` placeholders, through
//! [`on_pool!`](crate::on_pool). Columns added after the first release (project, segments,
//! trace, who started the run, its agent and trigger, replays) are added by [`migrate`] to
//! an older table: `ADD COLUMN IF NOT EXISTS` on PostgreSQL, a `pragma_table_info` check on
//! SQLite.

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::ids::{format_millis, parse_millis};
use kindgi_core::ports::{RunQuery, RunStore};
use kindgi_core::run::{JournalEntry, JournalKind, RunAgent, RunMeta, RunRecord, RunStatus};
use kindgi_core::trigger::StartedBy;
use serde_json::Value;
use sqlx::Row;

use crate::group_commit::UPDATE_RUN;
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
    "started_by", // person | key | schedule | webhook | event | mail
    "agent",      // JSON {id, version, conversationId?, via?}
    "agent_id",
    "agent_version",
    "run_trigger", // JSON {triggerId, kind, fireId, scheduledFor?}
    "trigger_id",
    "replay_of",
    "eval_run_id",
    "started_by_actor", // user:<id> | service_account:<id>
    "unattended",       // {toolsAllowed?, mailbox?} (kindgi_core::Unattended)
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

// Which replay runs a list holds: core's (the run-store port's query uses it too).
pub use kindgi_core::ports::ReplayFilter;

/// The runs store over a [`Database`]: the [`RunStore`] port on SQLite or PostgreSQL.
/// Cheap to clone.
#[derive(Debug, Clone)]
pub struct RunsStore {
    db: Database,
    /// The group commit of this store's journal writes, started on first use (it needs a
    /// tokio runtime); shared by its clones.
    journal: std::sync::Arc<std::sync::OnceLock<Option<crate::group_commit::GroupCommit>>>,
}

fn json_text(v: &Value) -> String {
    v.to_string()
}

fn parse_json(what: &str, text: Option<String>) -> Result<Option<Value>, StoreError> {
    match text {
        None => Ok(None),
        Some(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| corrupt(what, e.to_string())),
    }
}

/// A stored JSON column as its record type (`null` or absent is `None`).
/// The `started_by` column as its word (an unknown word is a corrupt row, named).
fn started_by(what: &str, text: Option<String>) -> Result<Option<StartedBy>, StoreError> {
    text.map(|t| {
        StartedBy::parse(&t).ok_or_else(|| corrupt(what, format!("unknown startedBy \"{t}\"")))
    })
    .transpose()
}

fn typed<T: serde::de::DeserializeOwned>(
    what: &str,
    v: Option<Value>,
) -> Result<Option<T>, StoreError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v)
            .map(Some)
            .map_err(|e| corrupt(what, e.to_string())),
    }
}

fn corrupt(what: &str, reason: String) -> StoreError {
    StoreError::Corrupt {
        what: what.to_owned(),
        reason,
    }
}

/// The run's segments column: absent when it has none.
fn segments_json(meta: &RunMeta) -> Option<String> {
    (!meta.segments.is_empty())
        .then(|| serde_json::to_value(&meta.segments).unwrap_or(Value::Null))
        .as_ref()
        .map(json_text)
}

/// The filterable copy of the trigger's `triggerId`.
fn trigger_id(meta: &RunMeta) -> Option<String> {
    meta.trigger.as_ref().map(|t| t.trigger_id.clone())
}

macro_rules! col {
    ($row:expr, $name:literal) => {
        $row.try_get($name)
            .map_err(StoreError::query("runs.decode"))?
    };
}

/// A `runs` row as a [`RunRecord`] (the `options` column is not part of the record).
macro_rules! run_from_row {
    ($row:expr) => {{
        let row = $row;
        let id: String = col!(row, "id");
        let what = format!("run {id}");
        let input_text: String = col!(row, "input");
        let status: String = col!(row, "status");
        let status = RunStatus::parse(&status)
            .ok_or_else(|| corrupt(&what, format!("unknown status \"{status}\"")))?;
        let completed_at: Option<i64> = col!(row, "completed_at");
        RunRecord {
            tenant_id: col!(row, "tenant_id"),
            flow_id: col!(row, "flow_id"),
            flow_version: col!(row, "flow_version"),
            status,
            dry_run: col!(row, "dry_run"),
            input: parse_json(&what, Some(input_text))?.unwrap_or(Value::Null),
            output: parse_json(&what, col!(row, "output"))?,
            failure_message: col!(row, "failure_message"),
            parent_run_id: col!(row, "parent_run_id"),
            parent_node_id: col!(row, "parent_node_id"),
            created_at: format_millis(col!(row, "created_at")),
            updated_at: format_millis(col!(row, "updated_at")),
            completed_at: completed_at.map(format_millis),
            meta: RunMeta {
                project_id: col!(row, "project_id"),
                segments: typed(&what, parse_json(&what, col!(row, "segments"))?)?
                    .unwrap_or_default(),
                trace_id: col!(row, "trace_id"),
                started_by: started_by(&what, col!(row, "started_by"))?,
                agent: typed::<RunAgent>(&what, parse_json(&what, col!(row, "agent"))?)?,
                trigger: typed(&what, parse_json(&what, col!(row, "run_trigger"))?)?,
                unattended: typed(&what, parse_json(&what, col!(row, "unattended"))?)?
                    .unwrap_or_default(),
                replay_of: col!(row, "replay_of"),
                eval_run_id: col!(row, "eval_run_id"),
                started_by_actor: col!(row, "started_by_actor"),
            },
            id,
        }
    }};
}

/// A `run_journal` row as a [`JournalEntry`].
macro_rules! entry_from_row {
    ($row:expr) => {{
        let row = $row;
        let run_id: String = col!(row, "run_id");
        let sequence: i64 = col!(row, "sequence");
        let what = format!("journal entry {run_id}#{sequence}");
        let kind: String = col!(row, "kind");
        JournalEntry {
            kind: JournalKind::parse(&kind)
                .ok_or_else(|| corrupt(&what, format!("unknown kind \"{kind}\"")))?,
            node_id: col!(row, "node_id"),
            scope: col!(row, "scope"),
            payload: parse_json(&what, col!(row, "payload"))?,
            timestamp: format_millis(col!(row, "timestamp")),
            sequence: u64::try_from(sequence).unwrap_or(0),
        }
    }};
}

/// `UPDATE_RUN` bound to `$run`'s moving parts (a `&RunRecord`).
macro_rules! bind_update {
    ($run:expr) => {{
        let run: &RunRecord = $run;
        sqlx::query(UPDATE_RUN)
            .bind(&run.id)
            .bind(run.status.as_str())
            .bind(run.output.as_ref().map(json_text))
            .bind(&run.failure_message)
            .bind(parse_millis(&run.updated_at))
            .bind(run.completed_at.as_deref().map(parse_millis))
    }};
}

const RUN_COLUMNS: &str = "id, tenant_id, flow_id, flow_version, status, dry_run, input, output, \
     failure_message, parent_run_id, parent_node_id, options, created_at, updated_at, completed_at, \
     project_id, segments, trace_id, started_by, agent, agent_id, agent_version, run_trigger, \
     trigger_id, replay_of, eval_run_id, started_by_actor, unattended";

const INSERT_RUN: &str = "INSERT INTO runs (id, tenant_id, flow_id, flow_version, status, dry_run, \
     input, output, failure_message, parent_run_id, parent_node_id, options, created_at, updated_at, \
     completed_at, project_id, segments, trace_id, started_by, agent, agent_id, agent_version, \
     run_trigger, trigger_id, replay_of, eval_run_id, started_by_actor, unattended) VALUES ($1, $2, \
     $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, \
     $23, $24, $25, $26, $27, $28)";

/// Inside the open transaction `$tx`, appends `$entries` (`&[JournalEntry]`) after the
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
                sqlx::query($crate::group_commit::INSERT_ENTRY)
                    .bind($run_id)
                    .bind(sequence)
                    .bind(e.kind.as_str())
                    .bind(&e.node_id)
                    .bind(&e.scope)
                    .bind(e.payload.as_ref().map(|v| v.to_string()))
                    .bind(kindgi_core::parse_millis(&e.timestamp))
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

/// `WHERE …` (or "") and its binds, numbered from `$1`, for `query`.
fn where_clause(query: &RunQuery) -> (String, Vec<Bind>) {
    let mut clauses: Vec<String> = Vec::new();
    let mut binds: Vec<Bind> = Vec::new();
    let push = |clauses: &mut Vec<String>, binds: &mut Vec<Bind>, sql: &str, b: Bind| {
        binds.push(b);
        clauses.push(sql.replace('?', &format!("${}", binds.len())));
    };
    let text = |s: &Option<String>| s.clone().map(Bind::Text);
    for (column, value) in [
        ("tenant_id", text(&query.tenant_id)),
        ("project_id", text(&query.project_id)),
        ("flow_id", text(&query.flow_id)),
        ("flow_version", text(&query.flow_version)),
        ("agent_id", text(&query.agent_id)),
        ("agent_version", text(&query.agent_version)),
        ("parent_run_id", text(&query.parent_run_id)),
        ("trigger_id", text(&query.trigger_id)),
        ("eval_run_id", text(&query.eval_run_id)),
    ] {
        if let Some(v) = value {
            push(&mut clauses, &mut binds, &format!("{column} = ?"), v);
        }
    }
    if !query.statuses.is_empty() {
        let mut marks = Vec::new();
        for s in &query.statuses {
            binds.push(Bind::Text(s.as_str().to_owned()));
            marks.push(format!("${}", binds.len()));
        }
        clauses.push(format!("status IN ({})", marks.join(", ")));
    }
    if !query.started_by.is_empty() {
        let mut marks = Vec::new();
        for b in &query.started_by {
            binds.push(Bind::Text(b.as_str().to_owned()));
            marks.push(format!("${}", binds.len()));
        }
        clauses.push(format!("started_by IN ({})", marks.join(", ")));
    }
    if query.top_level_only {
        clauses.push("parent_run_id IS NULL".into());
    }
    if query.children_only {
        clauses.push("parent_run_id IS NOT NULL".into());
    }
    match query.replays {
        ReplayFilter::Include => {}
        ReplayFilter::Exclude => clauses.push("replay_of IS NULL".into()),
        ReplayFilter::Only => clauses.push("replay_of IS NOT NULL".into()),
    }
    if let Some(t) = query.created_after {
        push(&mut clauses, &mut binds, "created_at > ?", Bind::Int(t));
    }
    if let Some(t) = query.created_before {
        push(&mut clauses, &mut binds, "created_at < ?", Bind::Int(t));
    }
    if let Some((at, id)) = &query.after {
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
        Self {
            db,
            journal: std::sync::Arc::default(),
        }
    }

    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Appends `entries` of run `run_id` (each with its own sequence) and, in the same
    /// transaction, writes `run`'s moving parts (as [`RunStore::update_run`]) — one commit
    /// for "these steps happened, and the run is now in this state", shared with the writes
    /// of other runs made at the same time ([`crate::group_commit`]).
    async fn append_in_tx(
        &self,
        run_id: &str,
        entries: &[JournalEntry],
        run: Option<&RunRecord>,
    ) -> Result<(), StoreError> {
        let write = crate::group_commit::JournalWrite::new(run_id, entries, run);
        if write.is_empty() {
            return Ok(());
        }
        let group = self
            .journal
            .get_or_init(|| crate::group_commit::GroupCommit::start(self.db.backend()));
        match group {
            Some(group) => group.write(self.db.backend(), write).await,
            None => crate::group_commit::write_batch(self.db.backend(), &[&write]).await,
        }
    }
}

#[async_trait]
impl RunStore for RunsStore {
    async fn insert_run(&self, run: &RunRecord) -> Result<(), StorageError> {
        let m = &run.meta;
        let input = json_text(&run.input);
        let output = run.output.as_ref().map(json_text);
        let agent = m.agent.as_ref().and_then(|a| serde_json::to_value(a).ok());
        let agent = agent.as_ref().map(json_text);
        let trigger = m
            .trigger
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok());
        let trigger = trigger.as_ref().map(json_text);
        let unattended = (!m.unattended.is_empty())
            .then(|| serde_json::to_value(&m.unattended).ok())
            .flatten();
        let unattended = unattended.as_ref().map(json_text);
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(INSERT_RUN)
                .bind(&run.id)
                .bind(&run.tenant_id)
                .bind(&run.flow_id)
                .bind(&run.flow_version)
                .bind(run.status.as_str())
                .bind(run.dry_run)
                .bind(&input)
                .bind(&output)
                .bind(&run.failure_message)
                .bind(&run.parent_run_id)
                .bind(&run.parent_node_id)
                .bind(None::<String>) // options: not part of the record
                .bind(parse_millis(&run.created_at))
                .bind(parse_millis(&run.updated_at))
                .bind(run.completed_at.as_deref().map(parse_millis))
                .bind(&m.project_id)
                .bind(segments_json(m))
                .bind(&m.trace_id)
                .bind(m.started_by.map(StartedBy::as_str))
                .bind(&agent)
                .bind(m.agent.as_ref().map(|a| a.id.clone()))
                .bind(m.agent.as_ref().map(|a| a.version.clone()))
                .bind(&trigger)
                .bind(trigger_id(m))
                .bind(&m.replay_of)
                .bind(&m.eval_run_id)
                .bind(&m.started_by_actor)
                .bind(&unattended)
                .execute(pool)
                .await
                .map(|_| ())
        })
        .map_err(StoreError::query("runs.insert"))
        .map_err(StoreError::storage("runs.insert_run"))
    }

    async fn update_run(&self, run: &RunRecord) -> Result<(), StorageError> {
        let affected = crate::on_pool!(self.db, write, |pool| {
            bind_update!(run)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("runs.update"))
        .map_err(StoreError::storage("runs.update_run"))?;
        if affected > 0 {
            Ok(())
        } else {
            Err(StorageError::NotFound {
                op: "runs.update_run",
                what: format!("run {}", run.id),
            })
        }
    }

    async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, StorageError> {
        let got: Result<_, StoreError> = async {
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
        .await;
        got.map_err(StoreError::storage("runs.get_run"))
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, StorageError> {
        let (clause, binds) = where_clause(query);
        let mut sql =
            format!("SELECT {RUN_COLUMNS} FROM runs{clause} ORDER BY created_at DESC, id DESC");
        if let Some(limit) = query.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let listed: Result<_, StoreError> = async {
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
        .await;
        listed.map_err(StoreError::storage("runs.list_runs"))
    }

    async fn append(&self, run_id: &str, entries: &[JournalEntry]) -> Result<(), StorageError> {
        self.append_and_update(run_id, entries, None).await
    }

    async fn append_and_update(
        &self,
        run_id: &str,
        entries: &[JournalEntry],
        run: Option<&RunRecord>,
    ) -> Result<(), StorageError> {
        self.append_in_tx(run_id, entries, run).await.map_err(|e| {
            // The primary key refused a `(run, sequence)`: another executor writes the run.
            if e.is_unique_violation() {
                StorageError::DuplicateSequence {
                    run_id: run_id.to_owned(),
                    sequence: entries.first().map(|e| e.sequence).unwrap_or(0),
                }
            } else {
                e.into_storage("runs.append")
            }
        })
    }

    async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, StorageError> {
        let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let limit = i64::from(limit.unwrap_or(u32::MAX));
        let read: Result<_, StoreError> = async {
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
        .await;
        read.map_err(StoreError::storage("runs.journal"))
    }
}
