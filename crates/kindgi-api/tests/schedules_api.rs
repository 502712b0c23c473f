//! `/v1/schedules` over a real runtime on a real database (SQLite and PostgreSQL), as
//! platform-api.md §8 and §15 cases 78–88 say. Fires are driven by the schedule loop's own
//! pass (`Schedules::tick`) at chosen instants, so nothing here waits on a clock; a fire's
//! run is awaited by reading it back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::{Method, StatusCode};
use kindgi_api::testing::{TestClient, TestResponse};
use kindgi_api::{AppState, router};
use kindgi_runtime::triggers::Schedules;
use kindgi_runtime::{AgentSpec, Runtime};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use serde_json::{Value, json};

const UNKNOWN: &str = "7f0c8a9e-3b1d-4c55-9e2a-0d6b8f1e2a33";

fn echo_tool() -> Tool {
    Tool::define("acme.echo")
        .version("1.0.0")
        .description("echoes")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|input: Value, _ctx| async move { Ok::<Value, HandlerError>(input) })
        .build()
        .unwrap()
}

/// A read-only tool that runs until its run is cancelled.
fn hold_tool() -> Tool {
    Tool::define("acme.hold")
        .version("1.0.0")
        .description("waits for its cancellation")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|_input: Value, ctx: kindgi_tools::ToolContext| async move {
            ctx.signal.cancelled().await;
            Err::<Value, HandlerError>(HandlerError::msg("cancelled"))
        })
        .build()
        .unwrap()
}

fn flow(id: &str, tool: &str) -> String {
    json!({
        "id": id, "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": tool}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    })
    .to_string()
}

struct Env {
    db: TestDatabase,
    acme: TestClient,
    schedules: Schedules,
    state: AppState,
}

async fn env(kind: DatabaseKind) -> Env {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    rt.tools().insert_tool(echo_tool());
    rt.tools().insert_tool(hold_tool());
    rt.flows()
        .insert_json(&flow("acme.nightly", "acme.echo"))
        .unwrap();
    rt.flows()
        .insert_json(&flow("acme.hold", "acme.hold"))
        .unwrap();
    let mut digest = AgentSpec::new("acme.digest");
    digest.version = "1.0.0".into();
    rt.agents().insert(digest);
    let state = AppState::new(db.db.clone()).with_runtime(rt);
    let key = state.tokens.create("acme", None).await.unwrap();
    let app = router(state.clone());
    Env {
        db,
        acme: TestClient::new(app, Some(key.key)),
        schedules: state.schedules.clone(),
        state,
    }
}

async fn patch(c: &TestClient, uri: &str, body: &Value) -> TestResponse {
    c.send(Method::PATCH, uri, Some(body.to_string().into_bytes()), &[])
        .await
}

fn nightly(cron: &str) -> Value {
    json!({"flowId": "acme.nightly", "flowVersion": "1.0.0", "config": {"cronExpression": cron, "input": {"n": 1}}})
}

