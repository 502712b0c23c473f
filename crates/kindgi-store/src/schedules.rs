//! Schedules and their fire ledger ([`kindgi_core::ports::ScheduleStore`]) in SQL: tables
//! `schedules` (one row per schedule, tombstoned by `unregistered_at`) and `schedule_fires`
//! (one row per fire). The ledger's `UNIQUE (schedule_id, scheduled_for)` makes claiming an
//! occurrence the insert of its row: two loops — two replicas on one PostgreSQL database,
//! or a loop before and after a restart — cannot both fire it; the loser's insert does
//! nothing. Manual (`run-now`) fires have no `scheduled_for` (NULLs are distinct, on both
//! databases). `overlap: skip` reads this schedule's unfinished runs (`runs.trigger_id`)
//! and pending fires inside the claim's transaction, after locking the schedule's row, so
//! two claims of one schedule are decided one after the other. Every statement is written
//! once for both databases ([`on_pool!`](crate::on_pool)); times are Unix milliseconds.

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::ports::{ScheduleQuery, ScheduleStore};
use kindgi_core::schedule::{
    CatchUp, FireClaim, FireResult, Overlap, ScheduleFire, ScheduleRecord, ScheduleTarget,
    auto_pause_reason,
};
use kindgi_core::trigger::{AUTO_PAUSE_AFTER, FireOutcome, TriggerOwner, TriggerStatus};
use sqlx::Row;

use crate::{Database, StoreError};

const DDL: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS schedules (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        project_id TEXT NOT NULL,
        flow_id TEXT,
        flow_version TEXT,
        agent_id TEXT,
        agent_version TEXT,
        owner TEXT NOT NULL,
        owner_key_id TEXT,
        cron_expression TEXT NOT NULL,
        timezone TEXT,
        input TEXT,
        catch_up TEXT NOT NULL,
        overlap TEXT NOT NULL,
        starting_deadline_seconds BIGINT NOT NULL,
        label TEXT,
        status TEXT NOT NULL,
        status_reason TEXT,
        next_fire_at BIGINT,
        last_fired_at BIGINT,
        failures_in_row BIGINT NOT NULL DEFAULT 0,
        tools_allowed TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        unregistered_at BIGINT
    )",
    "CREATE INDEX IF NOT EXISTS schedules_tenant_created ON schedules (tenant, created_at, id)",
    "CREATE INDEX IF NOT EXISTS schedules_due ON schedules (status, next_fire_at)",
    "CREATE TABLE IF NOT EXISTS schedule_fires (
        id TEXT PRIMARY KEY,
        schedule_id TEXT NOT NULL,
        scheduled_for BIGINT,
        fired_at BIGINT NOT NULL,
        outcome TEXT NOT NULL,
        run_id TEXT,
        detail TEXT,
        counts_toward_pause BIGINT,
        missed_count BIGINT,
        manual BIGINT NOT NULL DEFAULT 0
    )",
    // The ledger: one fire per occurrence.
    "CREATE UNIQUE INDEX IF NOT EXISTS schedule_fires_occurrence
        ON schedule_fires (schedule_id, scheduled_for)",
    "CREATE INDEX IF NOT EXISTS schedule_fires_history
        ON schedule_fires (schedule_id, fired_at, id)",
    "CREATE INDEX IF NOT EXISTS schedule_fires_fired ON schedule_fires (fired_at)",
];

/// Creates the tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("schedules", DDL, DDL).await
}

/// The detail of a `skipped-overlap` fire.
pub const OVERLAP_DETAIL: &str = "The schedule's previous run is unfinished (overlap: skip)";

/// Schedules over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct ScheduleSqlStore {
    db: Database,
}

impl ScheduleSqlStore {
    pub fn new(db: Database) -> ScheduleSqlStore {
        ScheduleSqlStore { db }
    }
}

const COLUMNS: &str = "id, tenant, project_id, flow_id, flow_version, agent_id, agent_version, \
     owner, owner_key_id, cron_expression, timezone, input, catch_up, overlap, \
     starting_deadline_seconds, label, status, status_reason, next_fire_at, last_fired_at, \
     failures_in_row, tools_allowed, created_at, updated_at";

