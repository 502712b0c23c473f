//! Runs end to end on the memory store: dry runs, edge policies, loops, fanout, sub-flows,
//! bad input and cancellation. The tests that run on every store (a three-step flow's
//! journal, a dry run's refusal on SQLite and PostgreSQL too) are kindgi-host's
//! `tests/runs.rs`, which composes the database stores.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/runs.rs"]
mod fixture;
mod support;

use fixture::{chain, dry, wait};
use kindgi_runtime::model::{ModelError, ModelProvider, ModelRequest, ModelResponse};
use kindgi_runtime::{
    AgentSpec, JournalEntry, JournalKind, RunOptions, RunStatus, Runtime, RuntimeError,
};
use kindgi_tools::HandlerError;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use support::{counting_tool, read_only, tool};

#[tokio::test]
async fn the_dry_run_rule_follows_mutating_and_effects() {
    let cases = [
        (json!({"mutating": false, "effects": []}), true),
        (
            json!({"mutating": false, "effects": [{"kind": "reads"}, {"kind": "network"}, {"kind": "sensitive-data-egress"}]}),
            true,
        ),
        (json!({}), false),
        (json!({"mutating": true}), false),
        (
            json!({"mutating": false, "effects": [{"kind": "writes"}]}),
            false,
        ),
        (
            json!({"mutating": false, "effects": [{"kind": "deletes"}]}),
            false,
        ),
        (
            json!({"mutating": false, "effects": [{"kind": "spawns-run"}]}),
            false,
        ),
        (
            json!({"mutating": false, "effects": [{"kind": "emits-event"}]}),
            false,
        ),
        (
            json!({"mutating": false, "effects": [{"kind": "external-side-effect", "resource": "x"}]}),
            false,
        ),
        (json!({"mutating": false, "transport": "mcp"}), false),
    ];
    for (extra, runs) in cases {
        let rt = Runtime::in_memory().build();
        let calls = Arc::new(AtomicUsize::new(0));
        rt.tools().insert_tool(counting_tool(
            "t.x",
            extra.clone(),
            calls.clone(),
            |_| json!({"ok": true}),
        ));
        rt.flows()
            .insert_json(&chain("t.one", &["t.x"]).to_string())
            .unwrap();
        let run = rt.start_run("t.one", None, json!({}), dry()).await.unwrap();
        if runs {
            assert_eq!(run.status, RunStatus::Completed, "{extra}");
            assert_eq!(run.output, Some(json!({"ok": true})));
            assert_eq!(calls.load(Ordering::SeqCst), 1);
        } else {
            assert_eq!(run.status, RunStatus::Failed, "{extra}");
            assert_eq!(calls.load(Ordering::SeqCst), 0, "{extra}");
            assert!(
                run.failure_message
                    .unwrap()
                    .starts_with("dry-run-effectful-tool: tool \"t.x\"")
            );
        }
    }
    // A tool registered as coming from an MCP server never runs in a dry run.
    let rt = Runtime::in_memory().build();
    let calls = Arc::new(AtomicUsize::new(0));
    rt.tools()
        .insert_mcp_tool(counting_tool("t.x", read_only(), calls.clone(), |_| {
            json!({})
        }));
    rt.flows()
        .insert_json(&chain("t.one", &["t.x"]).to_string())
        .unwrap();
    let run = rt.start_run("t.one", None, json!({}), dry()).await.unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_dry_run_refuses_only_tools_it_reaches() {
    let rt = Runtime::in_memory().build();
    let emails = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "t.get",
        read_only(),
        Arc::new(AtomicUsize::new(0)),
        |_| json!({"vip": false}),
    ));
    rt.tools()
        .insert_tool(counting_tool("t.email", json!({}), emails.clone(), |_| {
            json!({})
        }));
    let flow = json!({
        "id": "t.branch", "version": "1.0.0",
        "nodes": [{"id": "get", "kind": "tool", "ref": "t.get"}, {"id": "email", "kind": "tool", "ref": "t.email"}],
        "edges": [
            {"id": "e1", "from": "$start", "to": "get"},
            {"id": "e2", "from": "get", "to": "email", "when": {"op": "truthy", "value": {"path": "nodeOutputs.get.vip"}}},
            {"id": "e3", "from": "get", "to": "$end"},
            {"id": "e4", "from": "email", "to": "$end"}
        ]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let run = rt
        .start_run("t.branch", None, json!({}), dry())
        .await
        .unwrap();
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
    assert_eq!(run.output, Some(json!({"vip": false})));
    assert_eq!(emails.load(Ordering::SeqCst), 0);
    let j = rt.journal(&run.id, None, None).await.unwrap();
    let decisions: Vec<Value> = j
        .iter()
        .filter(|e| e.kind == JournalKind::EdgeEvaluated)
        .map(|e| e.payload.clone().unwrap())
        .collect();
    assert!(decisions.contains(&json!({"edgeId": "e2", "decision": "not-taken"})));
}

/// A model that counts its calls and answers "live".
#[derive(Debug, Default)]
struct CountingModel(AtomicUsize);

#[async_trait::async_trait]
impl ModelProvider for CountingModel {
    fn provider_id(&self) -> &str {
        "counting"
    }
    fn model(&self) -> &str {
        "counting-1"
    }
    async fn invoke(&self, _r: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(ModelResponse {
            text: "live".into(),
            tool_calls: vec![],
            finish_reason: kindgi_runtime::model::FinishReason::Stop,
            usage: Default::default(),
            warnings: vec![],
        })
    }
}

fn echo_flow() -> Value {
    json!({
        "id": "my-pack.echo-flow", "version": "1.0.0",
        "nodes": [
            {"id": "greet", "kind": "tool", "ref": "my-pack.greet"},
            {"id": "agent", "kind": "agent", "ref": "my-pack.echo-agent", "inputMapping": {"message": {"path": "nodeOutputs.greet.greeting"}}}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "greet"},
            {"id": "e2", "from": "greet", "to": "agent"},
            {"id": "e3", "from": "agent", "to": "$end"}
        ],
        "output": {"mapping": {"reply": {"path": "nodeOutputs.agent.text"}, "greeting": {"path": "nodeOutputs.greet.greeting"}}}
    })
}

