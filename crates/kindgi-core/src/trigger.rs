//! What starts runs nobody watches, as a run records it (platform-api.md §3.1–§3.2, §8, §9;
//! seed 000 `needsApprovalWhenUnattended`): who or what started a run ([`StartedBy`]), the
//! trigger fire behind it ([`RunTrigger`]), and what its trigger lifts or lends it
//! ([`Unattended`]: `toolsAllowedUnattended`, a mail-started run's own mailbox). Also the
//! shared vocabulary of every trigger kind's records: [`TriggerKind`], [`TriggerStatus`],
//! [`FireOutcome`], [`TriggerOwner`].
//!
//! Each trigger kind (schedules, webhooks, mail) keeps its own records and port; these are
//! the words they share, so a run list, an approval gate and a fire ledger all mean the same
//! thing by `webhook` or `skipped-overlap`.

use kindgi_spec::tool::ConnectionOwner;
use serde::{Deserialize, Serialize};

/// Who or what started a run (`Run.startedBy`), set by the runtime from the caller or the
/// trigger, never from a request body, and inherited by child runs. Only [`StartedBy::Person`]
/// is attended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StartedBy {
    /// A person's key, not acting on someone else's behalf.
    Person,
    /// A service account's key, or a key that is its own principal.
    Key,
    Schedule,
    Webhook,
    Event,
    /// An inbound mail to a mail trigger's address (beyond the reference: seed 000).
    Mail,
}

impl StartedBy {
    pub const ALL: [StartedBy; 6] = [
        StartedBy::Person,
        StartedBy::Key,
        StartedBy::Schedule,
        StartedBy::Webhook,
        StartedBy::Event,
        StartedBy::Mail,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StartedBy::Person => "person",
            StartedBy::Key => "key",
            StartedBy::Schedule => "schedule",
            StartedBy::Webhook => "webhook",
            StartedBy::Event => "event",
            StartedBy::Mail => "mail",
        }
    }

    pub fn parse(s: &str) -> Option<StartedBy> {
        StartedBy::ALL.into_iter().find(|b| b.as_str() == s)
    }

    /// True when a person is watching: only a run a person started.
    pub fn is_attended(self) -> bool {
        self == StartedBy::Person
    }

    /// The `startedBy` of a run a trigger of `kind` fires.
    pub fn for_trigger(kind: TriggerKind) -> StartedBy {
        match kind {
            TriggerKind::Schedule => StartedBy::Schedule,
            TriggerKind::Webhook => StartedBy::Webhook,
            TriggerKind::Event => StartedBy::Event,
            TriggerKind::Mail => StartedBy::Mail,
        }
    }
}

impl std::fmt::Display for StartedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a trigger (`RunTrigger.kind`, a fire's trigger).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TriggerKind {
    Schedule,
    Webhook,
    Event,
    Mail,
}

impl TriggerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Schedule => "schedule",
            TriggerKind::Webhook => "webhook",
            TriggerKind::Event => "event",
            TriggerKind::Mail => "mail",
        }
    }
}

/// The fire behind a triggered run (`OA:RunTrigger {triggerId, kind, fireId, scheduledFor?}`),
/// recorded at the run's creation. A child run does not carry it (it inherits `startedBy`
/// and [`Unattended`] instead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTrigger {
    pub trigger_id: String,
    pub kind: TriggerKind,
    pub fire_id: String,
    /// The occurrence a schedule fired for (RFC 3339, milliseconds, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_for: Option<String>,
}

/// What an unattended run's trigger lends it, recorded at creation and inherited by its
/// child runs: the tools its `toolsAllowedUnattended` lifts the unattended rule for, and, in
/// a mail-started run, the run's own mailbox.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unattended {
    /// Tool ids (exact) that may run without a person's yes in this trigger's runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_allowed: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mailbox: Option<Mailbox>,
}

impl Unattended {
    pub fn is_empty(&self) -> bool {
        self.tools_allowed.is_empty() && self.mailbox.is_none()
    }

