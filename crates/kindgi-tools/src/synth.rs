//! Spec synthesizers: turn a declarative `spec` (by its `kind`) into a handler at definition
//! time — the counterpart of the reference `registerToolSpecSynthesizer`. `http` is built in:
//! [`SynthesizerRegistry::builtin`] is defined beside it in [`crate::http`], so this registry
//! starts empty and knows no kind itself. Without the `http` feature there is no built-in
//! kind, and [`SynthesizerRegistry::builtin`] (defined here then) is an empty registry.

use kindgi_spec::{ToolManifest, ToolSpec};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::tool::Handler;

/// Builds the handler of a declarative tool from its spec.
pub trait SpecSynthesizer: Send + Sync {
    /// `manifest` is the whole (already shape-checked) manifest; `spec` is its `spec`.
    /// An `Err` is a message a person can act on; it becomes `invalid-tool-definition`.
    fn synthesize(&self, manifest: &ToolManifest, spec: &ToolSpec) -> Result<Handler, String>;
}

/// `kind` → synthesizer. Cheap to clone; shared.
#[derive(Clone, Default)]
pub struct SynthesizerRegistry {
    inner: Arc<RwLock<HashMap<String, Arc<dyn SpecSynthesizer>>>>,
}

impl std::fmt::Debug for SynthesizerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<String> = match self.inner.read() {
            Ok(map) => map.keys().cloned().collect(),
            Err(_) => Vec::new(),
        };
        f.debug_struct("SynthesizerRegistry")
            .field("kinds", &kinds)
            .finish()
    }
}

impl SynthesizerRegistry {
    /// An empty registry (no kinds at all).
    pub fn empty() -> Self {
        Self::default()
    }

    /// Registers (or replaces) the synthesizer for `kind`.
    pub fn register(&self, kind: impl Into<String>, synthesizer: Arc<dyn SpecSynthesizer>) {
        if let Ok(mut map) = self.inner.write() {
            map.insert(kind.into(), synthesizer);
        }
    }

    pub fn get(&self, kind: &str) -> Option<Arc<dyn SpecSynthesizer>> {
        self.inner.read().ok()?.get(kind).cloned()
    }
}

#[cfg(not(feature = "http"))]
impl SynthesizerRegistry {
    /// A registry with the built-in kinds: none without the `http` feature, so a declarative
    /// tool is refused at definition ("no synthesizer registered for tool spec kind").
    pub fn builtin() -> Self {
        Self::empty()
    }
}
