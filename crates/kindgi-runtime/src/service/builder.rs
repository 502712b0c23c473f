//! Building a [`Runtime`]: its catalogues, stores, ports and settings, each defaulted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

use super::{Runtime, RuntimeConfig};
use crate::call_values::CallValues;
use crate::catalogue::{AgentCatalogue, FlowCatalogue};
use crate::conversation::ConversationLog;
use crate::definitions::{DefinitionSource, Definitions, LayeredDefinitions, MemoryDefinitions};
use crate::dispatch::ToolCatalogue;
use crate::engine::shared::{Leases, Shared};
use crate::guardrail::{GuardrailCatalogue, GuardrailChecks};
use crate::model::ModelProvider;
use crate::resolve::{RegistryToolFactory, ToolResolver};
use crate::store::RunStore;
use crate::wait_store::{MemoryWaitStore, WaitStore};
use kindgi_tools::registry::ToolRegistry;
use kindgi_tools::synth::SynthesizerRegistry;

/// Builds a [`Runtime`].
pub struct RuntimeBuilder {
    store: Arc<dyn RunStore>,
    waits: Option<Arc<dyn WaitStore>>,
    tools: ToolCatalogue,
    flows: FlowCatalogue,
    agents: AgentCatalogue,
    model: Option<Arc<dyn ModelProvider>>,
    config: RuntimeConfig,
    registry: Option<Arc<dyn ToolRegistry>>,
    registry_tools: Option<Arc<dyn RegistryToolFactory>>,
    synthesizers: Option<SynthesizerRegistry>,
    definition_source: Option<Arc<dyn DefinitionSource>>,
    definitions: Option<Arc<dyn Definitions>>,
    call_values: Option<Arc<dyn CallValues>>,
    guardrails: GuardrailCatalogue,
    guardrail_checks: Option<Arc<dyn GuardrailChecks>>,
    tenant_hitl: Option<Arc<dyn crate::agent::hitl::TenantHitlPolicy>>,
    conversations: Option<Arc<dyn ConversationLog>>,
    providers: Option<Arc<dyn kindgi_core::ports::ProviderRegistry>>,
    model_egress: Option<kindgi_tools::egress::EgressPolicy>,
    connections: Option<Arc<dyn kindgi_core::ports::ConnectionStore>>,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("store", &self.store)
            .field("registry", &self.registry.is_some())
            .field("definition_source", &self.definition_source)
            .finish_non_exhaustive()
    }
}

