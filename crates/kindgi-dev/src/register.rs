//! From a pack index to a runtime: each tool becomes a `PackTool` calling the pack service,
//! each agent an `AgentSpec`, each flow a loaded flow. A reload replaces all three sets.
//!
//! The index is the runtime's data, so problems in it are reported, not fatal: a flow that
//! does not load is listed with its reason and left out, and the rest is registered.

use std::collections::HashMap;
use std::sync::Arc;

use kindgi_runtime::{AgentSpec, AgentTool, Runtime};
use kindgi_spec::ToolManifest;
use kindgi_spec::pack_index::{IndexAgent, IndexFlow, IndexTool, PackIndex};
use serde_json::{Map, Value, json};

use crate::caller::DevPackCaller;

/// What a registration did.
#[derive(Debug, Default, Clone)]
pub struct Registered {
    pub tools: Vec<String>,
    pub agents: Vec<String>,
    pub flows: Vec<String>,
    /// Entries left out, each with why.
    pub skipped: Vec<String>,
}

impl Registered {
    pub fn summary(&self) -> String {
        let n = |v: &Vec<String>, one: &str, many: &str| {
            format!("{} {}", v.len(), if v.len() == 1 { one } else { many })
        };
        format!(
            "{}, {}, {}",
            n(&self.tools, "tool", "tools"),
            n(&self.agents, "agent", "agents"),
            n(&self.flows, "flow", "flows")
        )
    }
}

/// The runtime manifest of an index tool. An index entry may carry fields the manifest
/// type spells differently; an optional one that does not parse is left out rather than
/// losing the tool (what matters to the runtime is id, version, schemas, `mutating` and
/// `effects`).
pub fn manifest_of(tool: &IndexTool) -> Result<ToolManifest, String> {
    let mut m = Map::new();
    m.insert("id".into(), json!(tool.id));
    m.insert(
        "description".into(),
        json!(tool.description.clone().unwrap_or_default()),
    );
    m.insert("version".into(), json!(tool.version().unwrap_or("0.0.0")));
    m.insert("input".into(), tool.input.clone());
    m.insert("output".into(), tool.output.clone());
    let optional: [(&str, Option<Value>); 7] = [
        ("effects", tool.effects.clone().map(Value::Array)),
        ("mutating", tool.mutating.map(Value::Bool)),
        ("needs", tool.needs.clone().map(Value::Array)),
        ("needsSpec", tool.needs_spec.clone()),
        ("sandbox", tool.sandbox.clone().map(Value::String)),
        ("limits", tool.limits.clone()),
        ("network", tool.network.clone()),
    ];
    for (key, value) in optional {
        let Some(value) = value else { continue };
        let mut trial = m.clone();
        trial.insert(key.into(), value.clone());
        if serde_json::from_value::<ToolManifest>(Value::Object(trial)).is_ok() {
            m.insert(key.into(), value);
        } else if key == "effects" || key == "mutating" {
            return Err(format!("its `{key}` is not valid: {value}"));
        }
    }
    serde_json::from_value(Value::Object(m)).map_err(|e| e.to_string())
}

fn agent_of(agent: &IndexAgent) -> AgentSpec {
    let mut spec = AgentSpec::new(agent.id.clone());
    spec.version = agent.version.clone();
    spec.instructions = agent
        .rest
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned);
    // `{id, version}` keeps its range (resolved at each call); a bare id is any version.
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

/// Replaces the runtime's tools, agents and flows with the index's.
pub fn register(rt: &Runtime, index: &PackIndex, caller: &Arc<DevPackCaller>) -> Registered {
    let mut done = Registered::default();
    rt.tools().clear();
    rt.agents().clear();
    rt.flows().clear();
    let mut versions = HashMap::new();
    for tool in &index.tools {
        if tool.spec.is_some() {
            done.skipped.push(format!(
                "tool \"{}\": a declarative (spec) tool; kindgi dev runs pack tools only",
                tool.id
            ));
            continue;
        }
        match manifest_of(tool) {
            Ok(manifest) => {
                versions.insert(tool.id.clone(), tool.version().map(str::to_owned));
                let pack_caller: Arc<dyn kindgi_runtime::PackCaller> = caller.clone();
                rt.tools()
                    .insert_pack_tool(manifest, index.pack_id.clone(), pack_caller);
                done.tools.push(tool.id.clone());
            }
            Err(e) => done.skipped.push(format!("tool \"{}\": {e}", tool.id)),
        }
    }
    caller.set_versions(versions);
    for agent in &index.agents {
        rt.agents().insert(agent_of(agent));
        done.agents.push(agent.id.clone());
    }
    for flow in &index.flows {
        let value = flow_json(flow);
        match serde_json::from_value(value) {
            Ok(f) => match rt.flows().insert(f) {
                Ok(_) => done.flows.push(flow.id.clone()),
                Err(e) => done.skipped.push(format!("flow \"{}\": {e}", flow.id)),
            },
            Err(e) => done
                .skipped
                .push(format!("flow \"{}\": not a valid flow: {e}", flow.id)),
        }
    }
    done
}
