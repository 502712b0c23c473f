//! The error envelope `{"error": {"code", "message", "details"?, "requestId"}}`.
//!
//! Handlers return [`ApiError`]; its `IntoResponse` stores the error in the response's
//! extensions, and the request-id middleware (which knows the id) renders the envelope. Any
//! other error response (an unknown route, a wrong method) is turned into an envelope there
//! too, so every 4xx/5xx body has the same shape.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
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
