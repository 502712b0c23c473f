//! The runtime tool object: a manifest plus its handler.

use kindgi_spec::ToolManifest;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::context::ToolContext;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a handler returns when it fails. `message` becomes
/// `Tool "<id>" handler threw: <message>`; a precondition failure becomes `precondition-failed`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HandlerError {
    #[error("{0}")]
    Failed(String),
    /// The tool was not run: `reason` is machine-readable (`env-value-missing`, …).
    #[error("{reason}: {message}")]
    Precondition { reason: String, message: String },
}

impl HandlerError {
    pub fn msg(message: impl Into<String>) -> Self {
        HandlerError::Failed(message.into())
    }
}

/// An async handler: validated input (defaults filled) and the context, to the output.
pub type Handler =
    Arc<dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<Value, HandlerError>> + Send + Sync>;

/// A tool: manifest + handler (none only while a declarative tool awaits its synthesizer).
#[derive(Clone)]
pub struct Tool {
    manifest: Arc<ToolManifest>,
    handler: Handler,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool").field("manifest", &self.manifest).finish_non_exhaustive()
    }
}

impl Tool {
    /// Assembles a tool from parts already checked. Authoring goes through the builder.
    pub fn from_parts(manifest: ToolManifest, handler: Handler) -> Self {
        Self { manifest: Arc::new(manifest), handler }
    }

    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    pub fn version(&self) -> &str {
        &self.manifest.version
    }

    /// The manifest — the projection without the handler.
    pub fn manifest(&self) -> &ToolManifest {
        &self.manifest
    }

    pub fn manifest_arc(&self) -> Arc<ToolManifest> {
        self.manifest.clone()
    }

    pub fn handler(&self) -> &Handler {
        &self.handler
    }
}
