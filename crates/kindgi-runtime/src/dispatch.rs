//! The in-memory tool catalogue: the tools a host registers by exact id (native, pack, MCP),
//! for every tenant or for one. The dispatch trait and the transports' shared types live in
//! `kindgi_tools::dispatch` (below every transport) and are re-exported here. How a run
//! turns a `ref` (or an agent's `{id, version}`) into a tool — this catalogue first, then
//! the registry — is [`crate::resolve`].

use kindgi_spec::ToolManifest;
use kindgi_tools::Tool;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

pub use kindgi_tools::dispatch::{
    InProcessTool, PackCallError, PackCaller, PackTool, ToolCallError, ToolDispatcher,
    ToolTransport, dry_run_refusal,
};

use kindgi_core::ids::ALL_TENANTS;

/// Scope (tenant or [`ALL_TENANTS`]) → tool id → tool.
type ToolsByScope = HashMap<String, HashMap<String, Arc<dyn ToolDispatcher>>>;

/// The tools a runtime can call by exact id. Cheap to clone (shared); safe to change while
/// runs are going (a run resolves each tool when its step starts).
///
/// A tool inserted without a tenant (the `insert*` methods) is visible to every tenant; one
/// inserted with [`ToolCatalogue::insert_for`] only to its tenant, and wins over a shared
/// tool of the same id.
#[derive(Debug, Clone, Default)]
pub struct ToolCatalogue {
    inner: Arc<RwLock<ToolsByScope>>,
}

fn scope(tenant: Option<&str>) -> &str {
    match tenant {
        Some(t) if !t.is_empty() => t,
        _ => ALL_TENANTS,
    }
}

impl ToolCatalogue {
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, ToolsByScope> {
        // A poisoned lock only means a panic elsewhere mid-insert; the map stays valid.
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, ToolsByScope> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds (or replaces) a tool under its manifest id, for every tenant.
    pub fn insert(&self, tool: Arc<dyn ToolDispatcher>) {
        self.insert_for(None, tool);
    }

    /// Adds (or replaces) a tool for `tenant` (`None`/`"*"`: every tenant).
    pub fn insert_for(&self, tenant: Option<&str>, tool: Arc<dyn ToolDispatcher>) {
        let id = tool.manifest().id.clone();
        self.write()
            .entry(scope(tenant).to_owned())
            .or_default()
            .insert(id, tool);
    }

    /// An in-process tool (native or declarative http), for every tenant.
    pub fn insert_tool(&self, tool: Tool) {
        self.insert(Arc::new(InProcessTool::new(tool)));
    }

    /// A tool from an MCP server, for every tenant. It always counts as mutating.
    pub fn insert_mcp_tool(&self, tool: Tool) {
        self.insert(Arc::new(InProcessTool::mcp(tool)));
    }

    /// A tool from an MCP server for `tenant`. It always counts as mutating.
    pub fn insert_mcp_tool_for(&self, tenant: Option<&str>, tool: Tool) {
        self.insert_for(tenant, Arc::new(InProcessTool::mcp(tool)));
    }

    /// A tool in a pack service, for every tenant.
    pub fn insert_pack_tool(
        &self,
        manifest: ToolManifest,
        pack: impl Into<String>,
        caller: Arc<dyn PackCaller>,
    ) {
        self.insert(Arc::new(PackTool::new(manifest, pack, caller)));
    }

    /// A tool in a pack service, for `tenant`.
    pub fn insert_pack_tool_for(
        &self,
        tenant: Option<&str>,
        manifest: ToolManifest,
        pack: impl Into<String>,
        caller: Arc<dyn PackCaller>,
    ) {
        self.insert_for(tenant, Arc::new(PackTool::new(manifest, pack, caller)));
    }

    /// Removes a tool every tenant sees.
    pub fn remove(&self, id: &str) -> Option<Arc<dyn ToolDispatcher>> {
        self.remove_for(None, id)
    }

    /// Removes `tenant`'s own tool `id` (`None`: the one every tenant sees).
    pub fn remove_for(&self, tenant: Option<&str>, id: &str) -> Option<Arc<dyn ToolDispatcher>> {
        self.write().get_mut(scope(tenant))?.remove(id)
    }

    /// A tool every tenant sees.
    pub fn get(&self, id: &str) -> Option<Arc<dyn ToolDispatcher>> {
        self.read().get(ALL_TENANTS)?.get(id).cloned()
    }

    /// The tool `tenant` sees under `id`: its own, else the one every tenant sees.
    pub fn get_for(&self, tenant: &str, id: &str) -> Option<Arc<dyn ToolDispatcher>> {
        let g = self.read();
        g.get(tenant)
            .and_then(|tools| tools.get(id))
            .or_else(|| g.get(ALL_TENANTS).and_then(|tools| tools.get(id)))
            .cloned()
    }

    /// Whether every tenant sees a tool `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    /// Whether `tenant` sees a tool `id`.
    pub fn contains_for(&self, tenant: &str, id: &str) -> bool {
        self.get_for(tenant, id).is_some()
    }

    /// Ids of the tools every tenant sees, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .read()
            .get(ALL_TENANTS)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        ids.sort();
        ids
    }

    /// Ids of the tools `tenant` sees (its own and every tenant's), sorted.
    pub fn ids_for(&self, tenant: &str) -> Vec<String> {
        let g = self.read();
        let mut ids: Vec<String> = [ALL_TENANTS, tenant]
            .iter()
            .filter_map(|s| g.get(*s))
            .flat_map(|t| t.keys().cloned())
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// Removes every tool of every tenant.
    pub fn clear(&self) {
        self.write().clear();
    }

    /// Removes `tenant`'s own tools (`None`: the ones every tenant sees).
    pub fn clear_tenant(&self, tenant: Option<&str>) {
        self.write().remove(scope(tenant));
    }
}
