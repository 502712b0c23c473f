//! The guardrail tests' fixture, shared by kindgi-runtime's `tests/guardrails.rs` (memory
//! store) and kindgi-host's (SQLite, PostgreSQL): a scripted model, the agent `t.agent`
//! over counted read-only tools, guardrail specs, a pack-style checks seam and what a test
//! reads off a turn.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use async_trait::async_trait;
use kindgi_runtime::model::{ModelRequest, ModelResponse, Role};
use kindgi_runtime::{
    AgentSpec, AgentTool, CheckError, CheckRequest, GuardrailCatalogue, GuardrailChecks,
    GuardrailSpec, ModelError, ModelProvider, RunOptions, RunRecord, RunStatus, Runtime,
    RuntimeBuilder,
};
use kindgi_spec::pack_protocol::CheckResult;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::support::{counting_tool, read_only};

/// A model that asks for `calls` (tool names, one step each call batch) and then answers
/// `text`.
#[derive(Debug)]
pub struct Scripted {
    /// Each step's tool calls; after them, the final answer.
    pub steps: Vec<Vec<&'static str>>,
    pub text: String,
    pub step: AtomicUsize,
    /// `(call id, content)` of each tool result the model was handed, last request's.
    pub results: Mutex<Vec<(String, String)>>,
}

pub fn scripted(steps: Vec<Vec<&'static str>>, text: &str) -> Arc<Scripted> {
    Arc::new(Scripted {
        steps,
        text: text.to_owned(),
        step: AtomicUsize::new(0),
        results: Mutex::new(Vec::new()),
    })
}

impl Scripted {
    /// The content the model got for call `id`.
    pub fn result_of(&self, id: &str) -> Value {
        let results = self.results.lock().unwrap();
        let (_, content) = results.iter().find(|(c, _)| c == id).unwrap();
        serde_json::from_str(content).unwrap()
    }
}

#[async_trait]
impl ModelProvider for Scripted {
    fn provider_id(&self) -> &str {
        "test-scripted"
    }
    fn model(&self) -> &str {
        "scripted"
    }
    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        *self.results.lock().unwrap() = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| {
                (
                    m.tool_call_id.clone().unwrap_or_default(),
                    m.content.clone(),
                )
            })
            .collect();
        let n = self.step.fetch_add(1, Ordering::SeqCst);
        let answer = match self.steps.get(n) {
            Some(calls) => {
                let calls: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, name)| json!({"id": format!("s{n}c{i}"), "name": name, "arguments": {}}))
                    .collect();
                json!({"text": "", "finishReason": "tool-use", "toolCalls": calls})
            }
            None => json!({"text": self.text, "finishReason": "stop"}),
        };
        Ok(serde_json::from_value(answer).unwrap())
    }
}

pub fn guardrail(id: &str, check: &str, config: Value, action: &str) -> GuardrailSpec {
    GuardrailSpec::from_value(&json!({
        "id": id, "kind": "zero-llm", "check": check, "config": config,
        "action": {"on-violation": action},
    }))
    .unwrap()
}

/// How many times each tool ran.
#[derive(Debug, Clone, Default)]
pub struct Counts(pub Arc<Mutex<HashMap<String, Arc<AtomicUsize>>>>);

impl Counts {
    pub fn of(&self, tool: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .get(tool)
            .map_or(0, |c| c.load(Ordering::SeqCst))
    }
    pub fn total(&self) -> usize {
        ["t.a", "t.b", "t.x"].iter().map(|t| self.of(t)).sum()
    }
}

/// A runtime over `b` with tools `t.a`, `t.b`, `t.x` (read-only, counted), the agent
/// `t.agent` listing them and `guardrails`, and the model `model`.
pub fn runtime(
    b: RuntimeBuilder,
    model: Arc<Scripted>,
    guardrails: &[GuardrailSpec],
    agent_guardrails: &[&str],
) -> (Runtime, Counts) {
    let catalogue = GuardrailCatalogue::new();
    for g in guardrails {
        catalogue.insert(g.clone());
    }
    let rt = b.model(model).guardrails(catalogue).build();
    let count = Counts::default();
    for id in ["t.a", "t.b", "t.x"] {
        let c = Arc::new(AtomicUsize::new(0));
        count.0.lock().unwrap().insert(id.to_owned(), c.clone());
        rt.tools()
            .insert_tool(counting_tool(id, read_only(), c, |_| json!({"ok": true})));
    }
    let mut agent = AgentSpec::new("t.agent").with_tools([
        AgentTool::new("t.a", "*"),
        AgentTool::new("t.b", "*"),
        AgentTool::new("t.x", "*"),
    ]);
    agent.guardrails = agent_guardrails.iter().map(|s| (*s).to_owned()).collect();
    rt.agents().insert(agent);
    (rt, count)
}

pub async fn turn(rt: &Runtime) -> RunRecord {
    rt.start_agent_turn(
        "t.agent",
        None,
        json!({"message": "hi"}),
        RunOptions {
            wait: true,
            ..RunOptions::default()
        },
    )
    .await
    .unwrap()
}

pub fn failure(run: &RunRecord) -> &str {
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    run.failure_message.as_deref().unwrap()
}

/// The step output's `violations` (the turn's output carries the step's).
pub fn violations(run: &RunRecord) -> Vec<Value> {
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    let out = run.output.as_ref().unwrap();
    out.pointer("/violations")
        .or_else(|| {
            out.as_object()
                .and_then(|o| o.values().find_map(|v| v.get("violations")))
        })
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

pub async fn memory(
    model: Arc<Scripted>,
    guardrails: &[GuardrailSpec],
    agent_guardrails: &[&str],
) -> (Runtime, Counts) {
    runtime(Runtime::in_memory(), model, guardrails, agent_guardrails)
}

/// A checks seam like the host's: answers `acme.checks.*`, counts calls, records traces.
#[derive(Debug, Default)]
pub struct AcmeChecks {
    pub calls: AtomicUsize,
    pub traces: Mutex<Vec<Value>>,
}

#[async_trait]
impl GuardrailChecks for AcmeChecks {
    async fn run_check(&self, request: CheckRequest<'_>) -> Result<CheckResult, CheckError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.traces.lock().unwrap().push(request.trace.clone());
        match request.check_id {
            "acme.checks.min-length" => {
                let min = request
                    .config
                    .get("minLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(1);
                let out = request.trace["output"].as_str().unwrap_or_default();
                Ok(if out.trim().len() as u64 >= min {
                    CheckResult::pass()
                } else {
                    CheckResult::fail("too short")
                })
            }
            "acme.checks.down" => Err(CheckError {
                code: "pack-unreachable".into(),
                message: "unavailable: the pack service is not serving; the check did not run"
                    .into(),
            }),
            other => Err(CheckError {
                code: "unknown-check".into(),
                message: format!("no pack serves check \"{other}\""),
            }),
        }
    }
}

pub fn before_tool(
    id: &str,
    check: &str,
    config: Value,
    action: &str,
    tools: &[&str],
) -> GuardrailSpec {
    let mut g = json!({
        "id": id, "kind": "zero-llm", "check": check, "config": config,
        "action": {"on-violation": action}, "stage": "before-tool",
    });
    if !tools.is_empty() {
        g["scope"] = json!({"tools": tools});
    }
    GuardrailSpec::from_value(&g).unwrap()
}
