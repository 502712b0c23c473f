//! The schedule driver ([`Schedules`]): a tokio task that sleeps until the earliest
//! `nextFireAt` of any active schedule (woken early by [`Schedules::changed`] when one is
//! created or changed), then, for each schedule due, asks the machine
//! ([`super::schedule::plan`]) what to do, claims the occurrence in the store's ledger (so
//! one replica fires it), and starts its run as the owner: `startedBy: schedule`,
//! `trigger {kind: schedule, triggerId, fireId, scheduledFor}`, input `config.input ?? {}`,
//! `unattended.tools_allowed` from the schedule's `toolsAllowedUnattended`. The fire then
//! records `started`, `failed` or `refused` (the owner re-checked), and five of the last two
//! in a row pause the schedule. `run-now` goes through the same start ([`Schedules::run_now`]).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kindgi_core::ports::{FireHold, OwnerAccess, ScheduleStore};
use kindgi_core::schedule::{
    FIRE_HISTORY_MS, FireClaim, FireResult, Overlap, ScheduleFire, ScheduleRecord, ScheduleTarget,
};
use kindgi_core::trigger::{FireOutcome, RunTrigger, StartedBy, TriggerKind, Unattended};
use kindgi_core::{StorageError, format_millis, now_millis};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::schedule::{CronError, CronSpec, Step, plan};
use crate::record::{RunMeta, RunRecord};
use crate::runtime::{RunOptions, Runtime, RuntimeError};

/// Schedules due in one pass, at most (the rest in the next, at once).
const DUE_BATCH: usize = 512;
/// Fires started concurrently in one pass.
const CONCURRENT_FIRES: usize = 64;
/// Occurrences claimed (and outcomes recorded) in one transaction: few enough that the
/// writer is not held long from the runs the fires start.
const CLAIM_BATCH: usize = 128;
/// The longest sleep between passes (a change on another replica is seen by then).
const MAX_SLEEP_MS: i64 = 30_000;
/// How often old fires are pruned.
const PRUNE_EVERY_MS: i64 = 3_600_000;

/// What the pass does with one schedule due.
enum Planned {
    /// Not due after all (another loop moved it).
    Nothing,
    /// Move its next fire time without a fire (occurrences dropped, or none left).
    Advance { from: i64, to: Option<i64> },
    /// Claim this occurrence and start its run.
    Fire(FireClaim),
}

/// Schedules as the API and the fire loop share them. Cheap to clone.
#[derive(Clone)]
pub struct Schedules {
    store: Arc<dyn ScheduleStore>,
    runtime: Runtime,
    owners: Arc<dyn OwnerAccess>,
    wake: Arc<Notify>,
    allow_sub_minute: bool,
}

impl std::fmt::Debug for Schedules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schedules")
            .field("store", &self.store)
            .field("allow_sub_minute", &self.allow_sub_minute)
            .finish_non_exhaustive()
    }
}

impl Schedules {
    /// Schedules kept in `store`, fired on `runtime`, their owners checked by `owners`.
    pub fn new(
        store: Arc<dyn ScheduleStore>,
        runtime: Runtime,
        owners: Arc<dyn OwnerAccess>,
    ) -> Schedules {
        Schedules {
            store,
            runtime,
            owners,
            wake: Arc::new(Notify::new()),
            allow_sub_minute: false,
        }
    }

    /// The same schedules fired on another runtime (the host's).
    pub fn with_runtime(mut self, runtime: Runtime) -> Schedules {
        self.runtime = runtime;
        self
    }

    /// Allow expressions firing more often than once a minute (`kindgi dev`).
    pub fn allow_sub_minute(mut self, allow: bool) -> Schedules {
        self.allow_sub_minute = allow;
        self
    }

    /// The same schedules with another owner check.
    pub fn with_owners(mut self, owners: Arc<dyn OwnerAccess>) -> Schedules {
        self.owners = owners;
        self
    }

    pub fn store(&self) -> &Arc<dyn ScheduleStore> {
        &self.store
    }

    /// Parses a schedule's expression as a new or changed schedule must pass.
    pub fn check(
        &self,
        expression: &str,
        timezone: Option<&str>,
        now: i64,
    ) -> Result<CronSpec, CronError> {
        CronSpec::parse(expression, timezone, self.allow_sub_minute, now)
    }

    /// A schedule was created or changed: the loop looks again at once.
    pub fn changed(&self) {
        self.wake.notify_one();
    }

    /// Starts the loop; it ends when `stop` is cancelled.
    pub fn spawn_loop(&self, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let this = self.clone();
        tokio::spawn(async move { this.run_loop(stop).await })
    }

