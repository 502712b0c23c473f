//! After-turn guardrails of agent turns (runtime.md §7, cases 69–78) with a scripted model,
//! real tools and the memory store: what blocks a turn and with which message, what is only
//! reported in `violations`, what is skipped by scope, the built-in checks' reasons, a
//! pack-style check through the runtime's `GuardrailChecks` seam (fail closed when it can't
//! run), `guardrail.violated` journaled per violation; and before-tool guardrails (case 79,
//! our `stage: "before-tool"`). The tests that run on the database stores too (a halt on
//! every store, the pack check on SQLite, a refused call on every store, a verdict read back
//! when a stopped runtime's turn resumes in another) are kindgi-host's `tests/guardrails.rs`
//! (same fixture).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/guardrails.rs"]
mod fixture;
mod support;

use fixture::{
    AcmeChecks, before_tool, failure, guardrail, memory, runtime, scripted, turn, violations,
};
use kindgi_runtime::{GuardrailSpec, JournalKind, RunOptions, RunStatus, Runtime};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;

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

#[tokio::test]
async fn a_turn_in_a_flow_is_judged_with_the_flow_id() {
    let b = Runtime::in_memory();
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

#[tokio::test]
async fn a_before_tool_check_sees_the_calls_that_ran_and_the_pending_one_last() {
    let b = Runtime::in_memory();
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
