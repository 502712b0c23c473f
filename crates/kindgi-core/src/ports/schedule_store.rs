//! The schedule store port (platform-api.md §8): schedules and their fire LEDGER. One fire
//! row per occurrence (`UNIQUE (schedule_id, scheduled_for)`, manual fires excepted), so
//! claiming an occurrence is inserting its row and the loser of a race — another loop,
//! another replica on the same database — sees the conflict and does nothing; that holds
//! across restarts. `overlap: skip` is decided inside the claim, against this schedule's
//! unfinished runs and fires. Implemented in memory ([`crate::memory::MemoryScheduleStore`])
//! and by kindgi-store (SQLite, PostgreSQL).

use async_trait::async_trait;

use crate::error::StorageError;
use crate::schedule::{FireClaim, FireResult, ScheduleFire, ScheduleRecord};
use crate::trigger::{AUTO_PAUSE_AFTER, TriggerStatus};

/// A page of a tenant's schedules, oldest first after `(created_at, id)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScheduleQuery {
    pub tenant: String,
    pub status: Option<TriggerStatus>,
    pub project_id: Option<String>,
    pub after: Option<(i64, String)>,
    pub limit: usize,
}

/// Schedules and their fires.
#[async_trait]
pub trait ScheduleStore: Send + Sync + std::fmt::Debug {
    /// Stores a new schedule (its id is new).
    async fn create(&self, schedule: &ScheduleRecord) -> Result<(), StorageError>;

    /// The schedule `id` of `tenant`, unless unregistered.
    async fn get(&self, tenant: &str, id: &str) -> Result<Option<ScheduleRecord>, StorageError>;

    /// The schedule `id` of any tenant (the fire loop's read), unless unregistered.
    async fn get_any(&self, id: &str) -> Result<Option<ScheduleRecord>, StorageError>;

    /// A page of schedules.
    async fn list(&self, query: &ScheduleQuery) -> Result<Vec<ScheduleRecord>, StorageError>;

    /// Writes every field of `schedule` (a PATCH, a pause or a resume). `false`: no such
    /// live row.
    async fn update(&self, schedule: &ScheduleRecord) -> Result<bool, StorageError>;

    /// Tombstones the row. `false`: no such live row.
    async fn unregister(&self, tenant: &str, id: &str, now: i64) -> Result<bool, StorageError>;

    /// Active schedules whose `next_fire_at` is at or before `now`, earliest first, at most
    /// `limit`, over every tenant.
    async fn due(&self, now: i64, limit: usize) -> Result<Vec<ScheduleRecord>, StorageError>;

    /// The earliest `next_fire_at` of any active schedule.
    async fn next_due(&self) -> Result<Option<i64>, StorageError>;

    /// Moves `next_fire_at` from `from` to `to` (occurrences dropped by `catchUp: skip`),
    /// only while it is still `from`. `false`: someone else moved it.
    async fn advance(
        &self,
        schedule_id: &str,
        from: i64,
        to: Option<i64>,
    ) -> Result<bool, StorageError>;

    /// Claims one occurrence: inserts its fire (`pending`, or `skipped-overlap` when
    /// `claim.skip_if_unfinished` and a run of this schedule is pending, running or
    /// suspended, or another of its fires is pending) and moves the schedule's
    /// `next_fire_at` and `last_fired_at`, in one transaction. `None`: the occurrence was
    /// already claimed (nothing written).
    async fn claim(&self, claim: &FireClaim) -> Result<Option<ScheduleFire>, StorageError>;

    /// Claims several occurrences, each as [`Self::claim`] does, in one transaction where the
    /// store has them (the fire loop's pass: a thousand schedules due at once are a few
    /// commits, not a thousand). The answer is in `claims`' order. Claims of one schedule
    /// are not batched together (the loop plans one occurrence per schedule and pass).
    async fn claim_many(
        &self,
        claims: &[FireClaim],
    ) -> Result<Vec<Option<ScheduleFire>>, StorageError> {
        let mut out = Vec::with_capacity(claims.len());
        for c in claims {
            out.push(self.claim(c).await?);
        }
        Ok(out)
    }

    /// Records a `run-now` fire (`pending`, `manual`), outside the ledger's uniqueness.
    async fn insert_manual(&self, fire: &ScheduleFire) -> Result<(), StorageError>;

    /// Records what a fire came to and counts it toward the auto-pause: after
    /// [`crate::trigger::AUTO_PAUSE_AFTER`] counted fires in a row the schedule is paused
    /// with [`crate::schedule::auto_pause_reason`] as its `statusReason`. Returns the
    /// schedule as it is now.
    async fn finish(
        &self,
        schedule_id: &str,
        result: &FireResult,
    ) -> Result<Option<ScheduleRecord>, StorageError>;

    /// Records several fires' outcomes (`(schedule_id, result)`), each as [`Self::finish`]
    /// does, in one transaction where the store has them. Returns the ids of the schedules
    /// these results paused.
    async fn finish_many(
        &self,
        results: &[(String, FireResult)],
    ) -> Result<Vec<String>, StorageError> {
        let mut paused = Vec::new();
        for (schedule_id, r) in results {
            let after = self.finish(schedule_id, r).await?;
            if r.counts()
                && after.is_some_and(|s| {
                    s.status == TriggerStatus::Paused && s.failures_in_row >= AUTO_PAUSE_AFTER
                })
            {
                paused.push(schedule_id.clone());
            }
        }
        Ok(paused)
    }

    /// A schedule's fires, newest first (`fired_at desc, id desc`), after the cursor.
    async fn fires(
        &self,
        schedule_id: &str,
        after: Option<(i64, String)>,
        limit: usize,
    ) -> Result<Vec<ScheduleFire>, StorageError>;

    /// Deletes fires fired before `before` (the 30-day history). Returns how many.
    async fn prune(&self, before: i64) -> Result<u64, StorageError>;
}

/// Why a fire starts no run, as the owner check answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FireHold {
    /// The owner lost access (`refused`, counted toward the auto-pause), and why.
    Refused(String),
    /// The tenant or the project is suspended or closing (`skipped`, not counted: the
    /// schedule stays on and fires again once restored), and which.
    Skipped(String),
}

/// Whether a trigger's owner may still start its runs, asked at every fire (platform-api.md
/// §8: "re-checked each fire; lost access → `refused`"), and whether its tenant and project
/// still run anything (a suspended one's fires are `skipped`). The host answers it from its
/// keys, service accounts and tenant states.
#[async_trait]
pub trait OwnerAccess: Send + Sync + std::fmt::Debug {
    /// `None`: it may. `Some(hold)`: refused or skipped, and why (no secret in it).
    async fn refusal(&self, schedule: &ScheduleRecord) -> Result<Option<FireHold>, StorageError>;
}

/// Every owner may (in-memory runtimes and tests without keys).
#[derive(Debug, Default, Clone, Copy)]
pub struct AnyOwner;

#[async_trait]
impl OwnerAccess for AnyOwner {
    async fn refusal(&self, _schedule: &ScheduleRecord) -> Result<Option<FireHold>, StorageError> {
        Ok(None)
    }
}
