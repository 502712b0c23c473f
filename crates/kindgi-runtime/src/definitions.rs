//! How a run looks up flows, agents and guardrails: the [`Definitions`] seam.
//!
//! Every lookup a run makes goes through it, with the run's tenant: the run's start (the
//! highest version, or the one asked for), the binding check, each subgraph node (its exact
//! `flowRef.version`), each agent node (`config.version` pins one, else the highest) and a
//! resumed run (the exact `flowVersion` it started with, whatever was published since).
//!
//! Two implementations:
//! - [`MemoryDefinitions`]: the runtime's in-memory catalogues, per tenant (entries for
//!   every tenant included);
//! - [`LayeredDefinitions`]: the catalogues first, then a [`DefinitionSource`] the host plugs
//!   in (e.g. the store's flow and agent registries), which answers definition JSON. Exact
//!   versions are immutable, so what the source answers is compiled once and cached by
//!   `(tenant, id, exact version)`.
//!
//! Guardrails have no versions and can be unregistered: a source's guardrail is read at
//! each turn's start (a small JSON read, no compilation).

use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::catalogue::{AgentCatalogue, AgentSpec, FlowCatalogue, LoadedFlow};
use crate::guardrail::{GuardrailCatalogue, GuardrailSpec};

/// The most compiled definitions of each kind a [`LayeredDefinitions`] keeps; when full it
/// starts over (a miss only costs a compile).
pub const DEFINITION_CACHE_ENTRIES: usize = 1024;

/// Why a definition could not be looked up.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DefinitionError {
    /// The source failed (storage down, …); its error is kept (shared: a lookup's error is
    /// cloned into every waiter).
    #[error("definition-source-failed: {kind} \"{id}\" could not be read: {source}")]
    Source {
        kind: &'static str,
        id: String,
        #[source]
        source: Arc<kindgi_core::StorageError>,
    },
    /// The source answered a definition that does not load.
    #[error("invalid-definition: {kind} \"{id}\" version {version} does not load: {message}")]
    Invalid {
        kind: &'static str,
        id: String,
        version: String,
        message: String,
    },
    /// The source answered a guardrail that does not read.
    #[error("invalid-definition: guardrail \"{id}\" does not load: {message}")]
    InvalidGuardrail { id: String, message: String },
}

