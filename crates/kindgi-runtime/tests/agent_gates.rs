//! An agent step's tool calls: which run together and which alone (seed 004, runtime.md
//! cases 16, 28–34), and the approval gates in front of them (cases 35–53). A scripted
//! model asks for the calls; in-process tools count their runs and how many are in flight
//! at once (concurrency is asserted by counters, never by timing).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use common::tool;
use kindgi_runtime::agent::hitl::{HitlSpec, TenantApprovalPolicy, TenantPolicyError};
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
impl TenantApprovalPolicy<HitlSpec> for Down {
    async fn hitl_policy(&self, _tenant: &str) -> Result<Option<HitlSpec>, TenantPolicyError> {
        Err(TenantPolicyError::backend(
            "tenant_policy.get",
            std::io::Error::other("policy store unreachable"),
        ))
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
            "tenant-policy-unavailable: The tenant's hitl policy could not be applied: tenant_policy.get failed: policy store unreachable"
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

// ----- gates ------------------------------------------------------------------------------

use common::{Backend, builder, cleanup};
use kindgi_runtime::agent::hitl::{args_hash, tool_call_token};
use kindgi_runtime::{
    Approval, ApprovalQuery, ApprovalStatus, DecisionInput, DecisionKind, ReviewerRole,
};

/// The approvals of `run` with `status`.
async fn approvals(rt: &Runtime, run: &RunRecord, status: ApprovalStatus) -> Vec<Approval> {
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
async fn the_open_approval(rt: &Runtime, run: &RunRecord) -> Approval {
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
async fn decide(
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

async fn suspended_timeout_ms(rt: &Runtime, run: &RunRecord) -> u64 {
    let j = rt.journal(&run.id, None, None).await.unwrap();
    j.iter()
        .find(|e| e.kind.as_str() == "wait.suspended")
        .and_then(|e| e.payload.as_ref())
        .and_then(|p| p["timeoutMs"].as_u64())
        .unwrap()
}

/// Cases 27, 33, 36, 43, 44, 45: under `hitl: {tools: {}}` the read-only call before the
/// mutating one runs, the mutating one parks the run on an approval naming its exact
/// arguments; approved, it runs once, the call before it does not run again, and the
/// read-only calls after it run one at a time.
async fn a_gated_call_parks_and_runs_once_approved(backend: Backend) {
    let (b, db) = builder(backend).await;
    let probe = Arc::new(Probe::default());
    let pay_args = json!({"to": "acme", "amount": 12.5});
    let model = Script::new(vec![asks(&[
        ("c1", "t.r1", json!({})),
        ("c2", "t.pay", pay_args.clone()),
        ("c3", "t.r2", json!({})),
        ("c4", "t.r3", json!({})),
    ])]);
    let rt = runtime(
        b,
        model.clone(),
        &probe,
        &[
            ("t.r1", ro()),
            ("t.pay", mutating()),
            ("t.r2", ro()),
            ("t.r3", ro()),
        ],
        with_policy(json!({"hitl": {"tools": {}}})),
    );
    let run = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &run).await;
    assert_eq!(probe.runs("t.r1"), 1, "the read-only call before it ran");
    assert_eq!(probe.runs("t.pay"), 0, "nothing runs before the decision");
    assert_eq!(probe.runs("t.r2") + probe.runs("t.r3"), 0);

    assert_eq!(approval.subject_kind, "tool-call:pending");
    assert_eq!(approval.required_role, ReviewerRole::Standard);
    assert_eq!(approval.title.as_deref(), Some("HITL review: t.pay"));
    assert_eq!(
        approval.description.as_deref(),
        Some("Tool call t.pay awaiting reviewer approval before dispatch.")
    );
    let hash = args_hash(&json!({"amount": 12.5, "to": "acme"}));
    let s = &approval.subject_ref;
    assert_eq!(s["agentId"], AGENT);
    assert_eq!(s["agentVersion"], "0.0.0");
    assert_eq!(s["toolId"], "t.pay");
    assert_eq!(s["toolVersion"], "1.0.0");
    assert_eq!(s["callId"], "c2");
    assert_eq!(s["argsHash"], json!(hash));
    assert_eq!(s["arguments"], pay_args);
    assert_eq!(
        s["conversationId"],
        json!(run.meta.agent.as_ref().unwrap().conversation_id)
    );
    assert_eq!(
        approval.wait_token_id.as_deref(),
        Some(tool_call_token(&run.id, "c2", &hash).as_str())
    );
    assert_eq!(suspended_timeout_ms(&rt, &run).await, 86_400_000);

    let status = decide(&rt, &approval, DecisionKind::Approve, None).await;
    assert_eq!(status, RunStatus::Completed);
    assert_eq!(probe.runs("t.pay"), 1, "the approved call ran once");
    assert_eq!(
        probe.runs("t.r1"),
        1,
        "the call before the park did not run again"
    );
    assert_eq!(probe.runs("t.r2"), 1);
    assert_eq!(probe.runs("t.r3"), 1);
    let log = probe.log();
    let tail: Vec<&str> = log.iter().skip(2).map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "start t.pay",
            "end t.pay",
            "start t.r2",
            "end t.r2",
            "start t.r3",
            "end t.r3"
        ],
        "after the gated call the rest run one at a time"
    );
    let last = model.seen.lock().unwrap().len() - 1;
    assert_eq!(ids(&model.tool_results(last)), ["c1", "c2", "c3", "c4"]);
    cleanup(db).await;
}

#[tokio::test]
async fn a_gated_call_parks_and_runs_once_approved_memory() {
    a_gated_call_parks_and_runs_once_approved(Backend::Memory).await;
}

#[tokio::test]
async fn a_gated_call_parks_and_runs_once_approved_sqlite() {
    a_gated_call_parks_and_runs_once_approved(Backend::Sqlite).await;
}

#[tokio::test]
async fn a_gated_call_parks_and_runs_once_approved_postgres() {
    a_gated_call_parks_and_runs_once_approved(Backend::Postgres).await;
}

/// Cases 37, 39: an override asks for a read-only tool, with the role it names.
#[tokio::test]
async fn an_always_ask_override_gates_a_read_only_tool_for_its_role() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[("c1", "t.r1", json!({"q": 1}))])]);
    let rt = runtime(
        Runtime::in_memory(),
        model,
        &probe,
        &[("t.r1", ro())],
        with_policy(json!({"hitl": {"tools": {"overrides": {
            "t.r1": {"mode": "always_ask", "requiredRole": "senior"}}}}})),
    );
    let run = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &run).await;
    assert_eq!(approval.required_role, ReviewerRole::Senior);
    assert_eq!(probe.runs("t.r1"), 0);
}