impl RuntimeBuilder {
    pub fn tools(mut self, tools: ToolCatalogue) -> Self {
        self.tools = tools;
        self
    }
    pub fn flows(mut self, flows: FlowCatalogue) -> Self {
        self.flows = flows;
        self
    }
    pub fn agents(mut self, agents: AgentCatalogue) -> Self {
        self.agents = agents;
        self
    }
    /// Default: [`crate::model::dev_echo::DevEcho`] (use [`crate::model::from_env`] to honour
    /// `KINDGI_MODEL…`).
    pub fn model(mut self, model: Arc<dyn ModelProvider>) -> Self {
        self.model = Some(model);
        self
    }
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }
    /// The tool registry (`POST /v1/tools`) behind the in-memory tools: a run resolves an
    /// id the catalogue does not have (or whose version misses the range) there, per call.
    pub fn registry(mut self, registry: Arc<dyn ToolRegistry>) -> Self {
        self.registry = Some(registry);
        self
    }
    /// Builds registry tools that have no `spec` (pack and MCP tools published to the
    /// registry); without one such a call fails `tool-not-found`.
    pub fn registry_tools(mut self, factory: Arc<dyn RegistryToolFactory>) -> Self {
        self.registry_tools = Some(factory);
        self
    }
    /// The spec synthesizers registry tools are built with (default: the built-in `http`).
    pub fn synthesizers(mut self, synthesizers: SynthesizerRegistry) -> Self {
        self.synthesizers = Some(synthesizers);
        self
    }
    /// Where flows and agents come from when the catalogues do not have them (e.g. the
    /// store's registries); what it answers is compiled once per exact version.
    pub fn definition_source(mut self, source: Arc<dyn DefinitionSource>) -> Self {
        self.definition_source = Some(source);
        self
    }
    /// Replaces the whole flow/agent lookup (the catalogues are then only what
    /// `definitions` itself consults).
    pub fn definitions(mut self, definitions: Arc<dyn Definitions>) -> Self {
        self.definitions = Some(definitions);
        self
    }
    /// Where approvals and pauses are kept (default: in memory; the host's
    /// `Runtime::over(db.ports())` sets the database's).
    pub fn wait_store(mut self, waits: Arc<dyn WaitStore>) -> Self {
        self.waits = Some(waits);
        self
    }
    /// Env values and secrets for tool calls.
    pub fn call_values(mut self, values: Arc<dyn CallValues>) -> Self {
        self.call_values = Some(values);
        self
    }
    /// In-memory guardrails (looked up before the definition source's).
    pub fn guardrails(mut self, guardrails: GuardrailCatalogue) -> Self {
        self.guardrails = guardrails;
        self
    }
    /// Runs the guardrail checks that are not built in (the host's: a pack's check over
    /// `check-invoke`). Without it such a check is `unknown-check`.
    pub fn guardrail_checks(mut self, checks: Arc<dyn GuardrailChecks>) -> Self {
        self.guardrail_checks = Some(checks);
        self
    }
    /// The tenants' `hitl` policies: a floor under every agent's approval gates.
    pub fn tenant_hitl_policy(
        mut self,
        policy: Arc<dyn crate::agent::hitl::TenantHitlPolicy>,
    ) -> Self {
        self.tenant_hitl = Some(policy);
        self
    }
    /// Where agent turns read their conversation's history and keep what they said (see
    /// [`crate::conversation`]); the host's `Runtime::over(db.ports())` plugs in the
    /// database's.
    pub fn conversations(mut self, log: Arc<dyn ConversationLog>) -> Self {
        self.conversations = Some(log);
        self
    }
    /// The tenants' registered model providers (`/v1/providers`): an agent turn calls the
    /// one the model router picks ([`crate::model_router`]), the host's `model` only when the
    /// tenant has none. `Runtime::over(db.ports())` plugs in the database's.
    pub fn providers(mut self, providers: Arc<dyn kindgi_core::ports::ProviderRegistry>) -> Self {
        self.providers = Some(providers);
        self
    }
    /// The addresses a registered provider's client may reach (default: open; a shared
    /// server passes its egress policy, so a tenant's `baseUrl` cannot reach private hosts).
    pub fn model_egress(mut self, egress: kindgi_tools::egress::EgressPolicy) -> Self {
        self.model_egress = Some(egress);
        self
    }
    /// The tenants' connections (`/v1/connections`) tool calls resolve their
    /// `needsSpec.connections` in; token endpoints are reached under the `model_egress`
    /// policy. `Runtime::over(db.ports())` plugs in the database's.
    pub fn connections(mut self, store: Arc<dyn kindgi_core::ports::ConnectionStore>) -> Self {
        self.connections = Some(store);
        self
    }
    pub fn build(self) -> Runtime {
        let egress = self
            .model_egress
            .clone()
            .unwrap_or_else(kindgi_tools::egress::EgressPolicy::open);
        let connections = self
            .connections
            .map(|store| crate::connections::Connector::new(store, egress));
        let model = self
            .model
            .unwrap_or_else(|| Arc::new(crate::model::dev_echo::DevEcho));
        let router = crate::model_router::ModelRouter::new(
            self.providers,
            model.clone(),
            self.model_egress
                .unwrap_or_else(kindgi_tools::egress::EgressPolicy::open),
        );
        let memory: Arc<dyn Definitions> = Arc::new(MemoryDefinitions {
            flows: self.flows.clone(),
            agents: self.agents.clone(),
            guardrails: self.guardrails,
        });
        let definitions = match (self.definitions, self.definition_source) {
            (Some(d), _) => d,
            (None, Some(source)) => Arc::new(LayeredDefinitions::new(memory, source)),
            (None, None) => memory,
        };
        let mut resolver = ToolResolver::new(self.tools.clone());
        if let Some(r) = self.registry {
            resolver = resolver.with_registry(r);
        }
        if let Some(f) = self.registry_tools {
            resolver = resolver.with_factory(f);
        }
        if let Some(s) = self.synthesizers {
            resolver = resolver.with_synthesizers(s);
        }
        Runtime {
            shared: Arc::new(Shared {
                definitions,
                resolver,
                call_values: self.call_values,
                connections,
                guardrail_checks: self.guardrail_checks,
                tenant_hitl: self.tenant_hitl,
                conversations: self.conversations,
                tools: self.tools,
                flows: self.flows,
                agents: self.agents,
                left_out: crate::left_out::LeftOutBook::new(),
                store: self.store,
                model,
                router,
                config: self.config,
                leases: Leases::default(),
                waits: self
                    .waits
                    .unwrap_or_else(|| Arc::new(MemoryWaitStore::new())),
                deadlines: Arc::new(tokio::sync::Notify::new()),
                sweeper_started: std::sync::atomic::AtomicBool::new(false),
                resume_locks: Mutex::new(HashMap::new()),
                answer_validators: Mutex::new(HashMap::new()),
                active: Mutex::new(HashMap::new()),
                shutdown: CancellationToken::new(),
            }),
        }
    }
}

impl Runtime {
    /// A builder over `store`.
    pub fn builder(store: Arc<dyn RunStore>) -> RuntimeBuilder {
        RuntimeBuilder {
            store,
            waits: None,
            tools: ToolCatalogue::new(),
            flows: FlowCatalogue::new(),
            agents: AgentCatalogue::new(),
            model: None,
            config: RuntimeConfig::default(),
            registry: None,
            registry_tools: None,
            synthesizers: None,
            definition_source: None,
            definitions: None,
            call_values: None,
            guardrails: GuardrailCatalogue::new(),
            guardrail_checks: None,
            tenant_hitl: None,
            conversations: None,
            providers: None,
            model_egress: None,
            connections: None,
        }
    }
}
