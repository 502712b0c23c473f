//! The [`Runtime`]: catalogues of tools, flows and agents (looked up per tenant through
//! [`crate::definitions`] and [`crate::resolve`]), a run store, a model provider — and the
//! run API on top (`start_run`, `get_run`, `list_runs`, `journal`, `cancel_run`,
//! `wait_for_run`, `recover`).
//!
//! Each run executes on its own tokio task. `start_run` checks everything that can be checked
//! before a run exists (the flow, every tool/agent/sub-flow it names, the input against
//! `metadata.inputSchema` when the flow declares one) and answers an error without creating a
//! run; afterwards every problem is a failed run with a `failureMessage`.

use kindgi_spec::flow::{LeafKind, Node};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::call_values::CallValues;
use crate::catalogue::{AgentCatalogue, FlowCatalogue, LoadedFlow};
use crate::conversation::ConversationLog;
use crate::definitions::{
    DefinitionError, DefinitionSource, Definitions, LayeredDefinitions, MemoryDefinitions,
};
use crate::dispatch::ToolCatalogue;
use crate::executor::{execute_run, issues_text};
use crate::guardrail::{GuardrailCatalogue, GuardrailChecks};
use crate::model::ModelProvider;
use crate::record::{
    AGENT_TURN_FLOW_ID, JournalEntry, JournalKind, RunAgent, RunMeta, RunRecord, RunStatus,
    format_millis, now_millis,
};
use crate::resolve::{RegistryToolFactory, ResolveError, ToolResolver, split_tool_ref};
use crate::stop::RunStop;
use crate::store::{MemoryRunStore, RunQuery, RunStore, RunStoreError};
use crate::wait_store::{MemoryWaitStore, WaitStore};
use kindgi_tools::registry::ToolRegistry;
use kindgi_tools::synth::SynthesizerRegistry;

/// The tenant runs belong to when none is given.
pub const DEFAULT_TENANT: &str = "default";

/// How to start a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOptions {
    /// Run only read-only tools; skip model calls (seed 004).
    pub dry_run: bool,
    /// Return when the run has ended (or is suspended) instead of right away.
    pub wait: bool,
    /// Overrides the flow's `maxParallelism`.
    pub max_parallelism: Option<u32>,
    /// Default [`DEFAULT_TENANT`].
    pub tenant_id: Option<String>,
    /// Recorded on the run as given (project, segments, trace, `startedBy`, trigger…);
    /// `agent` is set by [`Runtime::start_agent_turn`].
    pub meta: RunMeta,
}

/// Why a run API call was refused (nothing was started or changed). The code is data
/// ([`RuntimeError::code`]) and so is the message ([`RuntimeError::message`]); `Display` is
/// `code: message` (a lookup's or store's is its cause's text).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{}: {}", self.code(), self.message())]
    FlowNotFound {
        flow_id: String,
        version: Option<String>,
    },
    #[error("{}: {}", self.code(), self.message())]
    FlowUnbound {
        flow_id: String,
        node_id: String,
        kind: &'static str,
        reference: String,
    },
    #[error("{}: {}", self.code(), self.message())]
    InvalidInput {
        flow_id: String,
        details: String,
        issues: Vec<kindgi_schema::Issue>,
    },
    #[error("{}: {}", self.code(), self.message())]
    AgentNotFound {
        agent_id: String,
        version: Option<String>,
    },
    #[error("{}: {}", self.code(), self.message())]
    RunNotFound { run_id: String },
    #[error("{}: {}", self.code(), self.message())]
    RunAlreadyTerminal { run_id: String, status: RunStatus },
    #[error("{0}")]
    Store(#[from] RunStoreError),
    /// A flow, agent or tool could not be looked up (its source failed, or answered a
    /// definition that does not load): `code` says which, `cause` is the typed failure
    /// (kept as a field, not a `source`, because the message is its text already).
    #[error("{cause}")]
    Lookup {
        code: &'static str,
        cause: LookupError,
    },
}

/// Why a [`RuntimeError::Lookup`] happened, typed.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error(transparent)]
    Definition(DefinitionError),
    #[error(transparent)]
    Resolve(ResolveError),
}

