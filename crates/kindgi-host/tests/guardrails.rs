//! Guardrails of agent turns on the database stores too (runtime.md §7): a failing halt
//! guardrail blocks the turn on every store, a pack-style check judges the turn through the
//! checks seam (memory, SQLite), a refused before-tool call never runs (every store), and a
//! resumed turn reads its verdicts back instead of judging again (SQLite, PostgreSQL: a
//! stopped runtime's turn resumed by another). The other guardrail tests are
//! kindgi-runtime's `tests/guardrails.rs` (memory store, same fixture); these are here
//! because the database runtimes are the host's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-runtime/tests/support/guardrails.rs"]
mod fixture;
mod support;

use async_trait::async_trait;
use fixture::{AcmeChecks, before_tool, failure, guardrail, runtime, scripted, turn};
use kindgi_runtime::model::{ModelRequest, ModelResponse};
use kindgi_runtime::{
    AgentSpec, AgentTool, GuardrailCatalogue, JournalKind, ModelError, ModelProvider, RunOptions,
    RunStatus,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{ALL, Backend, builder, cleanup, counting_tool, read_only};

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
        let rt2 = kindgi_runtime::Runtime::over(test_db.ports())
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