    async fn run_loop(self, stop: CancellationToken) {
        let mut pruned_at = 0i64;
        loop {
            let now = now_millis();
            let progressed = match self.tick(now).await {
                Ok(n) => n > 0,
                Err(e) => {
                    tracing::warn!(error = %e, "schedules: could not read the schedules due");
                    false
                }
            };
            if now - pruned_at > PRUNE_EVERY_MS {
                pruned_at = now;
                if let Err(e) = self.store.prune(now - FIRE_HISTORY_MS).await {
                    tracing::warn!(error = %e, "schedules: could not prune old fires");
                }
            }
            let sleep_ms = match self.store.next_due().await {
                Ok(Some(t)) => (t - now_millis()).clamp(0, MAX_SLEEP_MS),
                Ok(None) => MAX_SLEEP_MS,
                Err(e) => {
                    tracing::warn!(error = %e, "schedules: could not read the next fire time");
                    1_000
                }
            };
            // Something due that nothing could fire (a claim lost to another replica that
            // has not committed yet): look again shortly rather than spin.
            let sleep_ms = if sleep_ms == 0 && !progressed {
                50
            } else {
                sleep_ms
            };
            let sleep = Duration::from_millis(u64::try_from(sleep_ms).unwrap_or(0));
            tokio::select! {
                () = stop.cancelled() => break,
                () = self.wake.notified() => {}
                () = tokio::time::sleep(sleep) => {}
            }
        }
    }

