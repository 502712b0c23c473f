//! An agent step's tool calls: which run together and which alone (seed 004, runtime.md
//! cases 16, 28–34), and the approval gates in front of them (cases 35–53), on the memory
//! store. A scripted model asks for the calls; in-process tools count their runs and how
//! many are in flight at once (concurrency is asserted by counters, never by timing). A
//! gated call parking and running once approved on every store, and the session gate
//! (`afterTurns`, on SQLite's conversation log), are kindgi-host's `tests/agent_gates.rs`
//! (same fixture).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_gates.rs"]
mod fixture;
mod support;

use async_trait::async_trait;
use fixture::{
    AGENT, Probe, Script, approvals, asks, completed, decide, ids, mutating, ro, runtime,
    suspended_timeout_ms, text, the_open_approval, turn, with_policy,
};
use kindgi_runtime::agent::hitl::{HitlSpec, TenantApprovalPolicy, TenantPolicyError};
use kindgi_runtime::{
    ApprovalQuery, ApprovalStatus, DecisionKind, ReviewerRole, RunOptions, RunStatus, Runtime,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

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
    // The run's person has connected the app, so the call runs (docs/connections.md).
    let store = Arc::new(kindgi_core::memory::MemoryConnectionStore::new());
    {
        use kindgi_core::connection::{ConnectionHolder, ConnectionTokens, NewConnection};
        use kindgi_core::ports::ConnectionStore;
        store
            .add(&NewConnection {
                tenant: "default".into(),
                app: "gmail".into(),
                holder: ConnectionHolder::Person("u1".into()),
                permissions: vec!["read".into()],
                tokens: ConnectionTokens {
                    access_token: "tok".into(),
                    refresh_token: None,
                    expires_at: None,
                },
                refresh: None,
                created_by: None,
                now: 1,
            })
            .await
            .unwrap();
    }
    let rt = runtime(
        Runtime::in_memory().connections(store),
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
    // A person's run: in one nobody started, the person's connection would wait for a yes
    // (docs/unattended.md).
    let run = rt
        .start_agent_turn(
            AGENT,
            None,
            json!({"message": "go"}),
            RunOptions {
                wait: true,
                meta: kindgi_runtime::RunMeta {
                    started_by: Some(kindgi_core::StartedBy::Person),
                    started_by_actor: Some("user:u1".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    completed(&run);
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
                    started_by: Some(kindgi_core::StartedBy::Person),
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
        manifest: support::manifest(
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
