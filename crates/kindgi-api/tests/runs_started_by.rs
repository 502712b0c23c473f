//! `startedBy` over `/v1/runs` on a real runtime and database (SQLite and PostgreSQL;
//! platform-api.md §3.1, §3.3): it comes from the caller, never the body (a person's key →
//! `person`, a key that is its own principal → `key`); every run in a list shows it; our
//! `?startedBy=` extension filters on it (repeat or comma, unknown values refused as
//! `status`'s are), and `?triggerId=` on a trigger's fire. A scheduled run's agent call of a
//! tool needing approval when unattended is visible as the run's `waitingFor` and in
//! `GET /v1/approvals`, its title naming the rule. A fire's starts under its run idempotency
//! key `fire:<fireId>` — at once, and again later — make one run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, router};
use kindgi_core::{RunTrigger, StartedBy, TriggerKind};
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{RunMeta, RunOptions, Runtime};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyRole, NewToken};
use kindgi_tools::Tool;
use serde_json::{Value, json};

const TRIGGER: &str = "5b0c8a9e-3b1d-4c55-9e2a-0d6b8f1e2a01";
const OTHER_TRIGGER: &str = "5b0c8a9e-3b1d-4c55-9e2a-0d6b8f1e2a02";

/// A model that asks for `acme.send` once, then answers `done`.
#[derive(Debug)]
struct CallsSend;

#[async_trait::async_trait]
impl ModelProvider for CallsSend {
    fn provider_id(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "script-1"
    }
    async fn invoke(&self, r: ModelRequest) -> Result<ModelResponse, ModelError> {
        let answered = r.messages.iter().any(|m| m.role == Role::Tool);
        Ok(ModelResponse {
            text: if answered {
                "done".into()
            } else {
                String::new()
            },
            tool_calls: if answered {
                vec![]
            } else {
                vec![ToolCall {
                    id: "c1".into(),
                    name: "acme.send".into(),
                    arguments: json!({}),
                }]
            },
            finish_reason: if answered {
                FinishReason::Stop
            } else {
                FinishReason::ToolUse
            },
            usage: Default::default(),
            warnings: vec![],
        })
    }
}

struct Env {
    db: TestDatabase,
    rt: Runtime,
    person: TestClient,
    key: TestClient,
}

async fn env(kind: DatabaseKind) -> Env {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports())
        .model(std::sync::Arc::new(CallsSend))
        .build();
    let echo = Tool::define("acme.echo")
        .version("1.0.0")
        .description("echo")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|input: Value, _ctx| async move { Ok::<Value, kindgi_tools::HandlerError>(input) })
        .build()
        .unwrap();
    rt.tools().insert_tool(echo);
    let send = Tool::define("acme.send")
        .version("1.0.0")
        .description("sends")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .needs_approval_when_unattended(true)
        .handler(|_input: Value, _ctx| async move {
            Ok::<Value, kindgi_tools::HandlerError>(json!({"sent": true}))
        })
        .build()
        .unwrap();
    rt.tools().insert_tool(send);
    rt.agents()
        .insert(kindgi_runtime::AgentSpec::new("acme.sender").with_tools(["acme.send"]));
    rt.flows()
        .insert_json(
            &json!({
                "id": "acme.noop", "version": "1.0.0",
                "nodes": [{"id": "n", "kind": "tool", "ref": "acme.echo"}],
                "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
            })
            .to_string(),
        )
        .unwrap();
    let state = AppState::new(db.db.clone());
    let person = state.tokens.create("acme", None).await.unwrap().key;
    let key = state
        .tokens
        .mint(&NewToken {
            tenant: "acme".into(),
            principal: None,
            role: KeyRole::Admin,
            capabilities: vec![],
            label: Some("ci".into()),
            project_id: None,
            created_by: None,
            expires_at: None,
        })
        .await
        .unwrap()
        .key;
    let app = router(state.with_runtime(rt.clone()));
    Env {
        db,
        rt,
        person: TestClient::new(app.clone(), Some(person)),
        key: TestClient::new(app, Some(key)),
    }
}

/// A run of `acme.noop` started as a trigger starts one.
async fn triggered(e: &Env, kind: TriggerKind, trigger: &str) -> String {
    let run =
        e.rt.start_run(
            "acme.noop",
            None,
            json!({}),
            RunOptions {
                wait: true,
                tenant_id: Some("acme".into()),
                meta: RunMeta {
                    started_by: Some(StartedBy::for_trigger(kind)),
                    started_by_actor: Some("user:owner".into()),
                    trigger: Some(RunTrigger {
                        trigger_id: trigger.into(),
                        kind,
                        fire_id: uuid::Uuid::new_v4().to_string(),
                        scheduled_for: None,
                    }),
                    ..RunMeta::default()
                },
                ..RunOptions::default()
            },
        )
        .await
        .unwrap();
    run.id
}