    /// One pass at `now`: every schedule due is planned; the occurrences due are claimed
    /// together ([`ScheduleStore::claim_many`], [`CLAIM_BATCH`] to a transaction), their runs
    /// started [`CONCURRENT_FIRES`] at a time, and their outcomes recorded together as they
    /// come ([`ScheduleStore::finish_many`]), so a thousand schedules due at one instant are
    /// a few commits rather than thousands. Returns how many schedules moved (fired, skipped
    /// or dropped).
    pub async fn tick(&self, now: i64) -> Result<usize, StorageError> {
        let due = self.store.due(now, DUE_BATCH).await?;
        let mut advances = Vec::new();
        let mut fires = Vec::new();
        for s in due {
            match self.plan_one(&s, now) {
                Planned::Nothing => {}
                Planned::Advance { from, to } => advances.push((s.id, from, to)),
                Planned::Fire(claim) => fires.push((s, claim)),
            }
        }
        let advanced = futures::stream::iter(advances)
            .map(|(id, from, to)| async move { self.advance(&id, from, to).await })
            .buffer_unordered(CONCURRENT_FIRES)
            .filter(|moved| std::future::ready(*moved))
            .count()
            .await;
        let (schedules, claims): (Vec<ScheduleRecord>, Vec<FireClaim>) = fires.into_iter().unzip();
        let mut pending = Vec::new();
        let mut claimed = 0;
        for (chunk, claims) in schedules
            .chunks(CLAIM_BATCH)
            .zip(claims.chunks(CLAIM_BATCH))
        {
            match self.store.claim_many(claims).await {
                Ok(got) => {
                    for (s, fire) in chunk.iter().zip(got) {
                        // `None`: another loop claimed it.
                        let Some(fire) = fire else { continue };
                        claimed += 1;
                        if fire.outcome == FireOutcome::Pending {
                            pending.push((s.clone(), fire));
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, schedules = chunk.len(), "schedules: could not claim occurrences; they are tried again on the next pass");
                }
            }
        }
        // Each start is a task of its own, so it goes on while a batch of outcomes is being
        // recorded: a start left unpolled meanwhile could hold the one connection (SQLite's
        // writer) that the recording waits for.
        let mut results = futures::stream::iter(pending)
            .map(|(s, fire)| {
                let this = self.clone();
                tokio::spawn(async move {
                    let result = this.outcome(&s, &fire).await;
                    (s.id, result)
                })
            })
            .buffer_unordered(CONCURRENT_FIRES)
            .ready_chunks(CLAIM_BATCH);
        while let Some(batch) = results.next().await {
            let batch: Vec<(String, FireResult)> = batch
                .into_iter()
                .filter_map(|joined| match joined {
                    Ok(done) => Some(done),
                    Err(e) => {
                        tracing::warn!(error = %e, "schedules: a fire's start ended without an outcome; it stays pending");
                        None
                    }
                })
                .collect();
            self.record(&batch).await;
        }
        Ok(advanced + claimed)
    }

    /// What one schedule due at `now` comes to.
    fn plan_one(&self, s: &ScheduleRecord, now: i64) -> Planned {
        // Checked when it was stored: here any valid expression is fired as written.
        let spec = match CronSpec::parse(&s.cron_expression, s.timezone.as_deref(), true, now) {
            Ok(spec) => Some(spec),
            Err(e) => {
                tracing::warn!(schedule = %s.id, error = %e, "schedules: the expression has no next occurrence; it stays armed no more");
                None
            }
        };
        let deadline_ms = i64::from(s.starting_deadline_seconds) * 1000;
        let step = match &spec {
            Some(spec) => plan(spec, s.next_fire_at, s.catch_up, deadline_ms, now),
            None => Step::Done,
        };
        match step {
            Step::Wait(_) => Planned::Nothing,
            Step::Done => match s.next_fire_at {
                Some(from) => Planned::Advance { from, to: None },
                None => Planned::Nothing,
            },
            Step::Drop { from, to } => Planned::Advance { from, to },
            Step::Fire {
                scheduled_for,
                missed_count,
                next,
            } => Planned::Fire(FireClaim {
                schedule_id: s.id.clone(),
                fire_id: uuid::Uuid::new_v4().to_string(),
                scheduled_for,
                fired_at: now_millis(),
                missed_count,
                skip_if_unfinished: s.overlap == Overlap::Skip,
                next_fire_at: next,
            }),
        }
    }

    /// Moves a schedule's next fire time without a fire; whether it moved.
    async fn advance(&self, id: &str, from: i64, to: Option<i64>) -> bool {
        match self.store.advance(id, from, to).await {
            Ok(moved) => moved,
            Err(e) => {
                tracing::warn!(schedule = %id, error = %e, "schedules: could not move the next fire time");
                false
            }
        }
    }

    /// `run-now`: a `manual` fire outside the schedule (its next occurrence doesn't move),
    /// recorded `pending` and answered at once; its run starts on a task of its own.
    pub async fn run_now(&self, s: &ScheduleRecord) -> Result<ScheduleFire, StorageError> {
        let fire = ScheduleFire {
            id: uuid::Uuid::new_v4().to_string(),
            schedule_id: s.id.clone(),
            scheduled_for: None,
            fired_at: now_millis(),
            outcome: FireOutcome::Pending,
            run_id: None,
            detail: None,
            counts_toward_pause: None,
            missed_count: None,
            manual: true,
        };
        self.store.insert_manual(&fire).await?;
        let this = self.clone();
        let (s, f) = (s.clone(), fire.clone());
        tokio::spawn(async move { this.start(&s, &f).await });
        Ok(fire)
    }

    /// Starts the run of `fire` as the owner and records what came of it.
    async fn start(&self, s: &ScheduleRecord, fire: &ScheduleFire) {
        let result = self.outcome(s, fire).await;
        self.record(&[(s.id.clone(), result)]).await;
    }

    /// Starts the run of `fire` as the owner (re-checked first): what came of it.
    async fn outcome(&self, s: &ScheduleRecord, fire: &ScheduleFire) -> FireResult {
        let (outcome, run_id, detail) = match self.owners.refusal(s).await {
            Err(e) => (
                FireOutcome::Failed,
                None,
                Some(format!("owner check failed: {e}")),
            ),
            Ok(Some(FireHold::Refused(why))) => (FireOutcome::Refused, None, Some(why)),
            Ok(Some(FireHold::Skipped(why))) => (FireOutcome::Skipped, None, Some(why)),
            Ok(None) => match self.launch(s, fire).await {
                Ok(run) => (FireOutcome::Started, Some(run.id), None),
                Err(e) => (FireOutcome::Failed, None, Some(e.to_string())),
            },
        };
        if outcome != FireOutcome::Started {
            tracing::warn!(schedule = %s.id, fire = %fire.id, outcome = outcome.as_str(), detail = detail.as_deref().unwrap_or(""), "schedules: a fire started no run");
        }
        FireResult {
            fire_id: fire.id.clone(),
            outcome,
            run_id,
            detail,
            counts_toward_pause: None,
            now: now_millis(),
        }
    }

    /// Records fires' outcomes (`(schedule_id, result)`) in one write.
    async fn record(&self, results: &[(String, FireResult)]) {
        match self.store.finish_many(results).await {
            Ok(paused) => {
                for id in paused {
                    tracing::warn!(schedule = %id, "schedules: paused after repeated refused or failed fires");
                }
            }
            Err(e) => {
                tracing::warn!(fires = results.len(), error = %e, "schedules: could not record fires' outcomes; they stay pending");
            }
        }
    }

    /// The run of one fire.
    async fn launch(
        &self,
        s: &ScheduleRecord,
        fire: &ScheduleFire,
    ) -> Result<RunRecord, RuntimeError> {
        let options = RunOptions {
            tenant_id: Some(s.tenant.clone()),
            meta: RunMeta {
                project_id: Some(s.project_id.clone()),
                started_by: Some(StartedBy::for_trigger(TriggerKind::Schedule)),
                started_by_actor: Some(s.owner.actor()),
                trigger: Some(RunTrigger {
                    trigger_id: s.id.clone(),
                    kind: TriggerKind::Schedule,
                    fire_id: fire.id.clone(),
                    scheduled_for: fire.scheduled_for.map(format_millis),
                }),
                unattended: Unattended {
                    tools_allowed: s.tools_allowed_unattended.clone(),
                    mailbox: None,
                },
                ..Default::default()
            },
            idempotency_key: Some(format!("fire:{}", fire.id)),
            ..Default::default()
        };
        let input = s.input.clone().unwrap_or_else(|| serde_json::json!({}));
        match &s.target {
            ScheduleTarget::Flow {
                flow_id,
                flow_version,
            } => {
                self.runtime
                    .start_run(flow_id, Some(flow_version), input, options)
                    .await
            }
            ScheduleTarget::Agent {
                agent_id,
                agent_version,
            } => {
                self.runtime
                    .start_agent_turn(agent_id, agent_version.as_deref(), input, options)
                    .await
            }
        }
    }
}
