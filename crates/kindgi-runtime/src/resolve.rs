//! How a run finds the tool a step or an agent names: the [`ToolResolver`].
//!
//! `(tenant, id, range)` → a [`ToolDispatcher`], at dispatch time, for every call:
//! 1. the in-memory [`ToolCatalogue`] by exact id (what the host registers: pack tools, MCP
//!    tools, native tools — the tenant's own, then those every tenant sees), when its version
//!    satisfies the range;
//! 2. else the tool registry ([`ToolRegistry`], e.g. `POST /v1/tools` on the store): the
//!    highest active version satisfying the range (npm `maxSatisfying`, `kindgi_tools::semver`).
//!    A manifest with a `spec` (`kind: http`) becomes an [`InProcessTool`] through the spec
//!    synthesizers; one without (a pack or MCP tool published to the registry) goes to the
//!    [`RegistryToolFactory`] the host plugs in. What is built is cached by
//!    `(tenant, id, exact version)`: a registered version is immutable.
//!
//! A range is an npm semver range (`^1.0.0`, `~1.2`, `>=1 <2`, `1.2.3`); `None` takes the
//! highest version. A flow's tool node names its tool as `ref: "<id>"` or
//! `ref: "<id>@<range>"`, or gives the range as `config.version`.

use async_trait::async_trait;
use kindgi_spec::ToolManifest;
use kindgi_tools::registry::{RegistryError, ToolRegistry};
use kindgi_tools::semver::{Range, Version};
use kindgi_tools::synth::SynthesizerRegistry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::dispatch::{InProcessTool, ToolCatalogue, ToolDispatcher};

/// The most registry tools a resolver keeps built; when full it starts over.
pub const BUILT_TOOL_CACHE_ENTRIES: usize = 4096;

pub use kindgi_core::ids::split_tool_ref;

/// Builds the dispatcher of a registry tool that has no `spec` (a pack tool, an MCP tool):
/// the host plugs one in (it knows which pack service or MCP server serves the tool).
#[async_trait]
pub trait RegistryToolFactory: Send + Sync + std::fmt::Debug {
    /// `Ok(None)`: nothing here serves this tool (the call fails `tool-not-found`);
    /// `Err`: why it could not be reached.
    async fn build(
        &self,
        tenant: &str,
        manifest: &ToolManifest,
    ) -> Result<Option<Arc<dyn ToolDispatcher>>, RegistryToolError>;
}

/// Why a [`RegistryToolFactory`] could not reach the server of a registry tool (the call
/// fails `tool-not-found`, its text saying why).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryToolError {
    /// The MCP endpoint that registered the tool could not be read (for its `secretRef`).
    #[error("its MCP endpoint \"{endpoint_id}\" could not be read: {source}")]
    EndpointUnreadable {
        endpoint_id: String,
        #[source]
        source: kindgi_core::BoxError,
    },
    /// The tool's server address is not one.
    #[error("{source}")]
    BadAddress {
        address: String,
        #[source]
        source: kindgi_core::BoxError,
    },
    /// The server is a stdio command, and this host runs none for a tenant's tools.
    #[error(
        "its MCP server is a stdio command, which this server does not run for a tenant's tools (start it with --allow-stdio-mcp to allow it)"
    )]
    StdioRefused { address: String },
    /// The server could not be connected. `reason` is the client's error as text with the
    /// credential sent masked (it may quote it), so it is not kept as a source.
    #[error("its MCP server could not be reached: {reason}")]
    Unreachable { address: String, reason: String },
    /// The server was connected but did not list its tools (`reason` masked likewise).
    #[error("its MCP server did not list its tools: {reason}")]
    ToolsUnlisted { address: String, reason: String },
}

/// Why a tool reference did not resolve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResolveError {
    /// Neither the catalogue nor the registry has the id for this tenant.
    #[error("tool \"{id}\" is not registered")]
    NotFound { id: String },
    /// The id exists, but no active version satisfies the range (or the range is not one).
    #[error("tool-version-unresolvable: {message}")]
    Unresolvable {
        id: String,
        range: String,
        available: Vec<String>,
        message: String,
    },
    /// The registry has the version, but nothing here can call it.
    #[error("tool-not-found: tool \"{id}\" version {version} is in the registry, but {why}")]
    Unservable {
        id: String,
        version: String,
        why: String,
    },
    /// The registered manifest does not define a tool (a spec that does not synthesize…).
    #[error("invalid-tool-definition: tool \"{id}\" version {version} cannot be used: {message}")]
    Invalid {
        id: String,
        version: String,
        message: String,
    },
    /// The registry could not be read.
    #[error("tool-registry-unavailable: tool \"{id}\" could not be looked up: {message}")]
    Registry { id: String, message: String },
}

