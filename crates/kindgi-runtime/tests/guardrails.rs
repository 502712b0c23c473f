//! After-turn guardrails of agent turns (runtime.md §7, cases 69–78) with a scripted model,
//! real tools and the real stores: what blocks a turn and with which message, what is only
//! reported in `violations`, what is skipped by scope, the built-in checks' reasons, a
//! pack-style check through the runtime's `GuardrailChecks` seam (fail closed when it can't
//! run), the verdict recorded once (a pack check is not called again, also when a stopped
//! runtime's turn resumes in another), `guardrail.violated` journaled per violation; and
//! before-tool guardrails (case 79, our `stage: "before-tool"`): the refused call never
//! runs and the model gets the refusal as its result.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use common::{ALL, Backend, builder, cleanup, counting_tool, read_only};
use kindgi_runtime::model::{ModelRequest, ModelResponse, Role};
use kindgi_runtime::{
    AgentSpec, AgentTool, CheckError, CheckRequest, GuardrailCatalogue, GuardrailChecks,
    GuardrailSpec, JournalKind, ModelError, ModelProvider, RunOptions, RunRecord, RunStatus,
    Runtime, RuntimeBuilder,
};
use kindgi_spec::pack_protocol::CheckResult;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A model that asks for `calls` (tool names, one step each call batch) and then answers
/// `text`.
#[derive(Debug)]
struct Scripted {
    /// Each step's tool calls; after them, the final answer.
    steps: Vec<Vec<&'static str>>,
    text: String,
    step: AtomicUsize,
    /// `(call id, content)` of each tool result the model was handed, last request's.
    results: Mutex<Vec<(String, String)>>,
}

fn scripted(steps: Vec<Vec<&'static str>>, text: &str) -> Arc<Scripted> {
    Arc::new(Scripted {
        steps,
        text: text.to_owned(),
        step: AtomicUsize::new(0),
        results: Mutex::new(Vec::new()),
    })
}