#[tokio::test]
async fn an_agent_step_in_a_dry_run_skips_its_model_call() {
    let model = Arc::new(CountingModel::default());
    let rt = Runtime::in_memory().model(model.clone()).build();
    let tool_calls = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "my-pack.greet",
        read_only(),
        Arc::new(AtomicUsize::new(0)),
        |v| json!({"greeting": format!("Hello, {}!", v["name"].as_str().unwrap_or("?"))}),
    ));
    rt.tools().insert_tool(counting_tool(
        "my-pack.lookup",
        read_only(),
        tool_calls.clone(),
        |_| json!({}),
    ));
    rt.agents()
        .insert(AgentSpec::new("my-pack.echo-agent").with_tools(["my-pack.lookup"]));
    rt.flows().insert_json(&echo_flow().to_string()).unwrap();
    let run = rt
        .start_run("my-pack.echo-flow", None, json!({"name": "Ada"}), dry())
        .await
        .unwrap();
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
    assert!(run.dry_run);
    assert_eq!(
        run.output,
        Some(json!({"reply": "[dry-run: model call skipped]", "greeting": "Hello, Ada!"}))
    );
    assert_eq!(
        model.0.load(Ordering::SeqCst),
        0,
        "no model call in a dry run"
    );
    assert_eq!(tool_calls.load(Ordering::SeqCst), 0);
    let j = rt.journal(&run.id, None, None).await.unwrap();
    let agent_out = j
        .iter()
        .find(|e| e.kind == JournalKind::StepCompleted && e.node_id.as_deref() == Some("agent"))
        .unwrap();
    let out = &agent_out.payload.as_ref().unwrap()["output"];
    assert_eq!(out["finishReason"], "stop");
    assert_eq!(out["usage"], json!({"inputTokens": 0, "outputTokens": 0}));
    assert_eq!(out["output"], Value::Null);
    assert_eq!(out["providerId"], "counting");

    // Live, the model is called.
    let run = rt
        .start_run("my-pack.echo-flow", None, json!({"name": "Ada"}), wait())
        .await
        .unwrap();
    assert_eq!(
        run.output,
        Some(json!({"reply": "live", "greeting": "Hello, Ada!"}))
    );
    assert_eq!(model.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_dev_echo_stand_in_calls_the_first_tool_and_reports_its_answer() {
    let rt = Runtime::in_memory().build();
    let looked = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "my-pack.greet",
        read_only(),
        Arc::new(AtomicUsize::new(0)),
        |v| json!({"greeting": format!("Hello, {}!", v["name"].as_str().unwrap_or("?"))}),
    ));
    rt.tools().insert_tool(counting_tool(
        "my-pack.lookup",
        read_only(),
        looked.clone(),
        |v| json!({"echo": v["message"]}),
    ));
    rt.agents()
        .insert(AgentSpec::new("my-pack.echo-agent").with_tools(["my-pack.lookup"]));
    rt.flows().insert_json(&echo_flow().to_string()).unwrap();
    let run = rt
        .start_run("my-pack.echo-flow", None, json!({"name": "Ada"}), wait())
        .await
        .unwrap();
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
    let reply = run.output.as_ref().unwrap()["reply"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        reply,
        format!(
            "{}\n\nTool responded: {{\"echo\":\"Hello, Ada!\"}}",
            kindgi_runtime::model::dev_echo::WARNING
        )
    );
    assert_eq!(looked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn retries_follow_the_edge_policy() {
    let rt = Runtime::in_memory().build();
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    rt.tools()
        .insert_tool(tool("t.flaky", read_only(), move |_| {
            let n = c.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    Err(HandlerError::msg("boom"))
                } else {
                    Ok(json!({"attempt": n + 1}))
                }
            }
        }));
    let flow = |attempts: u32| {
        json!({
            "id": format!("t.retry{attempts}"), "version": "1.0.0",
            "nodes": [{"id": "f", "kind": "tool", "ref": "t.flaky"}],
            "edges": [
                {"id": "e1", "from": "$start", "to": "f", "policy": {"retry": {"maxAttempts": attempts, "delayMs": 20, "backoff": "linear"}}},
                {"id": "e2", "from": "f", "to": "$end"}
            ]
        })
    };
    rt.flows().insert_json(&flow(3).to_string()).unwrap();
    rt.flows().insert_json(&flow(2).to_string()).unwrap();
    let began = Instant::now();
    let run = rt
        .start_run("t.retry3", None, json!({}), wait())
        .await
        .unwrap();
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
    assert_eq!(run.output, Some(json!({"attempt": 3})));
    assert!(
        began.elapsed() >= Duration::from_millis(60),
        "linear backoff: 20 + 40 ms"
    );
    let j = rt.journal(&run.id, None, None).await.unwrap();
    let retries: Vec<&JournalEntry> = j
        .iter()
        .filter(|e| e.kind == JournalKind::StepRetryScheduled)
        .collect();
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0].payload.as_ref().unwrap()["delayMs"], 20);
    assert_eq!(retries[1].payload.as_ref().unwrap()["delayMs"], 40);

    calls.store(0, Ordering::SeqCst);
    let run = rt
        .start_run("t.retry2", None, json!({}), wait())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some("handler-error: Tool \"t.flaky\" handler threw: boom")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_step_that_overruns_its_timeout_fails_without_hanging() {
    let rt = Runtime::in_memory().build();
    rt.tools()
        .insert_tool(tool("t.slow", read_only(), |_| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(json!({}))
        }));
    let flow = json!({
        "id": "t.slow", "version": "1.0.0",
        "nodes": [{"id": "s", "kind": "tool", "ref": "t.slow"}],
        "edges": [{"id": "e1", "from": "$start", "to": "s", "policy": {"timeoutMs": 100}}, {"id": "e2", "from": "s", "to": "$end"}]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let began = Instant::now();
    let run = rt
        .start_run("t.slow", None, json!({}), wait())
        .await
        .unwrap();
    assert!(began.elapsed() < Duration::from_secs(5));
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some("step-timeout: node \"s\" did not finish within 100 ms (edge policy timeoutMs)")
    );
    let j = rt.journal(&run.id, None, None).await.unwrap();
    let failed = j
        .iter()
        .find(|e| e.kind == JournalKind::StepFailed)
        .unwrap()
        .payload
        .clone()
        .unwrap();
    assert_eq!(failed["reason"], "timeout");
    assert_eq!(failed["limitMs"], 100);
    assert!(failed["elapsedMs"].as_u64().unwrap() >= 100);
}

