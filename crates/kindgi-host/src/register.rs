//! From a pack index to a runtime: each tool becomes a pack tool whose calls go through the
//! pack's [`PackServiceCaller`] (`kindgi_pack_client::dispatch`), each agent an `AgentSpec`, each
//! flow a loaded flow; each tool is also listed in the API's tool registry for the pack's
//! tenant (`GET /v1/tools`). A reload replaces what the same pack registered before and
//! leaves other packs' entries alone.
//!
//! The index is the runtime's data, so problems in it are reported, not fatal: an entry that
//! does not load is listed with its reason and left out, and the rest is registered.
//! A pack's guardrails are put in the guardrail registry; its agents' turns judge with them
//! (its checks run in its pack service over `check-invoke`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use kindgi_api::AppState;
use kindgi_pack_client::dispatch::{PackServiceCaller, manifest_of};
use kindgi_runtime::left_out::{LeftOut, LeftOutKind};
use kindgi_runtime::{AgentSpec, AgentTool, Runtime};
use kindgi_spec::pack_index::{IndexAgent, IndexFlow, IndexTool, PackIndex};
use kindgi_tools::registry::RegisterOptions;
use serde_json::{Map, Value, json};

use crate::sources::PackServices;

fn say_registry(pack: &str, message: &str) {
    eprintln!("kindgi: pack {pack}: {message}");
}

/// What a registration did.
#[derive(Debug, Default, Clone)]
pub struct Registered {
    pub tools: Vec<String>,
    pub agents: Vec<String>,
    pub flows: Vec<String>,
    pub guardrails: Vec<String>,
    /// Entries left out (not registered, not listed), each with why.
    pub left_out: Vec<LeftOut>,
    /// Registered, with something to say (a tool another source registered first).
    pub notes: Vec<String>,
}

impl Registered {
    fn leave_out(&mut self, kind: LeftOutKind, id: &str, why: String) {
        self.left_out.push(LeftOut {
            kind,
            id: id.to_owned(),
            why,
        });
    }

    /// Whether `kind` `id` was left out.
    pub fn is_left_out(&self, kind: LeftOutKind, id: &str) -> bool {
        self.left_out.iter().any(|l| l.kind == kind && l.id == id)
    }

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
                ", {}",
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
                    serde_json::from_value::<AgentTool>(t.clone())
                        .ok()
                        .or_else(|| {
                            // An entry with extra keys still names its tool (any version).
                            t.get("id").and_then(Value::as_str).map(AgentTool::from)
                        })
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
    spec.conversation_policy = agent
        .rest
        .get("conversationPolicy")
        .filter(|p| !p.is_null())
        .cloned();
    spec.guardrails = agent
        .rest
        .get("guardrails")
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(|g| g.as_str().or_else(|| g.get("id")?.as_str()))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    // What the model router chooses by (docs/providers.md).
    let text = |k: &str| agent.rest.get(k).and_then(Value::as_str).map(str::to_owned);
    spec.preferred_provider = text("preferredProvider");
    spec.preferred_model = text("preferredModel");
    spec.capabilities = agent
        .rest
        .get("capabilities")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    spec
}

/// Why an index agent's approval settings cannot apply (`None`: they can, or it has none).
/// A tool's manifest as listed: a declarative tool keeps its `spec` (what the runtime's
/// synthesizer runs); a handler tool has none.
fn declared_manifest(tool: &IndexTool) -> Result<kindgi_spec::ToolManifest, String> {
    let mut manifest = manifest_of(tool)?;
    if let Some(spec) = &tool.spec {
        manifest.spec = Some(
            serde_json::from_value(spec.clone())
                .map_err(|e| format!("its declarative `spec` is not valid: {e}"))?,
        );
    }
    Ok(manifest)
}

fn hitl_problem(agent: &IndexAgent) -> Option<String> {
    let policy = agent.rest.get("conversationPolicy")?;
    let issues = kindgi_runtime::agent::hitl::check_conversation_policy(policy);
    let text: Vec<String> = issues.iter().map(ToString::to_string).collect();
    (!text.is_empty()).then(|| text.join("; "))
}

