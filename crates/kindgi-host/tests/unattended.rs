//! The unattended rule end to end (seed 000 `needsApprovalWhenUnattended`,
//! `needsSpec.connections`; seed 004; platform-api.md §13; docs/unattended.md), on every store
//! (memory, SQLite, PostgreSQL): runs whose `startedBy` is set as a trigger or a key sets
//! it, an agent whose model is a fake chat-completions server over loopback HTTP, and tools
//! with each declaration. In a run no person started, a call the rule covers waits for a
//! reviewer whatever the agent's rules say (approved it runs once, rejected it doesn't, unanswered
//! it times out); a trigger's `toolsAllowedUnattended` lifts it for the tool it names only;
//! a flow's tool step calling it fails `unattended-approval-required`; child runs inherit it.
//! A person's run calls every tool without asking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use axum::routing::post;
use axum::{Json, Router};
use kindgi_core::{Mailbox, StartedBy, Unattended};
use kindgi_runtime::model::openai::OpenAiCompatProvider;
use kindgi_runtime::{
    AgentSpec, Approval, ApprovalQuery, ApprovalStatus, DecisionInput, DecisionKind, RunMeta,
    RunOptions, RunQuery, RunRecord, RunStatus, Runtime, RuntimeBuilder,
};
use kindgi_spec::ConnectionOwner;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use support::{Backend, builder, cleanup, tool};

// ----- the fake model -----------------------------------------------------------------------

/// A chat-completions answer: once the request holds tool results, the text `done:` and
/// them; else, for a user message `… call <tool> <tool> …`, one call of each (ids `c1`, …).
async fn chat(Json(body): Json<Value>) -> Json<Value> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let results: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    let text = |t: String| {
        json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": t}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
    };
    if !results.is_empty() {
        return Json(text(format!("done: {}", results.join(" | "))));
    }
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let Some((_, wanted)) = user.split_once("call ") else {
        return Json(text("nothing to do".into()));
    };
    let calls: Vec<Value> = wanted
        .split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_ascii_lowercase() || *c == '.' || *c == '-')
                .collect::<String>()
        })
        .filter(|w| w.starts_with("t."))
        .enumerate()
        .map(|(i, name)| {
            json!({"id": format!("c{}", i + 1), "type": "function",
                "function": {"name": name.replace('.', "__"), "arguments": "{}"}})
        })
        .collect();
    Json(
        json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}}),
    )
}