#[tokio::test]
async fn loops_iterate_and_report_their_stop_reason() {
    let rt = Runtime::in_memory().build();
    rt.tools().insert_tool(counting_tool("t.double", json!({"mutating": false, "input": {}}), Arc::new(AtomicUsize::new(0)), |v| {
        json!({"v": v.as_i64().or_else(|| v["v"].as_i64()).or_else(|| v["finalOutput"]["v"].as_i64()).unwrap_or(0) * 2})
    }));
    rt.tools().insert_tool(counting_tool(
        "t.items",
        read_only(),
        Arc::new(AtomicUsize::new(0)),
        |_| json!({"items": [1, 2, 3]}),
    ));
    let flow = json!({
        "id": "t.loops", "version": "1.0.0",
        "nodes": [
            {"id": "items", "kind": "tool", "ref": "t.items"},
            {"id": "each", "kind": "loop", "loopKind": "foreach", "iterateOver": {"path": "nodeOutputs.items.items"},
             "maxIterations": 10, "concurrency": 2, "collectAllIterations": true,
             "outputSchema": {"type": "object", "required": ["v"], "properties": {"v": {"type": "number"}}},
             "body": {"nodes": [{"id": "d", "kind": "tool", "ref": "t.double"}],
                      "edges": [{"id": "b1", "from": "$loop-start", "to": "d"}, {"id": "b2", "from": "d", "to": "$loop-end"}]}},
            {"id": "grow", "kind": "loop", "loopKind": "while", "maxIterations": 10,
             "inputMapping": null,
             "exitCondition": {"op": "gte", "left": {"path": "iterationOutput.v"}, "right": {"literal": 50}},
             "outputSchema": {"type": "object"},
             "body": {"nodes": [{"id": "g", "kind": "tool", "ref": "t.double"}],
                      "edges": [{"id": "c1", "from": "$loop-start", "to": "g"}, {"id": "c2", "from": "g", "to": "$loop-end"}]}}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "items"},
            {"id": "e2", "from": "items", "to": "each"},
            {"id": "e3", "from": "each", "to": "grow"},
            {"id": "e4", "from": "grow", "to": "$end"}
        ],
        "output": {"mapping": {"each": {"path": "nodeOutputs.each"}, "grow": {"path": "nodeOutputs.grow"}}}
    });
    // `inputMapping` is not a loop field: the flow is refused.
    assert!(rt.flows().insert_json(&flow.to_string()).is_err());
    let mut flow = flow;
    flow["nodes"][2]
        .as_object_mut()
        .unwrap()
        .remove("inputMapping");
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let run = rt
        .start_run("t.loops", None, json!({}), wait())
        .await
        .unwrap();
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
    let out = run.output.unwrap();
    assert_eq!(
        out["each"],
        json!({"finalOutput": {"v": 6}, "iterations": 3, "stopReason": "array-exhausted", "outputs": [{"v": 2}, {"v": 4}, {"v": 6}]})
    );
    // The while loop starts from the foreach's output object: v = 6 → 12 → 24 → 48 → 96.
    assert_eq!(out["grow"]["stopReason"], "exit-condition");
    assert_eq!(out["grow"]["iterations"], 4);
    assert_eq!(out["grow"]["finalOutput"], json!({"v": 96}));
    let j = rt.journal(&run.id, None, None).await.unwrap();
    let iters = j
        .iter()
        .filter(|e| e.kind == JournalKind::IterationCompleted)
        .count();
    assert_eq!(iters, 7);
    assert!(
        j.iter()
            .any(|e| e.scope.as_deref() == Some("each#2") && e.kind == JournalKind::StepCompleted)
    );

    // iterateOver that is not an array fails the node with its stop reason.
    let bad = json!({
        "id": "t.bad-loop", "version": "1.0.0",
        "nodes": [{"id": "each", "kind": "loop", "loopKind": "foreach", "iterateOver": {"path": "runInput.items"},
             "maxIterations": 2, "outputSchema": {},
             "body": {"nodes": [{"id": "d2", "kind": "tool", "ref": "t.double"}],
                      "edges": [{"id": "b1", "from": "$loop-start", "to": "d2"}, {"id": "b2", "from": "d2", "to": "$loop-end"}]}}],
        "edges": [{"id": "e1", "from": "$start", "to": "each"}, {"id": "e2", "from": "each", "to": "$end"}]
    });
    rt.flows().insert_json(&bad.to_string()).unwrap();
    let run = rt
        .start_run("t.bad-loop", None, json!({"items": "nope"}), wait())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            "loop-failed: loop \"each\": iterateOver resolved to a string, not an array (stopReason: iterate-over-not-array)"
        )
    );
    // maxIterations caps a longer array.
    let run = rt
        .start_run("t.bad-loop", None, json!({"items": [1, 2, 3]}), wait())
        .await
        .unwrap();
    assert_eq!(run.output.unwrap()["stopReason"], "max-iterations");
}

