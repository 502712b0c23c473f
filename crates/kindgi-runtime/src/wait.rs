//! Waits: a run parks (`suspended`) on a wait token until another party answers it — a
//! reviewer deciding an approval, or another system answering a pausing tool's call — or
//! until it times out. The journal holds `wait.suspended {nodeId?, tokenId, timeoutMs}`,
//! then `wait.resumed {tokenId, value}` or `wait.cancelled {tokenId, reason}`; a resumed
//! executor replays them, so the step that waited gets its answer.
//!
//! SCAFFOLD: the interface the agent, the API and the pack pause code against; the waits
//! work fills in the bodies.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::NewApproval;
use crate::executor::{Failure, RunCtx};

/// The default wait: 24 hours.
pub const DEFAULT_WAIT_MS: u64 = 24 * 60 * 60 * 1000;
/// The longest a pausing call may wait: 24 days.
pub const MAX_PAUSE_MS: u64 = 24 * DEFAULT_WAIT_MS;

/// A wait a step reaches.
#[derive(Debug, Clone)]
pub(crate) struct WaitRequest {
    /// The wait token id (for a tool gate: 40 hex of sha256 `tool-call:<runId>:<callId>:<argsHash>`).
    pub token_id: String,
    pub node_id: Option<String>,
    pub timeout_ms: u64,
    /// What the wait is for, created when the run first parks on it.
    pub purpose: WaitPurpose,
}

#[derive(Debug, Clone)]
pub(crate) enum WaitPurpose {
    /// A reviewer's decision.
    Approval(NewApproval),
    /// Another system's answer to a pausing tool call: the answer must validate against the
    /// output schema of `tool_id` at `tool_version`.
    ToolPause {
        tool_id: String,
        tool_version: String,
        call_id: String,
    },
}

/// How a wait ended, as the journal says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WaitOutcome {
    /// Answered with this value (for an approval: `{decided, rationale?, decidedBy, approvalId}`).
    Resumed(Value),
    /// Cancelled: `timeout`, `withdrawn`, `run-cancelled`.
    Cancelled { reason: String },
}

impl RunCtx {
    /// Waits on `req.token_id`. If the journal already holds the wait's answer or
    /// cancellation, returns it; otherwise journals `wait.suspended` (once), creates what
    /// `req.purpose` asks for (once), and returns the failure that parks the run.
    pub(crate) async fn wait(&self, scope: &str, req: WaitRequest) -> Result<WaitOutcome, Failure> {
        let _ = (scope, req);
        todo!("waits: RunCtx::wait")
    }
}

/// What a suspended run waits for (`OA:Run.waitingFor`): `approvals[]` are the open
/// approvals it waits on (never their arguments), `other[]` anything else
/// (`{what: "tool-pause", tokenId?, toolId, callId, timesOutAt}`, `{what:"no-open-wait"}`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitingFor {
    pub approvals: Vec<Value>,
    pub other: Vec<Value>,
}

/// What an answered pause did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitAnswered {
    pub run_id: String,
    pub run_status: crate::record::RunStatus,
}

/// Why an answer to a pausing call was refused. Nothing changes on any of them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WaitError {
    /// `404 wait-not-found`: unknown, malformed, or another tenant's token.
    #[error("No open wait for this token")]
    NotFound,
    /// `409 wait-already-answered`.
    #[error("This wait was already answered")]
    AlreadyAnswered,
    /// `410 wait-expired`: the wait timed out (the call failed).
    #[error("This wait timed out at {expired_at}; the call it was for has failed")]
    Expired { expired_at: String },
    /// `400 wait-answer-invalid`: the answer does not match the tool's output schema; the run
    /// keeps waiting.
    #[error("The answer does not match the output schema of tool \"{tool_id}\": {summary}")]
    Invalid {
        tool_id: String,
        summary: String,
        issues: Vec<kindgi_schema::Issue>,
    },
    /// `409 run-already-terminal`.
    #[error("Run {run_id} has already ended ({status})")]
    RunTerminal { run_id: String, status: String },
    /// `503`.
    #[error("wait store unavailable: {0}")]
    Store(String),
}

impl WaitError {
    pub fn code(&self) -> &'static str {
        match self {
            WaitError::NotFound => "wait-not-found",
            WaitError::AlreadyAnswered => "wait-already-answered",
            WaitError::Expired { .. } => "wait-expired",
            WaitError::Invalid { .. } => "wait-answer-invalid",
            WaitError::RunTerminal { .. } => "run-already-terminal",
            WaitError::Store(_) => "store-unavailable",
        }
    }
}

impl crate::Runtime {
    /// Answers a pausing call's wait with the other system's `value` (checked against the
    /// tool's output schema) and resumes its run inline.
    pub async fn answer_wait(
        &self,
        tenant: &str,
        token: &str,
        value: Value,
    ) -> Result<WaitAnswered, WaitError> {
        let _ = (tenant, token, value);
        todo!("waits: Runtime::answer_wait")
    }

    /// What a suspended run waits for (`None` when the run is not suspended).
    pub async fn waiting_for(
        &self,
        run: &crate::record::RunRecord,
    ) -> Result<Option<WaitingFor>, crate::RuntimeError> {
        let _ = run;
        todo!("waits: Runtime::waiting_for")
    }
}
