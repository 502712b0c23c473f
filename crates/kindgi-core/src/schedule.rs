//! Schedules (platform-api.md §8): a `cron` trigger that runs a flow at a version or an
//! agent turn, as its owner, and the ledger of its fires. [`ScheduleRecord`] is one schedule
//! as the API and the fire loop see it; [`ScheduleFire`] one fire (an occurrence, or a
//! `run-now`) and what came of it; [`CatchUp`] and [`Overlap`] its policies.
//!
//! Times are Unix milliseconds here; the API renders them as RFC 3339. The cron expression
//! is kept as the caller wrote it (the runtime's `triggers::schedule` parses it).

use serde_json::Value;

use crate::trigger::{FireOutcome, TriggerOwner, TriggerStatus};

/// What happens to occurrences missed during a gap (down, or later than
/// `startingDeadlineSeconds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CatchUp {
    /// Fire once, for the latest missed occurrence, with `missedCount`.
    Latest,
    /// Drop them.
    Skip,
}

impl CatchUp {
    pub fn as_str(self) -> &'static str {
        match self {
            CatchUp::Latest => "latest",
            CatchUp::Skip => "skip",
        }
    }

    pub fn parse(s: &str) -> Option<CatchUp> {
        match s {
            "latest" => Some(CatchUp::Latest),
            "skip" => Some(CatchUp::Skip),
            _ => None,
        }
    }
}

/// What an occurrence does while this schedule's previous run is unfinished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Overlap {
    /// Record `skipped-overlap`, start nothing.
    Skip,
    /// Start another run.
    Allow,
}

impl Overlap {
    pub fn as_str(self) -> &'static str {
        match self {
            Overlap::Skip => "skip",
            Overlap::Allow => "allow",
        }
    }

    pub fn parse(s: &str) -> Option<Overlap> {
        match s {
            "skip" => Some(Overlap::Skip),
            "allow" => Some(Overlap::Allow),
            _ => None,
        }
    }
}

/// What a schedule runs. (`improve` targets are not served: `501
/// trigger-operation-unsupported`.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleTarget {
    /// A flow at an exact version.
    Flow {
        flow_id: String,
        flow_version: String,
    },
    /// An agent turn: at `agent_version`, else the version registered now.
    Agent {
        agent_id: String,
        agent_version: Option<String>,
    },
}

/// Default `startingDeadlineSeconds`.
pub const DEFAULT_STARTING_DEADLINE_SECONDS: u32 = 600;
/// The largest `startingDeadlineSeconds`.
pub const MAX_STARTING_DEADLINE_SECONDS: u32 = 86_400;
/// How long fire history is kept (30 days, in milliseconds).
pub const FIRE_HISTORY_MS: i64 = 30 * 24 * 3600 * 1000;

/// One schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleRecord {
    /// The trigger id (a UUID): `scheduleId` and `triggerId` on the wire.
    pub id: String,
    /// The tenant's name (as keys carry it).
    pub tenant: String,
    pub project_id: String,
    pub target: ScheduleTarget,
    /// Who its runs act as.
    pub owner: TriggerOwner,
    /// The key that registered it (or took it over), re-checked at every fire: a revoked or
    /// expired key refuses its fires. `None` when the owner is a service account named by
    /// `runAsServiceAccountId` (its account is checked instead).
    pub owner_key_id: Option<String>,
    pub cron_expression: String,
    /// IANA zone; `None` is UTC.
    pub timezone: Option<String>,
    /// `config.input`; `None` gives each run `{}`.
    pub input: Option<Value>,
    pub catch_up: CatchUp,
    pub overlap: Overlap,
    pub starting_deadline_seconds: u32,
    pub label: Option<String>,
    pub status: TriggerStatus,
    /// Why the runtime paused it.
    pub status_reason: Option<String>,
    /// The earliest occurrence not yet fired or dropped (`None`: paused, or the cron has no
    /// more occurrences).
    pub next_fire_at: Option<i64>,
    pub last_fired_at: Option<i64>,
    /// Refused or failed fires in a row that counted toward the auto-pause.
    pub failures_in_row: u32,
    /// Our extension `toolsAllowedUnattended`: tools its runs may call unattended.
    pub tools_allowed_unattended: Vec<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One fire of a schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleFire {
    /// A UUID.
    pub id: String,
    pub schedule_id: String,
    /// The occurrence it is for; `None` on a `run-now` fire.
    pub scheduled_for: Option<i64>,
    pub fired_at: i64,
    pub outcome: FireOutcome,
    pub run_id: Option<String>,
    pub detail: Option<String>,
    /// `Some(false)`: a refusal for a limit, which does not count toward the auto-pause.
    pub counts_toward_pause: Option<bool>,
    /// Occurrences this fire stood in for after a gap (`catchUp: latest`).
    pub missed_count: Option<u32>,
    /// A `run-now` fire.
    pub manual: bool,
}