/// The flows, agents and guardrails a run may use, per tenant.
#[async_trait]
pub trait Definitions: Send + Sync + std::fmt::Debug {
    /// `tenant`'s flow `id`: the exact `version`, or the highest active one when `None`.
    async fn flow(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Arc<LoadedFlow>>, DefinitionError>;

    /// `tenant`'s agent `id`: the exact `version`, or the highest active one when `None`.
    async fn agent(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Arc<AgentSpec>>, DefinitionError>;

    /// `tenant`'s guardrail `id` (registered, not unregistered). Default: none.
    async fn guardrail(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Arc<GuardrailSpec>>, DefinitionError> {
        let _ = (tenant, id);
        Ok(None)
    }
}

pub use kindgi_core::ports::DefinitionSource;

/// The in-memory catalogues as [`Definitions`].
#[derive(Debug, Clone, Default)]
pub struct MemoryDefinitions {
    pub flows: FlowCatalogue,
    pub agents: AgentCatalogue,
    pub guardrails: GuardrailCatalogue,
}

#[async_trait]
impl Definitions for MemoryDefinitions {
    async fn flow(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Arc<LoadedFlow>>, DefinitionError> {
        Ok(self.flows.get_for(tenant, id, version))
    }

    async fn agent(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Arc<AgentSpec>>, DefinitionError> {
        Ok(self.agents.get_for(tenant, id, version))
    }

    async fn guardrail(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Arc<GuardrailSpec>>, DefinitionError> {
        Ok(self.guardrails.get_for(tenant, id))
    }
}

/// `(tenant, id, exact version)`.
type CacheKey = (String, String, String);

/// A bounded map of compiled definitions.
#[derive(Debug)]
struct Cache<T> {
    map: Mutex<HashMap<CacheKey, Arc<T>>>,
}

impl<T> Default for Cache<T> {
    fn default() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> Cache<T> {
    fn get(&self, tenant: &str, id: &str, version: &str) -> Option<Arc<T>> {
        let g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        g.get(&(tenant.to_owned(), id.to_owned(), version.to_owned()))
            .cloned()
    }

    fn put(&self, tenant: &str, id: &str, version: &str, value: Arc<T>) {
        let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if g.len() >= DEFINITION_CACHE_ENTRIES {
            g.clear();
        }
        g.insert(
            (tenant.to_owned(), id.to_owned(), version.to_owned()),
            value,
        );
    }

    fn len(&self) -> usize {
        self.map.lock().map(|g| g.len()).unwrap_or(0)
    }
}

/// The catalogues first, then a [`DefinitionSource`]; what the source answers is compiled
/// once per `(tenant, id, exact version)`.
#[derive(Debug)]
pub struct LayeredDefinitions {
    first: Arc<dyn Definitions>,
    source: Arc<dyn DefinitionSource>,
    flows: Cache<LoadedFlow>,
    agents: Cache<AgentSpec>,
}

impl LayeredDefinitions {
    pub fn new(first: Arc<dyn Definitions>, source: Arc<dyn DefinitionSource>) -> Self {
        Self {
            first,
            source,
            flows: Cache::default(),
            agents: Cache::default(),
        }
    }

    /// How many source definitions are compiled and cached (flows, agents).
    pub fn cached(&self) -> (usize, usize) {
        (self.flows.len(), self.agents.len())
    }
}

/// The `version` a definition JSON carries, checked against what was asked.
fn answered_version(
    kind: &'static str,
    id: &str,
    asked: Option<&str>,
    json: &Value,
) -> Result<String, DefinitionError> {
    let invalid = |version: &str, message: String| DefinitionError::Invalid {
        kind,
        id: id.to_owned(),
        version: version.to_owned(),
        message,
    };
    let got_id = json.get("id").and_then(Value::as_str).unwrap_or_default();
    let version = json
        .get("version")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(asked.unwrap_or("?"), "it has no string `version`".into()))?;
    if got_id != id {
        return Err(invalid(
            version,
            format!("the source answered {kind} \"{got_id}\""),
        ));
    }
    if let Some(a) = asked
        && a != version
    {
        return Err(invalid(a, format!("the source answered version {version}")));
    }
    Ok(version.to_owned())
}

#[async_trait]
impl Definitions for LayeredDefinitions {
    async fn flow(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Arc<LoadedFlow>>, DefinitionError> {
        if let Some(f) = self.first.flow(tenant, id, version).await? {
            return Ok(Some(f));
        }
        if let Some(v) = version
            && let Some(f) = self.flows.get(tenant, id, v)
        {
            return Ok(Some(f));
        }
        let json = self
            .source
            .flow_json(tenant, id, version)
            .await
            .map_err(|e| DefinitionError::Source {
                kind: "flow",
                id: id.to_owned(),
                source: Arc::new(e),
            })?;
        let Some(json) = json else { return Ok(None) };
        let exact = answered_version("flow", id, version, &json)?;
        if let Some(f) = self.flows.get(tenant, id, &exact) {
            return Ok(Some(f));
        }
        let invalid = |message: String| DefinitionError::Invalid {
            kind: "flow",
            id: id.to_owned(),
            version: exact.clone(),
            message,
        };
        let flow = serde_json::from_value(json).map_err(|e| invalid(e.to_string()))?;
        let loaded = Arc::new(LoadedFlow::load(flow).map_err(|e| invalid(e.to_string()))?);
        self.flows.put(tenant, id, &exact, loaded.clone());
        Ok(Some(loaded))
    }

    async fn agent(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Arc<AgentSpec>>, DefinitionError> {
        if let Some(a) = self.first.agent(tenant, id, version).await? {
            return Ok(Some(a));
        }
        if let Some(v) = version
            && let Some(a) = self.agents.get(tenant, id, v)
        {
            return Ok(Some(a));
        }
        let json = self
            .source
            .agent_json(tenant, id, version)
            .await
            .map_err(|e| DefinitionError::Source {
                kind: "agent",
                id: id.to_owned(),
                source: Arc::new(e),
            })?;
        let Some(json) = json else { return Ok(None) };
        let exact = answered_version("agent", id, version, &json)?;
        if let Some(a) = self.agents.get(tenant, id, &exact) {
            return Ok(Some(a));
        }
        let agent = AgentSpec::from_value(json).map_err(|e| DefinitionError::Invalid {
            kind: "agent",
            id: id.to_owned(),
            version: exact.clone(),
            message: e.to_string(),
        })?;
        let agent = Arc::new(agent);
        self.agents.put(tenant, id, &exact, agent.clone());
        Ok(Some(agent))
    }

    async fn guardrail(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Arc<GuardrailSpec>>, DefinitionError> {
        if let Some(g) = self.first.guardrail(tenant, id).await? {
            return Ok(Some(g));
        }
        let json =
            self.source
                .guardrail_json(tenant, id)
                .await
                .map_err(|e| DefinitionError::Source {
                    kind: "guardrail",
                    id: id.to_owned(),
                    source: Arc::new(e),
                })?;
        let Some(json) = json else { return Ok(None) };
        let spec = GuardrailSpec::from_value(&json).map_err(|message| {
            DefinitionError::InvalidGuardrail {
                id: id.to_owned(),
                message,
            }
        })?;
        Ok(Some(Arc::new(spec)))
    }
}
