//! Why a run API call was refused ([`RuntimeError`]), with its wire code.

use crate::definitions::DefinitionError;
use crate::record::RunStatus;
use crate::resolve::ResolveError;
use crate::store::RunStoreError;

/// Why a run API call was refused (nothing was started or changed). The code is data
/// ([`RuntimeError::code`]) and so is the message ([`RuntimeError::message`]); `Display` is
/// `code: message` (a lookup's or store's is its cause's text).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{}: {}", self.code(), self.message())]
    FlowNotFound {
        flow_id: String,
        version: Option<String>,
    },
    #[error("{}: {}", self.code(), self.message())]
    FlowUnbound {
        flow_id: String,
        node_id: String,
        kind: &'static str,
        reference: String,
        /// Why it is missing, when its source left it out (`crate::left_out`).
        left_out: Option<String>,
    },
    #[error("{}: {}", self.code(), self.message())]
    InvalidInput {
        flow_id: String,
        details: String,
        issues: Vec<kindgi_schema::Issue>,
    },
    #[error("{}: {}", self.code(), self.message())]
    AgentNotFound {
        agent_id: String,
        version: Option<String>,
    },
    /// The flow or agent a run names is not registered because its source left it out
    /// (`crate::left_out`): a `*-not-found` that says why.
    #[error("{}: {}", self.code(), self.message())]
    LeftOut {
        kind: crate::left_out::LeftOutKind,
        id: String,
        version: Option<String>,
        why: String,
    },
    #[error("{}: {}", self.code(), self.message())]
    RunNotFound { run_id: String },
    #[error("{}: {}", self.code(), self.message())]
    RunAlreadyTerminal { run_id: String, status: RunStatus },
    #[error("{0}")]
    Store(#[from] RunStoreError),
    /// A flow, agent or tool could not be looked up (its source failed, or answered a
    /// definition that does not load): `code` says which, `cause` is the typed failure
    /// (kept as a field, not a `source`, because the message is its text already).
    #[error("{cause}")]
    Lookup {
        code: &'static str,
        cause: LookupError,
    },
}

/// Why a [`RuntimeError::Lookup`] happened, typed.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error(transparent)]
    Definition(DefinitionError),
    #[error(transparent)]
    Resolve(ResolveError),
}

/// ` version <v>` when a version was asked for.
fn version_suffix(version: &Option<String>) -> String {
    version
        .as_ref()
        .map(|v| format!(" version {v}"))
        .unwrap_or_default()
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
            cause: LookupError::Definition(e),
        }
    }
}

impl From<ResolveError> for RuntimeError {
    fn from(e: ResolveError) -> Self {
        RuntimeError::Lookup {
            code: e.code(),
            cause: LookupError::Resolve(e),
        }
    }
}

impl RuntimeError {
    /// What the error says, without its code.
    pub fn message(&self) -> String {
        match self {
            RuntimeError::FlowUnbound {
                flow_id,
                node_id,
                kind,
                reference,
                left_out,
            } => {
                let mut m = format!(
                    "flow \"{flow_id}\" node \"{node_id}\" names {kind} \"{reference}\", which is not registered"
                );
                if let Some(why) = left_out {
                    m.push_str(&format!(" ({why})"));
                }
                m
            }
            RuntimeError::InvalidInput {
                flow_id, details, ..
            } => format!("the input does not match flow \"{flow_id}\" input schema: {details}"),
            RuntimeError::FlowNotFound { flow_id, version } => {
                format!("no flow \"{flow_id}\"{}", version_suffix(version))
            }
            RuntimeError::AgentNotFound { agent_id, version } => {
                format!("no agent \"{agent_id}\"{}", version_suffix(version))
            }
            RuntimeError::LeftOut {
                kind,
                id,
                version,
                why,
            } => format!(
                "no {} \"{id}\"{} ({why})",
                kind.as_str(),
                version_suffix(version)
            ),
            RuntimeError::RunNotFound { run_id } => format!("no run \"{run_id}\""),
            RuntimeError::RunAlreadyTerminal { run_id, status } => {
                format!("run \"{run_id}\" is already {status}")
            }
            RuntimeError::Store(e) => e.to_string(),
            RuntimeError::Lookup { cause, .. } => cause.to_string(),
        }
    }

    /// The machine-readable code (the message's prefix).
    pub fn code(&self) -> &'static str {
        match self {
            RuntimeError::FlowNotFound { .. } => "flow-not-found",
            RuntimeError::FlowUnbound { .. } => "flow-unbound",
            RuntimeError::InvalidInput { .. } => "input-validation-failed",
            RuntimeError::AgentNotFound { .. } => "agent-not-found",
            RuntimeError::LeftOut { kind, .. } => match kind {
                crate::left_out::LeftOutKind::Agent => "agent-not-found",
                crate::left_out::LeftOutKind::Flow => "flow-not-found",
                crate::left_out::LeftOutKind::Tool => "tool-not-found",
            },
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
