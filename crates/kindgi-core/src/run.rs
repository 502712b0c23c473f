//! The run record and the journal entry: what a run is on the wire (`kindgi runs get`,
//! `GET /v1/runs/{id}`) and what its journal holds (runtime.md §1.4).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::trigger::{RunTrigger, StartedBy, Unattended};

/// A run's status. Terminal: completed, failed, cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Pending,
    Running,
    Suspended,
    Completed,
    Failed,
    Cancelled,
}

impl RunStatus {
    pub const ALL: [RunStatus; 6] = [
        RunStatus::Pending,
        RunStatus::Running,
        RunStatus::Suspended,
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Pending => "pending",
            RunStatus::Running => "running",
            RunStatus::Suspended => "suspended",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
        )
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The run record, as printed by the CLI and returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub id: String,
    pub tenant_id: String,
    pub flow_id: String,
    pub flow_version: String,
    pub status: RunStatus,
    pub input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    pub dry_run: bool,
    /// RFC 3339, milliseconds, UTC.
    pub created_at: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_node_id: Option<String>,
    /// Who and what the run was started for: project, segments, trace, `startedBy`, agent,
    /// trigger, replay (recorded at the start, never changed; a child run inherits them).
    #[serde(flatten)]
    pub meta: RunMeta,
}

/// One `{key, value}` of a run's segment path (platform-api.md §3.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    pub key: String,
    pub value: String,
}

/// The agent an agent-turn run (`flowId: "agent.turn"`) runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgent {
    pub id: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// How the version was chosen: `explicit` (named by the caller) or `latest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// The flow id of an agent-turn run.
pub const AGENT_TURN_FLOW_ID: &str = "agent.turn";

/// What a run records about how it was started. Every field is optional: runs stored
/// before these were recorded have none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<Segment>,
    /// The W3C trace id (32 hex) of the request that started the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Who or what started the run; absent only on runs stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<StartedBy>,
    /// Who started it, when a key's principal did: `user:<id>` | `service_account:<id>`
    /// (an approval's `requestedBy`, which four eyes checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by_actor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<RunAgent>,
    /// `{triggerId, kind, fireId, scheduledFor?}` for a run a trigger fired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<RunTrigger>,
    /// What the run's trigger lifts or lends it (`toolsAllowedUnattended`, a mail-started
    /// run's mailbox); inherited by child runs.
    #[serde(default, skip_serializing_if = "Unattended::is_empty")]
    pub unattended: Unattended,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_run_id: Option<String>,
}

impl RunMeta {
    /// True when a person is watching the run: only a run a person started (a run stored
    /// before `startedBy` was recorded counts as unattended).
    pub fn attended(&self) -> bool {
        self.started_by.is_some_and(StartedBy::is_attended)
    }

    /// What a child run (a sub-flow, an agent step's turn) inherits from its parent: the
    /// project, segments, trace, `startedBy` (and who) and what its trigger lifts or lends —
    /// not the agent, trigger or replay.
    pub fn for_child(&self) -> RunMeta {
        RunMeta {
            project_id: self.project_id.clone(),
            segments: self.segments.clone(),
            trace_id: self.trace_id.clone(),
            started_by: self.started_by,
            started_by_actor: self.started_by_actor.clone(),
            unattended: self.unattended.clone(),
            ..RunMeta::default()
        }
    }
}

/// Why a failed run failed, typed (`OA:RunFailure {code, message}`), as the reference
/// records it (platform-api.md §3.2): an agent turn's typed error keeps its code (the failure
/// message's `<code>: ` prefix, one of [`AGENT_TURN_CODES`]); anything else is `run-failed`
/// with the whole failure message (a dry-run refusal too: `Error [run-failed]:
/// dry-run-effectful-tool: …` is what the official CLI prints for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFailure {
    pub code: String,
    pub message: String,
}

