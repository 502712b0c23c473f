//! The flows and agents a runtime holds in memory. A flow is checked when it is loaded — its
//! structure (`Flow::validate`) and every JSON Schema it carries (compiled once here, so no
//! run compiles a schema) — and stored by `(tenant, id, version)`.
//!
//! Each catalogue keeps several versions per id, per tenant. An entry inserted without a
//! tenant (or for [`ALL_TENANTS`], `"*"`) is visible to every tenant; a tenant's own entry of
//! the same `(id, version)` wins over it. With no version asked, the highest semver visible
//! to the tenant is the answer. How a run looks definitions up (these catalogues first, then
//! a source the host plugs in) is [`crate::definitions`].

use kindgi_schema::{CompileOptions, Mode, Side, Validator};
use kindgi_spec::flow::{Flow, FlowIssue, Node};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

/// A flow that cannot be loaded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FlowError {
    /// The JSON is not a flow (unknown field, unknown node kind or operator, wrong type…).
    #[error("flow definition is not valid: {message}")]
    Parse { message: String },
    /// Structural problems (unknown node in an edge, bad path, cycle, …), each with where.
    #[error("flow \"{flow_id}\" {version} is not valid:\n{}", issues.iter().map(|i| format!("  - {i}")).collect::<Vec<_>>().join("\n"))]
    Invalid {
        flow_id: String,
        version: String,
        issues: Vec<FlowIssue>,
    },
}

/// A loaded flow: the definition plus its compiled schemas, keyed by location
/// (`output.schema`, `node:<id>.outputSchema`, `node:<id>.branch:<branchId>`, `input`).
#[derive(Debug)]
pub struct LoadedFlow {
    pub flow: Flow,
    schemas: HashMap<String, Arc<Validator>>,
}

impl LoadedFlow {
    /// Checks and compiles a flow.
    pub fn load(flow: Flow) -> Result<LoadedFlow, FlowError> {
        let invalid = |issues: Vec<FlowIssue>| FlowError::Invalid {
            flow_id: flow.id.clone(),
            version: flow.version.clone(),
            issues,
        };
        flow.validate().map_err(invalid)?;
        let mut schemas = HashMap::new();
        let mut issues = Vec::new();
        let mut compile =
            |key: String, at: String, schema: &Value, side: Side| match kindgi_schema::compile(
                schema,
                CompileOptions {
                    mode: Mode::Pack,
                    side,
                },
            ) {
                Ok(v) => {
                    schemas.insert(key, Arc::new(v));
                }
                Err(e) => issues.push(FlowIssue {
                    at,
                    message: format!("the JSON Schema does not compile: {}", e.message),
                }),
            };
        if let Some(s) = flow.output.as_ref().and_then(|o| o.schema.as_ref()) {
            compile(
                "output.schema".into(),
                "output.schema".into(),
                s,
                Side::Output,
            );
        }
        if let Some(s) = flow.metadata.as_ref().and_then(|m| m.get("inputSchema")) {
            compile(
                "input".into(),
                "metadata.inputSchema".into(),
                s,
                Side::Input,
            );
        }
        for node in flow.all_nodes() {
            match node {
                Node::Loop(l) => compile(
                    format!("node:{}.outputSchema", l.id()),
                    format!("node \"{}\" outputSchema", l.id()),
                    l.output_schema(),
                    Side::Output,
                ),
                Node::Subgraph(s) => compile(
                    format!("node:{}.outputSchema", s.id),
                    format!("node \"{}\" outputSchema", s.id),
                    &s.output_schema,
                    Side::Output,
                ),
                Node::Fanout(f) => {
                    for b in &f.branches {
                        compile(
                            format!("node:{}.branch:{}", f.id, b.branch_id),
                            format!("node \"{}\" branch \"{}\" outputSchema", f.id, b.branch_id),
                            &b.output_schema,
                            Side::Output,
                        );
                    }
                }
                Node::Leaf(_) => {}
            }
        }
        if !issues.is_empty() {
            return Err(invalid(issues));
        }
        Ok(LoadedFlow { flow, schemas })
    }

