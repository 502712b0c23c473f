//! An agent step's tool calls: which run together and which alone (seed 004, runtime.md
//! cases 16, 28–34), and the approval gates in front of them (cases 35–53). A scripted
//! model asks for the calls; in-process tools count their runs and how many are in flight
//! at once (concurrency is asserted by counters, never by timing).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use common::tool;
use kindgi_runtime::agent::hitl::{HitlSpec, TenantHitlPolicy, TenantPolicyError};
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{AgentSpec, RunOptions, RunRecord, RunStatus, Runtime, RuntimeBuilder};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A model that answers from a script, one answer per call, and keeps what it was sent.
#[derive(Debug, Default)]
struct Script {
    answers: Mutex<VecDeque<ModelResponse>>,
    seen: Mutex<Vec<ModelRequest>>,
}

impl Script {
    fn new(answers: Vec<ModelResponse>) -> Arc<Script> {
        Arc::new(Script {
            answers: Mutex::new(answers.into()),
            seen: Mutex::new(Vec::new()),
        })
    }

    /// The tool results the `n`th model call (from 0) was sent: `(call id, content)`.
    fn tool_results(&self, n: usize) -> Vec<(String, String)> {
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

fn text(t: &str) -> ModelResponse {
    ModelResponse {
        text: t.into(),
        tool_calls: vec![],
        finish_reason: FinishReason::Stop,
        usage: Default::default(),
        warnings: vec![],
    }
}

/// A model answer asking for `calls` (`(call id, tool id, arguments)`).
fn asks(calls: &[(&str, &str, Value)]) -> ModelResponse {
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
struct Probe {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    log: Mutex<Vec<String>>,
    runs: Mutex<HashMap<String, usize>>,
}

impl Probe {
    fn runs(&self, tool: &str) -> usize {
        self.runs.lock().unwrap().get(tool).copied().unwrap_or(0)
    }
    fn max(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// A tool that reports to `probe` and yields a few times while in flight, so calls that
/// run together overlap.
fn probed(id: &str, extra: Value, probe: &Arc<Probe>) -> kindgi_tools::Tool {
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

const AGENT: &str = "t.agent";

/// A runtime whose agent `t.agent` has `tools` (all registered, probed) and `policy`.
fn runtime(
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

fn ro() -> Value {
    json!({"mutating": false})
}

fn mutating() -> Value {
    json!({"mutating": true})
}

async fn turn(rt: &Runtime, conversation: Option<&str>) -> RunRecord {
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

fn completed(run: &RunRecord) {
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
}

fn ids(results: &[(String, String)]) -> Vec<&str> {
    results.iter().map(|(id, _)| id.as_str()).collect()
}

// ----- scheduling -------------------------------------------------------------------------

#[tokio::test]
async fn read_only_calls_run_together_and_reach_the_model_in_its_order() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.r1", json!({})),
        ("c2", "t.r2", json!({})),
        ("c3", "t.r3", json!({})),
    ])]);
    let rt = runtime(
        Runtime::in_memory(),
        model.clone(),
        &probe,
        &[("t.r1", ro()), ("t.r2", ro()), ("t.r3", ro())],
        |a| a,
    );
    completed(&turn(&rt, None).await);
    assert_eq!(
        probe.max(),
        3,
        "the three read-only calls were in flight together"
    );
    let results = model.tool_results(1);
    assert_eq!(ids(&results), ["c1", "c2", "c3"]);
    assert!(results[0].1.contains("\"tool\":\"t.r1\""), "{results:?}");
    assert!(results[2].1.contains("\"tool\":\"t.r3\""), "{results:?}");
}

#[tokio::test]
async fn at_most_eight_read_only_calls_are_in_flight() {
    let probe = Arc::new(Probe::default());
    let calls: Vec<(String, Value)> = (0..10)
        .map(|n| (format!("c{n}"), json!({"n": n})))
        .collect();
    let asked: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, args)| (id.as_str(), "t.r1", args.clone()))
        .collect();
    let model = Script::new(vec![asks(&asked)]);
    let rt = runtime(
        Runtime::in_memory(),
        model.clone(),
        &probe,
        &[("t.r1", ro())],
        |a| a,
    );
    completed(&turn(&rt, None).await);
    assert_eq!(probe.runs("t.r1"), 10);
    assert_eq!(probe.max(), 8);
    let expected: Vec<String> = (0..10).map(|n| format!("c{n}")).collect();
    assert_eq!(ids(&model.tool_results(1)), expected);
}

#[tokio::test]
async fn a_mutating_call_runs_alone_between_read_only_ones() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.r1", json!({})),
        ("c2", "t.m1", json!({})),
        ("c3", "t.r2", json!({})),
    ])]);
    let rt = runtime(
        Runtime::in_memory(),
        model.clone(),
        &probe,
        &[("t.r1", ro()), ("t.m1", mutating()), ("t.r2", ro())],
        |a| a,
    );
    completed(&turn(&rt, None).await);
    assert_eq!(
        probe.log(),
        [
            "start t.r1",
            "end t.r1",
            "start t.m1",
            "end t.m1",
            "start t.r2",
            "end t.r2"
        ]
    );
    assert_eq!(ids(&model.tool_results(1)), ["c1", "c2", "c3"]);
}