impl RunRecord {
    /// The typed failure of a failed run (`None` for any other status).
    pub fn failure(&self) -> Option<RunFailure> {
        if self.status != RunStatus::Failed {
            return None;
        }
        let message = self
            .failure_message
            .clone()
            .unwrap_or_else(|| format!("Run {} failed", self.id));
        let typed = failure_code(&message)
            .filter(|c| self.flow_id == AGENT_TURN_FLOW_ID && AGENT_TURN_CODES.contains(c));
        Some(match typed {
            Some(code) => RunFailure {
                code: code.to_owned(),
                message,
            },
            None => RunFailure {
                code: "run-failed".into(),
                message,
            },
        })
    }
}

/// The codes an agent turn's failure keeps (platform-api.md §3.2).
pub const AGENT_TURN_CODES: [&str; 9] = [
    "budget-exceeded",
    "capability-routing-failed",
    "model-invocation-failed",
    "hitl-rejected",
    "hitl-withdrawn",
    "hitl-cancelled",
    "rate-limit-exceeded",
    "guardrail-violation",
    "agent-turn-aborted",
];

/// The `<code>` of a message shaped `<code>: …` (lowercase kebab-case, at most 64 chars).
fn failure_code(message: &str) -> Option<&str> {
    let (code, rest) = message.split_once(": ")?;
    let kebab = !code.is_empty()
        && code.len() <= 64
        && code.starts_with(|c: char| c.is_ascii_lowercase())
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    (kebab && !rest.is_empty()).then_some(code)
}

/// The kinds of journal entry (runtime.md §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum JournalKind {
    #[serde(rename = "run.started")]
    RunStarted,
    #[serde(rename = "step.started")]
    StepStarted,
    #[serde(rename = "step.completed")]
    StepCompleted,
    #[serde(rename = "step.failed")]
    StepFailed,
    #[serde(rename = "step.retry-scheduled")]
    StepRetryScheduled,
    #[serde(rename = "step.concurrency-deferred")]
    StepConcurrencyDeferred,
    #[serde(rename = "edge.evaluated")]
    EdgeEvaluated,
    #[serde(rename = "iteration.started")]
    IterationStarted,
    #[serde(rename = "iteration.completed")]
    IterationCompleted,
    #[serde(rename = "fanout.dispatched")]
    FanoutDispatched,
    #[serde(rename = "fanout.branch-completed")]
    FanoutBranchCompleted,
    #[serde(rename = "fanout.branch-failed")]
    FanoutBranchFailed,
    #[serde(rename = "fanout.converged")]
    FanoutConverged,
    #[serde(rename = "fanout.cancelled-siblings")]
    FanoutCancelledSiblings,
    #[serde(rename = "subgraph.dispatched")]
    SubgraphDispatched,
    #[serde(rename = "subgraph.completed")]
    SubgraphCompleted,
    #[serde(rename = "subgraph.failed")]
    SubgraphFailed,
    #[serde(rename = "subgraph.cancelled")]
    SubgraphCancelled,
    #[serde(rename = "run.completed")]
    RunCompleted,
    #[serde(rename = "run.failed")]
    RunFailed,
    #[serde(rename = "run.cancelled")]
    RunCancelled,
    #[serde(rename = "wait.suspended")]
    WaitSuspended,
    #[serde(rename = "wait.resumed")]
    WaitResumed,
    #[serde(rename = "wait.cancelled")]
    WaitCancelled,
    #[serde(rename = "value.recorded")]
    ValueRecorded,
    #[serde(rename = "clock.read")]
    ClockRead,
    /// Beyond the reference: a gate asked for an approval (`{approvalId, tokenId,
    /// requiredRole, toolId?, callId?}`).
    #[serde(rename = "approval.requested")]
    ApprovalRequested,
    /// Beyond the reference: a reviewer decided (`{approvalId, decision, status}`).
    #[serde(rename = "approval.completed")]
    ApprovalCompleted,
    /// A guardrail failed (after-turn or before-tool; blocking or not): the run stream's
    /// `run.guardrail-violated`.
    #[serde(rename = "guardrail.violated")]
    GuardrailViolated,
}