    /// Parses and loads a flow from JSON text.
    pub fn from_json(text: &str) -> Result<LoadedFlow, FlowError> {
        let flow: Flow = serde_json::from_str(text).map_err(|e| FlowError::Parse {
            message: e.to_string(),
        })?;
        LoadedFlow::load(flow)
    }

    /// The compiled schema at `key`, if the flow declares one there.
    pub fn schema(&self, key: &str) -> Option<&Arc<Validator>> {
        self.schemas.get(key)
    }
}

/// The tenant under which an entry is visible to every tenant (core's).
pub use kindgi_core::ids::ALL_TENANTS;

/// The scope an insert goes to: a tenant, or every tenant (`None`, `"*"`).
fn scope_of(tenant: Option<&str>) -> &str {
    match tenant {
        None | Some("") => ALL_TENANTS,
        Some(t) => t,
    }
}

/// Orders `X.Y.Z[-pre]` versions (a pre-release sorts before its release).
pub fn semver_key(v: &str) -> (u64, u64, u64, bool, String) {
    let (core, pre) = match v.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (v, None),
    };
    let mut it = core.split('.').map(|n| n.parse::<u64>().unwrap_or(0));
    (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        pre.is_none(),
        pre.unwrap_or("").to_owned(),
    )
}

/// SemVer precedence (npm's, through `kindgi_tools::semver`); a version that does not parse
/// sorts by [`semver_key`], below every one that does.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    use kindgi_tools::semver::Version;
    match (Version::parse(a), Version::parse(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        (Ok(_), Err(_)) => Ordering::Greater,
        (Err(_), Ok(_)) => Ordering::Less,
        (Err(_), Err(_)) => semver_key(a).cmp(&semver_key(b)),
    }
}

/// Scope (tenant or [`ALL_TENANTS`]) → id → version → entry.
type Scoped<T> = HashMap<String, HashMap<String, BTreeMap<String, Arc<T>>>>;

/// Versioned entries per tenant: what both catalogues share.
#[derive(Debug)]
struct Versioned<T> {
    inner: Arc<RwLock<Scoped<T>>>,
}

impl<T> Clone for Versioned<T> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Default for Versioned<T> {
    fn default() -> Self {
        Self {
            inner: Arc::new(RwLock::new(HashMap::new())),
        }
    }
}

impl<T> Versioned<T> {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Scoped<T>> {
        // A poisoned lock only means a panic elsewhere mid-insert; the maps stay valid.
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Scoped<T>> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    fn insert(&self, tenant: Option<&str>, id: &str, version: &str, entry: Arc<T>) {
        self.write()
            .entry(scope_of(tenant).to_owned())
            .or_default()
            .entry(id.to_owned())
            .or_default()
            .insert(version.to_owned(), entry);
    }

    /// What `tenant` sees (`None`: only what every tenant sees): the exact version, or the
    /// highest when `version` is `None`.
    fn get(&self, tenant: Option<&str>, id: &str, version: Option<&str>) -> Option<Arc<T>> {
        let g = self.read();
        let own = tenant
            .filter(|t| *t != ALL_TENANTS)
            .and_then(|t| g.get(t))
            .and_then(|ids| ids.get(id));
        let shared = g.get(ALL_TENANTS).and_then(|ids| ids.get(id));
        match version {
            Some(v) => own
                .and_then(|m| m.get(v))
                .or_else(|| shared.and_then(|m| m.get(v)))
                .cloned(),
            None => own
                .into_iter()
                .chain(shared)
                .flat_map(|m| m.iter())
                // `max_by` keeps the last of equals: list the tenant's own last to prefer it.
                .rev()
                .max_by(|a, b| compare_versions(a.0, b.0))
                .map(|(_, e)| e.clone()),
        }
    }

