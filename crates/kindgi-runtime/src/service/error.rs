//! Why a run API call was refused ([`RuntimeError`]), with its wire code.

use crate::definitions::DefinitionError;
use crate::record::RunStatus;
use crate::resolve::ResolveError;
use crate::store::RunStoreError;

/// Why a run API call was refused (nothing was started or changed).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("flow-not-found: no flow \"{flow_id}\"{}", version.as_ref().map(|v| format!(" version {v}")).unwrap_or_default())]
    FlowNotFound {
        flow_id: String,
        version: Option<String>,
    },
    #[error(
        "flow-unbound: flow \"{flow_id}\" node \"{node_id}\" names {kind} \"{reference}\", which is not registered"
    )]
    FlowUnbound {
        flow_id: String,
        node_id: String,
        kind: &'static str,
        reference: String,
    },
    #[error(
        "input-validation-failed: the input does not match flow \"{flow_id}\" input schema: {details}"
    )]
    InvalidInput {
        flow_id: String,
        details: String,
        issues: Vec<kindgi_schema::Issue>,
    },
    #[error("agent-not-found: no agent \"{agent_id}\"{}", version.as_ref().map(|v| format!(" version {v}")).unwrap_or_default())]
    AgentNotFound {
        agent_id: String,
        version: Option<String>,
    },
    #[error("run-not-found: no run \"{run_id}\"")]
    RunNotFound { run_id: String },
    #[error("run-already-terminal: run \"{run_id}\" is already {status}")]
    RunAlreadyTerminal { run_id: String, status: RunStatus },
    #[error("{0}")]
    Store(#[from] RunStoreError),
    /// A flow, agent or tool could not be looked up (its source failed, or answered a
    /// definition that does not load); `code` is the message's prefix.
    #[error("{message}")]
    Lookup { code: &'static str, message: String },
}

impl From<DefinitionError> for RuntimeError {
    fn from(e: DefinitionError) -> Self {
        let code = match &e {
            DefinitionError::Source { .. } => "definition-source-failed",
            DefinitionError::Invalid { .. } | DefinitionError::InvalidGuardrail { .. } => {
                "invalid-definition"
            }
        };
        RuntimeError::Lookup {
            code,
            message: e.to_string(),
        }
    }
}

impl From<ResolveError> for RuntimeError {
    fn from(e: ResolveError) -> Self {
        RuntimeError::Lookup {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl RuntimeError {
    /// The machine-readable code (the message's prefix).
    pub fn code(&self) -> &'static str {
        match self {
            RuntimeError::FlowNotFound { .. } => "flow-not-found",
            RuntimeError::FlowUnbound { .. } => "flow-unbound",
            RuntimeError::InvalidInput { .. } => "input-validation-failed",
            RuntimeError::AgentNotFound { .. } => "agent-not-found",
            RuntimeError::RunNotFound { .. } => "run-not-found",
            RuntimeError::RunAlreadyTerminal { .. } => "run-already-terminal",
            RuntimeError::Store(_) => "store-error",
            RuntimeError::Lookup { code, .. } => code,
        }
    }

    /// As a storage failure of `op` (for the approval and wait calls, which answer any
    /// failure to read or resume the run `503`): a store error as it is, anything else kept
    /// as the source.
    pub(crate) fn into_storage(self, op: &'static str) -> RunStoreError {
        match self {
            RuntimeError::Store(e) => e,
            other => RunStoreError::backend(op, other),
        }
    }
}
