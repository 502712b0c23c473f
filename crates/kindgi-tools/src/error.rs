//! Invocation failures, with the exact codes and messages of the reference runtime.

use kindgi_schema::Issue;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InvokeErrorCode {
    PreconditionFailed,
    InputValidationFailed,
    HandlerError,
    OutputValidationFailed,
}

impl InvokeErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            InvokeErrorCode::PreconditionFailed => "precondition-failed",
            InvokeErrorCode::InputValidationFailed => "input-validation-failed",
            InvokeErrorCode::HandlerError => "handler-error",
            InvokeErrorCode::OutputValidationFailed => "output-validation-failed",
        }
    }
}

/// Why an invocation did not produce a valid output.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
pub struct InvokeError {
    pub code: InvokeErrorCode,
    pub message: String,
    pub tool_id: String,
    /// `precondition-failed` only: `env-value-missing`, `env-value-invalid`, or the handler's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Ajv-shaped issues for the validation failures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Issue>,
}