impl ResolveError {
    /// The machine-readable code (the failure message's prefix).
    pub fn code(&self) -> &'static str {
        match self {
            ResolveError::NotFound { .. } => "tool-not-found",
            ResolveError::Unresolvable { .. } => "tool-version-unresolvable",
            ResolveError::Unservable { .. } => "tool-not-found",
            ResolveError::Invalid { .. } => "invalid-tool-definition",
            ResolveError::Registry { .. } => "tool-registry-unavailable",
        }
    }
}

/// `(tenant, id, exact version)`.
type BuiltKey = (String, String, String);

/// Tools by `(tenant, id, range)`: the catalogue, then the registry. Cheap to clone.
#[derive(Clone)]
pub struct ToolResolver {
    memory: ToolCatalogue,
    registry: Option<Arc<dyn ToolRegistry>>,
    factory: Option<Arc<dyn RegistryToolFactory>>,
    synthesizers: SynthesizerRegistry,
    built: Arc<Mutex<HashMap<BuiltKey, Arc<dyn ToolDispatcher>>>>,
}

impl std::fmt::Debug for ToolResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolResolver")
            .field("memory", &self.memory.ids())
            .field("registry", &self.registry.is_some())
            .field("factory", &self.factory)
            .finish_non_exhaustive()
    }
}

/// Whether `version` satisfies `range` (`None`: any). A range that does not parse is an
/// error naming it.
fn satisfies(id: &str, version: &str, range: Option<&str>) -> Result<bool, ResolveError> {
    let Some(r) = range else { return Ok(true) };
    let parsed = Range::parse(r).map_err(|_| invalid_range(id, r))?;
    Ok(Version::parse(version).is_ok_and(|v| parsed.satisfies(&v)))
}

fn invalid_range(id: &str, range: &str) -> ResolveError {
    ResolveError::Unresolvable {
        id: id.to_owned(),
        range: range.to_owned(),
        available: Vec::new(),
        message: RegistryError::InvalidRange {
            id: id.to_owned(),
            range: range.to_owned(),
        }
        .to_string(),
    }
}

fn unresolvable(id: &str, range: &str, available: Vec<String>) -> ResolveError {
    let message = RegistryError::Unresolvable {
        id: id.to_owned(),
        range: range.to_owned(),
        available: available.clone(),
    }
    .to_string();
    ResolveError::Unresolvable {
        id: id.to_owned(),
        range: range.to_owned(),
        available,
        message,
    }
}