impl JournalKind {
    pub const ALL: [JournalKind; 29] = [
        JournalKind::RunStarted,
        JournalKind::StepStarted,
        JournalKind::StepCompleted,
        JournalKind::StepFailed,
        JournalKind::StepRetryScheduled,
        JournalKind::StepConcurrencyDeferred,
        JournalKind::EdgeEvaluated,
        JournalKind::IterationStarted,
        JournalKind::IterationCompleted,
        JournalKind::FanoutDispatched,
        JournalKind::FanoutBranchCompleted,
        JournalKind::FanoutBranchFailed,
        JournalKind::FanoutConverged,
        JournalKind::FanoutCancelledSiblings,
        JournalKind::SubgraphDispatched,
        JournalKind::SubgraphCompleted,
        JournalKind::SubgraphFailed,
        JournalKind::SubgraphCancelled,
        JournalKind::RunCompleted,
        JournalKind::RunFailed,
        JournalKind::RunCancelled,
        JournalKind::WaitSuspended,
        JournalKind::WaitResumed,
        JournalKind::WaitCancelled,
        JournalKind::ValueRecorded,
        JournalKind::ClockRead,
        JournalKind::ApprovalRequested,
        JournalKind::ApprovalCompleted,
        JournalKind::GuardrailViolated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JournalKind::RunStarted => "run.started",
            JournalKind::StepStarted => "step.started",
            JournalKind::StepCompleted => "step.completed",
            JournalKind::StepFailed => "step.failed",
            JournalKind::StepRetryScheduled => "step.retry-scheduled",
            JournalKind::StepConcurrencyDeferred => "step.concurrency-deferred",
            JournalKind::EdgeEvaluated => "edge.evaluated",
            JournalKind::IterationStarted => "iteration.started",
            JournalKind::IterationCompleted => "iteration.completed",
            JournalKind::FanoutDispatched => "fanout.dispatched",
            JournalKind::FanoutBranchCompleted => "fanout.branch-completed",
            JournalKind::FanoutBranchFailed => "fanout.branch-failed",
            JournalKind::FanoutConverged => "fanout.converged",
            JournalKind::FanoutCancelledSiblings => "fanout.cancelled-siblings",
            JournalKind::SubgraphDispatched => "subgraph.dispatched",
            JournalKind::SubgraphCompleted => "subgraph.completed",
            JournalKind::SubgraphFailed => "subgraph.failed",
            JournalKind::SubgraphCancelled => "subgraph.cancelled",
            JournalKind::RunCompleted => "run.completed",
            JournalKind::RunFailed => "run.failed",
            JournalKind::RunCancelled => "run.cancelled",
            JournalKind::WaitSuspended => "wait.suspended",
            JournalKind::WaitResumed => "wait.resumed",
            JournalKind::WaitCancelled => "wait.cancelled",
            JournalKind::ValueRecorded => "value.recorded",
            JournalKind::ClockRead => "clock.read",
            JournalKind::ApprovalRequested => "approval.requested",
            JournalKind::ApprovalCompleted => "approval.completed",
            JournalKind::GuardrailViolated => "guardrail.violated",
        }
    }

    pub fn parse(s: &str) -> Option<JournalKind> {
        JournalKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for JournalKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One journal entry. `scope` says which loop iteration (`<loopId>#<i>`, nested with `/`)
/// or sub-structure a body node's entry belongs to; absent at the top level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalEntry {
    pub sequence: u64,
    pub kind: JournalKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// RFC 3339, milliseconds, UTC.
    pub timestamp: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_codes_come_from_the_message_prefix() {
        assert_eq!(
            failure_code("dry-run-effectful-tool: tool \"x\" is not read-only"),
            Some("dry-run-effectful-tool")
        );
        assert_eq!(failure_code("Something broke: badly"), None);
        assert_eq!(failure_code("no prefix here"), None);
        assert_eq!(failure_code("a b: c"), None);
    }
}