#[tokio::test]
async fn fanout_converges_by_its_mode() {
    let rt = Runtime::in_memory().build();
    rt.tools().insert_tool(counting_tool(
        "t.ok",
        read_only(),
        Arc::new(AtomicUsize::new(0)),
        |_| json!({"ok": 1}),
    ));
    rt.tools()
        .insert_tool(tool("t.bad", read_only(), |_| async {
            Err(HandlerError::msg("nope"))
        }));
    for (mode, expect_status, expect) in [
        (
            "settle-all",
            RunStatus::Completed,
            Some(json!({
                "a": {"status": "succeeded", "output": {"ok": 1}},
                "b": {"status": "failed", "error": {"message": "handler-error: Tool \"t.bad\" handler threw: nope"}}
            })),
        ),
        (
            "any-succeed",
            RunStatus::Completed,
            Some(json!({"winnerBranchId": "a", "output": {"ok": 1}})),
        ),
        ("all-succeed", RunStatus::Failed, None),
    ] {
        let flow = json!({
            "id": format!("t.fan-{mode}"), "version": "1.0.0",
            "nodes": [{"id": "fan", "kind": "fanout", "convergence": mode, "concurrency": 1, "branches": [
                {"branchId": "a", "handler": "t.ok", "outputSchema": {"type": "object"}},
                {"branchId": "b", "handler": "t.bad", "outputSchema": {}}]}],
            "edges": [{"id": "e1", "from": "$start", "to": "fan"}, {"id": "e2", "from": "fan", "to": "$end"}]
        });
        rt.flows().insert_json(&flow.to_string()).unwrap();
        let run = rt
            .start_run(&format!("t.fan-{mode}"), None, json!({}), wait())
            .await
            .unwrap();
        assert_eq!(
            run.status, expect_status,
            "{mode}: {:?}",
            run.failure_message
        );
        if let Some(e) = expect {
            assert_eq!(run.output, Some(e), "{mode}");
        } else {
            assert_eq!(
                run.failure_message.as_deref(),
                Some(
                    "fanout-failed: fanout \"fan\": branch \"b\" failed: handler-error: Tool \"t.bad\" handler threw: nope"
                )
            );
        }
        let j = rt.journal(&run.id, None, None).await.unwrap();
        assert!(
            j.iter().any(|e| e.kind == JournalKind::FanoutConverged),
            "{mode}"
        );
    }
}

