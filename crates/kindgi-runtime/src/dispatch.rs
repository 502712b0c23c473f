//! The tool catalogue a runtime resolves `ref`s against. The dispatch trait and the
//! transports' shared types live in `kindgi_tools::dispatch` (below every transport) and are
//! re-exported here.

use kindgi_spec::ToolManifest;
use kindgi_tools::Tool;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

pub use kindgi_tools::dispatch::{
    InProcessTool, PackCallError, PackCaller, PackTool, ToolCallError, ToolDispatcher,
    ToolTransport, dry_run_refusal,
};

/// The tools a runtime can call, by id. Cheap to clone (shared); safe to change while runs
/// are going (a run resolves each tool when its step starts).
#[derive(Debug, Clone, Default)]
pub struct ToolCatalogue {
    inner: Arc<RwLock<HashMap<String, Arc<dyn ToolDispatcher>>>>,
}

impl ToolCatalogue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a tool under its manifest id.
    pub fn insert(&self, tool: Arc<dyn ToolDispatcher>) {
        let id = tool.manifest().id.clone();
        if let Ok(mut g) = self.inner.write() {
            g.insert(id, tool);
        }
    }

    /// An in-process tool (native or declarative http).
    pub fn insert_tool(&self, tool: Tool) {
        self.insert(Arc::new(InProcessTool::new(tool)));
    }

    /// A tool from an MCP server.
    pub fn insert_mcp_tool(&self, tool: Tool) {
        self.insert(Arc::new(InProcessTool::mcp(tool)));
    }

    /// A tool in a pack service.
    pub fn insert_pack_tool(
        &self,
        manifest: ToolManifest,
        pack: impl Into<String>,
        caller: Arc<dyn PackCaller>,
    ) {
        self.insert(Arc::new(PackTool::new(manifest, pack, caller)));
    }

    pub fn remove(&self, id: &str) -> Option<Arc<dyn ToolDispatcher>> {
        self.inner.write().ok()?.remove(id)
    }

    pub fn get(&self, id: &str) -> Option<Arc<dyn ToolDispatcher>> {
        self.inner.read().ok()?.get(id).cloned()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.inner
            .read()
            .map(|g| g.contains_key(id))
            .unwrap_or(false)
    }

    /// Tool ids, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .inner
            .read()
            .map(|g| g.keys().cloned().collect())
            .unwrap_or_default();
        ids.sort();
        ids
    }

    /// Removes every tool.
    pub fn clear(&self) {
        if let Ok(mut g) = self.inner.write() {
            g.clear();
        }
    }
}