    /// Every id `tenant` sees (`None`: every tenant) with its versions, lowest first.
    fn list(&self, tenant: Option<&str>) -> Vec<(String, Vec<String>)> {
        let g = self.read();
        let mut merged: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let scopes = [Some(ALL_TENANTS), tenant.filter(|t| *t != ALL_TENANTS)];
        for scope in scopes.into_iter().flatten() {
            for (id, versions) in g.get(scope).into_iter().flatten() {
                let v = merged.entry(id.clone()).or_default();
                v.extend(versions.keys().cloned());
            }
        }
        merged
            .into_iter()
            .map(|(id, mut v)| {
                v.sort_by(|a, b| compare_versions(a, b));
                v.dedup();
                (id, v)
            })
            .collect()
    }

    fn remove(&self, tenant: Option<&str>, id: &str) {
        if let Some(ids) = self.write().get_mut(scope_of(tenant)) {
            ids.remove(id);
        }
    }

    fn clear(&self, tenant: Option<Option<&str>>) {
        let mut g = self.write();
        match tenant {
            None => g.clear(),
            Some(t) => {
                g.remove(scope_of(t));
            }
        }
    }
}

/// Flows by tenant, id and version. Cheap to clone; shared.
#[derive(Debug, Clone, Default)]
pub struct FlowCatalogue {
    inner: Versioned<LoadedFlow>,
}

impl FlowCatalogue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks and adds a flow for every tenant (replacing the same id and version).
    pub fn insert(&self, flow: Flow) -> Result<Arc<LoadedFlow>, FlowError> {
        self.insert_for(None, flow)
    }

    /// Checks and adds a flow for `tenant` (`None`/`"*"`: every tenant).
    pub fn insert_for(
        &self,
        tenant: Option<&str>,
        flow: Flow,
    ) -> Result<Arc<LoadedFlow>, FlowError> {
        let loaded = Arc::new(LoadedFlow::load(flow)?);
        self.insert_loaded(tenant, loaded.clone());
        Ok(loaded)
    }

    /// Adds an already loaded flow for `tenant` (`None`/`"*"`: every tenant).
    pub fn insert_loaded(&self, tenant: Option<&str>, flow: Arc<LoadedFlow>) {
        let (id, version) = (flow.flow.id.clone(), flow.flow.version.clone());
        self.inner.insert(tenant, &id, &version, flow);
    }

    /// Parses, checks and adds a flow from JSON text, for every tenant.
    pub fn insert_json(&self, text: &str) -> Result<Arc<LoadedFlow>, FlowError> {
        self.insert_json_for(None, text)
    }

    /// Parses, checks and adds a flow from JSON text for `tenant`.
    pub fn insert_json_for(
        &self,
        tenant: Option<&str>,
        text: &str,
    ) -> Result<Arc<LoadedFlow>, FlowError> {
        let flow: Flow = serde_json::from_str(text).map_err(|e| FlowError::Parse {
            message: e.to_string(),
        })?;
        self.insert_for(tenant, flow)
    }

    /// Among the flows every tenant sees: the exact version, or the highest one when
    /// `version` is `None`.
    pub fn get(&self, id: &str, version: Option<&str>) -> Option<Arc<LoadedFlow>> {
        self.inner.get(None, id, version)
    }

    /// Among the flows `tenant` sees (its own, then every tenant's): the exact version, or
    /// the highest one when `version` is `None`.
    pub fn get_for(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Option<Arc<LoadedFlow>> {
        self.inner.get(Some(tenant), id, version)
    }

    /// Every flow id every tenant sees, with its versions (lowest first), sorted by id.
    pub fn list(&self) -> Vec<(String, Vec<String>)> {
        self.inner.list(None)
    }

    /// Every flow id `tenant` sees, with its versions.
    pub fn list_for(&self, tenant: &str) -> Vec<(String, Vec<String>)> {
        self.inner.list(Some(tenant))
    }

    /// Removes every version of a flow every tenant sees.
    pub fn remove(&self, id: &str) {
        self.inner.remove(None, id);
    }

    /// Removes every version of `tenant`'s own flow `id`.
    pub fn remove_for(&self, tenant: &str, id: &str) {
        self.inner.remove(Some(tenant), id);
    }

    /// Removes every flow of every tenant.
    pub fn clear(&self) {
        self.inner.clear(None);
    }

    /// Removes `tenant`'s own flows (`None`: the ones every tenant sees).
    pub fn clear_tenant(&self, tenant: Option<&str>) {
        self.inner.clear(Some(tenant));
    }
}

/// One entry of an agent's `tools[]`: a tool id and the npm semver range of the versions it
/// may call (`None`: any, the highest). Read from `{"id", "version"}` or, from old callers,
/// a bare id string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentTool {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl AgentTool {
    pub fn new(id: impl Into<String>, range: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            version: Some(range.into()),
        }
    }

    /// `id` or `id@range`.
    pub fn parse(reference: &str) -> Self {
        let (id, range) = kindgi_core::ids::split_tool_ref(reference);
        Self {
            id: id.to_owned(),
            version: range.map(str::to_owned),
        }
    }
}

