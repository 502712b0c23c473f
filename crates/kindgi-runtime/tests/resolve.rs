//! Resolution per tenant, on the catalogues and the memory store: flows and agents by
//! tenant (catalogues and a plugged-in source), the highest version unless one is asked,
//! typed agent tool entries, a catalogue tool whose version misses the range, MCP tools
//! counted as mutating, and one agent resolving each tenant's own tool. Resolution through
//! the tool registry (kindgi-store's `StoreRegistry` on SQLite and PostgreSQL), recovery at
//! the exact version and env/secrets through `CallValues` are kindgi-host's
//! `tests/resolve.rs` (same fixture).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/resolve.rs"]
mod fixture;
mod support;

use async_trait::async_trait;
use fixture::{Caller, for_tenant, one_node_flow, wait};
use kindgi_runtime::{
    AgentCatalogue, AgentSpec, AgentTool, DefinitionSource, FlowCatalogue, LayeredDefinitions,
    MemoryDefinitions, RunOptions, RunStatus, Runtime, RuntimeError, ToolTransport,
    dry_run_refusal,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use support::{counting_tool, read_only};

/// A definition source as a host would plug in (the store's registries): JSON by tenant.
#[derive(Debug, Default)]
struct JsonSource {
    flows: Mutex<HashMap<(String, String), Vec<Value>>>,
    agents: Mutex<HashMap<(String, String), Vec<Value>>>,
    asked: AtomicUsize,
}

fn pick(list: Option<&Vec<Value>>, version: Option<&str>) -> Option<Value> {
    let list = list?;
    match version {
        Some(v) => list.iter().find(|d| d["version"] == json!(v)).cloned(),
        None => list.last().cloned(),
    }
}

#[async_trait]
impl DefinitionSource for JsonSource {
    async fn flow_json(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Value>, kindgi_runtime::StorageError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let g = self.flows.lock().unwrap();
        Ok(pick(g.get(&(tenant.into(), id.into())), version))
    }
    async fn agent_json(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Value>, kindgi_runtime::StorageError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let g = self.agents.lock().unwrap();
        Ok(pick(g.get(&(tenant.into(), id.into())), version))
    }
}

#[tokio::test]
async fn the_highest_version_runs_unless_one_is_asked_and_a_tenant_version_wins() {
    let rt = Runtime::in_memory().build();
    let hits = Arc::new(AtomicUsize::new(0));
    for v in ["1.0.0", "1.10.0", "1.9.0", "2.0.0-rc.1"] {
        let id = format!("t.v{}", v.replace('.', "-"));
        rt.tools()
            .insert_tool(counting_tool(&id, read_only(), hits.clone(), move |_| {
                json!(v)
            }));
        rt.flows()
            .insert_json(&one_node_flow("t.f", v, "tool", &id))
            .unwrap();
    }
    let run = rt.start_run("t.f", None, json!({}), wait()).await.unwrap();
    // npm precedence: 2.0.0-rc.1 > 1.10.0 > 1.9.0 (not string order).
    assert_eq!(run.output, Some(json!("2.0.0-rc.1")));
    assert_eq!(run.flow_version, "2.0.0-rc.1");
    let run = rt
        .start_run("t.f", Some("1.9.0"), json!({}), wait())
        .await
        .unwrap();
    assert_eq!(run.output, Some(json!("1.9.0")));
    assert_eq!(
        rt.flows().list()[0].1,
        ["1.0.0", "1.9.0", "1.10.0", "2.0.0-rc.1"]
    );
}

#[tokio::test]
async fn flows_and_agents_come_from_the_plugged_in_source_compiled_once_per_version() {
    let source = Arc::new(JsonSource::default());
    let flow: Value =
        serde_json::from_str(&one_node_flow("s.flow", "1.0.0", "agent", "s.agent")).unwrap();
    source
        .flows
        .lock()
        .unwrap()
        .insert(("acme".into(), "s.flow".into()), vec![flow]);
    // PublishAgentBody's shape: typed tools, a budget, keys this runtime does not use.
    let agent = json!({"id": "s.agent", "version": "1.0.0", "name": "S", "instructions": "Be brief.",
        "capabilities": [], "retrieval": [], "guardrails": [],
        "tools": [{"id": "s.echo", "version": "^1.0.0"}], "budget": {"maxSteps": 3}});
    source
        .agents
        .lock()
        .unwrap()
        .insert(("acme".into(), "s.agent".into()), vec![agent]);
    let (flows, agents) = (FlowCatalogue::new(), AgentCatalogue::new());
    let memory = Arc::new(MemoryDefinitions {
        flows: flows.clone(),
        agents: agents.clone(),
        ..Default::default()
    });
    let layered = Arc::new(LayeredDefinitions::new(memory, source.clone()));
    let rt = Runtime::in_memory()
        .flows(flows)
        .agents(agents)
        .definitions(layered.clone())
        .build();
    let hits = Arc::new(AtomicUsize::new(0));
    rt.tools()
        .insert_tool(counting_tool("s.echo", read_only(), hits, |v| v));
    for _ in 0..2 {
        let run = rt
            .start_run("s.flow", None, json!("hi"), for_tenant("acme"))
            .await
            .unwrap();
        assert_eq!(run.status, RunStatus::Completed, "{run:?}");
        assert_eq!(run.flow_version, "1.0.0");
    }
    // Two runs, one compile each of the flow and the agent.
    assert_eq!(layered.cached(), (1, 1));
    let got = rt
        .definitions()
        .agent("acme", "s.agent", Some("1.0.0"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.tools, [AgentTool::new("s.echo", "^1.0.0")]);
    assert_eq!(got.max_steps, Some(3));
    // Another tenant does not see acme's definitions.
    let err = rt
        .start_run("s.flow", None, json!("hi"), for_tenant("other"))
        .await
        .unwrap_err();
    assert!(matches!(err, RuntimeError::FlowNotFound { .. }), "{err}");
}

#[test]
fn agent_tools_accept_typed_entries_and_bare_ids() {
    let a: AgentSpec = serde_json::from_value(json!({"id": "a", "tools": [
        {"id": "t.one", "version": "^1.2.0"}, "t.two", "t.three@~2.0.0"]}))
    .unwrap();
    assert_eq!(
        a.tools,
        [
            AgentTool::new("t.one", "^1.2.0"),
            AgentTool {
                id: "t.two".into(),
                version: None
            },
            AgentTool::new("t.three", "~2.0.0"),
        ]
    );
    let bad = serde_json::from_value::<AgentSpec>(
        json!({"id": "a", "tools": [{"id": "", "version": "1"}]}),
    )
    .unwrap_err();
    assert!(bad.to_string().contains("empty tool id"), "{bad}");
    let bad = serde_json::from_value::<AgentSpec>(
        json!({"id": "a", "tools": [{"id": "x", "version": 1}]}),
    )
    .unwrap_err();
    assert!(bad.to_string().contains("tools[] entry"), "{bad}");
}

#[tokio::test]
async fn a_catalogue_tool_whose_version_misses_the_range_is_not_called() {
    let rt = Runtime::in_memory().build();
    let hits = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "t.local",
        json!({"mutating": false, "version": "2.0.0"}),
        hits.clone(),
        |_| json!("local"),
    ));
    rt.flows()
        .insert_json(&one_node_flow("t.ok", "1.0.0", "tool", "t.local@^2"))
        .unwrap();
    rt.flows()
        .insert_json(&one_node_flow("t.miss", "1.0.0", "tool", "t.local@^1"))
        .unwrap();
    let ok = rt.start_run("t.ok", None, json!({}), wait()).await.unwrap();
    assert_eq!(ok.output, Some(json!("local")));
    let miss = rt
        .start_run("t.miss", None, json!({}), wait())
        .await
        .unwrap();
    assert_eq!(
        miss.failure_message.as_deref(),
        Some(
            r#"tool-version-unresolvable: Tool "t.local" has no version satisfying "^1" (available: 2.0.0)"#
        )
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn mcp_tools_registered_by_the_host_always_count_as_mutating() {
    let rt = Runtime::in_memory().build();
    let hits = Arc::new(AtomicUsize::new(0));
    // Declared read-only by its server: still never run in a dry run.
    rt.tools().insert_mcp_tool_for(
        Some("acme"),
        counting_tool("inventory.stock_level", read_only(), hits.clone(), |_| {
            json!(1)
        }),
    );
    let t = rt
        .resolver()
        .resolve("acme", "inventory.stock_level", Some("^1.0.0"))
        .await
        .unwrap();
    assert_eq!(t.transport(), ToolTransport::Mcp);
    assert!(!t.runs_in_dry_run());
    assert!(!t.runs_concurrently());
    rt.flows()
        .insert_json(&one_node_flow(
            "t.flow",
            "1.0.0",
            "tool",
            "inventory.stock_level",
        ))
        .unwrap();
    let run = rt
        .start_run(
            "t.flow",
            None,
            json!({}),
            RunOptions {
                dry_run: true,
                ..for_tenant("acme")
            },
        )
        .await
        .unwrap();
    assert_eq!(
        run.failure_message,
        Some(dry_run_refusal("inventory.stock_level"))
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    let run = rt
        .start_run("t.flow", None, json!({}), for_tenant("acme"))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn one_agent_resolves_each_tenants_own_tool_against_its_range() {
    let rt = Runtime::in_memory()
        .model(Arc::new(Caller {
            tool: "t.tool".into(),
            calls: 1,
            step: AtomicUsize::new(0),
            between: Mutex::new(None),
        }))
        .build();
    let hits = Arc::new(AtomicUsize::new(0));
    for (tenant, version) in [("a", "1.4.0"), ("b", "2.0.0")] {
        let extra = json!({"mutating": false, "version": version});
        rt.tools().insert_for(
            Some(tenant),
            Arc::new(kindgi_runtime::InProcessTool::new(counting_tool(
                "t.tool",
                extra,
                hits.clone(),
                move |_| json!({"tenant": tenant}),
            ))),
        );
    }
    rt.agents()
        .insert(AgentSpec::new("t.agent").with_tools(["t.tool@^1.0.0"]));
    rt.flows()
        .insert_json(&one_node_flow("t.turn", "1.0.0", "agent", "t.agent"))
        .unwrap();
    let a = rt
        .start_run("t.turn", None, json!("go"), for_tenant("a"))
        .await
        .unwrap();
    assert_eq!(a.status, RunStatus::Completed, "{a:?}");
    let out = a.output.unwrap();
    assert_eq!(out["text"], r#"{"tenant":"a"}"#);
    assert_eq!(out["toolCalls"][0]["toolVersion"], "1.4.0");
    let b = rt
        .start_run("t.turn", None, json!("go"), for_tenant("b"))
        .await
        .unwrap();
    assert_eq!(
        b.failure_message.as_deref(),
        Some(
            r#"tool-version-unresolvable: Tool "t.tool" has no version satisfying "^1.0.0" (available: 2.0.0)"#
        )
    );
    // A tenant with no such tool is refused before a run exists.
    let err = rt
        .start_run("t.turn", None, json!("go"), for_tenant("c"))
        .await
        .unwrap_err();
    assert!(matches!(err, RuntimeError::FlowUnbound { .. }), "{err}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}
