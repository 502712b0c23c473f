//! State shared by the runtime and its executing runs: the catalogues and ports a run looks
//! things up in, the per-tenant leases, the runtime-wide settings, and which flow a run
//! executes. The façade ([`crate::Runtime`]) owns one; every executing run holds it too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::call_values::CallValues;
use crate::catalogue::{AgentCatalogue, FlowCatalogue, LoadedFlow};
use crate::conversation::ConversationLog;
use crate::definitions::Definitions;
use crate::dispatch::ToolCatalogue;
use crate::engine::stop::RunStop;
use crate::model::ModelProvider;
use crate::record::{AGENT_TURN_FLOW_ID, RunRecord};
use crate::resolve::ToolResolver;
use crate::store::RunStore;
use crate::wait_store::WaitStore;
use kindgi_core::ports::GuardrailChecks;

/// The tenant runs belong to when none is given.
pub const DEFAULT_TENANT: &str = "default";

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

/// A run executing on this runtime: how to stop it, and when it is done.
pub(crate) struct ActiveRun {
    pub(crate) stop: RunStop,
    pub(crate) done: watch::Receiver<bool>,
    pub(crate) handle: tokio::task::AbortHandle,
}

/// State shared by the runtime and its executing runs.
pub(crate) struct Shared {
    pub tools: ToolCatalogue,
    pub flows: FlowCatalogue,
    pub agents: AgentCatalogue,
    /// What sources offered but were left out, and why (named by a run that needs one).
    pub left_out: crate::left_out::LeftOutBook,
    /// Every flow and agent lookup of a run (tenant-aware).
    pub definitions: Arc<dyn Definitions>,
    /// Every tool lookup of a run: `tools`, then the registry.
    pub resolver: ToolResolver,
    /// Env values and secrets for calls (none by default).
    pub call_values: Option<Arc<dyn CallValues>>,
    /// The tenants' connections for calls (none by default: a call needing one fails).
    pub connections: Option<crate::connections::Connector>,
    /// Runs guardrail checks that are not built in (a pack's); none by default.
    pub guardrail_checks: Option<Arc<dyn GuardrailChecks>>,
    /// The tenants' approval rules agent turns are held to (none by default).
    pub tenant_hitl: Option<Arc<dyn crate::agent::hitl::TenantHitlPolicy>>,
    /// Where agent turns keep their conversations (none: no history, nothing kept).
    pub conversations: Option<Arc<dyn ConversationLog>>,
    pub store: Arc<dyn RunStore>,
    pub model: Arc<dyn ModelProvider>,
    /// Which provider and model each agent turn calls (registered providers, else `model`).
    pub router: crate::model_router::ModelRouter,
    pub config: RuntimeConfig,
    pub leases: Leases,
    /// Approvals and pausing calls' waits.
    pub waits: Arc<dyn WaitStore>,
    /// Woken when a wait with a deadline is created (the sweeper sleeps until the next one).
    pub deadlines: Arc<tokio::sync::Notify>,
    /// Whether [`crate::Runtime::recover`] started the sweeper yet.
    pub(crate) sweeper_started: std::sync::atomic::AtomicBool,
    /// One per top-level run being resumed: answers to its waits are journaled one at a time.
    pub(crate) resume_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Pausing tools' output validators, by `(tenant, tool id, version)`: compiled once.
    pub(crate) answer_validators:
        Mutex<HashMap<(String, String, String), Arc<kindgi_schema::Validator>>>,
    /// The runs executing here, by id.
    pub(crate) active: Mutex<HashMap<String, ActiveRun>>,
    /// Fired by [`crate::Runtime::shutdown`]; every run's stop signal is its child.
    pub(crate) shutdown: CancellationToken,
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