async fn model_server() -> String {
    let app = Router::new().route("/v1/chat/completions", post(chat));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

// ----- the fixture --------------------------------------------------------------------------

fn connection(app: &str, whose: &str) -> Value {
    json!({"app": app, "permissions": ["mail.read"], "as": whose})
}

/// The tools, each with one declaration.
fn declarations() -> Vec<(&'static str, Value)> {
    vec![
        // (a) declared.
        (
            "t.send",
            json!({"mutating": true, "needsApprovalWhenUnattended": true}),
        ),
        (
            "t.other",
            json!({"mutating": true, "needsApprovalWhenUnattended": true}),
        ),
        // (b) a read with a person's connection.
        (
            "t.mine",
            json!({"mutating": false, "needsSpec": {"connections": {"me": connection("google", "person")}}}),
        ),
        // (d) a read with the company's google connection: a mail run's own mailbox below.
        (
            "t.box",
            json!({"mutating": false, "needsSpec": {"connections": {"inbox": connection("google", "company")}}}),
        ),
        // (c) mutating left out: mutating.
        ("t.note", json!({})),
        ("t.lookup", json!({"mutating": false})),
    ]
}

struct Fixture {
    rt: Runtime,
    runs: Arc<Mutex<HashMap<String, usize>>>,
}

impl Fixture {
    fn ran(&self, tool: &str) -> usize {
        self.runs.lock().unwrap().get(tool).copied().unwrap_or(0)
    }
}

const AGENT: &str = "t.agent";
/// An agent whose reviewers are admins with a 1 ms deadline: unanswered, it expires at once.
const QUICK: &str = "t.quick";

async fn fixture(b: RuntimeBuilder) -> Fixture {
    let base = model_server().await;
    let model = OpenAiCompatProvider::new(base, None, "fake").unwrap();
    let rt = b
        .model(Arc::new(model))
        .connections(connections().await)
        .build();
    let runs: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let ids: Vec<&str> = declarations().iter().map(|(id, _)| *id).collect();
    for (id, extra) in declarations() {
        let runs = runs.clone();
        rt.tools().insert_tool(tool(id, extra, move |_| {
            let runs = runs.clone();
            async move {
                *runs.lock().unwrap().entry(id.to_owned()).or_default() += 1;
                Ok(json!({"ran": id}))
            }
        }));
    }
    // No approval rules at all: only the unattended rule asks.
    rt.agents()
        .insert(AgentSpec::new(AGENT).with_tools(ids.clone()));
    let mut quick = AgentSpec::new(QUICK).with_tools(ids);
    quick.conversation_policy =
        Some(json!({"hitl": {"defaultReviewerRole": "admin", "timeoutMs": 1}}));
    rt.agents().insert(quick);
    for (id, node) in [
        (
            "t.flow-send",
            json!({"id": "n", "kind": "tool", "ref": "t.send"}),
        ),
        (
            "t.flow-lookup",
            json!({"id": "n", "kind": "tool", "ref": "t.lookup"}),
        ),
        (
            "t.flow-fan",
            json!({"id": "n", "kind": "fanout", "convergence": "all-succeed", "concurrency": 1, "branches": [
                {"branchId": "a", "handler": "t.lookup", "outputSchema": {}},
                {"branchId": "b", "handler": "t.mine", "outputSchema": {}}]}),
        ),
        (
            "t.flow-agent",
            json!({"id": "n", "kind": "agent", "ref": AGENT}),
        ),
        (
            "t.flow-parent",
            json!({"id": "n", "kind": "subgraph", "flowRef": {"flowId": "t.flow-send", "version": "1.0.0"},
                "inputMapping": {"v": {"path": "runInput.start"}}, "outputSchema": {}, "convergence": "success-only"}),
        ),
        (
            "t.flow-parent-agent",
            json!({"id": "n", "kind": "subgraph", "flowRef": {"flowId": "t.flow-agent", "version": "1.0.0"},
                "inputMapping": {"userMessage": {"literal": "call t.send"}}, "outputSchema": {}, "convergence": "success-only"}),
        ),
    ] {
        rt.flows()
            .insert_json(
                &json!({"id": id, "version": "1.0.0", "nodes": [node],
                    "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]})
                .to_string(),
            )
            .unwrap();
    }
    Fixture { rt, runs }
}

/// The person every run acts for, who has connected google; the company has too.
const PERSON: &str = "ada";

/// The tenant's connections: the person's and the company's google (docs/connections.md).
async fn connections() -> Arc<dyn kindgi_core::ports::ConnectionStore> {
    use kindgi_core::connection::{ConnectionHolder, ConnectionTokens, NewConnection};
    let store = Arc::new(kindgi_core::memory::MemoryConnectionStore::new());
    for holder in [
        ConnectionHolder::Person(PERSON.into()),
        ConnectionHolder::Company,
    ] {
        kindgi_core::ports::ConnectionStore::add(
            store.as_ref(),
            &NewConnection {
                tenant: "acme".into(),
                app: "google".into(),
                holder,
                permissions: vec!["mail.read".into()],
                tokens: ConnectionTokens {
                    access_token: "tok".into(),
                    refresh_token: None,
                    expires_at: None,
                },
                refresh: None,
                created_by: None,
                now: 1,
            },
        )
        .await
        .unwrap();
    }
    store
}

fn by(started_by: Option<StartedBy>) -> RunMeta {
    RunMeta {
        started_by,
        started_by_actor: Some(format!("user:{PERSON}")),
        ..RunMeta::default()
    }
}

fn allowing(mut meta: RunMeta, tools: &[&str]) -> RunMeta {
    meta.unattended.tools_allowed = tools.iter().map(|t| (*t).to_owned()).collect();
    meta
}

/// A run a mail to the company's google mailbox started.
fn mailed() -> RunMeta {
    RunMeta {
        started_by: Some(StartedBy::Mail),
        unattended: Unattended {
            tools_allowed: vec![],
            mailbox: Some(Mailbox {
                address: "orders@acme.test".into(),
                app: "google".into(),
                whose: ConnectionOwner::Company,
            }),
        },
        started_by_actor: Some(format!("user:{PERSON}")),
        ..RunMeta::default()
    }
}

fn options(meta: RunMeta) -> RunOptions {
    RunOptions {
        wait: true,
        tenant_id: Some("acme".into()),
        meta,
        ..RunOptions::default()
    }
}

async fn turn(f: &Fixture, agent: &str, message: &str, meta: RunMeta) -> RunRecord {
    f.rt.start_agent_turn(agent, None, json!({"userMessage": message}), options(meta))
        .await
        .unwrap()
}

async fn flow(f: &Fixture, id: &str, meta: RunMeta) -> RunRecord {
    f.rt.start_run(id, None, json!({"start": 1}), options(meta))
        .await
        .unwrap()
}

async fn open_approvals(f: &Fixture, run: &RunRecord) -> Vec<Approval> {
    f.rt.list_approvals(&ApprovalQuery {
        tenant_id: run.tenant_id.clone(),
        statuses: vec![ApprovalStatus::Pending],
        run_id: Some(run.id.clone()),
        limit: 20,
        ..Default::default()
    })
    .await
    .unwrap()
}

async fn the_approval(f: &Fixture, run: &RunRecord) -> Approval {
    assert_eq!(
        run.status,
        RunStatus::Suspended,
        "{:?}",
        run.failure_message
    );
    let open = open_approvals(f, run).await;
    assert_eq!(open.len(), 1, "{open:?}");
    open.into_iter().next().unwrap()
}

async fn decide(f: &Fixture, approval: &Approval, decision: DecisionKind) -> RunStatus {
    f.rt.complete_approval(
        &approval.tenant_id,
        &approval.id,
        DecisionInput {
            decision,
            rationale: Some("checked".into()),
            decided_by: "user:rita".into(),
            reviewer_id: "rita".into(),
            reviewer_role: kindgi_runtime::ReviewerRole::Admin,
        },
    )
    .await
    .unwrap()
    .run_status
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

fn reply(run: &RunRecord) -> String {
    run.output.as_ref().unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Asserts the approval names the rule and who started the run.
fn names_the_rule(a: &Approval, tool: &str, rule: &str, started_by: Option<&str>) {
    assert_eq!(a.subject_ref["toolId"], tool, "{a:?}");
    assert_eq!(
        a.title.as_deref(),
        Some(format!("HITL review: {tool} (unattended run: {rule})").as_str())
    );
    let u = &a.subject_ref["unattended"];
    assert_eq!(u["rule"], rule, "{a:?}");
    assert_eq!(u["startedBy"], json!(started_by), "{a:?}");
    let d = a.description.as_deref().unwrap();
    assert!(
        d.starts_with(&format!(
            "Tool call {tool} awaiting reviewer approval before dispatch: no person started this run"
        )),
        "{d}"
    );
}

macro_rules! every_store {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test] async fn $name() { super::$name(super::Backend::Memory).await })*
        }
        mod sqlite {
            $(#[tokio::test] async fn $name() { super::$name(super::Backend::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test] async fn $name() { super::$name(super::Backend::Postgres).await })*
        }
    };
}

every_store!(
    a_declared_tool_waits_for_a_yes_in_every_unattended_run,
    approved_it_runs_once_rejected_it_does_not_unanswered_it_times_out,
    tools_allowed_unattended_lifts_it_for_the_named_tool_only,
    a_persons_connection_and_a_mail_runs_rules_wait_too,
    a_flow_tool_step_calling_it_fails,
    child_runs_inherit_the_rule_and_what_lifts_it,
);

// ----- agent steps ----------------------------------------------------------------------------

async fn a_declared_tool_waits_for_a_yes_in_every_unattended_run(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b).await;
    for started_by in [
        Some(StartedBy::Schedule),
        Some(StartedBy::Webhook),
        Some(StartedBy::Event),
        Some(StartedBy::Mail),
        Some(StartedBy::Key),
        None,
    ] {
        let run = turn(&f, AGENT, "call t.send", by(started_by)).await;
        let a = the_approval(&f, &run).await;
        names_the_rule(
            &a,
            "t.send",
            "needsApprovalWhenUnattended",
            started_by.map(StartedBy::as_str),
        );
        assert_eq!(a.subject_kind, "tool-call:pending");
        // It is what the run waits for.
        let waiting = f.rt.waiting_for(&run).await.unwrap().unwrap();
        assert_eq!(waiting.approvals.len(), 1, "{waiting:?}");
        assert_eq!(waiting.approvals[0]["approvalId"], json!(a.id));
        assert_eq!(waiting.approvals[0]["title"], json!(a.title));
        assert_eq!(waiting.approvals[0]["tool"]["id"], "t.send");
    }
    assert_eq!(f.ran("t.send"), 0, "nothing ran without a yes");
    // A person's run calls it without asking (the agent has no approval rules).
    let run = turn(&f, AGENT, "call t.send", by(Some(StartedBy::Person))).await;
    completed(&run);
    assert_eq!(f.ran("t.send"), 1);
    cleanup(db).await;
}

async fn approved_it_runs_once_rejected_it_does_not_unanswered_it_times_out(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b).await;
    let run = turn(&f, AGENT, "call t.send", by(Some(StartedBy::Schedule))).await;
    let a = the_approval(&f, &run).await;
    assert_eq!(
        decide(&f, &a, DecisionKind::Approve).await,
        RunStatus::Completed
    );
    assert_eq!(f.ran("t.send"), 1);
    let done = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(reply(&done), r#"done: {"ran":"t.send"}"#);
    // An approval doesn't make the run attended: a later call asks again.
    assert_eq!(done.meta.started_by, Some(StartedBy::Schedule));

    let run = turn(&f, AGENT, "call t.send", by(Some(StartedBy::Webhook))).await;
    let a = the_approval(&f, &run).await;
    assert_eq!(
        decide(&f, &a, DecisionKind::Reject).await,
        RunStatus::Completed
    );
    assert_eq!(f.ran("t.send"), 1, "a rejected call does not run");
    let done = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(
        reply(&done),
        r#"done: {"status":"rejected","rationale":"checked"}"#
    );

    let run = turn(&f, QUICK, "call t.send", by(Some(StartedBy::Schedule))).await;
    let a = the_approval(&f, &run).await;
    assert_eq!(a.required_role, kindgi_runtime::ReviewerRole::Admin);
    // The deadline is 1 ms: once it has passed, the sweep expires it.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(f.rt.expire_due_waits().await.unwrap(), 1);
    let after = f.rt.get_run(&run.id).await.unwrap();
    assert_eq!(after.status, RunStatus::Failed);
    assert_eq!(after.failure().unwrap().code, "hitl-cancelled");
    assert_eq!(
        after.failure_message.as_deref(),
        Some("hitl-cancelled: Tool-call HITL cancelled for t.send: timeout")
    );
    let expired = f.rt.approval("acme", &a.id).await.unwrap().unwrap();
    assert_eq!(expired.status, ApprovalStatus::Expired);
    assert_eq!(f.ran("t.send"), 1);
    cleanup(db).await;
}

async fn tools_allowed_unattended_lifts_it_for_the_named_tool_only(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b).await;
    let meta = allowing(by(Some(StartedBy::Schedule)), &["t.send"]);
    let run = turn(&f, AGENT, "call t.send t.other", meta).await;
    let a = the_approval(&f, &run).await;
    names_the_rule(
        &a,
        "t.other",
        "needsApprovalWhenUnattended",
        Some("schedule"),
    );
    assert_eq!(a.subject_ref["callId"], "c2");
    assert_eq!(f.ran("t.send"), 1, "the named tool ran without asking");
    assert_eq!(f.ran("t.other"), 0);
    // It lifts the connection rules as well, for the tool it names.
    let meta = allowing(mailed(), &["t.mine", "t.note"]);
    let run = turn(&f, AGENT, "call t.mine t.note", meta).await;
    completed(&run);
    assert_eq!((f.ran("t.mine"), f.ran("t.note")), (1, 1));
    cleanup(db).await;
}

