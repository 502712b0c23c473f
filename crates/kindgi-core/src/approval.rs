//! Approvals (runtime.md §4, platform-api.md §4): what a gated tool call waits for, who may
//! decide it, and how a decision resumes the run.
//!
//! An approval is bound to its run's wait token and, for a tool call, to the call id and
//! the digest of its canonical arguments (`argsHash`): the call runs with exactly the
//! approved arguments or not at all.
//!
//! The lifecycle is in the runtime (decisions, the sweeper's timeouts); the rows behind
//! [`crate::ports::WaitStore`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Reviewer tiers, lowest first (`standard < senior < admin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReviewerRole {
    Standard,
    Senior,
    Admin,
}

impl ReviewerRole {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewerRole::Standard => "standard",
            ReviewerRole::Senior => "senior",
            ReviewerRole::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<ReviewerRole> {
        [
            ReviewerRole::Standard,
            ReviewerRole::Senior,
            ReviewerRole::Admin,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// The tier an expired approval escalates to (`None` at admin: it expires).
    pub fn next(self) -> Option<ReviewerRole> {
        match self {
            ReviewerRole::Standard => Some(ReviewerRole::Senior),
            ReviewerRole::Senior => Some(ReviewerRole::Admin),
            ReviewerRole::Admin => None,
        }
    }
}

/// An approval's status. Open: pending, assigned, in_review, escalated... (see
/// [`ApprovalStatus::is_open`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Pending,
    Assigned,
    InReview,
    Approved,
    Rejected,
    Escalated,
    Expired,
    Withdrawn,
}

impl ApprovalStatus {
    pub const ALL: [ApprovalStatus; 8] = [
        ApprovalStatus::Pending,
        ApprovalStatus::Assigned,
        ApprovalStatus::InReview,
        ApprovalStatus::Approved,
        ApprovalStatus::Rejected,
        ApprovalStatus::Escalated,
        ApprovalStatus::Expired,
        ApprovalStatus::Withdrawn,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Assigned => "assigned",
            ApprovalStatus::InReview => "in_review",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Rejected => "rejected",
            ApprovalStatus::Escalated => "escalated",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Withdrawn => "withdrawn",
        }
    }

    pub fn parse(s: &str) -> Option<ApprovalStatus> {
        ApprovalStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Still waiting for a decision: pending, assigned or in review. (An `escalated`
    /// approval was replaced by its successor one tier up.)
    pub fn is_open(self) -> bool {
        matches!(
            self,
            ApprovalStatus::Pending | ApprovalStatus::Assigned | ApprovalStatus::InReview
        )
    }
}

/// What a reviewer decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecisionKind {
    Approve,
    Reject,
    Escalate,
    Withdraw,
}

impl DecisionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Approve => "approve",
            DecisionKind::Reject => "reject",
            DecisionKind::Escalate => "escalate",
            DecisionKind::Withdraw => "withdraw",
        }
    }

    pub fn parse(s: &str) -> Option<DecisionKind> {
        [
            DecisionKind::Approve,
            DecisionKind::Reject,
            DecisionKind::Escalate,
            DecisionKind::Withdraw,
        ]
        .into_iter()
        .find(|d| d.as_str() == s)
    }
}

/// A recorded decision (`OA:Approval.decision`, `OA:CompleteApprovalResult.decision`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecision {
    pub id: String,
    pub approval_id: String,
    pub decision: DecisionKind,
    /// `user:<id>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    pub reviewer_id: String,
    pub reviewer_role_at_decision: ReviewerRole,
    pub decided_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
}

/// An approval (`OA:Approval`): tenant ids are the runtime's tenant names; the API maps them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// A UUID.
    pub id: String,
    pub tenant_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// `tool-call:pending` or `agent-turn:session-hitl-gate`.
    pub subject_kind: String,
    /// For a tool call: `{conversationId?, agentId, agentVersion, toolId, toolVersion,
    /// callId, argsHash, arguments}`.
    pub subject_ref: Value,
    pub required_role: ReviewerRole,
    pub status: ApprovalStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The wait token the run parks on (several approvals of one escalation chain share it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_token_id: Option<String>,
    /// The run that waits (`provenanceRef.runId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<ApprovalDecision>,
    /// `user:<id>` | `service_account:<id>` | `system:<what>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<String>,
    /// Four eyes (`hitl.separateApprover`): the person in `requested_by` may not decide it.
    #[serde(default)]
    pub separate_approver: bool,
    /// `run-cancelled` | `run-ended`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn_because: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated_to: Option<String>,
}

/// What a gate asks for when its run first parks on it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApproval {
    pub subject_kind: String,
    pub subject_ref: Value,
    pub required_role: ReviewerRole,
    pub title: String,
    pub description: String,
    /// How long each reviewer tier has (24 h unless the agent or tenant says less).
    pub timeout_ms: u64,
    /// Four eyes (`hitl.separateApprover`): whoever started the run may not decide it.
    pub separate_approver: bool,
}

/// Which approvals a list asks for (`GET /v1/approvals`). The store answers at most
/// `limit + 1` rows so the caller knows whether there are more.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApprovalQuery {
    pub tenant_id: String,
    /// Empty: any status.
    pub statuses: Vec<ApprovalStatus>,
    pub run_id: Option<String>,
    pub wait_token_ids: Vec<String>,
    pub required_role: Option<ReviewerRole>,
    /// Only approvals at or below this tier (the caller's role).
    pub max_role: Option<ReviewerRole>,
    /// Strictly after (RFC 3339).
    pub created_after: Option<String>,
    /// Only approvals this reviewer decided (`decidedBy=me`: `user:<id>`).
    pub decided_by: Option<String>,
    /// Oldest first (default newest first).
    pub ascending: bool,
    /// Continue after this `(createdAt, id)`.
    pub after: Option<(String, String)>,
    pub limit: usize,
}

/// A reviewer's decision as the API hands it to the runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionInput {
    pub decision: DecisionKind,
    pub rationale: Option<String>,
    /// `user:<id>` of the deciding person.
    pub decided_by: String,
    /// The reviewer's id (the roster row, or the user id when the key carries the role).
    pub reviewer_id: String,
    pub reviewer_role: ReviewerRole,
}

/// How resuming the run after a decision went (`OA:CompleteApprovalResult.resume`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ResumeOutcome {
    Ok,
    Failed { code: String, message: String },
}

/// `OA:CompleteApprovalResult`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalCompletion {
    /// `terminal` or `escalated`.
    pub kind: String,
    pub approval: Approval,
    pub decision: ApprovalDecision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_approval: Option<Approval>,
    pub waitpoint_resolved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_status: Option<crate::run::RunStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<ResumeOutcome>,
}
