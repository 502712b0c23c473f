//! The error envelope `{"error": {"code", "message", "details"?, "requestId"}}`.
//!
//! Handlers return [`ApiError`]; its `IntoResponse` stores the error in the response's
//! extensions, and the request-id middleware (which knows the id) renders the envelope. Any
//! other error response (an unknown route, a wrong method) is turned into an envelope there
//! too, so every 4xx/5xx body has the same shape.
//!
//! Each domain's refusals become answers here, once, through `From` (so a handler writes
//! `?`): the runtime's, waits', approvals', conversations', values' and the store's. The
//! not-found answers a route also gives by itself are the `*_not_found` helpers.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kindgi_core::conversation::ContinueError;
use kindgi_core::conversation::ConversationError;
use kindgi_runtime::approval::ApprovalError;
use kindgi_runtime::conversation_turn::ConversationTurnError;
use kindgi_runtime::left_out::LeftOutKind;
use kindgi_runtime::{RuntimeError, WaitError};
use kindgi_store::StoreError;
use kindgi_store::values::ValuesError;
use kindgi_tools::registry::RegistryError;
use serde_json::{Value, json};

/// The fixed message of every `500 internal-server-error`.
pub const INTERNAL_MESSAGE: &str = "Unhandled server error";

/// An API error: status, stable code, message and optional details.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> ApiError {
        self.details = Some(details);
        self
    }

    /// `400 bad-input`.
    pub fn bad_input(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad-input", message)
    }

    /// `500 internal-server-error` with the reference's fixed message, without leaking the
    /// cause to the client (it is logged).
    pub fn internal(cause: &dyn std::fmt::Display) -> ApiError {
        tracing::error!(%cause, "internal error");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal-server-error",
            INTERNAL_MESSAGE,
        )
    }

    /// `413 request-too-large` for a body over `max_bytes` (platform-api.md §1.6).
    pub fn too_large(max_bytes: usize) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request-too-large",
            format!("The request body is over the limit of {max_bytes} bytes"),
        )
        .with_details(json!({ "maxBytes": max_bytes }))
    }

    /// The envelope body for `request_id`.
    pub fn envelope(&self, request_id: &str) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let (Some(details), Some(obj)) = (&self.details, error.as_object_mut()) {
            obj.insert("details".into(), details.clone());
        }
        if let Some(obj) = error.as_object_mut() {
            obj.insert("requestId".into(), Value::String(request_id.to_owned()));
        }
        json!({ "error": error })
    }

    /// The REST mapping of a registry error about `id` (and `version`, on version routes).
    pub fn from_registry(e: RegistryError, version: Option<&str>) -> ApiError {
        match e {
            RegistryError::ToolNotFound { id } | RegistryError::VersionNotFound { id, .. } => match version {
                Some(v) => ApiError::new(StatusCode::NOT_FOUND, "tool-not-found", format!("No tool \"{id}\" at version \"{v}\""))
                    .with_details(json!({ "toolId": id, "version": v })),
                None => ApiError::new(StatusCode::NOT_FOUND, "tool-not-found", format!("No tool registered with id \"{id}\""))
                    .with_details(json!({ "toolId": id })),
            },
            RegistryError::ToolGone { id } => ApiError::new(
                StatusCode::GONE,
                "tool-gone",
                format!("Tool \"{id}\" has no active versions; reinstate a tombstoned version or publish a new one"),
            )
            .with_details(json!({ "toolId": id })),
            RegistryError::DuplicateVersion { id, version } => ApiError::new(
                StatusCode::CONFLICT,
                "tool-already-registered",
                format!("Tool \"{id}\" version \"{version}\" is already registered"),
            )
            .with_details(json!({ "toolId": id, "version": version })),
            e @ RegistryError::ProjectMismatch { .. } => {
                ApiError::new(StatusCode::CONFLICT, "tool-project-mismatch", e.to_string()).with_details(e.details())
            }
            e @ RegistryError::InvalidVersion { .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, "validation-failed", e.to_string()).with_details(e.details())
            }
            e @ RegistryError::InvalidRange { .. } => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "tool-version-unresolvable", e.to_string()).with_details(e.details())
            }
            e @ RegistryError::Unresolvable { .. } => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "tool-version-unresolvable", e.to_string()).with_details(e.details())
            }
            e @ RegistryError::Storage(_) => ApiError::internal(&e),
        }
    }
}

impl ApiError {
    /// `404 run-not-found` (also a run of another tenant).
    pub fn run_not_found(run_id: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "run-not-found",
            format!("No run with id {run_id}"),
        )
        .with_details(json!({"runId": run_id}))
    }

    /// `404 wait-not-found` (also a token of another tenant, or a malformed one).
    pub fn wait_not_found() -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "wait-not-found",
            WaitError::NotFound.to_string(),
        )
    }

    /// `404 approval-not-found`.
    pub fn approval_not_found(id: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "approval-not-found",
            format!("No approval with id {id}"),
        )
        .with_details(json!({"approvalId": id}))
    }
}

