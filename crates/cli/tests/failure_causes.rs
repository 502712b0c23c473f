//! No answer hides its cause (issue 21 item 7), over the wire and in the CLIs — the official
//! one (`.venv/bin/kindgi`, PyPI `kindgi-cli==0.1.10`) unchanged, and ours — against our API
//! on a loopback socket (SQLite and PostgreSQL for the wire):
//!
//! * a tool input that fails its schema fails the run with the schema issues in
//!   `failure.details.issues` (`GET /v1/runs/{id}`) and in the `step.failed` entry; the
//!   official CLI prints them in the run it shows, ours lists them as `  ✗ <path>: <reason>`,
//!   and both give them back in `runs get` and `runs journal`;
//! * an agent turn's `output.warnings` are `{code, message}` objects, so the official CLI
//!   prints its `⚠ <message>` line (dev-echo, the runtime's stand-in model, warns on every
//!   answer);
//! * a run naming an agent or flow a pack left out is refused `404` with why (`details.leftOut`);
//! * a pack's guardrail (registered from its pack index, which names its check `checkId`) is
//!   served with the `check` `OA:Guardrail` requires, and the official CLI's table shows it.
//!
//! The official CLI's test fails, not skips, under `KINDGI_REQUIRE_REFERENCE=1` when it is
//! missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use kindgi_api::{AppState, router};
use kindgi_runtime::left_out::{LeftOut, LeftOutKind};
use kindgi_runtime::{AgentSpec, Runtime};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use serde_json::{Value, json};

const STRICT_FLOW: &str = "acme.check-order";
const STRICT_TOOL: &str = "acme.lookup-order";
const AGENT: &str = "acme.helper";
const GUARDRAIL: &str = "acme.no-pii";
const PACK_CHECK: &str = "acme.checks.no-pii";
const LEFT_OUT_AGENT: &str = "acme.bad-agent";
const LEFT_OUT_FLOW: &str = "acme.bad-flow";
const LEFT_OUT_WHY: &str = "hitlAfterTurns must be a positive integer";
const DEV_ECHO_WARNING: &str = "dev-echo isn't a real model: it only repeats what it's given. Add an LLM provider key (Anthropic, OpenAI, OpenRouter…) to get real answers.";

/// The issue `{"orderId": 7}` raises against the tool's input schema, as Ajv words it.
fn order_id_issue() -> Value {
    json!({
        "instancePath": "/orderId",
        "schemaPath": "#/properties/orderId/type",
        "keyword": "type",
        "params": {"type": "string"},
        "message": "must be string"
    })
}

struct Server {
    url: String,
    key: String,
    http: reqwest::Client,
    db: TestDatabase,
}