/// A tenant's rules that a test can change while a run waits.
#[derive(Debug, Default)]
struct TenantRules(Mutex<Option<HitlSpec>>);

impl TenantRules {
    fn set(&self, spec: Option<Value>) {
        *self.0.lock().unwrap() = spec.map(|s| HitlSpec::from_value(&s).unwrap());
    }
}

#[async_trait]
impl TenantApprovalPolicy<HitlSpec> for TenantRules {
    async fn hitl_policy(&self, _tenant: &str) -> Result<Option<HitlSpec>, TenantPolicyError> {
        Ok(self.0.lock().unwrap().clone())
    }
}

/// Case 40: the tenant's floor gates a tool the agent never asks for; a tenant
/// `never_ask` does not lift the agent's `always_ask`.
#[tokio::test]
async fn the_tenant_floor_gates_and_never_loosens() {
    let rules = Arc::new(TenantRules::default());
    rules.set(Some(
        json!({"tools": {"t.m1": "always_ask", "t.m2": "never_ask"}, "minReviewerRole": "senior"}),
    ));
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![
        asks(&[("c1", "t.m1", json!({}))]),
        text("one"),
        asks(&[("c2", "t.m2", json!({}))]),
    ]);
    let rt = runtime(
        Runtime::in_memory().tenant_hitl_policy(rules.clone()),
        model,
        &probe,
        &[("t.m1", mutating()), ("t.m2", mutating())],
        with_policy(json!({"hitl": {"tools": {"overrides": {
            "t.m1": "never_ask", "t.m2": "always_ask"}}}})),
    );
    let first = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &first).await;
    assert_eq!(approval.subject_ref["toolId"], "t.m1");
    assert_eq!(
        approval.required_role,
        ReviewerRole::Senior,
        "minReviewerRole raises"
    );
    assert_eq!(
        decide(&rt, &approval, DecisionKind::Approve, None).await,
        RunStatus::Completed
    );
    let second = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &second).await;
    assert_eq!(approval.subject_ref["toolId"], "t.m2");
    assert_eq!(probe.runs("t.m2"), 0);
}