/// The REST mapping of a runtime refusal.
impl From<RuntimeError> for ApiError {
    fn from(e: RuntimeError) -> ApiError {
        let message = e.message();
        match e {
            RuntimeError::FlowNotFound { flow_id, version } => ApiError::new(
                StatusCode::NOT_FOUND,
                "flow-not-found",
                match &version {
                    Some(v) => format!("No flow \"{flow_id}\" at version \"{v}\""),
                    None => format!("No flow \"{flow_id}\""),
                },
            )
            .with_details(json!({"flowId": flow_id, "flowVersion": version})),
            RuntimeError::AgentNotFound { agent_id, version } => ApiError::new(
                StatusCode::NOT_FOUND,
                "agent-not-found",
                match &version {
                    Some(v) => format!("No agent \"{agent_id}\" at version \"{v}\""),
                    None => format!("No agent \"{agent_id}\""),
                },
            )
            .with_details(json!({"agentId": agent_id, "agentVersion": version})),
            RuntimeError::LeftOut {
                kind,
                id,
                version,
                why,
            } => {
                let (code, field, version_field, noun) = match kind {
                    LeftOutKind::Agent => ("agent-not-found", "agentId", "agentVersion", "agent"),
                    LeftOutKind::Flow => ("flow-not-found", "flowId", "flowVersion", "flow"),
                    LeftOutKind::Tool => ("tool-not-found", "toolId", "toolVersion", "tool"),
                };
                let at = version
                    .as_ref()
                    .map(|v| format!(" at version \"{v}\""))
                    .unwrap_or_default();
                // As the plain `*-not-found`, plus why: the caller sees the real reason.
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    code,
                    format!("No {noun} \"{id}\"{at}: {why}"),
                )
                .with_details(json!({field: id, version_field: version, "leftOut": why}))
            }
            RuntimeError::FlowUnbound {
                flow_id,
                node_id,
                kind,
                reference,
                left_out,
            } => {
                let mut details =
                    json!({"flowId": flow_id, "nodeId": node_id, "kind": kind, "ref": reference});
                if let Some(why) = left_out {
                    details["leftOut"] = json!(why);
                }
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "flow-unbound", message)
                    .with_details(details)
            }
            RuntimeError::InvalidInput {
                flow_id, issues, ..
            } => ApiError::new(StatusCode::BAD_REQUEST, "validation-failed", message)
                .with_details(json!({"flowId": flow_id, "issues": issues})),
            RuntimeError::RunNotFound { run_id } => ApiError::run_not_found(&run_id),
            RuntimeError::RunAlreadyTerminal { run_id, status } => ApiError::new(
                StatusCode::CONFLICT,
                "run-already-terminal",
                format!("Cannot cancel run: already {status}"),
            )
            .with_details(json!({"runId": run_id, "status": status})),
            e @ (RuntimeError::Store(_) | RuntimeError::Lookup { .. }) => ApiError::internal(&e),
        }
    }
}

/// The REST answer of a refused wait answer. A store failure is `503` with a fixed message
/// (its cause is logged, never sent).
impl From<WaitError> for ApiError {
    fn from(e: WaitError) -> ApiError {
        let message = e.to_string();
        match e {
            WaitError::NotFound => ApiError::wait_not_found(),
            WaitError::AlreadyAnswered => {
                ApiError::new(StatusCode::CONFLICT, "wait-already-answered", message)
            }
            WaitError::Expired { expired_at } => {
                ApiError::new(StatusCode::GONE, "wait-expired", message)
                    .with_details(json!({"expiredAt": expired_at}))
            }
            WaitError::Invalid {
                tool_id, issues, ..
            } => ApiError::new(StatusCode::BAD_REQUEST, "wait-answer-invalid", message)
                .with_details(json!({"toolId": tool_id, "issues": issues})),
            WaitError::RunTerminal { run_id, status } => {
                ApiError::new(StatusCode::CONFLICT, "run-already-terminal", message)
                    .with_details(json!({"runId": run_id, "status": status}))
            }
            WaitError::Store(cause) => {
                tracing::error!(%cause, "wait store unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store-unavailable",
                    "The wait store is unavailable; nothing was answered. Retry shortly",
                )
            }
        }
    }
}

/// The REST answer of a refused decision or read. A store failure is `503` with a fixed
/// message (its cause is logged, never sent).
impl From<ApprovalError> for ApiError {
    fn from(e: ApprovalError) -> ApiError {
        let message = e.to_string();
        match e {
            ApprovalError::NotFound { id } => ApiError::approval_not_found(&id),
            ApprovalError::AlreadyDecided { id, status } => {
                ApiError::new(StatusCode::CONFLICT, "approval-already-decided", message)
                    .with_details(json!({"approvalId": id, "status": status}))
            }
            ApprovalError::Terminal { id, status } => {
                ApiError::new(StatusCode::CONFLICT, "approval-terminal", message)
                    .with_details(json!({"approvalId": id, "status": status}))
            }
            ApprovalError::InsufficientRole { have, need } => {
                ApiError::new(StatusCode::FORBIDDEN, "insufficient-role", message)
                    .with_details(json!({"reviewerRole": have, "requiredRole": need}))
            }
            ApprovalError::SeparateApproverRequired { id, requested_by } => {
                ApiError::new(StatusCode::FORBIDDEN, "separate-approver-required", message)
                    .with_details(json!({"approvalId": id, "requestedBy": requested_by}))
            }
            ApprovalError::RunTerminal { run_id, status } => {
                ApiError::new(StatusCode::CONFLICT, "run-already-terminal", message)
                    .with_details(json!({"runId": run_id, "status": status}))
            }
            ApprovalError::Store(cause) => {
                tracing::error!(%cause, "approval store unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store-unavailable",
                    "The approval store is unavailable; nothing was read or decided. Retry shortly",
                )
            }
        }
    }
}