impl Scripted {
    /// The content the model got for call `id`.
    fn result_of(&self, id: &str) -> Value {
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

fn guardrail(id: &str, check: &str, config: Value, action: &str) -> GuardrailSpec {
    GuardrailSpec::from_value(&json!({
        "id": id, "kind": "zero-llm", "check": check, "config": config,
        "action": {"on-violation": action},
    }))
    .unwrap()
}

/// How many times each tool ran.
#[derive(Debug, Clone, Default)]
struct Counts(Arc<Mutex<HashMap<String, Arc<AtomicUsize>>>>);

impl Counts {
    fn of(&self, tool: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .get(tool)
            .map_or(0, |c| c.load(Ordering::SeqCst))
    }
    fn total(&self) -> usize {
        ["t.a", "t.b", "t.x"].iter().map(|t| self.of(t)).sum()
    }
}

/// A runtime over `b` with tools `t.a`, `t.b`, `t.x` (read-only, counted), the agent
/// `t.agent` listing them and `guardrails`, and the model `model`.
fn runtime(
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

async fn turn(rt: &Runtime) -> RunRecord {
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

fn failure(run: &RunRecord) -> &str {
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    run.failure_message.as_deref().unwrap()
}

/// The step output's `violations` (the turn's output carries the step's).
fn violations(run: &RunRecord) -> Vec<Value> {
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

async fn memory(
    model: Arc<Scripted>,
    guardrails: &[GuardrailSpec],
    agent_guardrails: &[&str],
) -> (Runtime, Counts) {
    let (b, _) = builder(Backend::Memory).await;
    runtime(b, model, guardrails, agent_guardrails)
}

#[tokio::test]
async fn a_failing_halt_guardrail_blocks_the_turn_with_its_reason() {
    // Case 69, on every store: the turn fails, and the violation is journaled once.
    for backend in ALL {
        let (b, db) = builder(backend).await;
        let (rt, _) = runtime(
            b,
            scripted(vec![vec!["t.a", "t.b", "t.x"]], "done"),
            &[guardrail(
                "g.few",
                "max-tool-calls",
                json!({"max": 2}),
                "halt",
            )],
            &["g.few"],
        );
        let run = turn(&rt).await;
        assert!(
            failure(&run).ends_with(
                "guardrail-violation: Turn blocked by guardrail 'g.few': expected <= 2 tool calls, saw 3"
            ),
            "{backend:?}: {}",
            failure(&run)
        );
        let journal = rt.journal(&run.id, None, None).await.unwrap();
        let violated: Vec<_> = journal
            .iter()
            .filter(|e| e.kind == JournalKind::GuardrailViolated)
            .collect();
        assert_eq!(violated.len(), 1, "{backend:?}: {journal:?}");
        let p = violated[0].payload.as_ref().unwrap();
        assert_eq!(p["guardrailId"], "g.few");
        assert_eq!(p["action"], "halt");
        assert_eq!(p["severity"], "error");
        assert_eq!(p["reason"], "expected <= 2 tool calls, saw 3");
        assert_eq!(p["stage"], "after-turn");
        cleanup(db).await;
    }
}

#[tokio::test]
async fn log_only_and_other_actions_are_reported_not_acted_on() {
    // Cases 70 and 71.
    let (rt, _) = memory(
        scripted(vec![], "no citations here"),
        &[
            guardrail("g.cite", "must-cite", json!({}), "log-only"),
            GuardrailSpec::from_value(&json!({
                "id": "g.retry", "kind": "zero-llm", "check": "required-substring",
                "config": {"patterns": ["Regards"]}, "action": {"on-violation": "retry"},
                "severity": "warn",
            }))
            .unwrap(),
            guardrail(
                "g.esc",
                "forbidden-substring",
                json!({"patterns": ["HERE"]}),
                "escalate",
            ),
            guardrail(
                "g.comp",
                "output-matches",
                json!({"pattern": "^yes"}),
                "compensate",
            ),
            guardrail("g.pass", "max-tool-calls", json!({}), "halt"),
        ],
        &["g.cite", "g.retry", "g.esc", "g.comp", "g.pass"],
    )
    .await;
    let run = turn(&rt).await;
    let v = violations(&run);
    assert_eq!(
        v[0],
        json!({"guardrailId": "g.cite", "action": "log-only", "severity": "error",
            "result": {"passed": false, "reason": "expected >= 1 citations, found 0",
                "attributes": {"citationCount": 0}}})
    );
    let summary: Vec<(String, String, String)> = v
        .iter()
        .map(|x| {
            (
                x["guardrailId"].as_str().unwrap().to_owned(),
                x["action"].as_str().unwrap().to_owned(),
                x["result"]["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        summary[1..],
        [
            (
                "g.retry".into(),
                "retry".into(),
                "output missing required pattern(s): Regards".into()
            ),
            (
                "g.esc".into(),
                "escalate".into(),
                "output contains forbidden pattern(s): HERE".into()
            ),
            (
                "g.comp".into(),
                "compensate".into(),
                "output did not match /^yes/".into()
            ),
        ]
    );
    assert_eq!(v[1]["severity"], "warn");
    let journal = rt.journal(&run.id, None, None).await.unwrap();
    let n = journal
        .iter()
        .filter(|e| e.kind == JournalKind::GuardrailViolated)
        .count();
    assert_eq!(
        n, 4,
        "one entry per violation, none for the one that passed"
    );
}

#[tokio::test]
async fn two_halting_guardrails_are_named_together() {
    // Case 72.
    let (rt, _) = memory(
        scripted(vec![vec!["t.b", "t.a"]], ""),
        &[
            guardrail(
                "g.order",
                "tool-order",
                json!({"sequence": ["t.a", "t.b"]}),
                "halt",
            ),
            guardrail("g.cite", "must-cite", json!({}), "halt"),
        ],
        &["g.order", "g.cite"],
    )
    .await;
    let run = turn(&rt).await;
    assert!(
        failure(&run).ends_with(
            "guardrail-violation: Turn blocked by 2 guardrails: 'g.order' (expected tool-call subsequence [t.a, t.b] not observed); 'g.cite' (output empty; nothing to cite)"
        ),
        "{}",
        failure(&run)
    );
}

#[tokio::test]
async fn a_halt_guardrail_whose_check_cannot_run_blocks() {
    // Case 73: an unknown check (no checks seam bound) fails closed; so does a bad config.
    let (rt, _) = memory(
        scripted(vec![], "fine"),
        &[guardrail(
            "g.mystery",
            "acme.checks.nope",
            json!({}),
            "halt",
        )],
        &["g.mystery"],
    )
    .await;
    let run = turn(&rt).await;
    assert!(
        failure(&run).ends_with(
            "guardrail-violation: Turn blocked: guardrail 'g.mystery' couldn't run its check (unknown-check: Guardrail \"g.mystery\" references unregistered check \"acme.checks.nope\")"
        ),
        "{}",
        failure(&run)
    );
    let (rt, _) = memory(
        scripted(vec![], "fine"),
        &[
            guardrail("g.bad", "never-call-tool", json!({"tool": ["t.a"]}), "halt"),
            guardrail("g.quiet", "acme.checks.nope", json!({}), "log-only"),
        ],
        &["g.bad", "g.quiet"],
    )
    .await;
    let run = turn(&rt).await;
    assert!(
        failure(&run).ends_with(
            "Turn blocked: guardrail 'g.bad' couldn't run its check (invalid-check-config: Guardrail \"g.bad\"'s config doesn't fit check \"never-call-tool\": config.tools is required)"
        ),
        "{}",
        failure(&run)
    );
    // A log-only guardrail whose check can't run neither blocks nor counts as a violation.
    let (rt, _) = memory(
        scripted(vec![], "fine"),
        &[guardrail(
            "g.quiet",
            "acme.checks.nope",
            json!({}),
            "log-only",
        )],
        &["g.quiet"],
    )
    .await;
    assert!(violations(&turn(&rt).await).is_empty());
}

#[tokio::test]
async fn scope_skips_ci_only_and_other_agents() {
    // Case 74: each of these would block if it applied.
    let blocking = |id: &str, scope: Value| {
        GuardrailSpec::from_value(&json!({
            "id": id, "kind": "zero-llm", "check": "must-cite",
            "action": {"on-violation": "halt"}, "scope": scope,
        }))
        .unwrap()
    };
    let (rt, _) = memory(
        scripted(vec![], ""),
        &[
            blocking("g.ci", json!({"when": "ci-only"})),
            blocking("g.other-agent", json!({"agents": ["t.someone-else"]})),
            blocking("g.other-tenant", json!({"tenants": ["acme"]})),
            blocking("g.in-a-flow", json!({"flows": ["t.some-flow"]})),
        ],
        &["g.ci", "g.other-agent", "g.other-tenant", "g.in-a-flow"],
    )
    .await;
    assert!(violations(&turn(&rt).await).is_empty());
    // Runtime-only and this agent's scope apply.
    let (rt, _) = memory(
        scripted(vec![], ""),
        &[
            blocking("g.rt", json!({"when": "runtime-only"})),
            blocking("g.mine", json!({"agents": ["t.agent"]})),
        ],
        &["g.rt", "g.mine"],
    )
    .await;
    assert!(failure(&turn(&rt).await).contains("Turn blocked by 2 guardrails: 'g.rt'"));
}

#[tokio::test]
async fn an_unknown_guardrail_id_fails_the_turn() {
    // Case 75.
    let (rt, count) = memory(
        scripted(vec![vec!["t.a"]], "x"),
        &[guardrail("g.known", "max-tool-calls", json!({}), "halt")],
        &["g.known", "g.missing", "g.gone"],
    )
    .await;
    let run = turn(&rt).await;
    assert!(
        failure(&run).ends_with(
            "unresolved-guardrail: Agent \"t.agent\" references guardrails not in the registry: g.missing, g.gone"
        ),
        "{}",
        failure(&run)
    );
    assert_eq!(count.total(), 0, "the turn failed before any tool ran");
}

#[tokio::test]
async fn built_in_checks_say_what_the_reference_says() {
    // Cases 76–78.
    // (the model's steps, its final text, the guardrail, the reason it blocks or None)
    type Case = (
        Vec<Vec<&'static str>>,
        &'static str,
        GuardrailSpec,
        Option<&'static str>,
    );
    let cases: Vec<Case> = vec![
        (
            vec![vec!["t.a"], vec!["t.b"]],
            "x",
            guardrail(
                "g",
                "never-call-tool",
                json!({"tools": ["t.b", {"id": "t.a", "version": "^1"}]}),
                "halt",
            ),
            Some("forbidden tool(s) invoked: t.a, t.b"),
        ),
        (
            vec![vec!["t.x"]],
            "x",
            guardrail(
                "g",
                "never-call-tool",
                json!({"tools": [{"id": "t.a"}]}),
                "halt",
            ),
            None,
        ),
        (
            vec![],
            "",
            guardrail("g", "must-cite", json!({}), "halt"),
            Some("output empty; nothing to cite"),
        ),
        (
            vec![],
            "see [1] and [2]",
            guardrail("g", "must-cite", json!({"minCitations": 2}), "halt"),
            None,
        ),
        (
            vec![],
            "",
            guardrail(
                "g",
                "forbidden-substring",
                json!({"patterns": ["x"]}),
                "halt",
            ),
            None,
        ),
        (
            vec![],
            "Best REGARDS",
            guardrail(
                "g",
                "required-substring",
                json!({"patterns": ["regards"]}),
                "halt",
            ),
            None,
        ),
        (
            vec![],
            "Best REGARDS",
            guardrail(
                "g",
                "required-substring",
                json!({"patterns": ["regards"], "caseSensitive": true}),
                "halt",
            ),
            Some("output missing required pattern(s): regards"),
        ),
        (
            vec![vec!["t.a", "t.x", "t.b"]],
            "x",
            guardrail(
                "g",
                "tool-order",
                json!({"sequence": ["t.a", "t.b"]}),
                "halt",
            ),
            None,
        ),
        (
            vec![vec!["t.b"], vec!["t.a"]],
            "x",
            guardrail(
                "g",
                "tool-order",
                json!({"sequence": ["t.a", "t.b"]}),
                "halt",
            ),
            Some("expected tool-call subsequence [t.a, t.b] not observed"),
        ),
        (
            vec![],
            "Hello World",
            guardrail(
                "g",
                "output-matches",
                json!({"pattern": "^hello", "flags": "i"}),
                "halt",
            ),
            None,
        ),
        (
            vec![],
            "card 4111",
            guardrail(
                "g",
                "output-matches",
                json!({"pattern": "\\d{4}", "negate": true}),
                "halt",
            ),
            Some("output matched forbidden pattern /\\d{4}/"),
        ),
        (
            vec![vec!["t.a"], vec!["t.a"]],
            "x",
            guardrail("g", "max-tool-calls", json!({"max": 2}), "halt"),
            None,
        ),
    ];
    for (i, (steps, text, g, blocked)) in cases.into_iter().enumerate() {
        let (rt, _) = memory(scripted(steps, text), &[g], &["g"]).await;
        let run = turn(&rt).await;
        match blocked {
            Some(reason) => assert!(
                failure(&run).ends_with(&format!("Turn blocked by guardrail 'g': {reason}")),
                "case {i}: {}",
                failure(&run)
            ),
            None => assert!(violations(&run).is_empty(), "case {i}"),
        }
    }
    // A pattern that does not compile is the check failing (fail closed for halt).
    let (rt, _) = memory(
        scripted(vec![], "x"),
        &[guardrail(
            "g",
            "output-matches",
            json!({"pattern": "(unclosed"}),
            "halt",
        )],
        &["g"],
    )
    .await;
    let msg = turn(&rt).await.failure_message.unwrap();
    assert!(
        msg.contains("couldn't run its check (check-failed: guardrail \"g\": its check threw: config.pattern isn't a regular expression that compiles"),
        "{msg}"
    );
}

/// A checks seam like the host's: answers `acme.checks.*`, counts calls, records traces.
#[derive(Debug, Default)]
struct AcmeChecks {
    calls: AtomicUsize,
    traces: Mutex<Vec<Value>>,
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

#[tokio::test]
async fn a_pack_check_judges_the_turn_through_the_checks_seam() {
    for backend in [Backend::Memory, Backend::Sqlite] {
        let (b, db) = builder(backend).await;
        let checks = Arc::new(AcmeChecks::default());
        let (rt, _) = runtime(
            b.guardrail_checks(checks.clone()),
            scripted(vec![vec!["t.a"]], "hi"),
            &[guardrail(
                "acme.min-length",
                "acme.checks.min-length",
                json!({"minLength": 5}),
                "halt",
            )],
            &["acme.min-length"],
        );
        let run = turn(&rt).await;
        assert!(
            failure(&run).ends_with("Turn blocked by guardrail 'acme.min-length': too short"),
            "{}",
            failure(&run)
        );
        // The trace: runtime mode, this run and agent, the call that ran with its result.
        let trace = checks.traces.lock().unwrap()[0].clone();
        assert_eq!(trace["mode"], "runtime");
        assert_eq!(trace["runId"], json!(run.id));
        assert_eq!(trace["agentId"], "t.agent");
        assert_eq!(trace["output"], "hi");
        assert_eq!(trace["toolCalls"][0]["toolId"], "t.a");
        assert_eq!(trace["toolCalls"][0]["toolName"], "t.a");
        assert_eq!(trace["toolResults"][0]["toolCallId"], "s0c0");
        assert_eq!(trace["toolResults"][0]["output"], json!({"ok": true}));
        assert!(
            trace.get("flowId").is_none(),
            "an agent turn run has no flow"
        );
        assert_eq!(checks.calls.load(Ordering::SeqCst), 1);
        cleanup(db).await;
    }
    // Unreachable: the halt guardrail fails closed, naming the code.
    let (b, _) = builder(Backend::Memory).await;
    let (rt, _) = runtime(
        b.guardrail_checks(Arc::new(AcmeChecks::default())),
        scripted(vec![], "long enough"),
        &[guardrail(
            "acme.down",
            "acme.checks.down",
            json!({}),
            "halt",
        )],
        &["acme.down"],
    );
    assert!(
        failure(&turn(&rt).await).ends_with(
            "Turn blocked: guardrail 'acme.down' couldn't run its check (pack-unreachable: unavailable: the pack service is not serving; the check did not run)"
        )
    );
}

#[tokio::test]
async fn a_turn_in_a_flow_is_judged_with_the_flow_id() {
    let (b, _) = builder(Backend::Memory).await;
    let checks = Arc::new(AcmeChecks::default());
    let scoped = GuardrailSpec::from_value(&json!({
        "id": "acme.min-length", "kind": "zero-llm", "check": "acme.checks.min-length",
        "config": {"minLength": 50}, "action": {"on-violation": "log-only"},
        "scope": {"flows": ["t.turn"]},
    }))
    .unwrap();
    let (rt, _) = runtime(
        b.guardrail_checks(checks.clone()),
        scripted(vec![], "short"),
        &[scoped],
        &["acme.min-length"],
    );
    rt.flows()
        .insert_json(
            &json!({"id": "t.turn", "version": "1.0.0",
                "nodes": [{"id": "n", "kind": "agent", "ref": "t.agent"}],
                "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]})
            .to_string(),
        )
        .unwrap();
    let run = rt
        .start_run(
            "t.turn",
            None,
            json!({"message": "hi"}),
            RunOptions {
                wait: true,
                ..RunOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(checks.traces.lock().unwrap()[0]["flowId"], "t.turn");
    let out = serde_json::to_string(&run.output).unwrap();
    assert!(out.contains("\"guardrailId\":\"acme.min-length\""), "{out}");
}

// ----- before-tool guardrails (seed 004, our `stage: "before-tool"`) ---------------------

fn before_tool(
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

#[tokio::test]
async fn a_refused_call_does_not_run_and_the_model_gets_the_refusal() {
    // Case 79, on every store: the judged call k is refused; the calls around it run.
    for backend in ALL {
        let (b, db) = builder(backend).await;
        let model = scripted(vec![vec!["t.a", "t.b", "t.x"]], "done");
        let (rt, count) = runtime(
            b,
            model.clone(),
            &[before_tool(
                "g.no-b",
                "never-call-tool",
                json!({"tools": ["t.b"]}),
                "halt",
                &[],
            )],
            &["g.no-b"],
        );
        let run = turn(&rt).await;
        assert_eq!(run.status, RunStatus::Completed, "{backend:?}: {run:?}");
        assert_eq!(
            count.of("t.b"),
            0,
            "{backend:?}: the refused call never ran"
        );
        assert_eq!((count.of("t.a"), count.of("t.x")), (1, 1), "{backend:?}");
        assert_eq!(
            model.result_of("s0c1"),
            json!({
                "status": "refused",
                "guardrailId": "g.no-b",
                "reason": "forbidden tool(s) invoked: t.b",
                "message": "Call blocked by guardrail 'g.no-b': the tool was not run. Don't retry it with the same arguments.",
            }),
            "{backend:?}"
        );
        assert_eq!(model.result_of("s0c0"), json!({"ok": true}));
        let journal = rt.journal(&run.id, None, None).await.unwrap();
        let violated: Vec<&Value> = journal
            .iter()
            .filter(|e| e.kind == JournalKind::GuardrailViolated)
            .filter_map(|e| e.payload.as_ref())
            .collect();
        assert_eq!(violated.len(), 1, "{backend:?}");
        assert_eq!(violated[0]["stage"], "before-tool");
        assert_eq!(violated[0]["callId"], "s0c1");
        // The verdict is recorded, so a resumed step reads it instead of judging again.
        assert!(journal.iter().any(|e| {
            e.kind == JournalKind::ValueRecorded
                && e.payload
                    .as_ref()
                    .is_some_and(|p| p["key"] == "before-tool:s0c1:t.b")
        }));
        cleanup(db).await;
    }
}

#[tokio::test]
async fn a_before_tool_check_sees_the_calls_that_ran_and_the_pending_one_last() {
    let (b, _) = builder(Backend::Memory).await;
    let checks = Arc::new(AcmeChecks::default());
    let model = scripted(vec![vec!["t.a"], vec!["t.x", "t.b"]], "done");
    let (rt, count) = runtime(
        b.guardrail_checks(checks.clone()),
        model.clone(),
        // Judges only t.b's calls; passes (the output it reads is absent, min 0).
        &[before_tool(
            "acme.min-length",
            "acme.checks.min-length",
            json!({"minLength": 0}),
            "halt",
            &["t.b"],
        )],
        &["acme.min-length"],
    );
    let run = turn(&rt).await;
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(count.total(), 3);
    assert_eq!(
        checks.calls.load(Ordering::SeqCst),
        1,
        "only t.b's call is judged"
    );
    let trace = checks.traces.lock().unwrap()[0].clone();
    let called: Vec<&str> = trace["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["toolId"].as_str().unwrap())
        .collect();
    assert_eq!(
        called,
        ["t.a", "t.x", "t.b"],
        "the calls before it ran first"
    );
    let answered: Vec<&str> = trace["toolResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(answered, ["s0c0", "s1c0"], "no result for the pending call");
    assert_eq!(
        trace["attributes"],
        json!({"stage": "before-tool", "pendingCallId": "s1c1"})
    );
    assert!(trace.get("output").is_none());
}

#[tokio::test]
async fn before_tool_built_ins_count_the_pending_call_and_fail_closed() {
    // max-tool-calls counts the pending call: the third call of the turn is refused.
    let model = scripted(vec![vec!["t.a"], vec!["t.a", "t.x"]], "done");
    let (rt, count) = memory(
        model.clone(),
        &[before_tool(
            "g.two",
            "max-tool-calls",
            json!({"max": 2}),
            "halt",
            &[],
        )],
        &["g.two"],
    )
    .await;
    let run = turn(&rt).await;
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!((count.of("t.a"), count.of("t.x")), (2, 0));
    assert_eq!(
        model.result_of("s1c1")["reason"],
        "expected <= 2 tool calls, saw 3"
    );
    // A check that can't run refuses a halt guardrail's call (fail closed) …
    let model = scripted(vec![vec!["t.a"]], "done");
    let (rt, count) = memory(
        model.clone(),
        &[before_tool(
            "g.lost",
            "acme.checks.nope",
            json!({}),
            "halt",
            &[],
        )],
        &["g.lost"],
    )
    .await;
    let run = turn(&rt).await;
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(count.of("t.a"), 0);
    assert_eq!(
        model.result_of("s0c0")["reason"],
        "couldn't run its check (unknown-check: Guardrail \"g.lost\" references unregistered check \"acme.checks.nope\")"
    );
    // … and a log-only one records the violation and lets the call run.
    let model = scripted(vec![vec!["t.a"]], "done");
    let (rt, count) = memory(
        model.clone(),
        &[before_tool(
            "g.watch",
            "never-call-tool",
            json!({"tools": ["t.a"]}),
            "log-only",
            &[],
        )],
        &["g.watch"],
    )
    .await;
    let run = turn(&rt).await;
    assert_eq!(count.of("t.a"), 1);
    assert_eq!(model.result_of("s0c0"), json!({"ok": true}));
    let journal = rt.journal(&run.id, None, None).await.unwrap();
    assert!(
        journal
            .iter()
            .any(|e| e.kind == JournalKind::GuardrailViolated)
    );
    // A before-tool guardrail does not judge the final answer.
    assert!(violations(&run).is_empty());
}

/// A model that asks for `t.b` once, then (on its second call) signals `entered` and never
/// answers: the runtime is stopped there.
#[derive(Debug)]
struct StopsAfterTheCall {
    step: AtomicUsize,
    entered: Arc<tokio::sync::Notify>,
}

#[async_trait]
impl ModelProvider for StopsAfterTheCall {
    fn provider_id(&self) -> &str {
        "test-scripted"
    }
    fn model(&self) -> &str {
        "scripted"
    }
    async fn invoke(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.step.fetch_add(1, Ordering::SeqCst) == 0 {
            let answer = json!({"text": "", "finishReason": "tool-use",
                "toolCalls": [{"id": "s0c0", "name": "t.b", "arguments": {}}]});
            return Ok(serde_json::from_value(answer).unwrap());
        }
        self.entered.notify_one();
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_resumed_turn_reads_its_verdicts_back_instead_of_judging_again() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let (b, db) = builder(backend).await;
        let test_db = db.as_ref().unwrap().db.clone();
        let judge = || {
            before_tool(
                "acme.min-length",
                "acme.checks.min-length",
                json!({"minLength": 1}),
                "halt",
                &["t.b"],
            )
        };
        let entered = Arc::new(tokio::sync::Notify::new());
        let first_checks = Arc::new(AcmeChecks::default());
        let catalogue = GuardrailCatalogue::new();
        catalogue.insert(judge());
        let rt = b
            .model(Arc::new(StopsAfterTheCall {
                step: AtomicUsize::new(0),
                entered: entered.clone(),
            }))
            .guardrails(catalogue)
            .guardrail_checks(first_checks.clone())
            .build();
        let b_runs = Arc::new(AtomicUsize::new(0));
        rt.tools()
            .insert_tool(counting_tool("t.b", read_only(), b_runs.clone(), |_| {
                json!({})
            }));
        let mut agent = AgentSpec::new("t.agent").with_tools([AgentTool::new("t.b", "*")]);
        agent.guardrails = vec!["acme.min-length".into()];
        rt.agents().insert(agent.clone());
        let run = rt
            .start_agent_turn(
                "t.agent",
                None,
                json!({"message": "hi"}),
                RunOptions::default(),
            )
            .await
            .unwrap();
        entered.notified().await;
        rt.shutdown(std::time::Duration::from_secs(1)).await;
        // The pending call has no output, so `min-length` refused it: judged once, not run.
        assert_eq!(first_checks.calls.load(Ordering::SeqCst), 1, "{backend:?}");
        assert_eq!(b_runs.load(Ordering::SeqCst), 0, "{backend:?}");

        let second_checks = Arc::new(AcmeChecks::default());
        let catalogue = GuardrailCatalogue::new();
        catalogue.insert(judge());
        let rt2 = Runtime::with_database(test_db.clone())
            .model(scripted(vec![], "done"))
            .guardrails(catalogue)
            .guardrail_checks(second_checks.clone())
            .build();
        rt2.tools()
            .insert_tool(counting_tool("t.b", read_only(), b_runs.clone(), |_| {
                json!({})
            }));
        rt2.agents().insert(agent);
        let resumed = rt2.recover().await.unwrap();
        assert!(resumed.contains(&run.id), "{backend:?}: {resumed:?}");
        let done = rt2.wait_for_run(&run.id).await.unwrap();
        assert_eq!(done.status, RunStatus::Completed, "{backend:?}: {done:?}");
        assert_eq!(
            second_checks.calls.load(Ordering::SeqCst),
            0,
            "{backend:?}: the recorded verdict is read back"
        );
        assert_eq!(
            b_runs.load(Ordering::SeqCst),
            0,
            "{backend:?}: the refused call never runs"
        );
        let violated = rt2
            .journal(&run.id, None, None)
            .await
            .unwrap()
            .iter()
            .filter(|e| e.kind == JournalKind::GuardrailViolated)
            .count();
        assert_eq!(violated, 1, "{backend:?}: journaled once");
        cleanup(db).await;
    }
}
