//! Why a step (and so the run) did not produce an output: a kind that says what the driver
//! does next (retry, fail, cancel, leave for recovery, let go, park) and a message.

use serde_json::{Map, Value};

/// What kind of "no output" a step ended with; each kind is handled differently by the
/// driver and by the run's end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FailureKind {
    /// A failure an edge retry policy may try again.
    Retryable,
    /// A failure no retry can help: the step fails at once.
    Fatal,
    /// The run was cancelled: not a failure of the step. The run ends `cancelled`.
    Cancelled,
    /// The run stopped because the process is stopping: it is left for recovery, with no
    /// terminal entry (a cancellation that is not the run's end).
    Interrupted,
    /// Another executor owns this run (its journal sequence was taken): stop without
    /// touching the run.
    Lost,
    /// The step reached a wait nobody has answered yet: the run parks (`suspended`, no
    /// terminal entry, no `step.failed`) until the wait is answered or cancelled.
    Suspended {
        /// What the run waits on (a wait token id, or `child run <id>`).
        token_id: String,
    },
}

/// A step's failure: its kind, its message and extra `step.failed` payload fields.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub kind: FailureKind,
    pub message: String,
    /// Extra `step.failed` payload fields (timeouts, gate cancellations).
    pub extra: Option<Map<String, Value>>,
}

impl Failure {
    fn of(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            extra: None,
        }
    }

    /// A failure a retry policy may try again.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self::of(FailureKind::Retryable, message)
    }

    /// The run parks on wait `token_id`.
    pub(crate) fn suspended(token_id: &str) -> Self {
        Self::of(
            FailureKind::Suspended {
                token_id: token_id.to_owned(),
            },
            format!("suspended: the run waits on {token_id}"),
        )
    }

    /// A failure no retry can help.
    pub(crate) fn fatal(message: impl Into<String>) -> Self {
        Self::of(FailureKind::Fatal, message)
    }

    pub(crate) fn cancelled() -> Self {
        Self::of(FailureKind::Cancelled, "cancelled: the run was cancelled")
    }

    pub(crate) fn interrupted() -> Self {
        Self::of(FailureKind::Interrupted, "cancelled: the run was cancelled")
    }

    /// Another executor took the run over.
    pub(crate) fn lost(message: impl Into<String>) -> Self {
        Self::of(FailureKind::Lost, message)
    }

    /// The same failure with extra `step.failed` payload fields.
    pub(crate) fn with_extra(self, extra: Map<String, Value>) -> Self {
        Self {
            extra: Some(extra),
            ..self
        }
    }

    /// The run stopped (cancelled, or interrupted by the process stopping): the step's work
    /// was given up, it did not fail.
    pub(crate) fn is_stop(&self) -> bool {
        matches!(self.kind, FailureKind::Cancelled | FailureKind::Interrupted)
    }

    /// The run parks on a wait.
    pub(crate) fn is_suspended(&self) -> bool {
        matches!(self.kind, FailureKind::Suspended { .. })
    }
}