impl ToolResolver {
    /// Over `memory` only (no registry).
    pub fn new(memory: ToolCatalogue) -> Self {
        Self {
            memory,
            registry: None,
            factory: None,
            synthesizers: SynthesizerRegistry::builtin(),
            built: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Adds the registry behind the catalogue.
    pub fn with_registry(mut self, registry: Arc<dyn ToolRegistry>) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Adds the factory for registry tools without a `spec`.
    pub fn with_factory(mut self, factory: Arc<dyn RegistryToolFactory>) -> Self {
        self.factory = Some(factory);
        self
    }

    /// The spec synthesizers registry tools are built with (default: the built-in `http`).
    pub fn with_synthesizers(mut self, synthesizers: SynthesizerRegistry) -> Self {
        self.synthesizers = synthesizers;
        self
    }

    pub fn catalogue(&self) -> &ToolCatalogue {
        &self.memory
    }

    pub fn registry(&self) -> Option<&Arc<dyn ToolRegistry>> {
        self.registry.as_ref()
    }

    /// The catalogue's tool `id` for `tenant`, without asking the registry (for decisions
    /// that must not wait; `None` may still resolve through the registry).
    pub fn memory_get(&self, tenant: &str, id: &str) -> Option<Arc<dyn ToolDispatcher>> {
        self.memory.get_for(tenant, id)
    }

    /// Whether `tenant` has a tool `id` at all (any version), here or in the registry.
    pub async fn exists(&self, tenant: &str, id: &str) -> Result<bool, ResolveError> {
        if self.memory.contains_for(tenant, id) {
            return Ok(true);
        }
        let Some(registry) = &self.registry else {
            return Ok(false);
        };
        match registry.get(tenant, id).await {
            Ok(_) => Ok(true),
            Err(RegistryError::ToolNotFound { .. } | RegistryError::ToolGone { .. }) => Ok(false),
            Err(e) => Err(ResolveError::Registry {
                id: id.to_owned(),
                message: e.to_string(),
            }),
        }
    }

    /// The tool `tenant` calls as `id` within `range` (`None`: the highest version).
    pub async fn resolve(
        &self,
        tenant: &str,
        id: &str,
        range: Option<&str>,
    ) -> Result<Arc<dyn ToolDispatcher>, ResolveError> {
        let range = range.map(str::trim).filter(|r| !r.is_empty());
        let local = self.memory.get_for(tenant, id);
        if let Some(t) = &local
            && satisfies(id, &t.manifest().version, range)?
        {
            return Ok(t.clone());
        }
        let local_version = local.map(|t| t.manifest().version.clone());
        let Some(registry) = &self.registry else {
            return Err(match (local_version, range) {
                (Some(v), Some(r)) => unresolvable(id, r, vec![v]),
                _ => ResolveError::NotFound { id: id.to_owned() },
            });
        };
        let resolved = match registry.resolve(tenant, id, range).await {
            Ok(r) => r,
            Err(RegistryError::ToolNotFound { .. } | RegistryError::ToolGone { .. }) => {
                return Err(match (local_version, range) {
                    (Some(v), Some(r)) => unresolvable(id, r, vec![v]),
                    _ => ResolveError::NotFound { id: id.to_owned() },
                });
            }
            Err(RegistryError::InvalidRange { range, .. }) => {
                return Err(invalid_range(id, &range));
            }
            Err(RegistryError::Unresolvable {
                range, available, ..
            }) => {
                let mut all = available;
                all.extend(local_version.filter(|v| !all.contains(v)));
                return Err(unresolvable(id, &range, all));
            }
            Err(e) => {
                return Err(ResolveError::Registry {
                    id: id.to_owned(),
                    message: e.to_string(),
                });
            }
        };
        let version = resolved.resolved_version;
        if let Some(t) = self.cached(tenant, id, &version) {
            return Ok(t);
        }
        let built = self
            .build(tenant, id, &version, &resolved.record.manifest_json)
            .await?;
        self.cache(tenant, id, &version, built.clone());
        Ok(built)
    }

    fn cached(&self, tenant: &str, id: &str, version: &str) -> Option<Arc<dyn ToolDispatcher>> {
        let g = self.built.lock().unwrap_or_else(|e| e.into_inner());
        g.get(&(tenant.to_owned(), id.to_owned(), version.to_owned()))
            .cloned()
    }

    fn cache(&self, tenant: &str, id: &str, version: &str, tool: Arc<dyn ToolDispatcher>) {
        let mut g = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if g.len() >= BUILT_TOOL_CACHE_ENTRIES {
            g.clear();
        }
        g.insert((tenant.to_owned(), id.to_owned(), version.to_owned()), tool);
    }

    /// How many registry tools are built and cached.
    pub fn built_count(&self) -> usize {
        self.built.lock().map(|g| g.len()).unwrap_or(0)
    }

    /// Builds the dispatcher of one registry version.
    async fn build(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
        manifest_json: &str,
    ) -> Result<Arc<dyn ToolDispatcher>, ResolveError> {
        let invalid = |message: String| ResolveError::Invalid {
            id: id.to_owned(),
            version: version.to_owned(),
            message,
        };
        let raw: serde_json::Value =
            serde_json::from_str(manifest_json).map_err(|e| invalid(e.to_string()))?;
        if raw.get("spec").is_some() {
            let tool = kindgi_tools::define_manifest(&raw, None, &self.synthesizers)
                .map_err(|e| invalid(e.to_string()))?;
            return Ok(Arc::new(InProcessTool::new(tool)));
        }
        let manifest: ToolManifest =
            serde_json::from_value(raw).map_err(|e| invalid(e.to_string()))?;
        let unservable = |why: String| ResolveError::Unservable {
            id: id.to_owned(),
            version: version.to_owned(),
            why,
        };
        let Some(factory) = &self.factory else {
            return Err(unservable(
                "it has no `spec` (it is a pack or MCP tool) and this runtime has no source for such tools (no pack or MCP server serving it is connected)".into(),
            ));
        };
        match factory.build(tenant, &manifest).await {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(unservable(
                "it has no `spec` (it is a pack or MCP tool) and no connected pack or MCP server serves it".into(),
            )),
            Err(why) => Err(unservable(format!("it could not be reached: {why}"))),
        }
    }
}