#[tokio::test]
async fn a_pausing_or_connection_declaring_call_runs_alone() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.r1", json!({})),
        ("c2", "t.wait", json!({})),
        ("c3", "t.r2", json!({})),
        ("c4", "t.conn", json!({})),
        ("c5", "t.r3", json!({})),
    ])]);
    let connection = json!({"mutating": false, "needsSpec": {"connections": {
        "mail": {"app": "gmail", "permissions": ["read"], "as": "person"}}}});
    let rt = runtime(
        Runtime::in_memory(),
        model.clone(),
        &probe,
        &[
            ("t.r1", ro()),
            ("t.wait", json!({"mutating": false, "pauses": true})),
            ("t.r2", ro()),
            ("t.conn", connection),
            ("t.r3", ro()),
        ],
        |a| a,
    );
    completed(&turn(&rt, None).await);
    assert_eq!(probe.max(), 1, "{:?}", probe.log());
    assert_eq!(ids(&model.tool_results(1)), ["c1", "c2", "c3", "c4", "c5"]);
}

#[tokio::test]
async fn parallel_tool_calls_false_runs_every_call_on_its_own() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.r1", json!({})),
        ("c2", "t.r2", json!({})),
        ("c3", "t.r3", json!({})),
    ])]);
    let rt = runtime(
        Runtime::in_memory(),
        model.clone(),
        &probe,
        &[("t.r1", ro()), ("t.r2", ro()), ("t.r3", ro())],
        |mut a| {
            a.parallel_tool_calls = Some(false);
            a
        },
    );
    completed(&turn(&rt, None).await);
    assert_eq!(probe.max(), 1);
    assert_eq!(
        probe.log(),
        [
            "start t.r1",
            "end t.r1",
            "start t.r2",
            "end t.r2",
            "start t.r3",
            "end t.r3"
        ]
    );
}

// ----- rules that let calls through -------------------------------------------------------

fn with_policy(policy: Value) -> impl FnOnce(AgentSpec) -> AgentSpec {
    move |mut a| {
        a.conversation_policy = Some(policy);
        a
    }
}

#[tokio::test]
async fn without_hitl_tools_no_call_is_gated() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.m1", json!({})),
        ("c2", "t.r1", json!({})),
    ])]);
    let rt = runtime(
        Runtime::in_memory(),
        model,
        &probe,
        &[("t.m1", mutating()), ("t.r1", ro())],
        with_policy(json!({"hitl": {"defaultReviewerRole": "admin"}})),
    );
    completed(&turn(&rt, None).await);
    assert_eq!(probe.runs("t.m1"), 1);
    assert_eq!(probe.runs("t.r1"), 1);
}

#[tokio::test]
async fn a_never_ask_default_lets_a_mutating_tool_run() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[("c1", "t.m1", json!({}))])]);
    let rt = runtime(
        Runtime::in_memory(),
        model,
        &probe,
        &[("t.m1", mutating())],
        with_policy(json!({"hitl": {"tools": {"default": "never_ask"}}})),
    );
    completed(&turn(&rt, None).await);
    assert_eq!(probe.runs("t.m1"), 1);
}

/// A tenant policy store that is down.
#[derive(Debug)]
struct Down;

#[async_trait]
impl TenantHitlPolicy for Down {
    async fn hitl_policy(&self, _tenant: &str) -> Result<Option<HitlSpec>, TenantPolicyError> {
        Err(TenantPolicyError("policy store unreachable".into()))
    }
}

#[tokio::test]
async fn an_unreadable_tenant_policy_fails_the_turn_before_any_tool_runs() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[("c1", "t.r1", json!({}))])]);
    let rt = runtime(
        Runtime::in_memory().tenant_hitl_policy(Arc::new(Down)),
        model.clone(),
        &probe,
        &[("t.r1", ro())],
        |a| a,
    );
    let run = turn(&rt, None).await;
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            "tenant-policy-unavailable: The tenant's hitl policy could not be applied: policy store unreachable"
        )
    );
    assert_eq!(probe.runs("t.r1"), 0);
    assert!(
        model.seen.lock().unwrap().is_empty(),
        "no model call either"
    );
}

#[tokio::test]
async fn an_agent_whose_approval_settings_cannot_apply_fails_instead_of_running_ungated() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[("c1", "t.m1", json!({}))])]);
    let rt = runtime(
        Runtime::in_memory(),
        model,
        &probe,
        &[("t.m1", mutating())],
        with_policy(json!({"hitl": {"tools": {}, "onTimeout": "auto-approve"}})),
    );
    let run = turn(&rt, None).await;
    assert_eq!(run.status, RunStatus::Failed);
    let message = run.failure_message.unwrap_or_default();
    assert!(
        message.starts_with("hitl-policy-invalid: agent \"t.agent\" has approval settings this runtime cannot apply: /conversationPolicy/hitl/onTimeout: hitl.onTimeout 'auto-approve' isn't supported"),
        "{message}"
    );
    assert_eq!(probe.runs("t.m1"), 0);
}
