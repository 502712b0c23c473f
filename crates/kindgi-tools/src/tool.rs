//! The runtime tool object: a manifest plus its handler.

use kindgi_spec::ToolManifest;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

use crate::compiled::{CompiledTool, SchemaCompileFailure};
use crate::context::ToolContext;
use crate::engine::ToolSchemaEngine;

/// Kept at its old path (`kindgi_tools::tool::BoxFuture`); defined in the crate root, which
/// every module may import without a circle.
pub use crate::BoxFuture;

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
pub type Handler = Arc<
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<Value, HandlerError>> + Send + Sync,
>;

type CompiledCell = OnceLock<Result<Arc<CompiledTool>, SchemaCompileFailure>>;

/// A tool: manifest + handler, plus the validators compiled from the manifest's schemas.
/// Cheap to clone (everything is shared).
#[derive(Clone)]
pub struct Tool {
    manifest: Arc<ToolManifest>,
    handler: Handler,
    /// Set at definition; filled on first use for a tool assembled with `from_parts`.
    compiled: Arc<CompiledCell>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("manifest", &self.manifest)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// Assembles a tool from parts already checked. Authoring goes through the builder
    /// ([`Tool::define`]). The schemas are compiled on first invocation (once); use
    /// [`Tool::try_from_parts`] to compile them now and see a failure here.
    pub fn from_parts(manifest: ToolManifest, handler: Handler) -> Self {
        Self {
            manifest: Arc::new(manifest),
            handler,
            compiled: Arc::new(OnceLock::new()),
        }
    }

    /// Like [`Tool::from_parts`], compiling the schemas now.
    pub fn try_from_parts(
        manifest: ToolManifest,
        handler: Handler,
    ) -> Result<Self, SchemaCompileFailure> {
        let compiled = CompiledTool::compile(&manifest, &ToolSchemaEngine::new())?;
        Ok(Self::from_compiled(manifest, handler, compiled))
    }

    pub(crate) fn from_compiled(
        manifest: ToolManifest,
        handler: Handler,
        compiled: CompiledTool,
    ) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(Ok(Arc::new(compiled)));
        Self {
            manifest: Arc::new(manifest),
            handler,
            compiled: Arc::new(cell),
        }
    }

    /// The compiled validators (compiling them now if this tool came from `from_parts`).
    pub fn compiled(&self) -> Result<&CompiledTool, &SchemaCompileFailure> {
        self.compiled
            .get_or_init(|| {
                CompiledTool::compile(&self.manifest, &ToolSchemaEngine::new()).map(Arc::new)
            })
            .as_ref()
            .map(|c| &**c)
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

    /// The manifest as wire JSON (the handler stripped), as `POST /v1/tools` accepts it.
    pub fn to_manifest_value(&self) -> Value {
        // A manifest is plain data (maps, strings, numbers): serialising it cannot fail.
        serde_json::to_value(&*self.manifest).unwrap_or(Value::Null)
    }
}