#[tokio::test]
async fn a_subgraph_runs_a_child_run() {
    let rt = Runtime::in_memory().build();
    rt.tools().insert_tool(counting_tool(
        "t.inc",
        read_only(),
        Arc::new(AtomicUsize::new(0)),
        |v| json!({"v": v["v"].as_i64().unwrap_or(0) + 1}),
    ));
    rt.tools()
        .insert_tool(tool("t.bad", read_only(), |_| async {
            Err(HandlerError::msg("child broke"))
        }));
    rt.flows()
        .insert_json(&chain("t.child", &["t.inc"]).to_string())
        .unwrap();
    rt.flows()
        .insert_json(&chain("t.bad-child", &["t.bad"]).to_string())
        .unwrap();
    for (child, convergence) in [
        ("t.child", "success-only"),
        ("t.bad-child", "settle-all"),
        ("t.bad-child", "success-only"),
    ] {
        let parent = json!({
            "id": "t.parent", "version": "1.0.0",
            "nodes": [{"id": "sub", "kind": "subgraph", "flowRef": {"flowId": child, "version": "1.0.0"},
                       "inputMapping": {"v": {"path": "runInput.start"}}, "outputSchema": {"type": "object"}, "convergence": convergence}],
            "edges": [{"id": "e1", "from": "$start", "to": "sub"}, {"id": "e2", "from": "sub", "to": "$end"}]
        });
        rt.flows().insert_json(&parent.to_string()).unwrap();
        let run = rt
            .start_run("t.parent", None, json!({"start": 41}), wait())
            .await
            .unwrap();
        let j = rt.journal(&run.id, None, None).await.unwrap();
        let child_id = j
            .iter()
            .find(|e| e.kind == JournalKind::SubgraphDispatched)
            .unwrap()
            .payload
            .as_ref()
            .unwrap()["childRunId"]
            .as_str()
            .unwrap()
            .to_owned();
        let child_run = rt.get_run(&child_id).await.unwrap();
        assert_eq!(child_run.parent_run_id.as_deref(), Some(run.id.as_str()));
        assert_eq!(child_run.parent_node_id.as_deref(), Some("sub"));
        match (child, convergence) {
            ("t.child", _) => {
                assert_eq!(run.output, Some(json!({"v": 42})));
                assert_eq!(child_run.status, RunStatus::Completed);
            }
            (_, "settle-all") => {
                assert_eq!(run.status, RunStatus::Completed);
                assert_eq!(run.output.as_ref().unwrap()["status"], "failed");
            }
            _ => {
                assert_eq!(run.status, RunStatus::Failed);
                let m = run.failure_message.unwrap();
                assert!(m.starts_with(&format!("subgraph-failed: subgraph \"sub\": child run {child_id} of flow \"t.bad-child\" failed: handler-error")), "{m}");
            }
        }
    }
}