async fn server(kind: DatabaseKind) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    let strict = Tool::define(STRICT_TOOL)
        .version("1.0.0")
        .description("looks an order up")
        .input(json!({"type": "object", "required": ["orderId"],
                      "properties": {"orderId": {"type": "string"}}}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(
            |input: Value, _ctx| async move { Ok::<Value, HandlerError>(json!({"found": input})) },
        )
        .build()
        .unwrap();
    rt.tools().insert_tool(strict);
    let flow = json!({
        "id": STRICT_FLOW, "version": "1.0.0",
        "nodes": [{"id": "lookup", "kind": "tool", "ref": STRICT_TOOL}],
        "edges": [{"id": "e1", "from": "$start", "to": "lookup"}, {"id": "e2", "from": "lookup", "to": "$end"}]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    rt.agents().insert(AgentSpec::new(AGENT));
    // As a pack's load records what it left out (kindgi-host's register).
    rt.left_out().replace(
        "acme-pack",
        "acme",
        &[
            LeftOut {
                kind: LeftOutKind::Agent,
                id: LEFT_OUT_AGENT.into(),
                why: LEFT_OUT_WHY.into(),
            },
            LeftOut {
                kind: LeftOutKind::Flow,
                id: LEFT_OUT_FLOW.into(),
                why: LEFT_OUT_WHY.into(),
            },
        ],
    );
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    // As a pack registers it: its pack index entry, stored whole.
    let pack_guardrail = json!({
        "id": GUARDRAIL, "kind": "zero-llm", "action": {"on-violation": "block"},
        "severity": "warn", "checkModulePath": "src/guardrails.ts", "checkId": PACK_CHECK
    });
    state
        .definitions
        .put_guardrail("acme", &pack_guardrail, "pack:acme")
        .await
        .unwrap();
    let app = router(state.with_runtime(rt));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(kindgi_api::serve(
        listener,
        app,
        kindgi_serve::Limits::default(),
        kindgi_serve::CancellationToken::new(),
    ));
    Server {
        url,
        key,
        http: reqwest::Client::new(),
        db,
    }
}

impl Server {
    async fn get(&self, path: &str) -> Value {
        let r = self
            .http
            .get(format!("{}{path}", self.url))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        r.json().await.unwrap()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let r = self
            .http
            .post(format!("{}{path}", self.url))
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
        r.json().await.unwrap()
    }

    /// `POST path` as it answers: status and body.
    async fn post_answer(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}{path}", self.url))
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    /// Starts `body` as a run and reads it back once it has ended.
    async fn ended_run(&self, body: Value) -> Value {
        let started = self.post("/v1/runs", body).await;
        let id = started["id"].as_str().unwrap().to_owned();
        loop {
            let run = self.get(&format!("/v1/runs/{id}")).await;
            if !matches!(run["status"].as_str(), Some("pending" | "running")) {
                return run;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

async fn cli(bin: &PathBuf, s: &Server, args: &[&str]) -> Out {
    let home = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(bin)
        .args(args)
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("KINDGI_API_URL", &s.url)
        .env("KINDGI_API_TOKEN", &s.key)
        .env("NO_COLOR", "1")
        .output()
        .await
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn json_of(out: &Out) -> Value {
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr))
}

/// The official CLI, or the reference-skip rule (kindgi_spec::testing).
fn official_cli() -> Option<PathBuf> {
    kindgi_spec::testing::official_cli(module_path!())
}

const BAD_INPUT: &str = r#"--input={"orderId":7}"#;

/// `runs get` and `runs journal` of the failed run, through `bin`: the snapshot's
/// `failure.details.issues` and the `step.failed` entry's `payload.issues` are the issue.
async fn reads_the_issues_back(bin: &PathBuf, s: &Server, run_id: &str) {
    let got = cli(bin, s, &["runs", "get", run_id]).await;
    assert_eq!(got.code, 0, "{}\n{}", got.stdout, got.stderr);
    let run = json_of(&got);
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(
        run["failure"]["details"]["issues"],
        json!([order_id_issue()]),
        "{run}"
    );
    let journal = cli(bin, s, &["runs", "journal", run_id]).await;
    assert_eq!(journal.code, 0, "{}\n{}", journal.stdout, journal.stderr);
    let page = json_of(&journal);
    let failed = page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data: {page}"))
        .iter()
        .find(|e| e["kind"] == "step.failed")
        .unwrap_or_else(|| panic!("no step.failed: {page}"));
    assert_eq!(
        failed["payload"]["issues"],
        json!([order_id_issue()]),
        "{failed}"
    );
}

/// The wire: the run's failure, its journal, a turn's warnings and a pack guardrail.
async fn the_wire_carries_the_causes(kind: DatabaseKind) {
    let s = server(kind).await;
    let run = s
        .ended_run(json!({"flow": STRICT_FLOW, "input": {"orderId": 7}}))
        .await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(
        run["failure"],
        json!({
            "code": "run-failed",
            "message": format!("input-validation-failed: Input for tool \"{STRICT_TOOL}\" failed validation"),
            "details": {"issues": [order_id_issue()]}
        }),
        "{run}"
    );
    let journal = s
        .get(&format!("/v1/runs/{}/journal", run["id"].as_str().unwrap()))
        .await;
    let failed = journal["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "step.failed")
        .unwrap_or_else(|| panic!("no step.failed: {journal}"));
    assert_eq!(failed["nodeId"], "lookup");
    assert_eq!(failed["payload"]["issues"], json!([order_id_issue()]));

    let turn = s
        .ended_run(json!({"agent": AGENT, "input": {"userMessage": "hi"}}))
        .await;
    assert_eq!(turn["status"], "completed", "{turn}");
    assert_eq!(
        turn["output"]["warnings"],
        json!([{"code": "dev-echo-not-a-model", "message": DEV_ECHO_WARNING}]),
        "{turn}"
    );

    // A run naming what a pack left out is refused with why; an unknown id as before.
    let why = format!("it was left out of pack \"acme-pack\": {LEFT_OUT_WHY}");
    let (status, answer) = s
        .post_answer(
            "/v1/runs",
            json!({"agent": LEFT_OUT_AGENT, "input": {"userMessage": "hi"}}),
        )
        .await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"]["code"], "agent-not-found", "{answer}");
    assert_eq!(
        answer["error"]["message"],
        format!("No agent \"{LEFT_OUT_AGENT}\": {why}")
    );
    assert_eq!(
        answer["error"]["details"],
        json!({"agentId": LEFT_OUT_AGENT, "agentVersion": null, "leftOut": why})
    );
    let (status, answer) = s
        .post_answer("/v1/runs", json!({"flow": LEFT_OUT_FLOW, "input": {}}))
        .await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"]["code"], "flow-not-found", "{answer}");
    assert_eq!(
        answer["error"]["details"]["leftOut"],
        json!(why),
        "{answer}"
    );
    let (status, answer) = s
        .post_answer(
            "/v1/runs",
            json!({"agent": "acme.nobody", "input": {"userMessage": "hi"}}),
        )
        .await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"]["message"], "No agent \"acme.nobody\"");
    assert!(
        answer["error"]["details"].get("leftOut").is_none(),
        "{answer}"
    );

    let one = s.get(&format!("/v1/guardrails/{GUARDRAIL}")).await;
    assert_eq!(one["check"], PACK_CHECK, "{one}");
    assert_eq!(one["kind"], "zero-llm");
    assert!(one.get("checkId").is_none(), "{one}");
    let page = s.get("/v1/guardrails").await;
    assert_eq!(page["data"][0]["check"], PACK_CHECK, "{page}");
    s.db.cleanup().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_carries_the_causes_sqlite() {
    the_wire_carries_the_causes(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_carries_the_causes_postgres() {
    the_wire_carries_the_causes(DatabaseKind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_cli_shows_the_causes() {
    let Some(bin) = official_cli() else { return };
    let s = server(DatabaseKind::Sqlite).await;

    let failed = cli(
        &bin,
        &s,
        &["runs", "start", &format!("--flow={STRICT_FLOW}"), BAD_INPUT],
    )
    .await;
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    assert!(
        failed.stderr.contains(&format!(
            "Error [run-failed]: input-validation-failed: Input for tool \"{STRICT_TOOL}\" failed validation"
        )),
        "{}",
        failed.stderr
    );
    let shown = json_of(&failed);
    assert_eq!(
        shown["failure"]["details"]["issues"],
        json!([order_id_issue()]),
        "{shown}"
    );
    reads_the_issues_back(&bin, &s, shown["id"].as_str().unwrap()).await;

    let turn = cli(
        &bin,
        &s,
        &[
            "runs",
            "start",
            &format!("--agent={AGENT}"),
            r#"--input={"userMessage":"hi"}"#,
        ],
    )
    .await;
    assert_eq!(turn.code, 0, "{}\n{}", turn.stdout, turn.stderr);
    assert!(
        turn.stderr.contains(&format!("⚠ {DEV_ECHO_WARNING}\n")),
        "{}",
        turn.stderr
    );

    let table = cli(&bin, &s, &["guardrails", "list", "--table"]).await;
    assert_eq!(table.code, 0, "{}\n{}", table.stdout, table.stderr);
    let row = table
        .stdout
        .lines()
        .find(|l| l.starts_with(GUARDRAIL))
        .unwrap_or_else(|| panic!("no row: {}", table.stdout));
    assert!(row.contains(PACK_CHECK), "{row}");
    assert!(row.contains("block"), "{row}");
    let got = cli(&bin, &s, &["guardrails", "get", GUARDRAIL]).await;
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(json_of(&got)["check"], PACK_CHECK);
    s.db.cleanup().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_cli_lists_the_issues() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kindgi"));
    let s = server(DatabaseKind::Sqlite).await;
    let failed = cli(
        &bin,
        &s,
        &["runs", "start", &format!("--flow={STRICT_FLOW}"), BAD_INPUT],
    )
    .await;
    assert_eq!(failed.code, 1, "{}\n{}", failed.stdout, failed.stderr);
    assert!(
        failed.stderr.contains(&format!(
            "Error [run-failed]: input-validation-failed: Input for tool \"{STRICT_TOOL}\" failed validation\n  \u{2717} /orderId: must be string\n"
        )),
        "{}",
        failed.stderr
    );
    let shown = json_of(&failed);
    assert_eq!(
        shown["failure"]["details"]["issues"],
        json!([order_id_issue()])
    );
    reads_the_issues_back(&bin, &s, shown["id"].as_str().unwrap()).await;
    let turn = cli(
        &bin,
        &s,
        &[
            "runs",
            "start",
            &format!("--agent={AGENT}"),
            r#"--input={"userMessage":"hi"}"#,
        ],
    )
    .await;
    assert_eq!(turn.code, 0, "{}\n{}", turn.stdout, turn.stderr);
    assert!(
        turn.stderr.contains(&format!("⚠ {DEV_ECHO_WARNING}\n")),
        "{}",
        turn.stderr
    );
    s.db.cleanup().await.unwrap();
}