/// Case 41: the tenant's `maxTimeoutMs` shortens the agent's `timeoutMs`.
#[tokio::test]
async fn the_tenant_max_timeout_caps_the_agents() {
    let rules = Arc::new(TenantRules::default());
    rules.set(Some(json!({"maxTimeoutMs": 3_600_000})));
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[("c1", "t.m1", json!({}))])]);
    let rt = runtime(
        Runtime::in_memory().tenant_hitl_policy(rules),
        model,
        &probe,
        &[("t.m1", mutating())],
        with_policy(json!({"hitl": {"tools": {}, "timeoutMs": 172_800_000}})),
    );
    let run = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &run).await;
    assert_eq!(suspended_timeout_ms(&rt, &run).await, 3_600_000);
    let created = chrono::DateTime::parse_from_rfc3339(&approval.created_at).unwrap();
    let expires =
        chrono::DateTime::parse_from_rfc3339(approval.expires_at.as_deref().unwrap()).unwrap();
    assert_eq!((expires - created).num_milliseconds(), 3_600_000);
}

/// Case 48: the gate a call parked on is kept when the rules change meanwhile: the tenant
/// rule that gated it is removed, and the reviewer's rejection still stands.
#[tokio::test]
async fn a_gate_decided_before_the_park_is_kept() {
    let rules = Arc::new(TenantRules::default());
    rules.set(Some(json!({"tools": {"t.m1": "always_ask"}})));
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[("c1", "t.m1", json!({}))])]);
    let rt = runtime(
        Runtime::in_memory().tenant_hitl_policy(rules.clone()),
        model.clone(),
        &probe,
        &[("t.m1", mutating())],
        |a| a,
    );
    let run = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &run).await;
    rules.set(None);
    let status = decide(&rt, &approval, DecisionKind::Reject, Some("no")).await;
    assert_eq!(status, RunStatus::Completed);
    assert_eq!(probe.runs("t.m1"), 0, "the rejected call did not run");
    let results = model.tool_results(1);
    assert_eq!(
        results,
        [(
            "c1".to_owned(),
            r#"{"status":"rejected","rationale":"no"}"#.to_owned()
        )]
    );
}