/// ` version <v>` when a version was asked for.
fn version_suffix(version: &Option<String>) -> String {
    version
        .as_ref()
        .map(|v| format!(" version {v}"))
        .unwrap_or_default()
}

impl From<DefinitionError> for RuntimeError {
    fn from(e: DefinitionError) -> Self {
        let code = match &e {
            DefinitionError::Source { .. } => "definition-source-failed",
            DefinitionError::Invalid { .. } | DefinitionError::InvalidGuardrail { .. } => {
                "invalid-definition"
            }
        };
        RuntimeError::Lookup {
            code,
            cause: LookupError::Definition(e),
        }
    }
}

impl From<ResolveError> for RuntimeError {
    fn from(e: ResolveError) -> Self {
        RuntimeError::Lookup {
            code: e.code(),
            cause: LookupError::Resolve(e),
        }
    }
}

impl RuntimeError {
    /// What the error says, without its code.
    pub fn message(&self) -> String {
        match self {
            RuntimeError::FlowUnbound {
                flow_id,
                node_id,
                kind,
                reference,
            } => format!(
                "flow \"{flow_id}\" node \"{node_id}\" names {kind} \"{reference}\", which is not registered"
            ),
            RuntimeError::InvalidInput {
                flow_id, details, ..
            } => format!("the input does not match flow \"{flow_id}\" input schema: {details}"),
            RuntimeError::FlowNotFound { flow_id, version } => {
                format!("no flow \"{flow_id}\"{}", version_suffix(version))
            }
            RuntimeError::AgentNotFound { agent_id, version } => {
                format!("no agent \"{agent_id}\"{}", version_suffix(version))
            }
            RuntimeError::RunNotFound { run_id } => format!("no run \"{run_id}\""),
            RuntimeError::RunAlreadyTerminal { run_id, status } => {
                format!("run \"{run_id}\" is already {status}")
            }
            RuntimeError::Store(e) => e.to_string(),
            RuntimeError::Lookup { cause, .. } => cause.to_string(),
        }
    }

    /// The machine-readable code (the message's prefix).
    pub fn code(&self) -> &'static str {
        match self {
            RuntimeError::FlowNotFound { .. } => "flow-not-found",
            RuntimeError::FlowUnbound { .. } => "flow-unbound",
            RuntimeError::InvalidInput { .. } => "input-validation-failed",
            RuntimeError::AgentNotFound { .. } => "agent-not-found",
            RuntimeError::RunNotFound { .. } => "run-not-found",
            RuntimeError::RunAlreadyTerminal { .. } => "run-already-terminal",
            RuntimeError::Store(_) => "store-error",
            RuntimeError::Lookup { code, .. } => code,
        }
    }
}

/// Runtime-wide settings.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    pub default_tenant: String,
    pub max_subflow_depth: u32,
    /// Where this runtime's API is reached from outside (no trailing `/`): a pausing call's
    /// link is `{public_url}/v1/waits/{token}`. The host sets it from its listen address or
    /// `KINDGI_PUBLIC_URL`.
    pub public_url: String,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            default_tenant: DEFAULT_TENANT.into(),
            max_subflow_depth: kindgi_spec::flow::DEFAULT_MAX_SUBFLOW_DEPTH,
            public_url: "http://127.0.0.1:8080".into(),
        }
    }
}

/// Per-tenant `concurrencyKey` semaphores (one holder at a time).
#[derive(Debug, Default)]
pub(crate) struct Leases {
    map: Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>,
}

impl Leases {
    pub(crate) fn semaphore(&self, tenant: &str, key: &str) -> Arc<tokio::sync::Semaphore> {
        let k = format!("{tenant}\u{0}{key}");
        match self.map.lock() {
            Ok(mut g) => g
                .entry(k)
                .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(1)))
                .clone(),
            Err(_) => Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }
}

struct ActiveRun {
    stop: RunStop,
    done: watch::Receiver<bool>,
    handle: tokio::task::AbortHandle,
}