const FIRE_COLUMNS: &str = "id, schedule_id, scheduled_for, fired_at, outcome, run_id, detail, \
     counts_toward_pause, missed_count, manual";

/// A bind value of a statement built here (typed NULLs: PostgreSQL infers each
/// placeholder's type from its column).
enum Arg {
    Text(String),
    Int(i64),
    NullText,
    NullInt,
}

/// Binds each of `$args` (a `&[Arg]`) to the query `$q`, in order.
macro_rules! bind_args {
    ($q:expr, $args:expr) => {{
        let mut q = $q;
        for a in $args {
            q = match a {
                Arg::Text(s) => q.bind(s),
                Arg::Int(i) => q.bind(*i),
                Arg::NullText => q.bind(None::<String>),
                Arg::NullInt => q.bind(None::<i64>),
            };
        }
        q
    }};
}

fn decode<T>(what: &str, v: Option<T>) -> Result<T, sqlx::Error> {
    v.ok_or_else(|| sqlx::Error::Decode(format!("schedule row: bad {what}").into()))
}

fn from_row<R>(row: &R) -> Result<ScheduleRecord, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let flow_id: Option<String> = row.try_get("flow_id")?;
    let target = match flow_id {
        Some(flow_id) => ScheduleTarget::Flow {
            flow_id,
            flow_version: decode("flow_version", row.try_get("flow_version")?)?,
        },
        None => ScheduleTarget::Agent {
            agent_id: decode("agent_id", row.try_get("agent_id")?)?,
            agent_version: row.try_get("agent_version")?,
        },
    };
    let owner: String = row.try_get("owner")?;
    let owner: TriggerOwner = serde_json::from_str(&owner)
        .map_err(|e| sqlx::Error::Decode(format!("schedule owner: {e}").into()))?;
    let input: Option<String> = row.try_get("input")?;
    let input = input
        .map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|e| sqlx::Error::Decode(format!("schedule input: {e}").into()))?;
    let tools: Option<String> = row.try_get("tools_allowed")?;
    let tools_allowed_unattended = tools
        .map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|e| sqlx::Error::Decode(format!("schedule tools_allowed: {e}").into()))?
        .unwrap_or_default();
    let catch_up: String = row.try_get("catch_up")?;
    let overlap: String = row.try_get("overlap")?;
    let status: String = row.try_get("status")?;
    let deadline: i64 = row.try_get("starting_deadline_seconds")?;
    let failures: i64 = row.try_get("failures_in_row")?;
    Ok(ScheduleRecord {
        id: row.try_get("id")?,
        tenant: row.try_get("tenant")?,
        project_id: row.try_get("project_id")?,
        target,
        owner,
        owner_key_id: row.try_get("owner_key_id")?,
        cron_expression: row.try_get("cron_expression")?,
        timezone: row.try_get("timezone")?,
        input,
        catch_up: decode("catch_up", CatchUp::parse(&catch_up))?,
        overlap: decode("overlap", Overlap::parse(&overlap))?,
        starting_deadline_seconds: decode("deadline", u32::try_from(deadline).ok())?,
        label: row.try_get("label")?,
        status: decode("status", TriggerStatus::parse(&status))?,
        status_reason: row.try_get("status_reason")?,
        next_fire_at: row.try_get("next_fire_at")?,
        last_fired_at: row.try_get("last_fired_at")?,
        failures_in_row: u32::try_from(failures).unwrap_or(u32::MAX),
        tools_allowed_unattended,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn fire_from_row<R>(row: &R) -> Result<ScheduleFire, sqlx::Error>
where
    R: Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let outcome: String = row.try_get("outcome")?;
    let counts: Option<i64> = row.try_get("counts_toward_pause")?;
    let missed: Option<i64> = row.try_get("missed_count")?;
    let manual: i64 = row.try_get("manual")?;
    Ok(ScheduleFire {
        id: row.try_get("id")?,
        schedule_id: row.try_get("schedule_id")?,
        scheduled_for: row.try_get("scheduled_for")?,
        fired_at: row.try_get("fired_at")?,
        outcome: decode("outcome", FireOutcome::parse(&outcome))?,
        run_id: row.try_get("run_id")?,
        detail: row.try_get("detail")?,
        counts_toward_pause: counts.map(|c| c != 0),
        missed_count: missed.and_then(|m| u32::try_from(m).ok()),
        manual: manual != 0,
    })
}

fn failed(op: &'static str) -> impl FnOnce(sqlx::Error) -> StorageError {
    move |source| StoreError::Query { op, source }.into_storage(op)
}

fn json_text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// The binds of every column of [`COLUMNS`], in order.
fn binds(s: &ScheduleRecord) -> Vec<Arg> {
    let text = |v: Option<&str>| v.map_or(Arg::NullText, |v| Arg::Text(v.to_owned()));
    let int = |v: Option<i64>| v.map_or(Arg::NullInt, Arg::Int);
    let (flow_id, flow_version, agent_id, agent_version) = match &s.target {
        ScheduleTarget::Flow {
            flow_id,
            flow_version,
        } => (
            Some(flow_id.as_str()),
            Some(flow_version.as_str()),
            None,
            None,
        ),
        ScheduleTarget::Agent {
            agent_id,
            agent_version,
        } => (
            None,
            None,
            Some(agent_id.as_str()),
            agent_version.as_deref(),
        ),
    };
    vec![
        Arg::Text(s.id.clone()),
        Arg::Text(s.tenant.clone()),
        Arg::Text(s.project_id.clone()),
        text(flow_id),
        text(flow_version),
        text(agent_id),
        text(agent_version),
        Arg::Text(json_text(&s.owner)),
        text(s.owner_key_id.as_deref()),
        Arg::Text(s.cron_expression.clone()),
        text(s.timezone.as_deref()),
        s.input
            .as_ref()
            .map_or(Arg::NullText, |v| Arg::Text(json_text(v))),
        Arg::Text(s.catch_up.as_str().into()),
        Arg::Text(s.overlap.as_str().into()),
        Arg::Int(i64::from(s.starting_deadline_seconds)),
        text(s.label.as_deref()),
        Arg::Text(s.status.as_str().into()),
        text(s.status_reason.as_deref()),
        int(s.next_fire_at),
        int(s.last_fired_at),
        Arg::Int(i64::from(s.failures_in_row)),
        Arg::Text(json_text(&s.tools_allowed_unattended)),
        Arg::Int(s.created_at),
        Arg::Int(s.updated_at),
    ]
}

/// The schedule rows `sql` selects, its `$1…` bound to `binds`.
macro_rules! select {
    ($db:expr, $kind:ident, $sql:expr, $binds:expr, $from_row:expr) => {
        crate::on_pool!($db, $kind, |pool| {
            match bind_args!(sqlx::query($sql), $binds).fetch_all(pool).await {
                Ok(rows) => rows.iter().map($from_row).collect::<Result<Vec<_>, _>>(),
                Err(e) => Err(e),
            }
        })
    };
}

/// `rows_affected` of one statement.
macro_rules! exec {
    ($db:expr, $sql:expr, $binds:expr) => {
        crate::on_pool!($db, write, |pool| {
            bind_args!(sqlx::query($sql), $binds)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
    };
}

impl ScheduleSqlStore {
    async fn one(
        &self,
        where_: &str,
        binds: &[Arg],
        op: &'static str,
    ) -> Result<Option<ScheduleRecord>, StorageError> {
        let sql =
            format!("SELECT {COLUMNS} FROM schedules WHERE unregistered_at IS NULL AND {where_}");
        let rows = select!(self.db, write, &sql, binds, from_row).map_err(failed(op))?;
        Ok(rows.into_iter().next())
    }
}

#[async_trait]
impl ScheduleStore for ScheduleSqlStore {
    async fn create(&self, s: &ScheduleRecord) -> Result<(), StorageError> {
        let placeholders: Vec<String> = (1..=24).map(|i| format!("${i}")).collect();
        let sql = format!(
            "INSERT INTO schedules ({COLUMNS}) VALUES ({})",
            placeholders.join(", ")
        );
        let b = binds(s);
        exec!(self.db, &sql, &b)
            .map(drop)
            .map_err(failed("schedules.create"))
    }

    async fn get(&self, tenant: &str, id: &str) -> Result<Option<ScheduleRecord>, StorageError> {
        let b = [Arg::Text(tenant.into()), Arg::Text(id.into())];
        self.one("tenant = $1 AND id = $2", &b, "schedules.get")
            .await
    }

    async fn get_any(&self, id: &str) -> Result<Option<ScheduleRecord>, StorageError> {
        self.one("id = $1", &[Arg::Text(id.into())], "schedules.get_any")
            .await
    }

    async fn list(&self, q: &ScheduleQuery) -> Result<Vec<ScheduleRecord>, StorageError> {
        let mut binds = vec![Arg::Text(q.tenant.clone())];
        let mut sql = format!(
            "SELECT {COLUMNS} FROM schedules WHERE unregistered_at IS NULL AND tenant = $1"
        );
        if let Some(st) = q.status {
            binds.push(Arg::Text(st.as_str().into()));
            sql.push_str(&format!(" AND status = ${}", binds.len()));
        }
        if let Some(p) = &q.project_id {
            binds.push(Arg::Text(p.clone()));
            sql.push_str(&format!(" AND project_id = ${}", binds.len()));
        }
        if let Some((t, id)) = &q.after {
            binds.push(Arg::Int(*t));
            binds.push(Arg::Text(id.clone()));
            let (a, b) = (binds.len() - 1, binds.len());
            sql.push_str(&format!(
                " AND (created_at > ${a} OR (created_at = ${a} AND id > ${b}))"
            ));
        }
        binds.push(Arg::Int(i64::try_from(q.limit).unwrap_or(i64::MAX)));
        sql.push_str(&format!(" ORDER BY created_at, id LIMIT ${}", binds.len()));
        select!(self.db, read, &sql, &binds, from_row).map_err(failed("schedules.list"))
    }

    async fn update(&self, s: &ScheduleRecord) -> Result<bool, StorageError> {
        // Every column but the id (`$1`), the tenant (`$2`) and `created_at` (`$23`).
        let set: Vec<String> = COLUMNS
            .split(", ")
            .enumerate()
            .filter(|(i, _)| ![0, 1, 22].contains(i))
            .map(|(i, c)| format!("{} = ${}", c.trim(), i + 1))
            .collect();
        let sql = format!(
            "UPDATE schedules SET {} WHERE id = $1 AND tenant = $2 AND created_at = $23 \
             AND unregistered_at IS NULL",
            set.join(", ")
        );
        let b = binds(s);
        let n = exec!(self.db, &sql, &b).map_err(failed("schedules.update"))?;
        Ok(n > 0)
    }

    async fn unregister(&self, tenant: &str, id: &str, now: i64) -> Result<bool, StorageError> {
        let b = [
            Arg::Text(tenant.into()),
            Arg::Text(id.into()),
            Arg::Int(now),
        ];
        let sql = "UPDATE schedules SET unregistered_at = $3, updated_at = $3, next_fire_at = NULL \
                   WHERE tenant = $1 AND id = $2 AND unregistered_at IS NULL";
        let n = exec!(self.db, sql, &b).map_err(failed("schedules.unregister"))?;
        Ok(n > 0)
    }

    async fn due(&self, now: i64, limit: usize) -> Result<Vec<ScheduleRecord>, StorageError> {
        let b = [
            Arg::Int(now),
            Arg::Int(i64::try_from(limit).unwrap_or(i64::MAX)),
        ];
        let sql = format!(
            "SELECT {COLUMNS} FROM schedules WHERE status = 'active' AND unregistered_at IS NULL \
             AND next_fire_at <= $1 ORDER BY next_fire_at, id LIMIT $2"
        );
        select!(self.db, write, &sql, &b, from_row).map_err(failed("schedules.due"))
    }

    async fn next_due(&self) -> Result<Option<i64>, StorageError> {
        let sql = "SELECT MIN(next_fire_at) AS t FROM schedules \
                   WHERE status = 'active' AND unregistered_at IS NULL";
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(sql)
                .fetch_one(pool)
                .await
                .and_then(|r| r.try_get::<Option<i64>, _>("t"))
        })
        .map_err(failed("schedules.next_due"))
    }

    async fn advance(&self, id: &str, from: i64, to: Option<i64>) -> Result<bool, StorageError> {
        let b = [
            Arg::Text(id.into()),
            Arg::Int(from),
            to.map_or(Arg::NullInt, Arg::Int),
        ];
        let sql = "UPDATE schedules SET next_fire_at = $3 WHERE id = $1 AND next_fire_at = $2";
        let n = exec!(self.db, sql, &b).map_err(failed("schedules.advance"))?;
        Ok(n > 0)
    }

    async fn claim(&self, c: &FireClaim) -> Result<Option<ScheduleFire>, StorageError> {
        let mut one = claim_batch(&self.db, std::slice::from_ref(c))
            .await
            .map_err(failed("schedules.claim"))?;
        Ok(one.pop().flatten())
    }

    async fn claim_many(
        &self,
        claims: &[FireClaim],
    ) -> Result<Vec<Option<ScheduleFire>>, StorageError> {
        claim_batch(&self.db, claims)
            .await
            .map_err(failed("schedules.claim_many"))
    }

    async fn insert_manual(&self, f: &ScheduleFire) -> Result<(), StorageError> {
        let b = [
            Arg::Text(f.id.clone()),
            Arg::Text(f.schedule_id.clone()),
            Arg::Int(f.fired_at),
            Arg::Text(f.outcome.as_str().into()),
        ];
        let sql = format!(
            "INSERT INTO schedule_fires ({FIRE_COLUMNS}) \
             VALUES ($1, $2, NULL, $3, $4, NULL, NULL, NULL, NULL, 1)"
        );
        exec!(self.db, &sql, &b).map_err(failed("schedules.insert_manual"))?;
        let b = [Arg::Text(f.schedule_id.clone()), Arg::Int(f.fired_at)];
        exec!(
            self.db,
            "UPDATE schedules SET last_fired_at = $2 WHERE id = $1",
            &b
        )
        .map(drop)
        .map_err(failed("schedules.insert_manual"))
    }

    async fn finish(
        &self,
        schedule_id: &str,
        r: &FireResult,
    ) -> Result<Option<ScheduleRecord>, StorageError> {
        const OP: &str = "schedules.finish";
        finish_batch(&self.db, &[(schedule_id.to_owned(), r.clone())])
            .await
            .map_err(failed(OP))?;
        self.one("id = $1", &[Arg::Text(schedule_id.into())], OP)
            .await
    }

    async fn finish_many(
        &self,
        results: &[(String, FireResult)],
    ) -> Result<Vec<String>, StorageError> {
        finish_batch(&self.db, results)
            .await
            .map_err(failed("schedules.finish_many"))
    }

    async fn fires(
        &self,
        schedule_id: &str,
        after: Option<(i64, String)>,
        limit: usize,
    ) -> Result<Vec<ScheduleFire>, StorageError> {
        let mut binds = vec![Arg::Text(schedule_id.into())];
        let mut sql = format!("SELECT {FIRE_COLUMNS} FROM schedule_fires WHERE schedule_id = $1");
        if let Some((t, id)) = after {
            binds.push(Arg::Int(t));
            binds.push(Arg::Text(id));
            sql.push_str(" AND (fired_at < $2 OR (fired_at = $2 AND id < $3))");
        }
        binds.push(Arg::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
        sql.push_str(&format!(
            " ORDER BY fired_at DESC, id DESC LIMIT ${}",
            binds.len()
        ));
        select!(self.db, read, &sql, &binds, fire_from_row).map_err(failed("schedules.fires"))
    }

    async fn prune(&self, before: i64) -> Result<u64, StorageError> {
        let sql = "DELETE FROM schedule_fires WHERE fired_at < $1 AND outcome <> 'pending'";
        let b = [Arg::Int(before)];
        exec!(self.db, sql, &b).map_err(failed("schedules.prune"))
    }
}

/// Inserts an occurrence's fire unless the ledger has it.
const CLAIM_INSERT: &str = "INSERT INTO schedule_fires (id, schedule_id, scheduled_for, fired_at, \
     outcome, run_id, detail, counts_toward_pause, missed_count, manual) \
     VALUES ($1, $2, $3, $4, 'pending', NULL, NULL, NULL, $5, 0) \
     ON CONFLICT (schedule_id, scheduled_for) DO NOTHING";
/// Locks a live schedule's row (a no-op update) for the rest of the transaction.
const CLAIM_LOCK: &str = "UPDATE schedules SET last_fired_at = last_fired_at \
     WHERE id = $1 AND unregistered_at IS NULL";
/// This schedule's unfinished runs and its other pending fires.
const CLAIM_UNFINISHED: &str = "SELECT (SELECT COUNT(*) FROM runs WHERE trigger_id = $1 \
       AND status IN ('pending', 'running', 'suspended')) \
     + (SELECT COUNT(*) FROM schedule_fires WHERE schedule_id = $1 \
       AND outcome = 'pending' AND id <> $2) AS n";
const CLAIM_SKIP: &str =
    "UPDATE schedule_fires SET outcome = 'skipped-overlap', detail = $2 WHERE id = $1";
const CLAIM_ADVANCE: &str =
    "UPDATE schedules SET next_fire_at = $2, last_fired_at = $3 WHERE id = $1";

/// [`ScheduleStore::claim_many`] in one transaction: for each claim, in the order of their
/// schedule ids (so two replicas claiming the same schedules lock their rows in one order and
/// never deadlock), lock the schedule's row, insert the occurrence's fire unless the ledger
/// has it, decide `overlap: skip` against this schedule's unfinished runs and pending fires,
/// move `next_fire_at`. The answer is in `claims`' order; `None` where the occurrence was
/// claimed already or the schedule is gone.
async fn claim_batch(
    db: &Database,
    claims: &[FireClaim],
) -> Result<Vec<Option<ScheduleFire>>, sqlx::Error> {
    let mut order: Vec<usize> = (0..claims.len()).collect();
    order.sort_by(|a, b| claims[*a].schedule_id.cmp(&claims[*b].schedule_id));
    let decided: Vec<Option<bool>> = crate::on_pool!(db, write, |pool| {
        async {
            let mut decided = vec![None; claims.len()];
            let mut tx = pool.begin().await?;
            for &i in &order {
                let c = &claims[i];
                let id = Arg::Text(c.schedule_id.clone());
                let live = bind_args!(sqlx::query(CLAIM_LOCK), [&id])
                    .execute(&mut *tx)
                    .await?;
                if live.rows_affected() == 0 {
                    continue;
                }
                let fire_id = Arg::Text(c.fire_id.clone());
                let missed = c
                    .missed_count
                    .map_or(Arg::NullInt, |m| Arg::Int(i64::from(m)));
                let fire = [
                    &fire_id,
                    &id,
                    &Arg::Int(c.scheduled_for),
                    &Arg::Int(c.fired_at),
                    &missed,
                ];
                let inserted = bind_args!(sqlx::query(CLAIM_INSERT), fire)
                    .execute(&mut *tx)
                    .await?;
                if inserted.rows_affected() == 0 {
                    continue;
                }
                let mut skipped = false;
                if c.skip_if_unfinished {
                    let row = bind_args!(sqlx::query(CLAIM_UNFINISHED), [&id, &fire_id])
                        .fetch_one(&mut *tx)
                        .await?;
                    let n: i64 = row.try_get("n")?;
                    if n > 0 {
                        let detail = Arg::Text(OVERLAP_DETAIL.into());
                        bind_args!(sqlx::query(CLAIM_SKIP), [&fire_id, &detail])
                            .execute(&mut *tx)
                            .await?;
                        skipped = true;
                    }
                }
                let next = c.next_fire_at.map_or(Arg::NullInt, Arg::Int);
                let at = Arg::Int(c.fired_at);
                bind_args!(sqlx::query(CLAIM_ADVANCE), [&id, &next, &at])
                    .execute(&mut *tx)
                    .await?;
                decided[i] = Some(skipped);
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(decided)
        }
        .await
    })?;
    Ok(claims
        .iter()
        .zip(decided)
        .map(|(c, skipped)| skipped.map(|skipped| claimed(c, skipped)))
        .collect())
}

/// The fire a claim wrote.
fn claimed(c: &FireClaim, skipped: bool) -> ScheduleFire {
    ScheduleFire {
        id: c.fire_id.clone(),
        schedule_id: c.schedule_id.clone(),
        scheduled_for: Some(c.scheduled_for),
        fired_at: c.fired_at,
        outcome: if skipped {
            FireOutcome::SkippedOverlap
        } else {
            FireOutcome::Pending
        },
        run_id: None,
        detail: skipped.then(|| OVERLAP_DETAIL.to_owned()),
        counts_toward_pause: None,
        missed_count: c.missed_count,
        manual: false,
    }
}

const FINISH_FIRE: &str = "UPDATE schedule_fires SET outcome = $2, run_id = $3, detail = $4, \
     counts_toward_pause = $5 WHERE id = $1";
const FINISH_COUNT: &str = "UPDATE schedules SET failures_in_row = failures_in_row + 1 \
     WHERE id = $1 RETURNING failures_in_row, status";
/// Written only when there is something to reset: most fires start their run.
const FINISH_RESET: &str =
    "UPDATE schedules SET failures_in_row = 0 WHERE id = $1 AND failures_in_row <> 0";
const FINISH_PAUSE: &str = "UPDATE schedules SET status = 'paused', status_reason = $2, \
     next_fire_at = NULL, updated_at = $3 WHERE id = $1 AND status = 'active'";

/// [`ScheduleStore::finish_many`] in one transaction, in the order of the schedule ids (the
/// claims' lock order): each fire's outcome, its schedule's count of refused and failed fires
/// in a row moved, and the auto-pause when that count reaches [`AUTO_PAUSE_AFTER`].
async fn finish_batch(
    db: &Database,
    results: &[(String, FireResult)],
) -> Result<Vec<String>, sqlx::Error> {
    let mut order: Vec<&(String, FireResult)> = results.iter().collect();
    order.sort_by(|a, b| a.0.cmp(&b.0));
    crate::on_pool!(db, write, |pool| {
        async {
            let mut paused = Vec::new();
            let mut tx = pool.begin().await?;
            for (schedule_id, r) in &order {
                let b = [
                    Arg::Text(r.fire_id.clone()),
                    Arg::Text(r.outcome.as_str().into()),
                    r.run_id.clone().map_or(Arg::NullText, Arg::Text),
                    r.detail.clone().map_or(Arg::NullText, Arg::Text),
                    r.counts_toward_pause
                        .map_or(Arg::NullInt, |c| Arg::Int(i64::from(c))),
                ];
                bind_args!(sqlx::query(FINISH_FIRE), &b)
                    .execute(&mut *tx)
                    .await?;
                let id = Arg::Text(schedule_id.clone());
                if r.resets() {
                    bind_args!(sqlx::query(FINISH_RESET), [&id])
                        .execute(&mut *tx)
                        .await?;
                    continue;
                }
                if !r.counts() {
                    continue;
                }
                let Some(row) = bind_args!(sqlx::query(FINISH_COUNT), [&id])
                    .fetch_optional(&mut *tx)
                    .await?
                else {
                    continue;
                };
                let n: i64 = row.try_get("failures_in_row")?;
                let status: String = row.try_get("status")?;
                let n = u32::try_from(n).unwrap_or(u32::MAX);
                if n >= AUTO_PAUSE_AFTER && status == TriggerStatus::Active.as_str() {
                    let b = [id, Arg::Text(auto_pause_reason(n, r)), Arg::Int(r.now)];
                    bind_args!(sqlx::query(FINISH_PAUSE), &b)
                        .execute(&mut *tx)
                        .await?;
                    paused.push(schedule_id.clone());
                }
            }
            tx.commit().await?;
            Ok::<_, sqlx::Error>(paused)
        }
        .await
    })
}