async fn a_persons_connection_and_a_mail_runs_rules_wait_too(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b).await;
    // (b) a read with a person's connection, in any unattended run.
    for meta in [
        by(Some(StartedBy::Schedule)),
        by(Some(StartedBy::Key)),
        mailed(),
    ] {
        let started = meta.started_by.map(StartedBy::as_str);
        let run = turn(&f, AGENT, "call t.mine", meta).await;
        let a = the_approval(&f, &run).await;
        names_the_rule(&a, "t.mine", "person-connection", started);
        assert!(
            a.description
                .as_deref()
                .unwrap()
                .contains("connection \"me\""),
            "{a:?}"
        );
    }
    assert_eq!(f.ran("t.mine"), 0);
    // Outside a mail run, a mutating tool and the company's connection run unasked.
    let run = turn(
        &f,
        AGENT,
        "call t.box t.note t.lookup",
        by(Some(StartedBy::Webhook)),
    )
    .await;
    completed(&run);
    assert_eq!(
        (f.ran("t.box"), f.ran("t.note"), f.ran("t.lookup")),
        (1, 1, 1)
    );
    // (c) in a mail run, a tool that isn't mutating: false waits; a read runs.
    let run = turn(&f, AGENT, "call t.lookup t.note", mailed()).await;
    let a = the_approval(&f, &run).await;
    names_the_rule(&a, "t.note", "mail-not-read-only", Some("mail"));
    assert_eq!(f.ran("t.lookup"), 2, "the read ran");
    assert_eq!(f.ran("t.note"), 1);
    // (d) in a mail run, a read of the run's own mailbox waits.
    let run = turn(&f, AGENT, "call t.box", mailed()).await;
    let a = the_approval(&f, &run).await;
    names_the_rule(&a, "t.box", "mail-mailbox", Some("mail"));
    assert_eq!(f.ran("t.box"), 1);
    // A person's run reads with the person's connection unasked.
    let run = turn(&f, AGENT, "call t.mine", by(Some(StartedBy::Person))).await;
    completed(&run);
    assert_eq!(f.ran("t.mine"), 1);
    cleanup(db).await;
}