/// The definition JSON of an index agent, as the registry stores it (`GET /v1/agents`).
fn agent_json(agent: &IndexAgent) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(agent.id));
    m.insert("version".into(), json!(agent.version));
    for (k, v) in &agent.rest {
        if !INDEX_ONLY_KEYS.contains(&k.as_str()) && !v.is_null() {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(m)
}

/// Keys an index entry carries for the index, not for the definition.
const INDEX_ONLY_KEYS: [&str; 3] = ["modulePath", "kernelPayloadVersion", "sourcePath"];

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

/// The tenant, tool ids, flow ids and agent ids one pack registered last.
type PackEntries = (String, Vec<String>, Vec<String>, Vec<String>);

/// Registers packs into one runtime and API state, remembering what each pack put there.
#[derive(Debug, Clone)]
pub struct Registrar {
    rt: Runtime,
    state: AppState,
    /// Pack key (its source label) → the tool and flow ids it registered last.
    by_pack: Arc<Mutex<HashMap<String, PackEntries>>>,
    /// The pack services by tenant and pack id, for registry pack tools.
    services: PackServices,
}

impl Registrar {
    pub fn new(rt: Runtime, state: AppState, services: PackServices) -> Self {
        Self {
            rt,
            state,
            by_pack: Arc::default(),
            services,
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
        self.services.set(tenant, &index.pack_id, caller.clone());
        let done = self.register_runtime(key, tenant, index, caller);
        self.list_in_api(key, tenant, index, &done).await;
        done
    }

    fn register_runtime(
        &self,
        key: &str,
        tenant: &str,
        index: &PackIndex,
        caller: &Arc<PackServiceCaller>,
    ) -> Registered {
        let mut done = Registered::default();
        let previous = self
            .by_pack
            .lock()
            .ok()
            .and_then(|mut g| g.remove(key))
            .unwrap_or_default();
        let (old_tenant, old_tools, old_flows, old_agents) = previous;
        for id in &old_tools {
            self.rt.tools().remove_for(Some(&old_tenant), id);
        }
        for id in &old_flows {
            self.rt.flows().remove_for(&old_tenant, id);
        }
        for id in &old_agents {
            self.rt.agents().remove_for(&old_tenant, id);
        }
        let others: HashSet<String> = self.rt.tools().ids_for(tenant).into_iter().collect();
        let mut versions = HashMap::new();
        for tool in &index.tools {
            if tool.spec.is_some() {
                // A declarative tool: the runtime runs it itself (the registry entry
                // `list_in_api` writes carries its spec), not the pack service.
                match declared_manifest(tool) {
                    Ok(_) => done.tools.push(tool.id.clone()),
                    Err(e) => done.leave_out(LeftOutKind::Tool, &tool.id, e),
                }
                continue;
            }
            match manifest_of(tool) {
                Ok(manifest) => {
                    if others.contains(&tool.id) {
                        done.notes.push(format!(
                            "tool \"{}\": another source registered it first; this pack's copy replaces it",
                            tool.id
                        ));
                    }
                    versions.insert(tool.id.clone(), tool.version().map(str::to_owned));
                    let pack_caller: Arc<dyn kindgi_runtime::PackCaller> = caller.clone();
                    self.rt.tools().insert_pack_tool_for(
                        Some(tenant),
                        manifest,
                        index.pack_id.clone(),
                        pack_caller,
                    );
                    done.tools.push(tool.id.clone());
                }
                Err(e) => done.leave_out(LeftOutKind::Tool, &tool.id, e.to_string()),
            }
        }
        caller.set_versions(versions);
        for agent in &index.agents {
            if let Some(problem) = hitl_problem(agent) {
                done.leave_out(LeftOutKind::Agent, &agent.id, problem);
                continue;
            }
            self.rt.agents().insert_for(Some(tenant), agent_of(agent));
            done.agents.push(agent.id.clone());
        }
        for flow in &index.flows {
            match serde_json::from_value(flow_json(flow)) {
                Ok(f) => match self.rt.flows().insert_for(Some(tenant), f) {
                    Ok(_) => done.flows.push(flow.id.clone()),
                    Err(e) => done.leave_out(LeftOutKind::Flow, &flow.id, e.to_string()),
                },
                Err(e) => done.leave_out(
                    LeftOutKind::Flow,
                    &flow.id,
                    format!("not a valid flow: {e}"),
                ),
            }
        }
        done.guardrails = index.guardrails.iter().map(|g| g.id.clone()).collect();
        // By pack id: the reason names the pack a user knows.
        self.rt
            .left_out()
            .replace(&index.pack_id, tenant, &done.left_out);
        if let Ok(mut g) = self.by_pack.lock() {
            g.insert(
                key.to_owned(),
                (
                    tenant.to_owned(),
                    done.tools.clone(),
                    done.flows.clone(),
                    done.agents.clone(),
                ),
            );
        }
        done
    }

    /// Puts the pack's tools, flows, agents and guardrails in the registries for `tenant`
    /// (what `GET /v1/tools|flows|agents|guardrails` serve); what the same pack put there
    /// before and no longer has is removed. The pack's files are the truth: a changed tool
    /// version replaces the stored one; a changed flow or agent under the same version is
    /// reported (versions are immutable) and the stored one stays.
    async fn list_in_api(&self, key: &str, tenant: &str, index: &PackIndex, done: &Registered) {
        let defs = &self.state.definitions;
        if let Err(e) = defs.remove_source(tenant, key).await {
            say_registry(
                key,
                &format!("could not clear what it registered before: {e}"),
            );
        }
        // What the runtime left out is not listed: a listing offers only what can run.
        for tool in &index.tools {
            if done.is_left_out(LeftOutKind::Tool, &tool.id) {
                continue;
            }
            let Ok(manifest) = declared_manifest(tool) else {
                continue;
            };
            let stored = match self.state.store_registry() {
                Some(registry) => registry.put_tool(tenant, &manifest).await.map(|_| ()),
                None => self
                    .state
                    .registry
                    .register(tenant, &manifest, RegisterOptions::default())
                    .await
                    .map(|_| ()),
            };
            if let Err(e) = stored {
                say_registry(key, &format!("tool \"{}\" not listed: {e}", tool.id));
            }
        }
        for flow in &index.flows {
            if done.is_left_out(LeftOutKind::Flow, &flow.id) {
                continue;
            }
            if let Err(e) = defs.put_flow(tenant, &flow_json(flow), key).await {
                say_registry(key, &format!("flow \"{}\" not listed: {e}", flow.id));
            }
        }
        for agent in &index.agents {
            if done.is_left_out(LeftOutKind::Agent, &agent.id) {
                continue;
            }
            if let Err(e) = defs.put_agent(tenant, &agent_json(agent), key).await {
                say_registry(key, &format!("agent \"{}\" not listed: {e}", agent.id));
            }
        }
        for guardrail in &index.guardrails {
            let Ok(definition) = serde_json::to_value(guardrail) else {
                continue;
            };
            if let Err(e) = defs.put_guardrail(tenant, &definition, key).await {
                say_registry(
                    key,
                    &format!("guardrail \"{}\" not listed: {e}", guardrail.id),
                );
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pack_agent_keeps_what_the_model_router_reads() {
        let agent: IndexAgent = serde_json::from_value(json!({
            "id": "my-pack.helper", "version": "1.0.0", "modulePath": "agents/helper.js",
            "preferredProvider": "acme-llm", "preferredModel": "small",
            "capabilities": [{"kind": "llm-inference", "requirements": [{"feature": "tools"}]}]
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let spec = agent_of(&agent);
        assert_eq!(spec.preferred_provider.as_deref(), Some("acme-llm"));
        assert_eq!(spec.preferred_model.as_deref(), Some("small"));
        assert_eq!(spec.capabilities.len(), 1);
        let bare: IndexAgent = serde_json::from_value(json!({
            "id": "my-pack.bare", "version": "1.0.0", "modulePath": "agents/bare.js"
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(agent_of(&bare).preferred_provider, None);
    }
}