fn ids(page: &Value) -> Vec<String> {
    let mut v: Vec<String> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

fn sorted(mut v: Vec<&String>) -> Vec<String> {
    v.sort();
    v.into_iter().cloned().collect()
}

async fn started_by_comes_from_the_caller_and_lists_filter_on_it(kind: DatabaseKind) {
    let e = env(kind).await;
    // A body's `startedBy` is never read: the caller decides.
    let body = json!({"flow": "acme.noop", "input": {}, "startedBy": "schedule"});
    let by_person = e.person.post_json("/v1/runs", &body).await;
    assert_eq!(by_person.status, 201, "{}", by_person.json());
    assert_eq!(by_person.json()["startedBy"], "person");
    let by_key = e.key.post_json("/v1/runs", &body).await;
    assert_eq!(by_key.status, 201, "{}", by_key.json());
    assert_eq!(by_key.json()["startedBy"], "key");
    let person_run = by_person.json()["id"].as_str().unwrap().to_owned();
    let key_run = by_key.json()["id"].as_str().unwrap().to_owned();
    let read = e.person.get(&format!("/v1/runs/{key_run}")).await.json();
    assert_eq!(read["startedBy"], "key");

    let scheduled = triggered(&e, TriggerKind::Schedule, TRIGGER).await;
    let hooked = triggered(&e, TriggerKind::Webhook, OTHER_TRIGGER).await;
    let mailed = triggered(&e, TriggerKind::Mail, OTHER_TRIGGER).await;

    // Every row of a list shows how its run started.
    let all = e.person.get("/v1/runs").await.json();
    let rows = all["data"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "{all}");
    for r in rows {
        let want = match r["id"].as_str().unwrap() {
            id if id == person_run => "person",
            id if id == key_run => "key",
            id if id == scheduled => "schedule",
            id if id == hooked => "webhook",
            id if id == mailed => "mail",
            other => panic!("unexpected run {other}"),
        };
        assert_eq!(r["startedBy"], want, "{r}");
    }
    let scheduled_row = rows.iter().find(|r| r["id"] == json!(scheduled)).unwrap();
    assert_eq!(
        scheduled_row["trigger"]["triggerId"], TRIGGER,
        "{scheduled_row}"
    );

    for (query, want) in [
        ("startedBy=person", vec![&person_run]),
        ("startedBy=schedule,webhook", vec![&scheduled, &hooked]),
        (
            "startedBy=mail&startedBy=key&startedBy=mail",
            vec![&mailed, &key_run],
        ),
        ("startedBy=event", vec![]),
        (&format!("triggerId={TRIGGER}") as &str, vec![&scheduled]),
        (
            &format!("triggerId={OTHER_TRIGGER}"),
            vec![&hooked, &mailed],
        ),
        (
            &format!("triggerId={OTHER_TRIGGER}&startedBy=mail"),
            vec![&mailed],
        ),
        ("startedBy=person&status=completed", vec![&person_run]),
    ] {
        let page = e.person.get(&format!("/v1/runs?{query}")).await;
        assert_eq!(page.status, 200, "{query}: {}", page.json());
        assert_eq!(ids(&page.json()), sorted(want), "{query}");
    }

    let r = e.person.get("/v1/runs?startedBy=robot,schedule,cron").await;
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v["error"]["code"], "bad-input");
    assert_eq!(
        v["error"]["message"],
        "Unknown `startedBy` value(s): robot, cron. Expected one or more of: person, key, schedule, webhook, event, mail"
    );
    assert_eq!(v["error"]["details"]["field"], "startedBy");
    e.db.cleanup().await.unwrap();
}