#[tokio::test]
async fn bad_input_gets_clear_errors_before_a_run_exists() {
    let rt = Runtime::in_memory().build();
    let err = rt
        .start_run("t.nope", None, json!({}), wait())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "flow-not-found");
    assert_eq!(err.to_string(), "flow-not-found: no flow \"t.nope\"");
    let err = rt
        .start_run("t.nope", Some("2.0.0"), json!({}), wait())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "flow-not-found: no flow \"t.nope\" version 2.0.0"
    );

    rt.flows()
        .insert_json(&chain("t.unbound", &["t.missing"]).to_string())
        .unwrap();
    let err = rt
        .start_run("t.unbound", None, json!({}), wait())
        .await
        .unwrap_err();
    assert!(matches!(err, RuntimeError::FlowUnbound { .. }));
    assert_eq!(
        err.to_string(),
        "flow-unbound: flow \"t.unbound\" node \"n1\" names tool \"t.missing\", which is not registered"
    );

    rt.tools().insert_tool(counting_tool(
        "t.x",
        read_only(),
        Arc::new(AtomicUsize::new(0)),
        |v| v,
    ));
    let mut flow = chain("t.typed", &["t.x"]);
    flow["metadata"] = json!({"inputSchema": {"type": "object", "required": ["orderId"], "properties": {"orderId": {"type": "string"}}}});
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let err = rt
        .start_run("t.typed", None, json!({"orderId": 7}), wait())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "input-validation-failed");
    assert!(
        err.to_string().contains("/orderId: must be string"),
        "{err}"
    );
    assert!(
        rt.list_runs(&Default::default()).await.unwrap().is_empty(),
        "no run was created"
    );
    let ok = rt
        .start_run("t.typed", None, json!({"orderId": "o1"}), wait())
        .await
        .unwrap();
    assert_eq!(ok.status, RunStatus::Completed);

    // A tool whose input schema refuses the input fails the run, naming the tool.
    rt.tools().insert_tool(counting_tool("t.strict", json!({"mutating": false, "input": {"type": "object", "required": ["a"], "properties": {"a": {}}}}), Arc::new(AtomicUsize::new(0)), |v| v));
    rt.flows()
        .insert_json(&chain("t.strict", &["t.strict"]).to_string())
        .unwrap();
    let run = rt
        .start_run("t.strict", None, json!({}), wait())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some("input-validation-failed: Input for tool \"t.strict\" failed validation")
    );
    // Which field was wrong is kept: the step's `step.failed` carries the schema issues.
    let j = rt.journal(&run.id, None, None).await.unwrap();
    let failed = j
        .iter()
        .find(|e| e.kind == JournalKind::StepFailed)
        .expect("a step.failed entry");
    let payload = failed.payload.as_ref().expect("a payload");
    let issues = payload["issues"].as_array().expect("issues");
    assert_eq!(issues.len(), 1, "{payload}");
    assert_eq!(issues[0]["keyword"], "required");
    assert_eq!(issues[0]["params"]["missingProperty"], "a");

    let err = rt.get_run("nope").await.unwrap_err();
    assert_eq!(err.to_string(), "run-not-found: no run \"nope\"");
    let err = rt.cancel_run(&ok.id).await.unwrap_err();
    assert_eq!(err.code(), "run-already-terminal");
}

