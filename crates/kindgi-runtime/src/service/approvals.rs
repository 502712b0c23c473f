//! Approvals (runtime.md §4, platform-api.md §4): the runtime's side. The records
//! ([`Approval`], [`ApprovalQuery`], …) are `kindgi_core::approval`'s, re-exported here;
//! this module keeps why a decision was refused ([`ApprovalError`]) and the runtime's
//! approval calls. The lifecycle is in `decide` (decisions) and the sweeper
//! (timeouts); the rows in [`crate::wait_store`].

pub use kindgi_core::approval::{
    Approval, ApprovalCompletion, ApprovalDecision, ApprovalQuery, ApprovalStatus, DecisionInput,
    DecisionKind, NewApproval, ResumeOutcome, ReviewerRole,
};

/// Why a decision was not recorded. Each maps to the reference's status and code.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// `404 approval-not-found`: unknown, another tenant's, or above the caller's tier.
    #[error("No approval with id {id}")]
    NotFound { id: String },
    /// `409 approval-already-decided`.
    #[error("Approval {id} was already decided ({status})")]
    AlreadyDecided { id: String, status: String },
    /// `409 approval-terminal`: expired, withdrawn or escalated.
    #[error("Approval {id} is {status} and can no longer be decided")]
    Terminal { id: String, status: String },
    /// `403 insufficient-role`.
    #[error("Role {have} cannot decide an approval that requires {need}")]
    InsufficientRole { have: String, need: String },
    /// `403 separate-approver-required`: four eyes, and the deciding person asked for it.
    #[error(
        "Approval {id} needs a separate approver: {requested_by} asked for it, so another reviewer must decide it"
    )]
    SeparateApproverRequired { id: String, requested_by: String },
    /// `409 run-already-terminal`, nothing recorded.
    #[error("Run {run_id} has already ended ({status})")]
    RunTerminal { run_id: String, status: String },
    /// `503`: the store failed; nothing is decided. The storage error is the source.
    #[error("approval store unavailable: {0}")]
    Store(#[from] kindgi_core::StorageError),
}

/// Equal when of one kind with the same data; two store failures when they say the same
/// (a storage error's source has no equality of its own).
impl PartialEq for ApprovalError {
    fn eq(&self, other: &Self) -> bool {
        use ApprovalError::*;
        match (self, other) {
            (NotFound { id: a }, NotFound { id: b }) => a == b,
            (AlreadyDecided { id: a, status: s }, AlreadyDecided { id: b, status: t })
            | (Terminal { id: a, status: s }, Terminal { id: b, status: t }) => a == b && s == t,
            (InsufficientRole { have: a, need: n }, InsufficientRole { have: b, need: m })
            | (
                SeparateApproverRequired {
                    id: a,
                    requested_by: n,
                },
                SeparateApproverRequired {
                    id: b,
                    requested_by: m,
                },
            ) => a == b && n == m,
            (
                RunTerminal {
                    run_id: a,
                    status: s,
                },
                RunTerminal {
                    run_id: b,
                    status: t,
                },
            ) => a == b && s == t,
            (Store(a), Store(b)) => a.to_string() == b.to_string(),
            _ => false,
        }
    }
}

impl ApprovalError {
    /// The wire code.
    pub fn code(&self) -> &'static str {
        match self {
            ApprovalError::NotFound { .. } => "approval-not-found",
            ApprovalError::AlreadyDecided { .. } => "approval-already-decided",
            ApprovalError::Terminal { .. } => "approval-terminal",
            ApprovalError::InsufficientRole { .. } => "insufficient-role",
            ApprovalError::SeparateApproverRequired { .. } => "separate-approver-required",
            ApprovalError::RunTerminal { .. } => "run-already-terminal",
            ApprovalError::Store(_) => "store-unavailable",
        }
    }
}

impl crate::Runtime {
    /// The approval `id` of `tenant` (`None`: unknown or another tenant's).
    pub async fn approval(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Approval>, ApprovalError> {
        self.shared
            .waits
            .get_approval(tenant, id)
            .await
            .map_err(ApprovalError::Store)
    }

    /// A page of approvals (at most `query.limit + 1`, in the query's order).
    pub async fn list_approvals(
        &self,
        query: &ApprovalQuery,
    ) -> Result<Vec<Approval>, ApprovalError> {
        self.shared
            .waits
            .list_approvals(query)
            .await
            .map_err(ApprovalError::Store)
    }

    /// Records a decision and, for approve / reject / withdraw, completes or cancels the
    /// run's wait and resumes the run inline (it returns once the run parks again or ends).
    pub async fn complete_approval(
        &self,
        tenant: &str,
        id: &str,
        decision: DecisionInput,
    ) -> Result<ApprovalCompletion, ApprovalError> {
        self.decide_approval(tenant, id, decision).await
    }
}