impl From<&str> for AgentTool {
    fn from(reference: &str) -> Self {
        AgentTool::parse(reference)
    }
}

impl From<String> for AgentTool {
    fn from(reference: String) -> Self {
        AgentTool::parse(&reference)
    }
}

impl From<&String> for AgentTool {
    fn from(reference: &String) -> Self {
        AgentTool::parse(reference)
    }
}

impl<'de> Deserialize<'de> for AgentTool {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Typed {
            id: String,
            #[serde(default)]
            version: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Bare(String),
            Typed(Typed),
        }
        let tool = match Either::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "an agent's tools[] entry must be {\"id\": \"<tool id>\", \"version\": \"<semver range>\"} or a tool id string",
            )
        })? {
            Either::Bare(s) => AgentTool::parse(&s),
            Either::Typed(t) => AgentTool {
                id: t.id,
                version: t.version,
            },
        };
        if tool.id.trim().is_empty() {
            return Err(serde::de::Error::custom(
                "an agent's tools[] entry has an empty tool id",
            ));
        }
        if tool.version.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(serde::de::Error::custom(format!(
                "agent tool \"{}\" has an empty version range",
                tool.id
            )));
        }
        Ok(tool)
    }
}

/// An agent the runtime can run as a step: instructions, the tools it may call, limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpec {
    pub id: String,
    #[serde(default = "default_agent_version")]
    pub version: String,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The tools the model may call, in the order offered, each with its version range
    /// (resolved with maxSatisfying at each call).
    #[serde(default)]
    pub tools: Vec<AgentTool>,
    /// Model steps per turn (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// `false` runs every tool call on its own (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// `conversationPolicy`, as written (its `hitl` decides approval gates: runtime.md §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_policy: Option<serde_json::Value>,
    /// The guardrail ids the agent is subject to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guardrails: Vec<String>,
    /// `preferredProvider`: the registered provider the model router prefers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_provider: Option<String>,
    /// `preferredModel`: the model the router prefers within the chosen provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_model: Option<String>,
    /// `capabilities[]`, as written: the router reads the `llm-inference` entry's
    /// `requirements` and `preferences` (see [`crate::model_router`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<Value>,
}

fn default_agent_version() -> String {
    "0.0.0".into()
}