#[tokio::test]
async fn a_run_can_be_cancelled_mid_step() {
    let rt = Runtime::in_memory().build();
    let started = Arc::new(tokio::sync::Notify::new());
    let s = started.clone();
    rt.tools()
        .insert_tool(tool("t.hang", read_only(), move |_| {
            let s = s.clone();
            async move {
                s.notify_one();
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(json!({}))
            }
        }));
    rt.flows()
        .insert_json(&chain("t.hang", &["t.hang", "t.hang"]).to_string())
        .unwrap();
    let run = rt
        .start_run("t.hang", None, json!({}), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Pending);
    started.notified().await;
    let cancelled = tokio::time::timeout(Duration::from_secs(5), rt.cancel_run(&run.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    let j = rt.journal(&run.id, None, None).await.unwrap();
    assert_eq!(j.last().unwrap().kind, JournalKind::RunCancelled);
    assert!(!j.iter().any(|e| e.kind == JournalKind::StepCompleted));
}

#[tokio::test]
async fn max_parallelism_priority_and_concurrency_keys_shape_dispatch() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let rt = Runtime::in_memory().build();
    let (f, p) = (in_flight.clone(), peak.clone());
    rt.tools()
        .insert_tool(tool("t.work", read_only(), move |_| {
            let (f, p) = (f.clone(), p.clone());
            async move {
                let now = f.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
                f.fetch_sub(1, Ordering::SeqCst);
                Ok(json!({}))
            }
        }));
    let fan = |id: &str, max: Option<u32>, key: Option<&str>| {
        let mut edges = Vec::new();
        let mut nodes = Vec::new();
        for (i, prio) in [("a", 0), ("b", 10), ("c", -3), ("d", 10)] {
            nodes.push(json!({"id": i, "kind": "tool", "ref": "t.work"}));
            let mut policy = json!({"priority": prio});
            if let Some(k) = key {
                policy["concurrencyKey"] = json!(k);
            }
            edges.push(json!({"id": format!("s{i}"), "from": "$start", "to": i, "policy": policy}));
            edges.push(json!({"id": format!("t{i}"), "from": i, "to": "$end"}));
        }
        let mut f = json!({"id": id, "version": "1.0.0", "nodes": nodes, "edges": edges});
        if let Some(m) = max {
            f["maxParallelism"] = json!(m);
        }
        f
    };
    rt.flows()
        .insert_json(&fan("t.wide", None, None).to_string())
        .unwrap();
    rt.flows()
        .insert_json(&fan("t.narrow", Some(1), None).to_string())
        .unwrap();
    rt.flows()
        .insert_json(&fan("t.keyed", None, Some("one-at-a-time")).to_string())
        .unwrap();

    rt.start_run("t.wide", None, json!({}), wait())
        .await
        .unwrap();
    assert_eq!(peak.swap(0, Ordering::SeqCst), 4);

    let run = rt
        .start_run("t.narrow", None, json!({}), wait())
        .await
        .unwrap();
    assert_eq!(peak.swap(0, Ordering::SeqCst), 1);
    let j = rt.journal(&run.id, None, None).await.unwrap();
    let order: Vec<String> = j
        .iter()
        .filter(|e| e.kind == JournalKind::StepStarted)
        .map(|e| e.node_id.clone().unwrap())
        .collect();
    assert_eq!(
        order,
        ["b", "d", "a", "c"],
        "priority descending, then node id"
    );

    // Per-run override wins.
    let opts = RunOptions {
        wait: true,
        max_parallelism: Some(2),
        ..Default::default()
    };
    rt.start_run("t.wide", None, json!({}), opts).await.unwrap();
    assert_eq!(peak.swap(0, Ordering::SeqCst), 2);

    // A concurrency key serialises across runs.
    let r1 = rt
        .start_run("t.keyed", None, json!({}), RunOptions::default())
        .await
        .unwrap();
    let r2 = rt
        .start_run("t.keyed", None, json!({}), RunOptions::default())
        .await
        .unwrap();
    rt.wait_for_run(&r1.id).await.unwrap();
    rt.wait_for_run(&r2.id).await.unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 1);
    let mut deferred = 0;
    for id in [&r1.id, &r2.id] {
        deferred += rt
            .journal(id, None, None)
            .await
            .unwrap()
            .iter()
            .filter(|e| e.kind == JournalKind::StepConcurrencyDeferred)
            .count();
    }
    assert!(
        deferred >= 3,
        "waiting holders journal step.concurrency-deferred ({deferred})"
    );
}