/// Case 49: a call whose gate was not reached before the park follows the rules in force
/// when the run resumes.
#[tokio::test]
async fn a_gate_not_reached_before_the_park_follows_the_rules_at_resume() {
    let rules = Arc::new(TenantRules::default());
    rules.set(Some(
        json!({"tools": {"t.m1": "always_ask", "t.m2": "always_ask"}}),
    ));
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.m1", json!({})),
        ("c2", "t.m2", json!({})),
    ])]);
    let rt = runtime(
        Runtime::in_memory().tenant_hitl_policy(rules.clone()),
        model,
        &probe,
        &[("t.m1", mutating()), ("t.m2", mutating())],
        |a| a,
    );
    let run = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &run).await;
    assert_eq!(approval.subject_ref["callId"], "c1");
    rules.set(None);
    let status = decide(&rt, &approval, DecisionKind::Approve, None).await;
    assert_eq!(status, RunStatus::Completed);
    assert_eq!(probe.runs("t.m1"), 1);
    assert_eq!(
        probe.runs("t.m2"),
        1,
        "c2 ran under the rules at resume: no gate"
    );
    let all = rt
        .list_approvals(&ApprovalQuery {
            tenant_id: run.tenant_id.clone(),
            run_id: Some(run.id.clone()),
            limit: 20,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
}

/// Case 53 and beyond the reference: `ask_on_first_use` remembers an approved call of the
/// same tool with the same arguments in the conversation (the reference asks every time);
/// other arguments, and `always_ask`, ask again.
#[tokio::test]
async fn ask_on_first_use_is_remembered_per_conversation_for_the_same_arguments() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![
        asks(&[
            ("c1", "t.m1", json!({"x": 1, "y": 2})),
            ("c2", "t.m1", json!({"y": 2, "x": 1})),
        ]),
        text("first"),
        asks(&[("c3", "t.m1", json!({"x": 1, "y": 2}))]),
        text("second"),
        asks(&[("c4", "t.m1", json!({"x": 2}))]),
        text("third"),
        asks(&[("c5", "t.m1", json!({"x": 1, "y": 2}))]),
    ]);
    let rt = runtime(
        Runtime::in_memory(),
        model,
        &probe,
        &[("t.m1", mutating())],
        with_policy(json!({"hitl": {"tools": {}}})),
    );
    let conv = Some("conv-1");
    let first = turn(&rt, conv).await;
    let approval = the_open_approval(&rt, &first).await;
    assert_eq!(approval.subject_ref["callId"], "c1");
    assert_eq!(
        decide(&rt, &approval, DecisionKind::Approve, None).await,
        RunStatus::Completed
    );
    assert_eq!(
        probe.runs("t.m1"),
        2,
        "c2 (same arguments) was not asked again"
    );
    assert_eq!(
        approvals(&rt, &first, ApprovalStatus::Approved).await.len(),
        1
    );

    let second = turn(&rt, conv).await;
    completed(&second);
    assert_eq!(
        probe.runs("t.m1"),
        3,
        "a later turn of the conversation is not asked"
    );

    let third = turn(&rt, conv).await;
    let other = the_open_approval(&rt, &third).await;
    assert_eq!(other.subject_ref["arguments"], json!({"x": 2}));
    assert_eq!(
        decide(&rt, &other, DecisionKind::Approve, None).await,
        RunStatus::Completed
    );

    let elsewhere = turn(&rt, Some("conv-2")).await;
    let asked = the_open_approval(&rt, &elsewhere).await;
    assert_eq!(
        asked.subject_ref["callId"], "c5",
        "another conversation asks"
    );
}

/// `always_ask` asks for every call, whatever was approved before.
#[tokio::test]
async fn always_ask_asks_every_time() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.m1", json!({"x": 1})),
        ("c2", "t.m1", json!({"x": 1})),
    ])]);
    let rt = runtime(
        Runtime::in_memory(),
        model,
        &probe,
        &[("t.m1", mutating())],
        with_policy(json!({"hitl": {"tools": {"default": "always_ask"}}})),
    );
    let run = turn(&rt, Some("conv-1")).await;
    let first = the_open_approval(&rt, &run).await;
    let status = decide(&rt, &first, DecisionKind::Approve, None).await;
    assert_eq!(status, RunStatus::Suspended, "the second call asks too");
    let run = rt.get_run(&run.id).await.unwrap();
    let second = the_open_approval(&rt, &run).await;
    assert_eq!(second.subject_ref["callId"], "c2");
    assert_eq!(probe.runs("t.m1"), 1);
    assert_eq!(
        decide(&rt, &second, DecisionKind::Approve, None).await,
        RunStatus::Completed
    );
    assert_eq!(probe.runs("t.m1"), 2);
}

// ----- before-tool guardrails as a barrier ---------------------------------------------------

use kindgi_runtime::{
    CheckError, CheckRequest, GuardrailCatalogue, GuardrailChecks, GuardrailSpec,
};
use kindgi_spec::pack_protocol::CheckResult;

/// A checks seam that passes every call and writes its verdict into the probe's log, so
/// the log shows what had started and ended by then.
#[derive(Debug)]
struct VerdictLog(Arc<Probe>);

#[async_trait]
impl GuardrailChecks for VerdictLog {
    async fn run_check(&self, request: CheckRequest<'_>) -> Result<CheckResult, CheckError> {
        let pending = request.trace["attributes"]["pendingCallId"]
            .as_str()
            .unwrap_or("?")
            .to_owned();
        self.0
            .log
            .lock()
            .unwrap()
            .push(format!("verdict {pending}"));
        Ok(CheckResult::pass())
    }
}

