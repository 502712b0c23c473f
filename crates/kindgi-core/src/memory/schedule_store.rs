//! Schedules and their fire ledger in memory ([`MemoryScheduleStore`]): lost with the
//! process; for tests and throw-away runtimes. One lock holds both maps, so a claim is as
//! atomic here as the SQL store's transaction; the unfinished runs an `overlap: skip` claim
//! looks for are read from the run store it is given ([`MemoryScheduleStore::with_runs`]).

use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::error::StorageError;
use crate::ports::{RunQuery, RunStore, ScheduleQuery, ScheduleStore};
use crate::run::RunStatus;
use crate::schedule::{FireClaim, FireResult, ScheduleFire, ScheduleRecord, auto_pause_reason};
use crate::trigger::{AUTO_PAUSE_AFTER, FireOutcome, TriggerStatus};

#[derive(Debug, Default)]
struct Inner {
    /// By id; tombstoned rows are removed.
    schedules: BTreeMap<String, ScheduleRecord>,
    fires: Vec<ScheduleFire>,
}

/// Schedules and fires in memory.
#[derive(Debug, Default)]
pub struct MemoryScheduleStore {
    inner: Mutex<Inner>,
    runs: Option<Arc<dyn RunStore>>,
}

impl MemoryScheduleStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A store whose `overlap: skip` claims see the runs of `runs`.
    pub fn with_runs(runs: Arc<dyn RunStore>) -> Self {
        MemoryScheduleStore {
            inner: Mutex::default(),
            runs: Some(runs),
        }
    }

    fn lock(&self, op: &'static str) -> Result<std::sync::MutexGuard<'_, Inner>, StorageError> {
        self.inner.lock().map_err(|_| StorageError::poisoned(op))
    }

    async fn has_unfinished_run(&self, schedule_id: &str) -> Result<bool, StorageError> {
        let Some(runs) = &self.runs else {
            return Ok(false);
        };
        let found = runs
            .list_runs(&RunQuery {
                trigger_id: Some(schedule_id.to_owned()),
                statuses: vec![RunStatus::Pending, RunStatus::Running, RunStatus::Suspended],
                limit: Some(1),
                ..Default::default()
            })
            .await?;
        Ok(!found.is_empty())
    }
}

#[async_trait]
impl ScheduleStore for MemoryScheduleStore {
    async fn create(&self, schedule: &ScheduleRecord) -> Result<(), StorageError> {
        let mut g = self.lock("schedules.create")?;
        if g.schedules.contains_key(&schedule.id) {
            return Err(StorageError::Conflict {
                op: "schedules.create",
                what: format!("schedule {}", schedule.id),
                source: None,
            });
        }
        g.schedules.insert(schedule.id.clone(), schedule.clone());
        Ok(())
    }

    async fn get(&self, tenant: &str, id: &str) -> Result<Option<ScheduleRecord>, StorageError> {
        let g = self.lock("schedules.get")?;
        Ok(g.schedules.get(id).filter(|s| s.tenant == tenant).cloned())
    }

    async fn get_any(&self, id: &str) -> Result<Option<ScheduleRecord>, StorageError> {
        Ok(self.lock("schedules.get_any")?.schedules.get(id).cloned())
    }

    async fn list(&self, query: &ScheduleQuery) -> Result<Vec<ScheduleRecord>, StorageError> {
        let g = self.lock("schedules.list")?;
        let mut rows: Vec<ScheduleRecord> = g
            .schedules
            .values()
            .filter(|s| s.tenant == query.tenant)
            .filter(|s| query.status.is_none_or(|st| s.status == st))
            .filter(|s| {
                query
                    .project_id
                    .as_deref()
                    .is_none_or(|p| s.project_id == p)
            })
            .filter(|s| {
                query
                    .after
                    .as_ref()
                    .is_none_or(|(t, id)| (s.created_at, s.id.as_str()) > (*t, id.as_str()))
            })
            .cloned()
            .collect();
        rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        rows.truncate(query.limit);
        Ok(rows)
    }