#[tokio::test]
async fn missing_paths_follow_the_evaluator_rules_in_a_run() {
    let rt = Runtime::in_memory().build();
    rt.tools().insert_tool(counting_tool(
        "t.x",
        read_only(),
        Arc::new(AtomicUsize::new(0)),
        |_| json!({"k": "v"}),
    ));
    let flow = json!({
        "id": "t.missing", "version": "1.0.0",
        "nodes": [{"id": "a", "kind": "tool", "ref": "t.x"}, {"id": "ne", "kind": "tool", "ref": "t.x"}, {"id": "eq", "kind": "tool", "ref": "t.x"}],
        "edges": [
            {"id": "e1", "from": "$start", "to": "a"},
            {"id": "e2", "from": "a", "to": "ne", "when": {"op": "ne", "left": {"path": "nodeOutputs.a.absent"}, "right": {"literal": "x"}}},
            {"id": "e3", "from": "a", "to": "eq", "when": {"op": "eq", "left": {"path": "nodeOutputs.a.absent"}, "right": {"literal": null}}},
            {"id": "e4", "from": "ne", "to": "$end"},
            {"id": "e5", "from": "eq", "to": "$end"}
        ],
        "output": {"mapping": {"ne": {"path": "nodeOutputs.ne.k"}, "eq": {"path": "nodeOutputs.eq.k"}}}
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let run = rt
        .start_run("t.missing", None, json!({}), wait())
        .await
        .unwrap();
    assert_eq!(
        run.output,
        Some(json!({"ne": "v"})),
        "ne on MISSING is true, eq is false; a MISSING mapped path omits its key"
    );
}