// ----- flow tool steps and child runs ---------------------------------------------------------

async fn step_failed(f: &Fixture, run: &RunRecord) -> Value {
    let journal = f.rt.journal(&run.id, None, None).await.unwrap();
    journal
        .iter()
        .find(|e| e.kind.as_str() == "step.failed")
        .and_then(|e| e.payload.clone())
        .unwrap()
}

async fn a_flow_tool_step_calling_it_fails(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b).await;
    let run = flow(&f, "t.flow-send", by(Some(StartedBy::Schedule))).await;
    assert_eq!(run.status, RunStatus::Failed);
    let message = "unattended-approval-required: tool \"t.send\" needs a person's yes in a run no person started (needsApprovalWhenUnattended); this run was started by schedule: call it from an agent step (which asks a reviewer), or list it in the trigger's toolsAllowedUnattended";
    assert_eq!(run.failure_message.as_deref(), Some(message));
    let failure = run.failure().unwrap();
    assert_eq!(
        (failure.code.as_str(), failure.message.as_str()),
        ("run-failed", message)
    );
    let p = step_failed(&f, &run).await;
    assert_eq!(p["message"], message);
    assert_eq!(p["code"], "unattended-approval-required");
    assert_eq!(p["rule"], "needsApprovalWhenUnattended");
    assert_eq!(p["toolId"], "t.send");
    assert_eq!(p["startedBy"], "schedule");
    assert!(
        open_approvals(&f, &run).await.is_empty(),
        "a flow step asks nobody"
    );
    assert_eq!(f.ran("t.send"), 0);
    // A person's run, and a trigger that lists the tool, call it.
    completed(&flow(&f, "t.flow-send", by(Some(StartedBy::Person))).await);
    let meta = allowing(by(Some(StartedBy::Webhook)), &["t.send"]);
    completed(&flow(&f, "t.flow-send", meta).await);
    assert_eq!(f.ran("t.send"), 2);
    // A read the rule doesn't cover runs; a fanout branch with a person's connection fails.
    completed(&flow(&f, "t.flow-lookup", by(Some(StartedBy::Schedule))).await);
    let run = flow(&f, "t.flow-fan", by(Some(StartedBy::Key))).await;
    assert_eq!(run.status, RunStatus::Failed);
    assert!(
        run.failure_message
            .as_deref()
            .unwrap()
            .contains("unattended-approval-required: tool \"t.mine\" needs a person's yes in a run no person started (it acts with connection \"me\", a person's"),
        "{:?}",
        run.failure_message
    );
    assert_eq!(f.ran("t.mine"), 0);
    cleanup(db).await;
}