    async fn update(&self, schedule: &ScheduleRecord) -> Result<bool, StorageError> {
        let mut g = self.lock("schedules.update")?;
        match g.schedules.get_mut(&schedule.id) {
            Some(s) if s.tenant == schedule.tenant => {
                *s = schedule.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn unregister(&self, tenant: &str, id: &str, _now: i64) -> Result<bool, StorageError> {
        let mut g = self.lock("schedules.unregister")?;
        if g.schedules.get(id).is_some_and(|s| s.tenant == tenant) {
            g.schedules.remove(id);
            return Ok(true);
        }
        Ok(false)
    }

    async fn due(&self, now: i64, limit: usize) -> Result<Vec<ScheduleRecord>, StorageError> {
        let g = self.lock("schedules.due")?;
        let mut rows: Vec<ScheduleRecord> = g
            .schedules
            .values()
            .filter(|s| s.status == TriggerStatus::Active)
            .filter(|s| s.next_fire_at.is_some_and(|t| t <= now))
            .cloned()
            .collect();
        rows.sort_by_key(|s| s.next_fire_at);
        rows.truncate(limit);
        Ok(rows)
    }

    async fn next_due(&self) -> Result<Option<i64>, StorageError> {
        let g = self.lock("schedules.next_due")?;
        Ok(g.schedules
            .values()
            .filter(|s| s.status == TriggerStatus::Active)
            .filter_map(|s| s.next_fire_at)
            .min())
    }

    async fn advance(
        &self,
        schedule_id: &str,
        from: i64,
        to: Option<i64>,
    ) -> Result<bool, StorageError> {
        let mut g = self.lock("schedules.advance")?;
        match g.schedules.get_mut(schedule_id) {
            Some(s) if s.next_fire_at == Some(from) => {
                s.next_fire_at = to;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn claim(&self, claim: &FireClaim) -> Result<Option<ScheduleFire>, StorageError> {
        let unfinished_run =
            claim.skip_if_unfinished && self.has_unfinished_run(&claim.schedule_id).await?;
        let mut g = self.lock("schedules.claim")?;
        let taken = g.fires.iter().any(|f| {
            f.schedule_id == claim.schedule_id && f.scheduled_for == Some(claim.scheduled_for)
        });
        if taken || !g.schedules.contains_key(&claim.schedule_id) {
            return Ok(None);
        }
        let pending_fire = g
            .fires
            .iter()
            .any(|f| f.schedule_id == claim.schedule_id && f.outcome == FireOutcome::Pending);
        let skip = claim.skip_if_unfinished && (unfinished_run || pending_fire);
        let fire = ScheduleFire {
            id: claim.fire_id.clone(),
            schedule_id: claim.schedule_id.clone(),
            scheduled_for: Some(claim.scheduled_for),
            fired_at: claim.fired_at,
            outcome: if skip {
                FireOutcome::SkippedOverlap
            } else {
                FireOutcome::Pending
            },
            run_id: None,
            detail: skip.then(|| "The schedule's previous run is unfinished".to_owned()),
            counts_toward_pause: None,
            missed_count: claim.missed_count,
            manual: false,
        };
        g.fires.push(fire.clone());
        if let Some(s) = g.schedules.get_mut(&claim.schedule_id) {
            s.next_fire_at = claim.next_fire_at;
            s.last_fired_at = Some(claim.fired_at);
        }
        Ok(Some(fire))
    }

    async fn insert_manual(&self, fire: &ScheduleFire) -> Result<(), StorageError> {
        let mut g = self.lock("schedules.insert_manual")?;
        g.fires.push(fire.clone());
        if let Some(s) = g.schedules.get_mut(&fire.schedule_id) {
            s.last_fired_at = Some(fire.fired_at);
        }
        Ok(())
    }

    async fn finish(
        &self,
        schedule_id: &str,
        result: &FireResult,
    ) -> Result<Option<ScheduleRecord>, StorageError> {
        let mut g = self.lock("schedules.finish")?;
        if let Some(f) = g.fires.iter_mut().find(|f| f.id == result.fire_id) {
            f.outcome = result.outcome;
            f.run_id.clone_from(&result.run_id);
            f.detail.clone_from(&result.detail);
            f.counts_toward_pause = result.counts_toward_pause;
        }
        let Some(s) = g.schedules.get_mut(schedule_id) else {
            return Ok(None);
        };
        if result.counts() {
            s.failures_in_row += 1;
            if s.failures_in_row >= AUTO_PAUSE_AFTER && s.status == TriggerStatus::Active {
                s.status = TriggerStatus::Paused;
                s.status_reason = Some(auto_pause_reason(s.failures_in_row, result));
                s.next_fire_at = None;
                s.updated_at = result.now;
            }
        } else if result.resets() {
            s.failures_in_row = 0;
        }
        Ok(Some(s.clone()))
    }

    async fn fires(
        &self,
        schedule_id: &str,
        after: Option<(i64, String)>,
        limit: usize,
    ) -> Result<Vec<ScheduleFire>, StorageError> {
        let g = self.lock("schedules.fires")?;
        let mut rows: Vec<ScheduleFire> = g
            .fires
            .iter()
            .filter(|f| f.schedule_id == schedule_id)
            .filter(|f| {
                after
                    .as_ref()
                    .is_none_or(|(t, id)| (f.fired_at, f.id.as_str()) < (*t, id.as_str()))
            })
            .cloned()
            .collect();
        rows.sort_by(|a, b| (b.fired_at, &b.id).cmp(&(a.fired_at, &a.id)));
        rows.truncate(limit);
        Ok(rows)
    }

    async fn prune(&self, before: i64) -> Result<u64, StorageError> {
        let mut g = self.lock("schedules.prune")?;
        let n = g.fires.len();
        g.fires
            .retain(|f| f.fired_at >= before || f.outcome == FireOutcome::Pending);
        Ok((n - g.fires.len()) as u64)
    }
}