/// Case 32 (seed 004): the judged call waits for every call before it; the read-only calls
/// after it start only after its verdict, and run alongside it.
#[tokio::test]
async fn a_judged_call_waits_for_the_calls_before_it_and_those_after_run_alongside() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.r1", json!({})),
        ("c2", "t.r2", json!({})),
        ("c3", "t.judged", json!({})),
        ("c4", "t.r3", json!({})),
        ("c5", "t.r4", json!({})),
    ])]);
    let catalogue = GuardrailCatalogue::new();
    catalogue.insert(
        GuardrailSpec::from_value(&json!({
            "id": "acme.look", "kind": "zero-llm", "check": "acme.checks.look", "config": {},
            "action": {"on-violation": "halt"}, "stage": "before-tool",
            "scope": {"tools": ["t.judged"]},
        }))
        .unwrap(),
    );
    let rt = runtime(
        Runtime::in_memory()
            .guardrails(catalogue)
            .guardrail_checks(Arc::new(VerdictLog(probe.clone()))),
        model.clone(),
        &probe,
        &[
            ("t.r1", ro()),
            ("t.r2", ro()),
            ("t.judged", ro()),
            ("t.r3", ro()),
            ("t.r4", ro()),
        ],
        |mut a| {
            a.guardrails = vec!["acme.look".into()];
            a
        },
    );
    completed(&turn(&rt, None).await);
    let log = probe.log();
    let at = |what: &str| log.iter().position(|l| l == what).unwrap();
    let verdict = at("verdict c3");
    for before in ["end t.r1", "end t.r2"] {
        assert!(at(before) < verdict, "{before} before the verdict: {log:?}");
    }
    for after in ["start t.judged", "start t.r3", "start t.r4"] {
        assert!(at(after) > verdict, "{after} after the verdict: {log:?}");
    }
    assert!(
        at("start t.r3") < at("end t.judged") && at("start t.r4") < at("end t.judged"),
        "the read-only calls after it ran alongside it: {log:?}"
    );
    assert!(
        at("start t.r2") < at("end t.r1"),
        "r1 and r2 together: {log:?}"
    );
    assert_eq!(ids(&model.tool_results(1)), ["c1", "c2", "c3", "c4", "c5"]);
}