async fn child(f: &Fixture, parent: &RunRecord) -> RunRecord {
    let children =
        f.rt.list_runs(&RunQuery {
            parent_run_id: Some(parent.id.clone()),
            ..RunQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(children.len(), 1, "{children:?}");
    children.into_iter().next().unwrap()
}

async fn child_runs_inherit_the_rule_and_what_lifts_it(backend: Backend) {
    let (b, db) = builder(backend).await;
    let f = fixture(b).await;
    // A sub-flow's tool step in a scheduled run is refused in the child run.
    let parent = flow(&f, "t.flow-parent", by(Some(StartedBy::Schedule))).await;
    assert_eq!(parent.status, RunStatus::Failed);
    let sub = child(&f, &parent).await;
    assert_eq!(sub.meta.started_by, Some(StartedBy::Schedule));
    assert_eq!(sub.status, RunStatus::Failed);
    assert!(
        sub.failure_message
            .as_deref()
            .unwrap()
            .starts_with("unattended-approval-required: tool \"t.send\""),
        "{:?}",
        sub.failure_message
    );
    // What the trigger lifts, its child runs may too.
    let parent = flow(
        &f,
        "t.flow-parent",
        allowing(by(Some(StartedBy::Webhook)), &["t.send"]),
    )
    .await;
    completed(&parent);
    assert_eq!(
        child(&f, &parent).await.meta.unattended.tools_allowed,
        ["t.send"]
    );
    assert_eq!(f.ran("t.send"), 1);
    // A sub-flow's agent step asks; the yes lets the whole family finish.
    let parent = flow(&f, "t.flow-parent-agent", by(Some(StartedBy::Event))).await;
    assert_eq!(
        parent.status,
        RunStatus::Suspended,
        "{:?}",
        parent.failure_message
    );
    let sub = child(&f, &parent).await;
    assert_eq!(sub.meta.started_by, Some(StartedBy::Event));
    let a = the_approval(&f, &sub).await;
    names_the_rule(&a, "t.send", "needsApprovalWhenUnattended", Some("event"));
    decide(&f, &a, DecisionKind::Approve).await;
    completed(&f.rt.wait_for_run(&parent.id).await.unwrap());
    assert_eq!(f.ran("t.send"), 2);
    cleanup(db).await;
}
