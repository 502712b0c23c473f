//! Schedules end to end: the OFFICIAL CLI (`kindgi-cli==0.1.10`) drives `/v1/schedules`
//! against a host started as `kindgi dev` (so a 6-field every-second cron is allowed and
//! real fires come quickly), and the runs the loop fires carry `startedBy: schedule` and
//! `trigger.kind: schedule` and are found by `GET /v1/runs?triggerId=`. Then two schedule
//! loops — two "replicas", each its own runtime — over one PostgreSQL database fire every
//! occurrence once.
//!
//! Waiting for a fire reads the state back until it is there (bounded); nothing asserts on
//! how long it took.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use kindgi_core::ports::{AnyOwner, RunQuery, ScheduleStore};
use kindgi_core::schedule::{CatchUp, Overlap, ScheduleRecord, ScheduleTarget};
use kindgi_core::trigger::{FireOutcome, OwnerKind, TriggerOwner, TriggerStatus};
use kindgi_host::{Host, HostConfig};
use kindgi_runtime::triggers::Schedules;
use kindgi_serve::CancellationToken;
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }
}

/// One run of the official CLI, pointed at `url` with `token` by environment.
fn official(cli: &Path, home: &Path, url: &str, token: &str, args: &[&str]) -> Out {
    let out = Command::new(cli)
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("KINDGI_API_URL", url)
        .env("KINDGI_API_TOKEN", token)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

async fn get(http: &reqwest::Client, url: &str, token: &str) -> Value {
    http.get(url)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn post(http: &reqwest::Client, url: &str, token: &str, body: Value) -> (u16, Value) {
    let r = http
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_cli_schedules_a_flow_that_fires() {
    let Some(cli) =
        kindgi_spec::testing::official_cli("the_official_cli_schedules_a_flow_that_fires")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let config = HostConfig::new(
        tmp.path().join("dev.db").display().to_string(),
        "127.0.0.1:0",
    );
    let host = Host::start("kindgi dev", config).await.unwrap();
    let tenant = kindgi_host::DEFAULT_TENANT;
    let token = host.state().tokens.create(tenant, None).await.unwrap().key;
    let url = host.url().to_owned();
    let http = reqwest::Client::new();
    let project = kindgi_api::projects::default_project_id(tenant);
    let agent = json!({"projectId": project, "id": "tick.agent", "version": "1.0.0",
        "name": "Ticker", "instructions": "Answer briefly.",
        "capabilities": [{"kind": "llm-inference"}], "tools": [], "retrieval": [], "guardrails": []});
    let (s, b) = post(&http, &format!("{url}/v1/agents"), &token, agent).await;
    assert_eq!(s, 201, "{b}");
    let flow = json!({"projectId": project, "id": "tick.flow", "version": "1.0.0",
        "nodes": [{"id": "ask", "kind": "agent", "ref": "tick.agent"}],
        "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]});
    let (s, b) = post(&http, &format!("{url}/v1/flows"), &token, flow).await;
    assert_eq!(s, 201, "{b}");
    let home = tmp.path();
    let run = |args: &[&str]| official(&cli, home, &url, &token, args);

    let out = run(&[
        "schedules",
        "create",
        "--cron=* * * * * *",
        "--flow=tick.flow",
        "--flow-version=1.0.0",
        "--input={\"userMessage\":\"tick\"}",
        "--label=every second",
        "--catch-up=skip",
        "--overlap=allow",
    ]);
    assert_eq!(out.code, 0, "create: {}{}", out.stdout, out.stderr);
    let created = out.json();
    let id = created["scheduleId"].as_str().unwrap().to_owned();
    assert_eq!(created["triggerId"], id.as_str());
    assert_eq!(created["status"], "active");
    assert_eq!(created["label"], "every second");
    assert_eq!(created["overlap"], "allow");

    let out = run(&["schedules", "list"]);
    assert_eq!(out.code, 0, "list: {}", out.stderr);
    assert!(
        out.json()["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["scheduleId"] == id.as_str())
    );
    let out = run(&["schedules", "get", &id, "--upcoming=3"]);
    assert_eq!(out.code, 0, "get: {}", out.stderr);
    assert_eq!(out.json()["upcoming"].as_array().unwrap().len(), 3);

    // A real fire of the every-second cron.
    let mut fired = Value::Null;
    for _ in 0..400 {
        let runs = get(&http, &format!("{url}/v1/runs?triggerId={id}"), &token).await;
        if let Some(r) = runs["data"].as_array().and_then(|d| d.first()) {
            fired = r.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(fired["startedBy"], "schedule", "{fired}");
    assert_eq!(fired["trigger"]["kind"], "schedule");
    assert_eq!(fired["trigger"]["triggerId"], id.as_str());
    assert!(fired["trigger"]["scheduledFor"].is_string(), "{fired}");
    let out = run(&["runs", "list", &format!("--trigger={id}")]);
    assert_eq!(out.code, 0, "runs list: {}", out.stderr);
    assert!(!out.json()["data"].as_array().unwrap().is_empty());

    let out = run(&["schedules", "pause", &id]);
    assert_eq!(out.code, 0, "pause: {}", out.stderr);
    assert_eq!(out.json()["status"], "paused");
    let out = run(&["schedules", "pause", &id]);
    assert_eq!(out.code, 1, "pause again: {}", out.stdout);
    assert!(
        out.stderr.contains("The trigger is already paused"),
        "{}",
        out.stderr
    );
    let out = run(&["schedules", "resume", &id]);
    assert_eq!(out.code, 0, "resume: {}", out.stderr);
    assert_eq!(out.json()["status"], "active");

    let out = run(&["schedules", "run-now", &id]);
    assert_eq!(out.code, 0, "run-now: {}", out.stderr);
    let manual = out.json();
    assert_eq!(manual["manual"], true, "{manual}");
    let out = run(&["schedules", "fires", &id]);
    assert_eq!(out.code, 0, "fires: {}", out.stderr);
    let fires = out.json();
    let data = fires["data"].as_array().unwrap();
    assert!(data.iter().any(|f| f["outcome"] == "started"), "{fires}");
    assert!(
        data.iter().any(|f| f["fireId"] == manual["fireId"]),
        "{fires}"
    );

    let out = run(&["schedules", "unregister", &id]);
    assert_eq!(out.code, 0, "unregister: {}", out.stderr);
    assert_eq!(out.json(), json!({"scheduleId": id, "unregistered": true}));
    let out = run(&["schedules", "get", &id]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("Error [not-found]"), "{}", out.stderr);
    host.stop().await;
}

fn every_second(id: &str, now: i64) -> ScheduleRecord {
    ScheduleRecord {
        id: id.into(),
        tenant: kindgi_host::DEFAULT_TENANT.into(),
        project_id: "p".into(),
        target: ScheduleTarget::Flow {
            flow_id: "rep.flow".into(),
            flow_version: "1.0.0".into(),
        },
        owner: TriggerOwner {
            kind: OwnerKind::User,
            id: "u".into(),
            display_name: None,
        },
        owner_key_id: None,
        cron_expression: "* * * * * *".into(),
        timezone: None,
        input: None,
        catch_up: CatchUp::Skip,
        overlap: Overlap::Allow,
        starting_deadline_seconds: 600,
        label: None,
        status: TriggerStatus::Active,
        status_reason: None,
        next_fire_at: Some((now / 1000 + 1) * 1000),
        last_fired_at: None,
        failures_in_row: 0,
        tools_allowed_unattended: vec![],
        created_at: now,
        updated_at: now,
    }
}

/// A replica: its own runtime and loop over the shared database.
fn replica(db: &kindgi_store::Database) -> Schedules {
    let ports = db.ports();
    let store = ports.schedules.clone();
    let rt = kindgi_runtime::Runtime::over(ports).build();
    let echo = kindgi_tools::Tool::define("rep.echo")
        .version("1.0.0")
        .description("echoes")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|input: Value, _ctx| async move { Ok::<Value, kindgi_tools::HandlerError>(input) })
        .build()
        .unwrap();
    rt.tools().insert_tool(echo);
    let flow = json!({"id": "rep.flow", "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "rep.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]});
    rt.flows().insert_json(&flow.to_string()).unwrap();
    Schedules::new(store, rt, Arc::new(AnyOwner)).allow_sub_minute(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_on_one_postgres_fire_each_occurrence_once() {
    let t = TestDatabase::postgres().await.unwrap();
    let other = t.reopen().await.unwrap();
    let (a, b) = (replica(&t.db), replica(&other));
    let store: Arc<dyn ScheduleStore> = t.db.ports().schedules;
    let now = kindgi_core::now_millis();
    let ids: Vec<String> = (0..5).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    for id in &ids {
        store.create(&every_second(id, now)).await.unwrap();
    }
    let stop = CancellationToken::new();
    let loops = [a.spawn_loop(stop.clone()), b.spawn_loop(stop.clone())];
    // Until every schedule has fired several occurrences.
    for _ in 0..800 {
        let mut least = usize::MAX;
        for id in &ids {
            least = least.min(store.fires(id, None, 100).await.unwrap().len());
        }
        if least >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    stop.cancel();
    for l in loops {
        l.await.unwrap();
    }
    let runs = t.db.ports().runs;
    for id in &ids {
        let fires = store.fires(id, None, 100).await.unwrap();
        assert!(fires.len() >= 4, "{id}: {} fires", fires.len());
        let mut at: Vec<i64> = fires.iter().filter_map(|f| f.scheduled_for).collect();
        let n = at.len();
        at.sort_unstable();
        at.dedup();
        assert_eq!(at.len(), n, "{id}: an occurrence fired twice");
        let started = fires
            .iter()
            .filter(|f| f.outcome == FireOutcome::Started)
            .count();
        assert_eq!(started, n, "{fires:?}");
        let their_runs = runs
            .list_runs(&RunQuery {
                trigger_id: Some(id.clone()),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(their_runs.len(), n, "one run per fire");
    }
    t.cleanup().await.unwrap();
}