/// Case 58 (seed 000 `needsApprovalWhenUnattended`): in a run no person started, every call
/// of such a tool waits for a reviewer whatever the agent says; a person's run calls it.
#[tokio::test]
async fn a_tool_that_needs_approval_when_unattended_is_gated_only_unattended() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![
        asks(&[("c1", "t.send", json!({}))]),
        text("sent"),
        asks(&[("c2", "t.send", json!({}))]),
    ]);
    let rt = runtime(
        Runtime::in_memory(),
        model,
        &probe,
        &[(
            "t.send",
            json!({"mutating": true, "needsApprovalWhenUnattended": true}),
        )],
        with_policy(json!({"hitl": {"tools": {"default": "never_ask"}}})),
    );
    let attended = rt
        .start_agent_turn(
            AGENT,
            None,
            json!({"message": "go"}),
            RunOptions {
                wait: true,
                meta: kindgi_runtime::RunMeta {
                    started_by: Some("person".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    completed(&attended);
    assert_eq!(probe.runs("t.send"), 1);
    let unattended = turn(&rt, None).await;
    let approval = the_open_approval(&rt, &unattended).await;
    assert_eq!(approval.subject_ref["callId"], "c2");
    assert_eq!(probe.runs("t.send"), 1);
}

// ----- the session gate -----------------------------------------------------------------------

/// A next turn of `conversation`, as the API starts one: the user's message kept, the turn
/// counted, then the run.
async fn next_turn(
    rt: &Runtime,
    store: &kindgi_store::conversations::ConversationStore,
    conversation: &str,
) -> RunRecord {
    store
        .append_message(
            "default",
            conversation,
            kindgi_runtime::model::Role::User,
            &json!("again"),
            None,
            None,
        )
        .await
        .unwrap();
    store.bump_turn("default", conversation).await.unwrap();
    turn(rt, Some(conversation)).await
}

/// Case 54: `afterTurns: 2` — the first two turns run; the third waits for a reviewer
/// before its model is called; rejected, it fails `hitl-rejected`; the next one, approved,
/// runs.
#[tokio::test]
async fn past_after_turns_a_turn_waits_for_a_reviewer_before_its_model_call() {
    let (b, db) = builder(Backend::Sqlite).await;
    let store =
        kindgi_store::conversations::ConversationStore::new(db.as_ref().unwrap().db.clone());
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![text("one"), text("two"), text("four")]);
    let rt = runtime(
        b,
        model.clone(),
        &probe,
        &[],
        with_policy(json!({"hitl": {"afterTurns": 2, "defaultReviewerRole": "senior"}})),
    );
    let first = turn(&rt, None).await;
    completed(&first);
    let id = first
        .meta
        .agent
        .as_ref()
        .unwrap()
        .conversation_id
        .clone()
        .unwrap();
    completed(&next_turn(&rt, &store, &id).await);
    let calls = || model.seen.lock().unwrap().len();
    assert_eq!(calls(), 2);

    let third = next_turn(&rt, &store, &id).await;
    let approval = the_open_approval(&rt, &third).await;
    assert_eq!(calls(), 2, "no model call before the reviewer's answer");
    assert_eq!(approval.subject_kind, "agent-turn:session-hitl-gate");
    assert_eq!(approval.required_role, ReviewerRole::Senior);
    assert_eq!(
        approval.subject_ref,
        json!({"conversationId": id, "agentId": AGENT, "agentVersion": "0.0.0", "turnCount": 2, "threshold": 2})
    );
    assert_eq!(
        approval.description.as_deref(),
        Some("Conversation reached HITL threshold: 2 turns >= 2")
    );
    assert_eq!(
        approval.wait_token_id.as_deref(),
        Some(kindgi_runtime::agent::hitl::session_gate_token(&third.id, 2).as_str())
    );
    assert_eq!(
        decide(&rt, &approval, DecisionKind::Reject, Some("too long")).await,
        RunStatus::Failed
    );
    let failed = rt.get_run(&third.id).await.unwrap();
    assert_eq!(
        failed.failure_message.as_deref(),
        Some("hitl-rejected: Reviewer rejected the session-HITL gate: too long")
    );
    assert_eq!(failed.failure().unwrap().code, "hitl-rejected");
    assert_eq!(calls(), 2);

    let fourth = next_turn(&rt, &store, &id).await;
    let approval = the_open_approval(&rt, &fourth).await;
    assert_eq!(approval.subject_ref["turnCount"], 3);
    assert_eq!(
        decide(&rt, &approval, DecisionKind::Approve, None).await,
        RunStatus::Completed
    );
    assert_eq!(calls(), 3);
    assert_eq!(
        rt.get_run(&fourth.id).await.unwrap().output.unwrap()["text"],
        "four"
    );
    cleanup(db).await;
}

// ----- a pausing call in an agent step ------------------------------------------------------

use kindgi_runtime::{ToolCallError, ToolDispatcher, ToolTransport};
use kindgi_tools::dispatch::CallOutcome;
use kindgi_tools::{ToolContext, WaitTicket};

/// A pausing tool: hands its ticket to "the other system" (the test) and pauses.
#[derive(Debug)]
struct Asks {
    manifest: kindgi_spec::ToolManifest,
    tickets: Mutex<Vec<WaitTicket>>,
}

#[async_trait]
impl ToolDispatcher for Asks {
    fn manifest(&self) -> &kindgi_spec::ToolManifest {
        &self.manifest
    }
    fn transport(&self) -> ToolTransport {
        ToolTransport::Pack
    }
    async fn call(&self, _input: Value, _ctx: ToolContext) -> Result<Value, ToolCallError> {
        panic!("a pausing tool is called with call_or_pause")
    }
    async fn call_or_pause(
        &self,
        _input: Value,
        ctx: ToolContext,
    ) -> Result<CallOutcome, ToolCallError> {
        self.tickets.lock().unwrap().push(ctx.wait.clone().unwrap());
        Ok(CallOutcome::Paused { timeout_ms: None })
    }
}

/// A pausing call in an agent step goes through the runtime's pause: the run waits for the
/// other system's answer, which the model then gets as the call's result; the call before it
/// does not run again and the one after it runs once.
#[tokio::test]
async fn an_agents_pausing_call_waits_for_the_answer_which_is_its_result() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![asks(&[
        ("c1", "t.r1", json!({})),
        ("c2", "t.ask", json!({"q": "ok?"})),
        ("c3", "t.r2", json!({})),
    ])]);
    let rt = runtime(
        Runtime::in_memory(),
        model.clone(),
        &probe,
        &[("t.r1", ro()), ("t.r2", ro())],
        |a| a.with_tools(["t.r1", "t.ask", "t.r2"]),
    );
    let ask = Arc::new(Asks {
        manifest: common::manifest(
            "t.ask",
            json!({"mutating": false, "pauses": true,
                   "output": {"type": "object", "properties": {"answer": {"type": "string"}},
                              "required": ["answer"]}}),
        ),
        tickets: Mutex::new(Vec::new()),
    });
    rt.tools().insert(ask.clone());
    let run = turn(&rt, None).await;
    assert_eq!(
        run.status,
        RunStatus::Suspended,
        "{:?}",
        run.failure_message
    );
    assert_eq!((probe.runs("t.r1"), probe.runs("t.r2")), (1, 0));
    let ticket = ask.tickets.lock().unwrap()[0].clone();
    let answered = rt
        .answer_wait(&run.tenant_id, &ticket.token, json!({"answer": "yes"}))
        .await
        .unwrap();
    assert_eq!(answered.run_status, RunStatus::Completed);
    assert_eq!((probe.runs("t.r1"), probe.runs("t.r2")), (1, 1));
    assert_eq!(
        ask.tickets.lock().unwrap().len(),
        1,
        "the tool was asked once"
    );
    let results = model.tool_results(1);
    assert_eq!(ids(&results), ["c1", "c2", "c3"]);
    assert_eq!(results[1].1, r#"{"answer":"yes"}"#);
}

/// A model that numbers its calls afresh each step (`c1` again in step 2) gets each call run
/// and gated on its own: the second `c1` is not mistaken for the first, which ran.
#[tokio::test]
async fn a_call_id_reused_in_a_later_step_is_a_call_of_its_own() {
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![
        asks(&[("c1", "t.r1", json!({"n": 1}))]),
        asks(&[("c1", "t.r1", json!({"n": 2}))]),
    ]);
    let rt = runtime(
        Runtime::in_memory(),
        model.clone(),
        &probe,
        &[("t.r1", ro())],
        |a| a,
    );
    completed(&turn(&rt, None).await);
    assert_eq!(probe.runs("t.r1"), 2, "both calls ran: {:?}", probe.log());
    let results = model.tool_results(2);
    assert_eq!(ids(&results), ["c1", "c1#2"]);
    assert!(results[1].1.contains("\"n\":2"), "{results:?}");

    // Gated with always_ask, the reused id asks again rather than riding the first yes.
    let probe = Arc::new(Probe::default());
    let model = Script::new(vec![
        asks(&[("c1", "t.m", json!({"n": 1}))]),
        asks(&[("c1", "t.m", json!({"n": 1}))]),
    ]);
    let rt = runtime(
        Runtime::in_memory(),
        model,
        &probe,
        &[("t.m", mutating())],
        with_policy(json!({"hitl": {"tools": {"default": "always_ask"}}})),
    );
    let run = turn(&rt, None).await;
    assert_eq!(run.status, RunStatus::Suspended);
    let first = the_open_approval(&rt, &run).await;
    let status = decide(&rt, &first, DecisionKind::Approve, None).await;
    assert_eq!(status, RunStatus::Suspended, "the second call asks too");
    let run = rt.get_run(&run.id).await.unwrap();
    let second = the_open_approval(&rt, &run).await;
    assert_ne!(first.id, second.id);
    assert_eq!(second.subject_ref["callId"], "c1#2");
    assert_eq!(probe.runs("t.m"), 1);
}