    /// True when the trigger's `toolsAllowedUnattended` names `tool_id`.
    pub fn allows(&self, tool_id: &str) -> bool {
        self.tools_allowed.iter().any(|t| t == tool_id)
    }
}

/// A mail-started run's own mailbox: the address the mail came to, and the connection that
/// address is (its app and whose). A tool that declares a connection of this app and owner
/// uses the run's mailbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mailbox {
    pub address: String,
    pub app: String,
    pub whose: ConnectionOwner,
}

/// A trigger's state (`status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TriggerStatus {
    Active,
    Paused,
}

impl TriggerStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerStatus::Active => "active",
            TriggerStatus::Paused => "paused",
        }
    }

    pub fn parse(s: &str) -> Option<TriggerStatus> {
        match s {
            "active" => Some(TriggerStatus::Active),
            "paused" => Some(TriggerStatus::Paused),
            _ => None,
        }
    }
}

/// What became of one fire (`OA:ScheduleFire.outcome`, a webhook fire's `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FireOutcome {
    /// Recorded, its run not yet started.
    Pending,
    Started,
    /// The schedule's previous run was unfinished (`overlap: skip`).
    SkippedOverlap,
    SkippedErasure,
    /// Dropped on purpose: paused, past `startingDeadlineSeconds` with `catchUp: skip`.
    Skipped,
    /// The owner may not start it any more, or the sender proved nothing.
    Refused,
    /// Starting the run failed.
    Failed,
}

impl FireOutcome {
    pub const ALL: [FireOutcome; 7] = [
        FireOutcome::Pending,
        FireOutcome::Started,
        FireOutcome::SkippedOverlap,
        FireOutcome::SkippedErasure,
        FireOutcome::Skipped,
        FireOutcome::Refused,
        FireOutcome::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FireOutcome::Pending => "pending",
            FireOutcome::Started => "started",
            FireOutcome::SkippedOverlap => "skipped-overlap",
            FireOutcome::SkippedErasure => "skipped-erasure",
            FireOutcome::Skipped => "skipped",
            FireOutcome::Refused => "refused",
            FireOutcome::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<FireOutcome> {
        FireOutcome::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// Refused or failed fires in a row that pause a trigger (platform-api.md §8).
pub const AUTO_PAUSE_AFTER: u32 = 5;

/// Whose authority a trigger's runs act with (`owner {kind: user|service, id, displayName?}`),
/// re-checked at every fire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerOwner {
    pub kind: OwnerKind,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

impl TriggerOwner {
    /// The `startedByActor` of the owner's runs: `user:<id>` | `service_account:<id>`.
    pub fn actor(&self) -> String {
        match self.kind {
            OwnerKind::User => format!("user:{}", self.id),
            OwnerKind::Service => format!("service_account:{}", self.id),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OwnerKind {
    User,
    Service,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn started_by_words_round_trip_and_only_a_person_attends() {
        for b in StartedBy::ALL {
            assert_eq!(StartedBy::parse(b.as_str()), Some(b));
            assert_eq!(serde_json::to_value(b).ok(), Some(b.as_str().into()));
            assert_eq!(b.is_attended(), b == StartedBy::Person);
        }
        assert_eq!(StartedBy::parse("robot"), None);
    }

    #[test]
    fn fire_outcomes_are_kebab_case_on_the_wire() {
        for o in FireOutcome::ALL {
            assert_eq!(FireOutcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).ok(), Some(o.as_str().into()));
        }
    }

    #[test]
    fn a_run_trigger_is_the_official_shape() {
        let t = RunTrigger {
            trigger_id: "t".into(),
            kind: TriggerKind::Schedule,
            fire_id: "f".into(),
            scheduled_for: None,
        };
        assert_eq!(
            serde_json::to_value(&t).ok(),
            Some(serde_json::json!({"triggerId": "t", "kind": "schedule", "fireId": "f"}))
        );
    }
}
