//! From a pack index to a runtime: each tool becomes a pack tool whose calls go through the
//! pack's [`PackServiceCaller`] (`kindgi_pack::dispatch`), each agent an `AgentSpec`, each
//! flow a loaded flow; each tool is also listed in the API's tool registry for the pack's
//! tenant (`GET /v1/tools`). A reload replaces what the same pack registered before and
//! leaves other packs' entries alone.
//!
//! The index is the runtime's data, so problems in it are reported, not fatal: an entry that
//! does not load is listed with its reason and left out, and the rest is registered.
//! Guardrails are listed in the summary; the runtime does not run guardrail checks yet.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use kindgi_api::AppState;
use kindgi_pack::dispatch::{PackServiceCaller, manifest_of};
use kindgi_runtime::{AgentSpec, Runtime};
use kindgi_spec::pack_index::{IndexAgent, IndexFlow, PackIndex};
use kindgi_tools::registry::RegisterOptions;
use serde_json::{Map, Value, json};

/// What a registration did.
#[derive(Debug, Default, Clone)]
pub struct Registered {
    pub tools: Vec<String>,
    pub agents: Vec<String>,
    pub flows: Vec<String>,
    pub guardrails: Vec<String>,
    /// Entries left out, each with why.
    pub skipped: Vec<String>,
}

impl Registered {
    pub fn summary(&self) -> String {
        let n = |v: &Vec<String>, one: &str, many: &str| {
            format!("{} {}", v.len(), if v.len() == 1 { one } else { many })
        };
        let mut s = format!(
            "{}, {}, {}",
            n(&self.tools, "tool", "tools"),
            n(&self.agents, "agent", "agents"),
            n(&self.flows, "flow", "flows")
        );
        if !self.guardrails.is_empty() {
            s.push_str(&format!(
                ", {} (listed; guardrail checks do not run yet)",
                n(&self.guardrails, "guardrail", "guardrails")
            ));
        }
        s
    }
}

fn agent_of(agent: &IndexAgent) -> AgentSpec {
    let mut spec = AgentSpec::new(agent.id.clone());
    spec.version = agent.version.clone();
    spec.instructions = agent
        .rest
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned);
    spec.tools = agent
        .rest
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| {
                    t.as_str()
                        .or_else(|| t.get("id").and_then(Value::as_str))
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    spec.max_steps = agent
        .rest
        .get("maxSteps")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    spec.parallel_tool_calls = agent.rest.get("parallelToolCalls").and_then(Value::as_bool);
    spec
}

/// The keys of a flow definition; an index entry's other keys (`modulePath`,
/// `kernelPayloadVersion`, SDK extras) are the index's, not the flow's.
const FLOW_KEYS: [&str; 10] = [
    "$schema",
    "id",
    "version",
    "name",
    "description",
    "nodes",
    "edges",
    "metadata",
    "maxParallelism",
    "output",
];

fn flow_json(flow: &IndexFlow) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(flow.id));
    m.insert("version".into(), json!(flow.version));
    for (k, v) in &flow.rest {
        if FLOW_KEYS.contains(&k.as_str()) && !v.is_null() {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(m)
}

/// The tool ids and flow ids one pack registered last.
type PackEntries = (Vec<String>, Vec<String>);

/// Registers packs into one runtime and API state, remembering what each pack put there.
#[derive(Debug, Clone)]
pub struct Registrar {
    rt: Runtime,
    state: AppState,
    /// Pack key (its source label) → the tool and flow ids it registered last.
    by_pack: Arc<Mutex<HashMap<String, PackEntries>>>,
}

impl Registrar {
    pub fn new(rt: Runtime, state: AppState) -> Self {
        Self {
            rt,
            state,
            by_pack: Arc::default(),
        }
    }

    /// Registers `index` for `tenant`, its tools called through `caller`; replaces what the
    /// pack `key` registered before.
    pub async fn register(
        &self,
        key: &str,
        tenant: &str,
        index: &PackIndex,
        caller: &Arc<PackServiceCaller>,
    ) -> Registered {
        let done = self.register_runtime(key, index, caller);
        self.list_in_api(tenant, index).await;
        done
    }

    fn register_runtime(
        &self,
        key: &str,
        index: &PackIndex,
        caller: &Arc<PackServiceCaller>,
    ) -> Registered {
        // TODO(resolve): the catalogues take a tenant; register for the pack's tenant.
        let mut done = Registered::default();
        let previous = self
            .by_pack
            .lock()
            .ok()
            .and_then(|mut g| g.remove(key))
            .unwrap_or_default();
        for id in &previous.0 {
            self.rt.tools().remove(id);
        }
        for id in &previous.1 {
            self.rt.flows().remove(id);
        }
        let others: HashSet<String> = self.rt.tools().ids().into_iter().collect();
        let mut versions = HashMap::new();
        for tool in &index.tools {
            if tool.spec.is_some() {
                done.skipped.push(format!(
                    "tool \"{}\": a declarative (spec) tool; a pack's tools run in its service only",
                    tool.id
                ));
                continue;
            }
            match manifest_of(tool) {
                Ok(manifest) => {
                    if others.contains(&tool.id) {
                        done.skipped.push(format!(
                            "tool \"{}\": another source registered it first; this pack's copy replaces it",
                            tool.id
                        ));
                    }
                    versions.insert(tool.id.clone(), tool.version().map(str::to_owned));
                    let pack_caller: Arc<dyn kindgi_runtime::PackCaller> = caller.clone();
                    self.rt
                        .tools()
                        .insert_pack_tool(manifest, index.pack_id.clone(), pack_caller);
                    done.tools.push(tool.id.clone());
                }
                Err(e) => done.skipped.push(format!("tool \"{}\": {e}", tool.id)),
            }
        }
        caller.set_versions(versions);
        for agent in &index.agents {
            self.rt.agents().insert(agent_of(agent));
            done.agents.push(agent.id.clone());
        }
        for flow in &index.flows {
            match serde_json::from_value(flow_json(flow)) {
                Ok(f) => match self.rt.flows().insert(f) {
                    Ok(_) => done.flows.push(flow.id.clone()),
                    Err(e) => done.skipped.push(format!("flow \"{}\": {e}", flow.id)),
                },
                Err(e) => done
                    .skipped
                    .push(format!("flow \"{}\": not a valid flow: {e}", flow.id)),
            }
        }
        done.guardrails = index.guardrails.iter().map(|g| g.id.clone()).collect();
        if let Ok(mut g) = self.by_pack.lock() {
            g.insert(key.to_owned(), (done.tools.clone(), done.flows.clone()));
        }
        done
    }

    /// Lists the pack's tools in the API's tool registry for `tenant`; a version already
    /// registered stays as it was.
    async fn list_in_api(&self, tenant: &str, index: &PackIndex) {
        for tool in &index.tools {
            let Ok(manifest) = manifest_of(tool) else {
                continue;
            };
            let _ = self
                .state
                .registry
                .register(tenant, &manifest, RegisterOptions::default())
                .await;
        }
    }

    /// Lists MCP tools (already in the runtime's catalogue) in the API registry too.
    pub async fn list_manifest(&self, tenant: &str, manifest: &kindgi_spec::ToolManifest) {
        let _ = self
            .state
            .registry
            .register(tenant, manifest, RegisterOptions::default())
            .await;
    }

    pub fn runtime(&self) -> &Runtime {
        &self.rt
    }
}
