//! The agent-gate tests' fixture, shared by kindgi-runtime's `tests/agent_gates.rs` (memory
//! store) and kindgi-host's (SQLite, PostgreSQL): a scripted model, probed tools counting
//! their runs and how many are in flight, the agent `t.agent` over them, and the calls a
//! test makes of the approval API.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use async_trait::async_trait;
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{
    AgentSpec, Approval, ApprovalQuery, ApprovalStatus, DecisionInput, DecisionKind, ReviewerRole,
    RunOptions, RunRecord, RunStatus, Runtime, RuntimeBuilder,
};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::support::tool;

/// A model that answers from a script, one answer per call, and keeps what it was sent.
#[derive(Debug, Default)]
pub struct Script {
    pub answers: Mutex<VecDeque<ModelResponse>>,
    pub seen: Mutex<Vec<ModelRequest>>,
}

impl Script {
    pub fn new(answers: Vec<ModelResponse>) -> Arc<Script> {
        Arc::new(Script {
            answers: Mutex::new(answers.into()),
            seen: Mutex::new(Vec::new()),
        })
    }

    /// The tool results the `n`th model call (from 0) was sent: `(call id, content)`.
    pub fn tool_results(&self, n: usize) -> Vec<(String, String)> {
        self.seen.lock().unwrap()[n]
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| {
                (
                    m.tool_call_id.clone().unwrap_or_default(),
                    m.content.clone(),
                )
            })
            .collect()
    }
}

#[async_trait]
impl ModelProvider for Script {
    fn provider_id(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "script-1"
    }
    async fn invoke(&self, r: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.seen.lock().unwrap().push(r);
        Ok(self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| text("done")))
    }
}

pub fn text(t: &str) -> ModelResponse {
    ModelResponse {
        text: t.into(),
        tool_calls: vec![],
        finish_reason: FinishReason::Stop,
        usage: Default::default(),
        warnings: vec![],
    }
}

/// A model answer asking for `calls` (`(call id, tool id, arguments)`).
pub fn asks(calls: &[(&str, &str, Value)]) -> ModelResponse {
    ModelResponse {
        text: String::new(),
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: args.clone(),
            })
            .collect(),
        finish_reason: FinishReason::ToolUse,
        usage: Default::default(),
        warnings: vec![],
    }
}

/// What the tools saw: runs per tool, calls in flight now and at most, and the order of
/// starts and ends.
#[derive(Debug, Default)]
pub struct Probe {
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    pub log: Mutex<Vec<String>>,
    pub runs: Mutex<HashMap<String, usize>>,
}

impl Probe {
    pub fn runs(&self, tool: &str) -> usize {
        self.runs.lock().unwrap().get(tool).copied().unwrap_or(0)
    }
    pub fn max(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// A tool that reports to `probe` and yields a few times while in flight, so calls that
/// run together overlap.
pub fn probed(id: &str, extra: Value, probe: &Arc<Probe>) -> kindgi_tools::Tool {
    let probe = probe.clone();
    let name = id.to_owned();
    tool(id, extra, move |input: Value| {
        let (probe, name) = (probe.clone(), name.clone());
        async move {
            let now = probe.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            probe.max_in_flight.fetch_max(now, Ordering::SeqCst);
            *probe.runs.lock().unwrap().entry(name.clone()).or_default() += 1;
            let tag = input
                .get("n")
                .map(|n| format!("{name}#{n}"))
                .unwrap_or(name.clone());
            probe.log.lock().unwrap().push(format!("start {tag}"));
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
            probe.log.lock().unwrap().push(format!("end {tag}"));
            probe.in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(json!({"tool": name, "args": input}))
        }
    })
}

pub const AGENT: &str = "t.agent";

/// A runtime whose agent `t.agent` has `tools` (all registered, probed) and `policy`.
pub fn runtime(
    builder: RuntimeBuilder,
    model: Arc<Script>,
    probe: &Arc<Probe>,
    tools: &[(&str, Value)],
    configure: impl FnOnce(AgentSpec) -> AgentSpec,
) -> Runtime {
    let rt = builder.model(model).build();
    for (id, extra) in tools {
        rt.tools().insert_tool(probed(id, extra.clone(), probe));
    }
    let ids: Vec<&str> = tools.iter().map(|(id, _)| *id).collect();
    rt.agents()
        .insert(configure(AgentSpec::new(AGENT).with_tools(ids)));
    rt
}

pub fn ro() -> Value {
    json!({"mutating": false})
}

pub fn mutating() -> Value {
    json!({"mutating": true})
}

pub async fn turn(rt: &Runtime, conversation: Option<&str>) -> RunRecord {
    let mut input = json!({"message": "go"});
    if let Some(c) = conversation {
        input["conversationId"] = json!(c);
    }
    rt.start_agent_turn(
        AGENT,
        None,
        input,
        RunOptions {
            wait: true,
            ..Default::default()
        },
    )
    .await
    .unwrap()
}

pub fn completed(run: &RunRecord) {
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
}

pub fn ids(results: &[(String, String)]) -> Vec<&str> {
    results.iter().map(|(id, _)| id.as_str()).collect()
}

pub fn with_policy(policy: Value) -> impl FnOnce(AgentSpec) -> AgentSpec {
    move |mut a| {
        a.conversation_policy = Some(policy);
        a
    }
}

/// The approvals of `run` with `status`.
pub async fn approvals(rt: &Runtime, run: &RunRecord, status: ApprovalStatus) -> Vec<Approval> {
    rt.list_approvals(&ApprovalQuery {
        tenant_id: run.tenant_id.clone(),
        statuses: vec![status],
        run_id: Some(run.id.clone()),
        limit: 20,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// The one open approval of a suspended run.
pub async fn the_open_approval(rt: &Runtime, run: &RunRecord) -> Approval {
    assert_eq!(
        run.status,
        RunStatus::Suspended,
        "{:?}",
        run.failure_message
    );
    let open = approvals(rt, run, ApprovalStatus::Pending).await;
    assert_eq!(open.len(), 1, "{open:?}");
    open.into_iter().next().unwrap()
}

/// An admin reviewer decides `approval`; the run's status after the decision.
pub async fn decide(
    rt: &Runtime,
    approval: &Approval,
    decision: DecisionKind,
    rationale: Option<&str>,
) -> RunStatus {
    let done = rt
        .complete_approval(
            &approval.tenant_id,
            &approval.id,
            DecisionInput {
                decision,
                rationale: rationale.map(str::to_owned),
                decided_by: "user:rita".into(),
                reviewer_id: "rita".into(),
                reviewer_role: ReviewerRole::Admin,
            },
        )
        .await
        .unwrap();
    done.run_status.unwrap()
}

pub async fn suspended_timeout_ms(rt: &Runtime, run: &RunRecord) -> u64 {
    let j = rt.journal(&run.id, None, None).await.unwrap();
    j.iter()
        .find(|e| e.kind.as_str() == "wait.suspended")
        .and_then(|e| e.payload.as_ref())
        .and_then(|p| p["timeoutMs"].as_u64())
        .unwrap()
}