async fn an_unattended_wait_is_visible_on_the_run_and_in_approvals(kind: DatabaseKind) {
    let e = env(kind).await;
    let run =
        e.rt.start_agent_turn(
            "acme.sender",
            None,
            json!({"userMessage": "send"}),
            RunOptions {
                wait: true,
                tenant_id: Some("acme".into()),
                meta: RunMeta {
                    started_by: Some(StartedBy::Schedule),
                    ..RunMeta::default()
                },
                ..RunOptions::default()
            },
        )
        .await
        .unwrap();
    let title = "HITL review: acme.send (unattended run: needsApprovalWhenUnattended)";
    let read = e.person.get(&format!("/v1/runs/{}", run.id)).await.json();
    assert_eq!(read["status"], "suspended", "{read}");
    assert_eq!(read["startedBy"], "schedule");
    let waiting = &read["waitingFor"]["approvals"];
    assert_eq!(waiting.as_array().unwrap().len(), 1, "{read}");
    assert_eq!(waiting[0]["title"], title, "{read}");
    assert_eq!(waiting[0]["tool"]["id"], "acme.send");
    let page = e
        .person
        .get(&format!("/v1/approvals?runId={}", run.id))
        .await;
    assert_eq!(page.status, 200, "{}", page.json());
    let approvals = page.json()["data"].clone();
    assert_eq!(approvals.as_array().unwrap().len(), 1, "{approvals}");
    assert_eq!(approvals[0]["title"], title);
    assert_eq!(approvals[0]["status"], "pending");
    assert_eq!(
        approvals[0]["subjectRef"]["unattended"],
        json!({"rule": "needsApprovalWhenUnattended", "startedBy": "schedule"})
    );
    let listed = e
        .person
        .get("/v1/runs?startedBy=schedule&status=suspended")
        .await
        .json();
    assert_eq!(listed["data"][0]["id"], json!(run.id), "{listed}");
    e.db.cleanup().await.unwrap();
}

/// Starts `acme.noop` for fire `fire_id` of `TRIGGER` under its run idempotency key.
async fn fire_start(rt: &Runtime, fire_id: &str) -> String {
    let options = RunOptions {
        tenant_id: Some("acme".into()),
        meta: RunMeta {
            started_by: Some(StartedBy::Webhook),
            started_by_actor: Some("user:owner".into()),
            trigger: Some(RunTrigger {
                trigger_id: TRIGGER.into(),
                kind: TriggerKind::Webhook,
                fire_id: fire_id.into(),
                scheduled_for: None,
            }),
            ..RunMeta::default()
        },
        idempotency_key: Some(format!("fire:{fire_id}")),
        ..RunOptions::default()
    };
    rt.start_run("acme.noop", None, json!({}), options)
        .await
        .unwrap()
        .id
}

async fn a_fire_starts_one_run_under_its_idempotency_key(kind: DatabaseKind) {
    let e = env(kind).await;
    let fire = uuid::Uuid::new_v4().to_string();
    // Two starts at once (two replicas, a retried fire) and one later: one run.
    let (a, b) = tokio::join!(fire_start(&e.rt, &fire), fire_start(&e.rt, &fire));
    let later = fire_start(&e.rt, &fire).await;
    assert_eq!(a, b);
    assert_eq!(a, later);
    assert_eq!(
        a,
        kindgi_runtime::runtime::run_id_for_key("acme", &format!("fire:{fire}"))
    );
    let page = e
        .person
        .get(&format!("/v1/runs?triggerId={TRIGGER}"))
        .await
        .json();
    assert_eq!(ids(&page), vec![a.clone()], "{page}");
    // Another fire is another run; the same fire id in another tenant too.
    let other = fire_start(&e.rt, &uuid::Uuid::new_v4().to_string()).await;
    assert_ne!(other, a);
    assert_ne!(
        kindgi_runtime::runtime::run_id_for_key("globex", &format!("fire:{fire}")),
        a
    );
    e.db.cleanup().await.unwrap();
}

#[tokio::test]
async fn a_fire_starts_one_run_under_its_idempotency_key_sqlite() {
    a_fire_starts_one_run_under_its_idempotency_key(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn a_fire_starts_one_run_under_its_idempotency_key_postgres() {
    a_fire_starts_one_run_under_its_idempotency_key(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn an_unattended_wait_is_visible_on_the_run_and_in_approvals_sqlite() {
    an_unattended_wait_is_visible_on_the_run_and_in_approvals(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn an_unattended_wait_is_visible_on_the_run_and_in_approvals_postgres() {
    an_unattended_wait_is_visible_on_the_run_and_in_approvals(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn started_by_comes_from_the_caller_and_lists_filter_on_it_sqlite() {
    started_by_comes_from_the_caller_and_lists_filter_on_it(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn started_by_comes_from_the_caller_and_lists_filter_on_it_postgres() {
    started_by_comes_from_the_caller_and_lists_filter_on_it(DatabaseKind::Postgres).await;
}
