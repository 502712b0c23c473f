//! The flows and agents a runtime knows. A flow is checked when it is loaded — its
//! structure (`Flow::validate`) and every JSON Schema it carries (compiled once here, so no
//! run compiles a schema) — and stored by `(id, version)`.

use kindgi_schema::{CompileOptions, Mode, Side, Validator};
use kindgi_spec::flow::{Flow, FlowIssue, Node};
use serde::{Deserialize, Serialize};
use serde_json::Value;
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

/// Flow id → version → flow.
type FlowsById = HashMap<String, BTreeMap<String, Arc<LoadedFlow>>>;

/// Flows by id and version. Cheap to clone; shared.
#[derive(Debug, Clone, Default)]
pub struct FlowCatalogue {
    inner: Arc<RwLock<FlowsById>>,
}

impl FlowCatalogue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks and adds a flow (replacing the same id and version).
    pub fn insert(&self, flow: Flow) -> Result<Arc<LoadedFlow>, FlowError> {
        let loaded = Arc::new(LoadedFlow::load(flow)?);
        if let Ok(mut g) = self.inner.write() {
            g.entry(loaded.flow.id.clone())
                .or_default()
                .insert(loaded.flow.version.clone(), loaded.clone());
        }
        Ok(loaded)
    }

    /// Parses, checks and adds a flow from JSON text.
    pub fn insert_json(&self, text: &str) -> Result<Arc<LoadedFlow>, FlowError> {
        let flow: Flow = serde_json::from_str(text).map_err(|e| FlowError::Parse {
            message: e.to_string(),
        })?;
        self.insert(flow)
    }

    /// The exact version, or the highest one when `version` is `None`.
    pub fn get(&self, id: &str, version: Option<&str>) -> Option<Arc<LoadedFlow>> {
        let g = self.inner.read().ok()?;
        let versions = g.get(id)?;
        match version {
            Some(v) => versions.get(v).cloned(),
            None => versions
                .values()
                .max_by_key(|f| semver_key(&f.flow.version))
                .cloned(),
        }
    }

    /// Every flow id with its versions (sorted).
    pub fn list(&self) -> Vec<(String, Vec<String>)> {
        let Ok(g) = self.inner.read() else {
            return Vec::new();
        };
        let mut out: Vec<(String, Vec<String>)> = g
            .iter()
            .map(|(id, vs)| {
                let mut v: Vec<String> = vs.keys().cloned().collect();
                v.sort_by_key(|x| semver_key(x));
                (id.clone(), v)
            })
            .collect();
        out.sort();
        out
    }

    pub fn remove(&self, id: &str) {
        if let Ok(mut g) = self.inner.write() {
            g.remove(id);
        }
    }

    pub fn clear(&self) {
        if let Ok(mut g) = self.inner.write() {
            g.clear();
        }
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
    /// Tool ids the model may call, in the order offered.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Model steps per turn (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// `false` runs every tool call on its own (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
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
        }
    }

    pub fn with_tools(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.tools = tools.into_iter().map(Into::into).collect();
        self
    }

    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
}

/// Agents by id. Cheap to clone; shared.
#[derive(Debug, Clone, Default)]
pub struct AgentCatalogue {
    inner: Arc<RwLock<HashMap<String, Arc<AgentSpec>>>>,
}

impl AgentCatalogue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&self, agent: AgentSpec) {
        if let Ok(mut g) = self.inner.write() {
            g.insert(agent.id.clone(), Arc::new(agent));
        }
    }

    pub fn get(&self, id: &str) -> Option<Arc<AgentSpec>> {
        self.inner.read().ok()?.get(id).cloned()
    }

    pub fn ids(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .inner
            .read()
            .map(|g| g.keys().cloned().collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    pub fn clear(&self) {
        if let Ok(mut g) = self.inner.write() {
            g.clear();
        }
    }
}