impl AgentSpec {
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            version: default_agent_version(),
            instructions: None,
            tools: Vec::new(),
            max_steps: None,
            parallel_tool_calls: None,
            conversation_policy: None,
            guardrails: Vec::new(),
            preferred_provider: None,
            preferred_model: None,
            capabilities: Vec::new(),
        }
    }

    /// Tools as ids (`"t"`, any version), `"id@range"` strings or [`AgentTool`]s.
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = impl Into<AgentTool>>) -> Self {
        self.tools = tools.into_iter().map(Into::into).collect();
        self
    }

    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// `conversationPolicy`, e.g. `{"hitl": {"tools": {}}}` to turn approval gates on
    /// (docs/approvals.md). Checked when a turn starts ([`AgentSpec::hitl`]).
    pub fn with_conversation_policy(mut self, policy: serde_json::Value) -> Self {
        self.conversation_policy = Some(policy);
        self
    }

    /// The guardrail ids the agent is subject to (after-turn and before-tool:
    /// docs/guardrails.md).
    pub fn with_guardrails(mut self, ids: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.guardrails = ids.into_iter().map(Into::into).collect();
        self
    }

    /// `parallelToolCalls: false` runs every call of a step on its own.
    pub fn with_parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = Some(parallel);
        self
    }

    /// Model steps per turn (default 8).
    pub fn with_max_steps(mut self, steps: u32) -> Self {
        self.max_steps = Some(steps);
        self
    }

    /// The agent's approval settings (`conversationPolicy.hitl`, legacy `hitlAfterTurns`),
    /// or every problem with them (see [`crate::agent::hitl`]).
    pub fn hitl(
        &self,
    ) -> Result<crate::agent::hitl::AgentHitl, Vec<crate::agent::hitl::HitlIssue>> {
        crate::agent::hitl::parse_agent_hitl(self.conversation_policy.as_ref())
    }

    /// The range the agent allows for `tool_id`, when it lists the tool (`Some(None)`: any).
    pub fn tool_range(&self, tool_id: &str) -> Option<Option<&str>> {
        self.tools
            .iter()
            .find(|t| t.id == tool_id)
            .map(|t| t.version.as_deref())
    }

    /// Parses an agent definition in the agent schema's shape (`PublishAgentBody`): keys
    /// this runtime does not use are ignored, `budget.maxSteps` is read as `maxSteps`, and
    /// `instructions` given as a prompt block (`{prompt, version}`) is left out.
    pub fn from_value(mut value: Value) -> Result<AgentSpec, serde_json::Error> {
        if let Value::Object(m) = &mut value {
            if m.get("instructions").is_some_and(|i| !i.is_string()) {
                m.remove("instructions");
            }
            if !m.contains_key("maxSteps")
                && let Some(n) = m.get("budget").and_then(|b| b.get("maxSteps")).cloned()
            {
                m.insert("maxSteps".into(), n);
            }
        }
        serde_json::from_value(value)
    }
}

/// Agents by tenant, id and version. Cheap to clone; shared.
#[derive(Debug, Clone, Default)]
pub struct AgentCatalogue {
    inner: Versioned<AgentSpec>,
}

impl AgentCatalogue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an agent for every tenant (replacing the same id and version).
    pub fn insert(&self, agent: AgentSpec) {
        self.insert_for(None, agent);
    }

    /// Adds an agent for `tenant` (`None`/`"*"`: every tenant).
    pub fn insert_for(&self, tenant: Option<&str>, agent: AgentSpec) {
        let (id, version) = (agent.id.clone(), agent.version.clone());
        self.inner.insert(tenant, &id, &version, Arc::new(agent));
    }

    /// The highest version among the agents every tenant sees.
    pub fn get(&self, id: &str) -> Option<Arc<AgentSpec>> {
        self.inner.get(None, id, None)
    }

    /// Among the agents `tenant` sees: the exact version, or the highest one.
    pub fn get_for(&self, tenant: &str, id: &str, version: Option<&str>) -> Option<Arc<AgentSpec>> {
        self.inner.get(Some(tenant), id, version)
    }

    /// The ids every tenant sees, sorted.
    pub fn ids(&self) -> Vec<String> {
        self.inner
            .list(None)
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    }

    /// Every agent id `tenant` sees, with its versions.
    pub fn list_for(&self, tenant: &str) -> Vec<(String, Vec<String>)> {
        self.inner.list(Some(tenant))
    }

    /// Removes `tenant`'s own versions of agent `id`.
    pub fn remove_for(&self, tenant: &str, id: &str) {
        self.inner.remove(Some(tenant), id);
    }

    /// Removes every agent of every tenant.
    pub fn clear(&self) {
        self.inner.clear(None);
    }

    /// Removes `tenant`'s own agents (`None`: the ones every tenant sees).
    pub fn clear_tenant(&self, tenant: Option<&str>) {
        self.inner.clear(Some(tenant));
    }
}
