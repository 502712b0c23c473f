//! What a pack binary has compiled in: its modules, by module path, each holding tools and
//! guardrail checks. The index's `modulePath` / `checkModulePath` name a module here, the
//! way a TypeScript index names a file to import; the tool id (and version) or the check id
//! then picks the handler inside it.

use kindgi_spec::pack_protocol::CheckResult;
use kindgi_tools::{BoxFuture, Handler, HandlerError};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A fallible load step that runs before the service listens (the analogue of importing a
/// module). An `Err` message becomes the boot problem `<id>: <message>`.
pub type LoadFn = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// What a check's `evaluate` receives besides config and trace.
#[derive(Debug, Clone, Default)]
pub struct CheckContext {
    /// Fired at the call's deadline or when the caller disconnects. Cooperative.
    pub signal: CancellationToken,
}

/// A guardrail check: `evaluate(config, trace, ctx)` → [`CheckResult`]. The config arrives
/// as sent (validated against the indexed `configSchema`, no defaults filled).
pub type Evaluate = Arc<
    dyn Fn(
            Map<String, Value>,
            Value,
            CheckContext,
        ) -> BoxFuture<'static, Result<CheckResult, HandlerError>>
        + Send
        + Sync,
>;

/// A tool handler registered under a module path.
#[derive(Clone)]
pub struct RegisteredTool {
    pub id: String,
    pub version: String,
    pub handler: Handler,
    pub load: Option<LoadFn>,
}

/// A check registered under a module path.
#[derive(Clone)]
pub struct RegisteredCheck {
    pub check_id: String,
    pub evaluate: Evaluate,
    pub load: Option<LoadFn>,
}

/// The tools and checks of one module.
#[derive(Clone, Default)]
pub struct Module {
    pub tools: Vec<RegisteredTool>,
    pub checks: Vec<RegisteredCheck>,
}

/// Every module a binary has, by module path.
#[derive(Clone, Default)]
pub struct ModuleRegistry {
    modules: HashMap<String, Module>,
}

impl std::fmt::Debug for ModuleRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut paths: Vec<&String> = self.modules.keys().collect();
        paths.sort();
        f.debug_struct("ModuleRegistry")
            .field("modules", &paths)
            .finish()
    }
}

impl ModuleRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_tool(&mut self, module_path: impl Into<String>, tool: RegisteredTool) {
        self.modules
            .entry(module_path.into())
            .or_default()
            .tools
            .push(tool);
    }

    pub fn add_check(&mut self, module_path: impl Into<String>, check: RegisteredCheck) {
        self.modules
            .entry(module_path.into())
            .or_default()
            .checks
            .push(check);
    }

    pub fn module(&self, module_path: &str) -> Option<&Module> {
        self.modules.get(module_path)
    }

    pub fn has_module(&self, module_path: &str) -> bool {
        self.modules.contains_key(module_path)
    }

    /// The tool a module holds for an index entry: the exact version when the entry names
    /// one, else the module's only tool with that id (the first when there are several).
    pub fn tool(
        &self,
        module_path: &str,
        id: &str,
        version: Option<&str>,
    ) -> Option<&RegisteredTool> {
        let module = self.modules.get(module_path)?;
        match version {
            Some(v) => module.tools.iter().find(|t| t.id == id && t.version == v),
            None => module.tools.iter().find(|t| t.id == id),
        }
    }

    pub fn check(&self, module_path: &str, check_id: &str) -> Option<&RegisteredCheck> {
        self.modules
            .get(module_path)?
            .checks
            .iter()
            .find(|c| c.check_id == check_id)
    }
}