/// A claim of one occurrence, made by whoever first inserts its fire row (the ledger's
/// `UNIQUE (schedule_id, scheduled_for)`): the loser of a race gets nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireClaim {
    pub schedule_id: String,
    /// The fire's id (a UUID), also the run's idempotency key `fire:<id>`.
    pub fire_id: String,
    pub scheduled_for: i64,
    pub fired_at: i64,
    pub missed_count: Option<u32>,
    /// `overlap: skip`: record `skipped-overlap` when the schedule's previous run (or fire)
    /// is unfinished, checked in the claim's own transaction.
    pub skip_if_unfinished: bool,
    /// The schedule's `next_fire_at` once this occurrence is claimed.
    pub next_fire_at: Option<i64>,
}

/// What a fire came to, recorded once its run started or didn't.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireResult {
    pub fire_id: String,
    pub outcome: FireOutcome,
    pub run_id: Option<String>,
    pub detail: Option<String>,
    pub counts_toward_pause: Option<bool>,
    pub now: i64,
}

impl FireResult {
    /// Whether this result counts toward the auto-pause (`refused` and `failed`, unless said
    /// otherwise).
    pub fn counts(&self) -> bool {
        matches!(self.outcome, FireOutcome::Refused | FireOutcome::Failed)
            && self.counts_toward_pause != Some(false)
    }

    /// Whether this result ends a run of refusals and failures (a started run does; a skip
    /// neither counts nor resets).
    pub fn resets(&self) -> bool {
        self.outcome == FireOutcome::Started
    }
}

/// The `statusReason` of a schedule the runtime paused after `n` refused or failed fires.
pub fn auto_pause_reason(n: u32, last: &FireResult) -> String {
    let detail = last.detail.as_deref().unwrap_or("no detail");
    format!(
        "Paused after {n} refused or failed fires in a row (the last was {}: {detail}). Fix the cause, then resume it",
        last.outcome.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_round_trip() {
        for c in [CatchUp::Latest, CatchUp::Skip] {
            assert_eq!(CatchUp::parse(c.as_str()), Some(c));
        }
        for o in [Overlap::Skip, Overlap::Allow] {
            assert_eq!(Overlap::parse(o.as_str()), Some(o));
        }
        assert_eq!(CatchUp::parse("all"), None);
    }

    #[test]
    fn only_refusals_and_failures_count() {
        let r = |outcome, counts| FireResult {
            fire_id: "f".into(),
            outcome,
            run_id: None,
            detail: None,
            counts_toward_pause: counts,
            now: 0,
        };
        assert!(r(FireOutcome::Refused, None).counts());
        assert!(r(FireOutcome::Failed, Some(true)).counts());
        assert!(!r(FireOutcome::Refused, Some(false)).counts());
        assert!(!r(FireOutcome::SkippedOverlap, None).counts());
        assert!(!r(FireOutcome::SkippedOverlap, None).resets());
        assert!(r(FireOutcome::Started, None).resets());
    }
}