/// A conversation-domain failure: the error's own status, code and details; a storage
/// failure is `500`.
impl From<ConversationError> for ApiError {
    fn from(e: ConversationError) -> ApiError {
        match e {
            ConversationError::Storage(s) => ApiError::internal(&s),
            e => {
                let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::NOT_FOUND);
                let mut error = ApiError::new(status, e.code(), e.to_string());
                if let Some(d) = e.details() {
                    error = error.with_details(d);
                }
                error
            }
        }
    }
}

/// An agent turn that cannot continue the conversation it names: `404
/// conversation-not-found`, `409 conversation-closed` (as the conversation routes answer),
/// `400 bad-input` for another agent's conversation; a storage failure is `500`.
impl From<ConversationTurnError> for ApiError {
    fn from(e: ConversationTurnError) -> ApiError {
        match e {
            ConversationTurnError::Conversation(ContinueError::NotFound { id }) => {
                ApiError::from(ConversationError::NotFound { id })
            }
            ConversationTurnError::Conversation(ContinueError::Closed { id }) => {
                ApiError::from(ConversationError::Closed { id })
            }
            ConversationTurnError::Conversation(ContinueError::Storage(s)) => {
                ApiError::internal(&s)
            }
            ConversationTurnError::OtherAgent {
                id,
                agent_id,
                asked,
            } => ApiError::bad_input(format!(
                "Conversation \"{id}\" is with agent \"{agent_id}\", not \"{asked}\""
            ))
            .with_details(json!({"conversationId": id, "agentId": agent_id})),
        }
    }
}

/// A values (env, secrets) store failure; values never appear in it.
impl From<ValuesError> for ApiError {
    fn from(e: ValuesError) -> ApiError {
        match e {
            ValuesError::NoKey => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "secret-provider-unavailable",
                format!(
                    "This runtime has no secrets key, so it cannot store or read secret values: {}",
                    kindgi_store::seal::KEY_HOWTO
                ),
            ),
            ValuesError::ValueTooLarge { len, max } => ApiError::new(
                StatusCode::BAD_REQUEST,
                "secret-value-too-large",
                format!("The value is {len} bytes; a secret value is at most {max} bytes"),
            )
            .with_details(json!({"maxBytes": max})),
            ValuesError::Seal(e) => {
                tracing::error!(error = %e, "a secret value did not open");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal-server-error",
                    "A stored secret value cannot be decrypted with this runtime's secrets key",
                )
            }
            other => ApiError::internal(&other),
        }
    }
}

/// A store failure: `500`, the cause logged, not sent.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::internal(&e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = self.status.into_response();
        response.extensions_mut().insert(self);
        response
    }
}

/// The envelope for an error response that carries no [`ApiError`] (a body over the limit
/// read by an extractor, a rejection of axum's own).
pub(crate) fn generic_for(status: StatusCode) -> ApiError {
    match status {
        StatusCode::NOT_FOUND => ApiError::new(
            status,
            "route-not-found",
            "No route registered for this request",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::too_large(crate::BODY_LIMIT),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            status,
            "bad-input",
            "Request body must be JSON (Content-Type: application/json)",
        ),
        s if s.is_client_error() => ApiError::new(status, "bad-input", "The request is not valid"),
        _ => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal-server-error",
            INTERNAL_MESSAGE,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_map_to_their_statuses() {
        assert_eq!(
            ApiError::from(WaitError::NotFound).status,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            ApiError::from(WaitError::AlreadyAnswered).status,
            StatusCode::CONFLICT
        );
        let gone = ApiError::from(WaitError::Expired {
            expired_at: "2026-01-01T00:00:00.000Z".into(),
        });
        assert_eq!((gone.status, gone.code), (StatusCode::GONE, "wait-expired"));
        let invalid = ApiError::from(WaitError::Invalid {
            tool_id: "t".into(),
            summary: "bad".into(),
            issues: vec![],
        });
        assert_eq!(invalid.status, StatusCode::BAD_REQUEST);
        assert_eq!(invalid.details.unwrap()["issues"], json!([]));
        let store = ApiError::from(WaitError::Store(kindgi_core::StorageError::backend(
            "waits.get_pause",
            "secret",
        )));
        assert!(!store.message.contains("secret"));
    }

    #[test]
    fn approval_store_failures_do_not_leak_their_cause() {
        let e = ApiError::from(ApprovalError::Store(kindgi_core::StorageError::backend(
            "waits.get_approval",
            "password=hunter2",
        )));
        assert_eq!(e.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(!e.message.contains("hunter2"));
    }
}