async fn create(e: &Env, body: &Value) -> Value {
    let r = e.acme.post_json("/v1/schedules", body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    r.json()
}

/// The fires of `id`, newest first.
async fn fires(e: &Env, id: &str) -> Vec<Value> {
    let r = e.acme.get(&format!("/v1/schedules/{id}/fires")).await;
    assert_eq!(r.status, StatusCode::OK);
    r.json()["data"].as_array().unwrap().clone()
}

/// Waits (reading it back, bounded) until fire `fire_id` has an outcome other than pending.
async fn settled(e: &Env, id: &str, fire_id: &str) -> Value {
    for _ in 0..400 {
        let f = fires(e, id).await;
        if let Some(f) = f.iter().find(|f| f["fireId"] == fire_id)
            && f["outcome"] != "pending"
        {
            return f.clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("fire {fire_id} stayed pending");
}

/// Waits (reading it back, bounded) until run `run_id` has finished, so a later fire under
/// `overlap: skip` doesn't see it as unfinished.
async fn finished(e: &Env, run_id: &str) -> Value {
    for _ in 0..400 {
        let run = e.acme.get(&format!("/v1/runs/{run_id}")).await.json();
        if matches!(
            run["status"].as_str(),
            Some("completed" | "failed" | "cancelled")
        ) {
            return run;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("run {run_id} never finished");
}

/// Moves a schedule's next occurrence (standing in for downtime).
async fn set_next(e: &Env, id: &str, at: i64) {
    let store = e.schedules.store();
    let mut s = store.get("acme", id).await.unwrap().unwrap();
    s.next_fire_at = Some(at);
    assert!(store.update(&s).await.unwrap());
}

fn ms(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .timestamp_millis()
}

// Cases 78–80.
async fn register_refusals_and_defaults(kind: DatabaseKind) {
    let e = env(kind).await;
    let bad = |body: Value, code: &'static str, needle: &'static str| {
        let c = e.acme.clone();
        async move {
            let r = c.post_json("/v1/schedules", &body).await;
            assert_eq!(
                r.error_code().as_deref(),
                Some(code),
                "{body}: {:?}",
                r.json()
            );
            let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
            assert!(message.contains(needle), "{message}");
            r
        }
    };
    let cron = json!({"cronExpression": "0 3 * * *"});
    bad(
        json!({"agentId": "acme.digest", "config": cron}),
        "bad-input",
        "userMessage",
    )
    .await;
    bad(
        json!({"flowId": "acme.nightly", "config": cron}),
        "bad-input",
        "`flowVersion` is required with `flowId`",
    )
    .await;
    bad(json!({"flowId": "acme.nightly", "flowVersion": "1.0.0", "agentId": "acme.digest", "config": cron}), "bad-input", "Name what the schedule runs").await;
    bad(
        json!({"config": cron}),
        "bad-input",
        "Name what the schedule runs",
    )
    .await;
    bad(
        json!({"flowId": "acme.nightly", "flowVersion": "1.0.0", "config": {}}),
        "bad-input",
        "`config.cronExpression` is required",
    )
    .await;
    bad(
        json!({"flowId": "acme.nightly", "flowVersion": "1.0.0"}),
        "bad-input",
        "`config.cronExpression` is required",
    )
    .await;
    let mut zero = nightly("0 3 * * *");
    zero["startingDeadlineSeconds"] = json!(0);
    bad(zero, "bad-input", "startingDeadlineSeconds").await;
    let mut policy = nightly("0 3 * * *");
    policy["catchUp"] = json!("all");
    bad(policy, "bad-input", "catchUp").await;
    // Case 79: the runtime's check, naming the field.
    let r = bad(
        nightly("every day"),
        "trigger-invalid-config",
        "config.cronExpression",
    )
    .await;
    assert_eq!(
        r.json()["error"]["details"]["field"],
        "config.cronExpression"
    );
    let mut tz = nightly("0 3 * * *");
    tz["config"]["timezone"] = json!("Mars/Olympus");
    let r = bad(tz, "trigger-invalid-config", "config.timezone").await;
    assert_eq!(r.json()["error"]["details"]["field"], "config.timezone");
    // Sub-minute outside `kindgi dev`.
    bad(
        nightly("* * * * * *"),
        "trigger-invalid-config",
        "once a minute",
    )
    .await;
    // Targets that don't exist, worded as `POST /v1/runs` words them.
    let mut missing = nightly("0 3 * * *");
    missing["flowVersion"] = json!("9.9.9");
    bad(missing, "flow-not-found", "acme.nightly").await;
    bad(json!({"agentId": "acme.nope", "config": {"cronExpression": "@daily", "input": {"userMessage": "hi"}}}), "agent-not-found", "acme.nope").await;
    bad(
        json!({"improve": {"agentId": "acme.digest"}, "config": cron}),
        "trigger-operation-unsupported",
        "improve",
    )
    .await;
    let mut project = nightly("0 3 * * *");
    project["projectId"] = json!("nope");
    bad(project, "bad-input", "projectId").await;

    // Case 80: the defaults.
    let s = create(&e, &nightly("0 3 * * *")).await;
    assert_eq!(s["scheduleId"], s["triggerId"]);
    assert!(uuid::Uuid::parse_str(s["scheduleId"].as_str().unwrap()).is_ok());
    assert_eq!(s["catchUp"], "latest");
    assert_eq!(s["overlap"], "skip");
    assert_eq!(s["startingDeadlineSeconds"], 600);
    assert_eq!(s["label"], Value::Null);
    assert_eq!(s["status"], "active");
    assert_eq!(s["lastFiredAt"], Value::Null);
    assert_eq!(s["input"], json!({"n": 1}));
    assert_eq!(s["owner"]["kind"], "user");
    assert!(
        s["nextFireAt"]
            .as_str()
            .unwrap()
            .ends_with("T03:00:00.000Z"),
        "{s}"
    );
    let agent = create(&e, &json!({"agentId": "acme.digest", "config": {"cronExpression": "@daily", "timezone": "Europe/Berlin", "input": {"userMessage": "digest"}}, "label": "morning"})).await;
    assert_eq!(agent["agentId"], "acme.digest");
    assert_eq!(agent["timezone"], "Europe/Berlin");
    assert_eq!(agent["label"], "morning");
    assert!(agent.get("flowId").is_none());
    e.db.cleanup().await.unwrap();
}

// Cases 81–83 and 88.
async fn reads_lifecycle_and_unregister(kind: DatabaseKind) {
    let e = env(kind).await;
    let s = create(&e, &nightly("*/5 * * * *")).await;
    let id = s["scheduleId"].as_str().unwrap().to_owned();
    // Case 81.
    let r = e.acme.get(&format!("/v1/schedules/{id}?upcoming=3")).await;
    assert_eq!(r.status, StatusCode::OK);
    let up: Vec<i64> = r.json()["upcoming"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| ms(t.as_str().unwrap()))
        .collect();
    assert_eq!(up.len(), 3);
    assert!(
        up[0] < up[1] && up[1] < up[2] && up[1] - up[0] == 300_000,
        "{up:?}"
    );
    for bad in ["21", "0", "x"] {
        let r = e
            .acme
            .get(&format!("/v1/schedules/{id}?upcoming={bad}"))
            .await;
        assert_eq!(r.error_code().as_deref(), Some("bad-input"), "{bad}");
    }
    for missing in ["nope", UNKNOWN] {
        let r = e.acme.get(&format!("/v1/schedules/{missing}")).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        assert_eq!(r.error_code().as_deref(), Some("trigger-not-found"));
        assert_eq!(
            r.json()["error"]["message"],
            format!("No schedule with id \"{missing}\"")
        );
        assert_eq!(r.json()["error"]["details"]["triggerId"], missing);
    }
    // Lists: paged, filtered by status.
    let second = create(&e, &nightly("@hourly")).await;
    let r = e.acme.get("/v1/schedules?limit=1").await;
    let page = r.json();
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    assert_eq!(page["hasMore"], true);
    let cursor = page["nextCursor"].as_str().unwrap();
    let r = e
        .acme
        .get(&format!("/v1/schedules?limit=1&cursor={cursor}"))
        .await;
    assert_eq!(r.json()["data"][0]["scheduleId"], second["scheduleId"]);
    assert_eq!(r.json()["hasMore"], false);
    assert!(r.json().get("nextCursor").is_none());
    // Case 82: pause, again, resume.
    let r = e.acme.post(&format!("/v1/schedules/{id}/pause")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["status"], "paused");
    let r = e.acme.post(&format!("/v1/schedules/{id}/pause")).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.error_code().as_deref(), Some("trigger-already-in-state"));
    assert_eq!(
        r.json()["error"]["message"],
        "The trigger is already paused"
    );
    let r = e.acme.get("/v1/schedules?status=paused").await;
    assert_eq!(r.json()["data"].as_array().unwrap().len(), 1);
    let r = e.acme.get("/v1/schedules?status=bogus").await;
    assert_eq!(r.json()["data"].as_array().unwrap().len(), 2, "ignored");
    let r = e
        .acme
        .post_json(&format!("/v1/schedules/{id}/resume"), &json!({}))
        .await;
    assert_eq!(r.json()["status"], "active");
    assert!(r.json()["nextFireAt"].is_string());
    let r = e.acme.post(&format!("/v1/schedules/{id}/resume")).await;
    assert_eq!(
        r.json()["error"]["message"],
        "The trigger is already active"
    );
    // Case 83.
    let r = patch(
        &e.acme,
        &format!("/v1/schedules/{id}"),
        &json!({"label": "x"}),
    )
    .await;
    assert_eq!(r.json()["label"], "x");
    let r = patch(
        &e.acme,
        &format!("/v1/schedules/{id}"),
        &json!({"label": null}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["label"], Value::Null);
    let before = ms(r.json()["nextFireAt"].as_str().unwrap());
    let r = patch(
        &e.acme,
        &format!("/v1/schedules/{id}"),
        &json!({"config": {"cronExpression": "0 0 1 1 *"}}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    let after = ms(r.json()["nextFireAt"].as_str().unwrap());
    assert!(
        after > before
            && r.json()["nextFireAt"]
                .as_str()
                .unwrap()
                .contains("-01-01T00:00:00")
    );
    assert_eq!(r.json()["cronExpression"], "0 0 1 1 *");
    let r = patch(
        &e.acme,
        &format!("/v1/schedules/{id}"),
        &json!({"config": {"cronExpression": "nope"}}),
    )
    .await;
    assert_eq!(r.error_code().as_deref(), Some("trigger-invalid-config"));
    let r = patch(
        &e.acme,
        &format!("/v1/schedules/{id}"),
        &json!({"agentId": "acme.digest"}),
    )
    .await;
    assert_eq!(
        r.error_code().as_deref(),
        Some("bad-input"),
        "an agent needs userMessage"
    );
    // Case 88.
    let r = e.acme.post(&format!("/v1/schedules/{id}/unregister")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json(), json!({"scheduleId": id, "unregistered": true}));
    let r = e.acme.get(&format!("/v1/schedules/{id}")).await;
    assert_eq!(r.error_code().as_deref(), Some("trigger-not-found"));
    let r = e.acme.post(&format!("/v1/schedules/{id}/unregister")).await;
    assert_eq!(r.error_code().as_deref(), Some("trigger-not-found"));
    e.db.cleanup().await.unwrap();
}

// Case 84, and a real occurrence fired by the loop's pass.
async fn run_now_and_fires(kind: DatabaseKind) {
    let e = env(kind).await;
    let mut body = nightly("0 3 * * *");
    body["toolsAllowedUnattended"] = json!(["acme.echo"]);
    let s = create(&e, &body).await;
    assert_eq!(s["toolsAllowedUnattended"], json!(["acme.echo"]));
    let id = s["scheduleId"].as_str().unwrap().to_owned();
    let next = s["nextFireAt"].clone();
    let r = e.acme.post(&format!("/v1/schedules/{id}/run-now")).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let fire = r.json();
    assert_eq!(fire["manual"], true);
    assert_eq!(fire["outcome"], "pending");
    assert_eq!(fire["scheduleId"], id.as_str());
    assert!(fire.get("scheduledFor").is_none());
    let done = settled(&e, &id, fire["fireId"].as_str().unwrap()).await;
    assert_eq!(done["outcome"], "started", "{done}");
    let run_id = done["runId"].as_str().unwrap();
    // The run's idempotency key is `fire:<fireId>`: a retried fire names the same run.
    assert_eq!(
        run_id,
        kindgi_runtime::runtime::run_id_for_key(
            "acme",
            &format!("fire:{}", fire["fireId"].as_str().unwrap())
        )
    );
    let run = finished(&e, run_id).await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["startedBy"], "schedule");
    assert_eq!(run["trigger"]["kind"], "schedule");
    assert_eq!(run["trigger"]["triggerId"], id.as_str());
    assert_eq!(run["trigger"]["fireId"], fire["fireId"]);
    let got = e.acme.get(&format!("/v1/schedules/{id}")).await.json();
    assert_eq!(
        got["nextFireAt"], next,
        "run-now leaves the next occurrence"
    );
    assert!(got["lastFiredAt"].is_string());
    // The occurrence itself, through the loop's pass.
    let at = ms(next.as_str().unwrap());
    assert_eq!(e.schedules.tick(at + 10).await.unwrap(), 1);
    assert_eq!(e.schedules.tick(at + 20).await.unwrap(), 0, "fired once");
    let all = fires(&e, &id).await;
    assert_eq!(all.len(), 2);
    let occurrence = &all[0];
    assert_eq!(occurrence["scheduledFor"], next);
    assert_eq!(occurrence["outcome"], "started", "{occurrence}");
    assert!(occurrence.get("manual").is_none());
    let r = e.acme.get(&format!("/v1/runs?triggerId={id}")).await.json();
    assert_eq!(r["data"].as_array().unwrap().len(), 2, "{r}");
    let run = e
        .acme
        .get(&format!(
            "/v1/runs/{}",
            occurrence["runId"].as_str().unwrap()
        ))
        .await
        .json();
    assert_eq!(run["trigger"]["scheduledFor"], next);
    // The run's input is `config.input` (kept, not on the wire's Run).
    let stored = e
        .state
        .runtime
        .store()
        .get_run(occurrence["runId"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.input, json!({"n": 1}));
    let after = e.acme.get(&format!("/v1/schedules/{id}")).await.json();
    assert_eq!(ms(after["nextFireAt"].as_str().unwrap()), at + 86_400_000);
    e.db.cleanup().await.unwrap();
}

// Case 85.
async fn overlap_skip(kind: DatabaseKind) {
    let e = env(kind).await;
    let s = create(&e, &json!({"flowId": "acme.hold", "flowVersion": "1.0.0", "config": {"cronExpression": "* * * * *"}})).await;
    let id = s["scheduleId"].as_str().unwrap().to_owned();
    let at = ms(s["nextFireAt"].as_str().unwrap());
    assert_eq!(e.schedules.tick(at).await.unwrap(), 1);
    let first = fires(&e, &id).await.remove(0);
    assert_eq!(first["outcome"], "started", "{first}");
    // The next occurrence comes while that run is still running.
    assert_eq!(e.schedules.tick(at + 60_000).await.unwrap(), 1);
    let second = fires(&e, &id).await.remove(0);
    assert_eq!(second["outcome"], "skipped-overlap", "{second}");
    assert!(second.get("runId").is_none());
    let runs = e.acme.get(&format!("/v1/runs?triggerId={id}")).await.json();
    assert_eq!(
        runs["data"].as_array().unwrap().len(),
        1,
        "no run for the skip"
    );
    // `allow` starts another.
    patch(
        &e.acme,
        &format!("/v1/schedules/{id}"),
        &json!({"overlap": "allow"}),
    )
    .await;
    assert_eq!(e.schedules.tick(at + 120_000).await.unwrap(), 1);
    assert_eq!(fires(&e, &id).await[0]["outcome"], "started");
    for run in e.acme.get(&format!("/v1/runs?triggerId={id}")).await.json()["data"]
        .as_array()
        .unwrap()
    {
        e.acme
            .post_json(
                &format!("/v1/runs/{}/cancel", run["id"].as_str().unwrap()),
                &json!({}),
            )
            .await;
    }
    e.db.cleanup().await.unwrap();
}

// Case 86.
async fn catch_up_after_downtime(kind: DatabaseKind) {
    let e = env(kind).await;
    let now = kindgi_core::now_millis();
    for (policy, fired) in [("latest", true), ("skip", false)] {
        let mut body = nightly("0 * * * *");
        body["catchUp"] = json!(policy);
        body["startingDeadlineSeconds"] = json!(60);
        let s = create(&e, &body).await;
        let id = s["scheduleId"].as_str().unwrap().to_owned();
        let next = ms(s["nextFireAt"].as_str().unwrap());
        // Down for three hours: the occurrences three, two and one hour before `next` missed.
        set_next(&e, &id, next - 3 * 3_600_000).await;
        e.schedules
            .tick(now.max(next - 3_600_000 + 61_000))
            .await
            .unwrap();
        let all = fires(&e, &id).await;
        if fired {
            assert_eq!(all.len(), 1, "{all:?}");
            assert!(all[0]["missedCount"].as_u64().unwrap() >= 1, "{all:?}");
            assert_eq!(all[0]["outcome"], "started");
        } else {
            assert!(all.is_empty(), "{all:?}");
        }
        let after = e.acme.get(&format!("/v1/schedules/{id}")).await.json();
        assert_eq!(ms(after["nextFireAt"].as_str().unwrap()), next, "no replay");
    }
    e.db.cleanup().await.unwrap();
}

// Case 87.
async fn auto_pause_after_refusals(kind: DatabaseKind) {
    let e = env(kind).await;
    let owner = e.state.tokens.create("acme", None).await.unwrap();
    let client = TestClient::new(e.acme.app.clone(), Some(owner.key.clone()));
    let r = client
        .post_json("/v1/schedules", &nightly("* * * * *"))
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let id = r.json()["scheduleId"].as_str().unwrap().to_owned();
    let mut at = ms(r.json()["nextFireAt"].as_str().unwrap());
    e.state.tokens.revoke(&owner.key_id).await.unwrap();
    for n in 1..=5 {
        assert_eq!(e.schedules.tick(at).await.unwrap(), 1, "fire {n}");
        at += 60_000;
    }
    let all = fires(&e, &id).await;
    assert_eq!(all.len(), 5);
    assert!(all.iter().all(|f| f["outcome"] == "refused"), "{all:?}");
    assert!(
        all[0]["detail"].as_str().unwrap().contains("revoked"),
        "{all:?}"
    );
    let s = e.acme.get(&format!("/v1/schedules/{id}")).await.json();
    assert_eq!(s["status"], "paused", "{s}");
    assert!(
        s["statusReason"]
            .as_str()
            .unwrap()
            .contains("5 refused or failed"),
        "{s}"
    );
    assert_eq!(
        e.schedules.tick(at).await.unwrap(),
        0,
        "a paused schedule fires no more"
    );
    // Taking it over (an admin) and resuming clears the reason.
    let r = e.acme.post(&format!("/v1/schedules/{id}/owner")).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.json());
    let r = e.acme.post(&format!("/v1/schedules/{id}/resume")).await;
    assert_eq!(r.json()["status"], "active");
    assert!(r.json().get("statusReason").is_none());
    let r = e
        .acme
        .post_json(
            &format!("/v1/schedules/{UNKNOWN}/owner"),
            &json!({"runAsServiceAccountId": "nope"}),
        )
        .await;
    assert_eq!(r.error_code().as_deref(), Some("trigger-not-found"));
    let r = e
        .acme
        .post_json(
            &format!("/v1/schedules/{id}/owner"),
            &json!({"runAsServiceAccountId": UNKNOWN}),
        )
        .await;
    assert_eq!(r.error_code().as_deref(), Some("service-account-not-found"));
    e.db.cleanup().await.unwrap();
}

// A crowd due at one instant: one pass claims them in batches, starts every run and records
// every outcome (bounded: a pass that waited on a connection its own unpolled starts held
// would never end).
async fn a_crowd_due_at_once(kind: DatabaseKind) {
    let e = env(kind).await;
    let first = create(&e, &nightly("0 3 * * *")).await;
    let at = ms(first["nextFireAt"].as_str().unwrap());
    let store = e.schedules.store();
    let template = store
        .get("acme", first["scheduleId"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    let mut ids = vec![template.id.clone()];
    for _ in 1..300 {
        let mut s = template.clone();
        s.id = uuid::Uuid::new_v4().to_string();
        store.create(&s).await.unwrap();
        ids.push(s.id);
    }
    let moved = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        e.schedules.tick(at + 5),
    )
    .await
    .expect("the pass ends")
    .unwrap();
    assert_eq!(moved, 300);
    for id in &ids {
        let all = fires(&e, id).await;
        assert_eq!(all.len(), 1, "{all:?}");
        assert_eq!(all[0]["outcome"], "started", "{:?}", all[0]);
        assert!(all[0]["runId"].is_string());
    }
    e.db.cleanup().await.unwrap();
}

// A key limited to a project schedules in it and reaches no other project's schedules.
async fn project_keys(kind: DatabaseKind) {
    let e = env(kind).await;
    let r = e
        .acme
        .post_json("/v1/projects", &json!({"name": "ops", "slug": "ops"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let project = r.json()["id"].as_str().unwrap().to_owned();
    let r = e
        .acme
        .post_json("/v1/tokens", &json!({"projectId": project}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let pkey = TestClient::new(
        router(e.state.clone()),
        Some(r.json()["token"].as_str().unwrap().to_owned()),
    );
    let theirs = create(&e, &nightly("0 3 * * *")).await;
    let theirs_id = theirs["scheduleId"].as_str().unwrap();
    let r = pkey.post_json("/v1/schedules", &nightly("0 4 * * *")).await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let mine = r.json();
    assert_eq!(mine["projectId"], json!(project));
    let mut other = nightly("0 5 * * *");
    other["projectId"] = theirs["projectId"].clone();
    let r = pkey.post_json("/v1/schedules", &other).await;
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (StatusCode::FORBIDDEN, Some("key-project-mismatch"))
    );
    for r in [
        pkey.get(&format!("/v1/schedules/{theirs_id}")).await,
        pkey.post(&format!("/v1/schedules/{theirs_id}/pause")).await,
        pkey.post(&format!("/v1/schedules/{theirs_id}/run-now"))
            .await,
    ] {
        assert_eq!(
            (r.status, r.error_code().as_deref()),
            (StatusCode::FORBIDDEN, Some("permission-denied")),
            "{:?}",
            r.json()
        );
    }
    // A flow published in another project is not one it may run (no `execute` on it).
    let published = json!({"id": "acme.published", "version": "1.0.0", "projectId": theirs["projectId"],
        "nodes": [{"id": "n", "kind": "tool", "ref": "acme.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]});
    let r = e.acme.post_json("/v1/flows", &published).await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.json());
    let mut body = nightly("0 6 * * *");
    body["flowId"] = json!("acme.published");
    let r = pkey.post_json("/v1/schedules", &body).await;
    assert_eq!(
        (r.status, r.error_code().as_deref()),
        (StatusCode::FORBIDDEN, Some("permission-denied"))
    );
    assert_eq!(
        r.json()["error"]["details"]["resource"],
        "flow:acme.published"
    );
    let page = pkey.get("/v1/schedules").await.json();
    let ids: Vec<&Value> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["scheduleId"])
        .collect();
    assert_eq!(ids, vec![&mine["scheduleId"]], "{page}");
    assert!(fires(&e, theirs_id).await.is_empty(), "nothing fired");
    e.db.cleanup().await.unwrap();
}

macro_rules! both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Postgres).await })*
        }
    };
}

both_stores!(
    register_refusals_and_defaults,
    reads_lifecycle_and_unregister,
    run_now_and_fires,
    overlap_skip,
    catch_up_after_downtime,
    auto_pause_after_refusals,
    project_keys,
    a_crowd_due_at_once,
);