/// State shared by the runtime and its executing runs.
pub(crate) struct Shared {
    pub tools: ToolCatalogue,
    pub flows: FlowCatalogue,
    pub agents: AgentCatalogue,
    /// Every flow and agent lookup of a run (tenant-aware).
    pub definitions: Arc<dyn Definitions>,
    /// Every tool lookup of a run: `tools`, then the registry.
    pub resolver: ToolResolver,
    /// Env values and secrets for calls (none by default).
    pub call_values: Option<Arc<dyn CallValues>>,
    /// Runs guardrail checks that are not built in (a pack's); none by default.
    pub guardrail_checks: Option<Arc<dyn GuardrailChecks>>,
    /// The tenants' approval rules agent turns are held to (none by default).
    pub tenant_hitl: Option<Arc<dyn crate::agent::hitl::TenantHitlPolicy>>,
    /// Where agent turns keep their conversations (none: no history, nothing kept).
    pub conversations: Option<Arc<dyn ConversationLog>>,
    pub store: Arc<dyn RunStore>,
    pub model: Arc<dyn ModelProvider>,
    pub config: RuntimeConfig,
    pub leases: Leases,
    /// Approvals and pausing calls' waits.
    pub waits: Arc<dyn WaitStore>,
    /// Woken when a wait with a deadline is created (the sweeper sleeps until the next one).
    pub deadlines: Arc<tokio::sync::Notify>,
    /// Whether [`Runtime::recover`] started the sweeper yet.
    pub(crate) sweeper_started: std::sync::atomic::AtomicBool,
    /// One per top-level run being resumed: answers to its waits are journaled one at a time.
    pub(crate) resume_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Pausing tools' output validators, by `(tenant, tool id, version)`: compiled once.
    pub(crate) answer_validators:
        Mutex<HashMap<(String, String, String), Arc<kindgi_schema::Validator>>>,
    active: Mutex<HashMap<String, ActiveRun>>,
    /// Fired by [`Runtime::shutdown`]; every run's stop signal is its child.
    pub(crate) shutdown: CancellationToken,
}

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
    /// Where approvals and pauses are kept (default: in memory; [`Runtime::with_database`]
    /// sets the database's).
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
    /// [`crate::conversation`]); [`Runtime::with_database`] plugs in the database's.
    pub fn conversations(mut self, log: Arc<dyn ConversationLog>) -> Self {
        self.conversations = Some(log);
        self
    }
    pub fn build(self) -> Runtime {
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
                guardrail_checks: self.guardrail_checks,
                tenant_hitl: self.tenant_hitl,
                conversations: self.conversations,
                tools: self.tools,
                flows: self.flows,
                agents: self.agents,
                store: self.store,
                model: self
                    .model
                    .unwrap_or_else(|| Arc::new(crate::model::dev_echo::DevEcho)),
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

/// The runtime. Cheap to clone; must be used inside a tokio runtime.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("store", &self.shared.store)
            .finish_non_exhaustive()
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
        }
    }

    /// A builder over a migrated database (SQLite or PostgreSQL).
    pub fn with_database(db: kindgi_store::Database) -> RuntimeBuilder {
        Runtime::builder(Arc::new(kindgi_store::runs::RunsStore::new(db.clone())))
            .wait_store(Arc::new(kindgi_store::waits::WaitsStore::new(db.clone())))
            .conversations(Arc::new(
                kindgi_store::conversations::ConversationStore::new(db),
            ))
    }

    /// A builder over an in-memory store.
    pub fn in_memory() -> RuntimeBuilder {
        Runtime::builder(Arc::new(MemoryRunStore::new()))
    }

    pub fn tools(&self) -> &ToolCatalogue {
        &self.shared.tools
    }
    pub fn flows(&self) -> &FlowCatalogue {
        &self.shared.flows
    }
    pub fn agents(&self) -> &AgentCatalogue {
        &self.shared.agents
    }
    pub fn store(&self) -> &Arc<dyn RunStore> {
        &self.shared.store
    }
    /// Every flow and agent lookup runs go through.
    pub fn definitions(&self) -> &Arc<dyn Definitions> {
        &self.shared.definitions
    }
    /// Every tool lookup runs go through.
    pub fn resolver(&self) -> &ToolResolver {
        &self.shared.resolver
    }
    pub fn model(&self) -> &Arc<dyn ModelProvider> {
        &self.shared.model
    }
    /// Where approvals and pauses are kept.
    pub fn wait_store(&self) -> &Arc<dyn WaitStore> {
        &self.shared.waits
    }
    pub fn config(&self) -> &RuntimeConfig {
        &self.shared.config
    }

    /// Checks every tool, agent and sub-flow the flow names (sub-flows recursively), as
    /// `tenant` sees them. A tool counts when the tenant has its id at all (catalogue or
    /// registry): its version range is resolved when the step calls it.
    pub async fn check_bindings(
        &self,
        tenant: &str,
        flow: &LoadedFlow,
    ) -> Result<(), RuntimeError> {
        let mut seen = HashSet::new();
        seen.insert((flow.flow.id.clone(), flow.flow.version.clone()));
        let mut children = self.check_flow_bindings(tenant, flow).await?;
        while let Some(child) = children.pop() {
            if seen.insert((child.flow.id.clone(), child.flow.version.clone())) {
                children.extend(self.check_flow_bindings(tenant, &child).await?);
            }
        }
        Ok(())
    }

    /// Checks one flow's own nodes; returns the sub-flows it names.
    async fn check_flow_bindings(
        &self,
        tenant: &str,
        flow: &LoadedFlow,
    ) -> Result<Vec<Arc<LoadedFlow>>, RuntimeError> {
        let defs = &self.shared.definitions;
        let tools = &self.shared.resolver;
        let unbound = |node: &str, kind: &'static str, reference: &str| RuntimeError::FlowUnbound {
            flow_id: flow.flow.id.clone(),
            node_id: node.to_owned(),
            kind,
            reference: reference.to_owned(),
        };
        let mut children = Vec::new();
        for node in flow.flow.all_nodes() {
            match node {
                Node::Leaf(l) => match l.kind {
                    LeafKind::Tool => {
                        let (id, _) = split_tool_ref(&l.ref_);
                        if !tools.exists(tenant, id).await? {
                            return Err(unbound(&l.id, "tool", id));
                        }
                    }
                    LeafKind::Agent => {
                        let pinned = crate::executor::agent_version(l);
                        let Some(agent) = defs.agent(tenant, &l.ref_, pinned).await? else {
                            return Err(unbound(&l.id, "agent", &l.ref_));
                        };
                        for t in &agent.tools {
                            if !tools.exists(tenant, &t.id).await? {
                                return Err(unbound(&l.id, "tool (of its agent)", &t.id));
                            }
                        }
                    }
                },
                Node::Fanout(f) => {
                    for b in &f.branches {
                        let (id, _) = split_tool_ref(&b.handler);
                        if !tools.exists(tenant, id).await?
                            && defs.agent(tenant, &b.handler, None).await?.is_none()
                        {
                            return Err(unbound(&f.id, "branch handler", &b.handler));
                        }
                    }
                }
                Node::Subgraph(s) => {
                    let fref = &s.flow_ref;
                    let Some(child) = defs
                        .flow(tenant, &fref.flow_id, Some(&fref.version))
                        .await?
                    else {
                        return Err(unbound(
                            &s.id,
                            "flow",
                            &format!("{}@{}", fref.flow_id, fref.version),
                        ));
                    };
                    children.push(child);
                }
                Node::Loop(_) => {}
            }
        }
        Ok(children)
    }

    /// Starts a run of `flow_id` (the highest version when `version` is `None`).
    pub async fn start_run(
        &self,
        flow_id: &str,
        version: Option<&str>,
        mut input: Value,
        options: RunOptions,
    ) -> Result<RunRecord, RuntimeError> {
        let tenant = options
            .tenant_id
            .clone()
            .unwrap_or_else(|| self.shared.config.default_tenant.clone());
        let flow = self
            .shared
            .definitions
            .flow(&tenant, flow_id, version)
            .await?
            .ok_or_else(|| RuntimeError::FlowNotFound {
                flow_id: flow_id.to_owned(),
                version: version.map(str::to_owned),
            })?;
        self.check_bindings(&tenant, &flow).await?;
        if let Some(v) = flow.schema("input")
            && let Err(issues) = v.validate_in_place(&mut input)
        {
            return Err(RuntimeError::InvalidInput {
                flow_id: flow_id.to_owned(),
                details: issues_text(&issues),
                issues: issues.into(),
            });
        }
        let run = self.new_run(&flow.flow.id, &flow.flow.version, input, &options);
        self.launch(run, &options).await
    }

    /// Starts one agent turn as a run: `flowId` [`AGENT_TURN_FLOW_ID`], `flowVersion` the
    /// agent's version, `agent {id, version, via}` on the run; the turn itself is a one-node
    /// flow (see [`agent_turn_flow`]) so it executes, journals, cancels and recovers as any
    /// run does. `version` must be the agent's version when given (`via: "explicit"`); absent,
    /// the agent as registered serves (`via: "latest"`).
    pub async fn start_agent_turn(
        &self,
        agent_id: &str,
        version: Option<&str>,
        input: Value,
        options: RunOptions,
    ) -> Result<RunRecord, RuntimeError> {
        let not_found = || RuntimeError::AgentNotFound {
            agent_id: agent_id.to_owned(),
            version: version.map(str::to_owned),
        };
        let tenant = options
            .tenant_id
            .clone()
            .unwrap_or_else(|| self.shared.config.default_tenant.clone());
        let agent = self
            .shared
            .definitions
            .agent(&tenant, agent_id, version)
            .await?
            .ok_or_else(not_found)?;
        let flow = agent_turn_flow(agent_id, &agent.version).map_err(|_| not_found())?;
        self.check_bindings(&tenant, &flow).await?;
        let mut run = self.new_run(AGENT_TURN_FLOW_ID, &agent.version, input, &options);
        run.meta.agent = Some(RunAgent {
            id: agent.id.clone(),
            version: agent.version.clone(),
            // The turn's conversation: the one the input names, else a new one of its own
            // (`OA:Run.agent.conversationId` is always there).
            conversation_id: Some(
                run.input
                    .get("conversationId")
                    .and_then(Value::as_str)
                    .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned),
            ),
            via: Some(
                if version.is_some() {
                    "explicit"
                } else {
                    "latest"
                }
                .into(),
            ),
        });
        self.launch(run, &options).await
    }

    /// A new `pending` run record of `flow_id@flow_version`.
    fn new_run(
        &self,
        flow_id: &str,
        flow_version: &str,
        input: Value,
        options: &RunOptions,
    ) -> RunRecord {
        let now = format_millis(now_millis());
        RunRecord {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: options
                .tenant_id
                .clone()
                .unwrap_or_else(|| self.shared.config.default_tenant.clone()),
            flow_id: flow_id.to_owned(),
            flow_version: flow_version.to_owned(),
            status: RunStatus::Pending,
            input,
            output: None,
            failure_message: None,
            dry_run: options.dry_run,
            created_at: now.clone(),
            updated_at: now,
            completed_at: None,
            parent_run_id: None,
            parent_node_id: None,
            meta: RunMeta {
                agent: None,
                ..options.meta.clone()
            },
        }
    }

    /// Stores a new run and starts executing it (waiting for it when `options.wait`).
    async fn launch(
        &self,
        run: RunRecord,
        options: &RunOptions,
    ) -> Result<RunRecord, RuntimeError> {
        self.shared.store.insert_run(&run).await?;
        let id = run.id.clone();
        self.spawn(run.clone(), options.max_parallelism);
        if options.wait {
            return self.wait_for_run(&id).await;
        }
        Ok(run)
    }

    pub(crate) fn spawn(&self, run: RunRecord, max_parallelism: Option<u32>) {
        // A run started after `shutdown` stops at once, left `pending` for the next start.
        let stop = RunStop::new(&self.shared.shutdown);
        let (tx, rx) = watch::channel(false);
        let shared = self.shared.clone();
        let id = run.id.clone();
        // Registered before the task starts so `wait_for_run` never misses it.
        let mut active = match self.shared.active.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let run_stop = stop.clone();
        let task_id = id.clone();
        let handle = tokio::spawn(async move {
            execute_run(shared.clone(), run, 0, run_stop, max_parallelism).await;
            if let Ok(mut g) = shared.active.lock() {
                g.remove(&task_id);
            }
            let _ = tx.send(true);
        });
        active.insert(
            id,
            ActiveRun {
                stop,
                done: rx,
                handle: handle.abort_handle(),
            },
        );
    }

    /// A run's record.
    pub async fn get_run(&self, run_id: &str) -> Result<RunRecord, RuntimeError> {
        self.shared
            .store
            .get_run(run_id)
            .await?
            .ok_or_else(|| RuntimeError::RunNotFound {
                run_id: run_id.to_owned(),
            })
    }

    /// Runs, newest first.
    pub async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, RuntimeError> {
        Ok(self.shared.store.list_runs(query).await?)
    }

    /// A run's journal entries after `after` (a sequence number), at most `limit`.
    pub async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, RuntimeError> {
        self.get_run(run_id).await?;
        Ok(self.shared.store.journal(run_id, after, limit).await?)
    }

    /// Waits until the run is no longer pending or running here, and returns its record.
    pub async fn wait_for_run(&self, run_id: &str) -> Result<RunRecord, RuntimeError> {
        let rx = self
            .shared
            .active
            .lock()
            .ok()
            .and_then(|g| g.get(run_id).map(|a| a.done.clone()));
        if let Some(mut rx) = rx {
            while !*rx.borrow() {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        }
        self.get_run(run_id).await
    }

    /// Cancels a run: an executing one stops at its next step boundary (in-flight tools see
    /// their cancellation signal) and ends `cancelled`, sub-runs included.
    pub async fn cancel_run(&self, run_id: &str) -> Result<RunRecord, RuntimeError> {
        let run = self.get_run(run_id).await?;
        if run.status.is_terminal() {
            return Err(RuntimeError::RunAlreadyTerminal {
                run_id: run_id.to_owned(),
                status: run.status,
            });
        }
        let stop = self
            .shared
            .active
            .lock()
            .ok()
            .and_then(|g| g.get(run_id).map(|a| a.stop.clone()));
        match stop {
            Some(s) => {
                s.request_cancel();
                self.wait_for_run(run_id).await
            }
            None => self.cancel_here(run).await,
        }
    }

    /// Cancels a run no executor of this process drives (a suspended one, or one left by a
    /// process that stopped): journals `run.cancelled`, withdraws its open approvals
    /// (`run-cancelled`) and cancels its unfinished child runs the same way. Under the
    /// run's resume lock, so no answer to one of its waits is journaled meanwhile.
    async fn cancel_here(&self, run: RunRecord) -> Result<RunRecord, RuntimeError> {
        let guard = self.lock_for_answer(&run).await?;
        let run = self.get_run(&run.id).await?;
        if run.status.is_terminal() {
            return Err(RuntimeError::RunAlreadyTerminal {
                run_id: run.id,
                status: run.status,
            });
        }
        let mut pending = vec![run.clone()];
        let mut first = None;
        while let Some(r) = pending.pop() {
            let children = self
                .shared
                .store
                .list_runs(&RunQuery {
                    parent_run_id: Some(r.id.clone()),
                    ..RunQuery::default()
                })
                .await?;
            pending.extend(children.into_iter().filter(|c| !c.status.is_terminal()));
            let ended = self.end_cancelled(r).await?;
            first.get_or_insert(ended);
        }
        drop(guard);
        Ok(first.unwrap_or(run))
    }

    /// Journals `run.cancelled` for a run not executing here and stores it cancelled.
    async fn end_cancelled(&self, mut run: RunRecord) -> Result<RunRecord, RuntimeError> {
        let entries = self.shared.store.journal(&run.id, None, None).await?;
        let last = entries.last().map(|e| e.sequence).unwrap_or(0);
        let now = format_millis(now_millis());
        let entry = JournalEntry {
            sequence: last + 1,
            kind: JournalKind::RunCancelled,
            node_id: None,
            scope: None,
            payload: Some(serde_json::json!({"reason": "cancelled"})),
            timestamp: now.clone(),
        };
        self.shared.store.append(&run.id, &[entry]).await?;
        run.status = RunStatus::Cancelled;
        run.updated_at = now.clone();
        run.completed_at = Some(now);
        self.shared.store.update_run(&run).await?;
        crate::run_end::withdraw_open_waits(&self.shared, &run).await;
        Ok(run)
    }

    /// Resumes every top-level run left pending or running (by a process that stopped),
    /// from its journal. Returns the ids resumed. Call once at start-up.
    ///
    /// Also reconciles suspended runs with their wait rows, resumes those whose waits were
    /// all answered or cancelled meanwhile (their ids are returned too), and starts the
    /// sweeper that times waits out.
    pub async fn recover(&self) -> Result<Vec<String>, RuntimeError> {
        self.start_sweeper();
        let mut resumed = self.recover_suspended().await?;
        let query = RunQuery {
            statuses: vec![RunStatus::Pending, RunStatus::Running],
            top_level_only: true,
            ..RunQuery::default()
        };
        let runs = self.shared.store.list_runs(&query).await?;
        for run in runs {
            let executing = self
                .shared
                .active
                .lock()
                .map(|g| g.contains_key(&run.id))
                .unwrap_or(false);
            if !executing {
                resumed.push(run.id.clone());
                self.spawn(run, None);
            }
        }
        Ok(resumed)
    }

    /// Ids of the runs executing in this process.
    pub fn active_runs(&self) -> Vec<String> {
        self.shared
            .active
            .lock()
            .map(|g| g.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// A graceful stop that never does worse than a crash: every executing run stops at once
    /// (an in-flight tool call is abandoned), stores the journal it has buffered and is left
    /// `running` (or `pending`) with no terminal entry — exactly what [`Runtime::recover`]
    /// resumes on the next start. Waits up to `grace` for the runs to store their journals,
    /// then aborts any that have not (as a crash would). Returns the ids left to resume.
    ///
    /// Runs started afterwards stop at once too, left `pending`.
    pub async fn shutdown(&self, grace: std::time::Duration) -> Vec<String> {
        // The runs executing now, taken before the stop is signalled: once it is, a run's task
        // (on another worker) may store its state and leave the map before this thread looks.
        let waits: Vec<(String, watch::Receiver<bool>)> = self
            .shared
            .active
            .lock()
            .map(|g| {
                g.iter()
                    .map(|(id, a)| (id.clone(), a.done.clone()))
                    .collect()
            })
            .unwrap_or_default();
        self.shared.shutdown.cancel();
        let ids: Vec<String> = waits.iter().map(|(id, _)| id.clone()).collect();
        let all = futures::future::join_all(waits.into_iter().map(|(_, mut rx)| async move {
            let _ = rx.wait_for(|done| *done).await;
        }));
        if tokio::time::timeout(grace, all).await.is_err() {
            tracing::warn!("runs still executing {grace:?} after shutdown began; aborting them");
            self.abort_all();
        }
        ids
    }

    /// Stops every executing task at once without journaling anything — what a crash does.
    /// For tests of recovery and for a hard shutdown; the runs resume on the next
    /// [`Runtime::recover`].
    pub fn abort_all(&self) {
        if let Ok(mut g) = self.shared.active.lock() {
            for (_, a) in g.drain() {
                a.handle.abort();
            }
        }
    }
}

/// The one-node flow an agent turn runs: `$start → turn (agent) → $end`.
pub fn agent_turn_flow(agent_id: &str, version: &str) -> Result<LoadedFlow, crate::FlowError> {
    let flow = serde_json::json!({
        "id": AGENT_TURN_FLOW_ID,
        "version": version,
        "name": format!("Agent turn of {agent_id}"),
        // Pinned: the turn runs the version its run reports (a conversation's, an explicit
        // one), not whatever is newest when the step starts.
        "nodes": [{"id": "turn", "kind": "agent", "ref": agent_id, "config": {"version": version}}],
        "edges": [
            {"id": "start", "from": "$start", "to": "turn"},
            {"id": "end", "from": "turn", "to": "$end"}
        ]
    });
    LoadedFlow::from_json(&flow.to_string())
}

/// The flow `run` executes: its registered flow, or for an agent turn the one-node flow of
/// its agent (the executor calls this, so recovery resumes agent turns too).
pub(crate) async fn flow_for_run(
    shared: &Shared,
    run: &RunRecord,
) -> Result<Option<Arc<LoadedFlow>>, crate::definitions::DefinitionError> {
    if run.flow_id == AGENT_TURN_FLOW_ID
        && let Some(agent) = &run.meta.agent
    {
        return Ok(agent_turn_flow(&agent.id, &agent.version)
            .ok()
            .map(Arc::new));
    }
    // The exact version the run started with, whatever was published since.
    shared
        .definitions
        .flow(&run.tenant_id, &run.flow_id, Some(&run.flow_version))
        .await
}
