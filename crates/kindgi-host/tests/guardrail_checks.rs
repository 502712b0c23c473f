//! A pack's guardrail check judging agent turns, with the real pieces: the official Python
//! SDK's pack service (`KINDGI_REFERENCE_PYTHON -m kindgi.pack serve`) running the Python
//! conformance pack, its guardrails put in the store as the host lists a pack's
//! (`put_guardrail` of the index entries), the store's `Definitions` (core's definition source) and the host's
//! [`PackServices`] (the check routed to its pack by the check id's prefix, over pack
//! protocol `check-invoke`), runs on SQLite.
//!
//! - `conformance.min-length` (halt) blocks a turn whose answer is too short with the
//!   check's own reason, and lets a long enough one through;
//! - `conformance.check-throws` (halt) fails closed: the turn is blocked, naming the throw;
//! - with no service serving the pack, the halt guardrail blocks as `pack-unreachable`;
//! - a before-tool check declared with the Rust pack SDK (`Check::before_tool`), served
//!   in process on loopback, refuses a pack tool's call: the tool never runs, the model gets
//!   the refusal, the calls around it run.
//!
//! Skipped with a message when the reference is missing, failing under
//! `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use kindgi_conformance::service::{Launch, Service, ServiceCommand, random_token};
use kindgi_host::sources::PackServices;
use kindgi_pack::log::{LogConfig, Logger};
use kindgi_pack::sdk::{Check, CheckResult, Pack};
use kindgi_pack::service::{IndexFile, ServiceOptions};
use kindgi_pack_client::dispatch::{PackServiceCaller, ServiceSlot, Serving};
use kindgi_runtime::model::{ModelRequest, ModelResponse, Role};
use kindgi_runtime::{
    AgentSpec, AgentTool, ModelError, ModelProvider, RunOptions, RunStatus, Runtime,
};
use kindgi_store::definitions::Definitions;
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_owned()
}

/// A model that answers `text` at once.
#[derive(Debug)]
struct Says(&'static str);

#[async_trait]
impl ModelProvider for Says {
    fn provider_id(&self) -> &str {
        "test-says"
    }
    fn model(&self) -> &str {
        "scripted"
    }
    async fn invoke(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(serde_json::from_value(json!({"text": self.0, "finishReason": "stop"})).unwrap())
    }
}

async fn python_service(index: &Path) -> Option<Service> {
    let py = match std::env::var("KINDGI_REFERENCE_PYTHON") {
        Ok(py) if Path::new(&py).is_file() => py,
        _ => {
            kindgi_spec::testing::skip_without_reference(
                "guardrail_checks",
                "KINDGI_REFERENCE_PYTHON is not set (source .cache/reference.env)",
            );
            return None;
        }
    };
    let argv = vec![
        py,
        "-m".into(),
        "kindgi.pack".into(),
        "serve".into(),
        "--index".into(),
        index.display().to_string(),
    ];
    let cmd = ServiceCommand::parse(&argv).unwrap();
    Some(
        cmd.start(&Launch::default(), &random_token())
            .await
            .unwrap(),
    )
}

async fn turn(rt: &Runtime, agent: &str) -> kindgi_runtime::RunRecord {
    rt.start_agent_turn(
        agent,
        None,
        json!({"message": "hi"}),
        RunOptions {
            wait: true,
            tenant_id: Some("acme".into()),
            ..RunOptions::default()
        },
    )
    .await
    .unwrap()
}

fn runtime(db: &kindgi_store::Database, services: &PackServices, says: &'static str) -> Runtime {
    let rt = Runtime::over(db.ports())
        .model(Arc::new(Says(says)))
        .definition_source(Arc::new(Definitions::new(db.clone())))
        .guardrail_checks(Arc::new(services.clone()))
        .build();
    let mut short = AgentSpec::new("conformance.short");
    short.guardrails = vec!["conformance.min-length".into()];
    rt.agents().insert(short);
    let mut throws = AgentSpec::new("conformance.thrower");
    throws.guardrails = vec!["conformance.check-throws".into()];
    rt.agents().insert(throws);
    rt
}

#[tokio::test]
async fn a_python_pack_check_blocks_a_turn_over_check_invoke() {
    let index_path = root().join("examples/conformance-pack-python/index.json");
    let Some(mut svc) = python_service(&index_path).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = kindgi_store::Database::connect(&dir.path().join("k.db").display().to_string())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    // The pack's guardrails, listed as the host lists them (the index entries as they are).
    let index: kindgi_spec::pack_index::PackIndex =
        serde_json::from_str(&std::fs::read_to_string(&index_path).unwrap()).unwrap();
    let defs = Definitions::new(db.clone());
    for g in &index.guardrails {
        defs.put_guardrail("acme", &serde_json::to_value(g).unwrap(), "pack:test")
            .await
            .unwrap();
    }
    let slot = ServiceSlot::new();
    let client = kindgi_pack_client::client::PackClient::new(
        kindgi_pack_client::client::PackClientConfig::new(&svc.base, &svc.process.token),
    )
    .unwrap();
    slot.set(
        Some(Arc::new(Serving {
            base_url: svc.base.clone(),
            pid: svc.process.id(),
            client,
        })),
        "",
    );
    let services = PackServices::default();
    services.set("acme", "conformance", PackServiceCaller::new(slot.clone()));

    // Too short: the pack's check says so, and the halt guardrail blocks the turn.
    let rt = runtime(&db, &services, "   ");
    let msg = failure(&turn(&rt, "conformance.short").await);
    assert!(
        msg.ends_with(
            "guardrail-violation: Turn blocked by guardrail 'conformance.min-length': too short"
        ),
        "{msg}"
    );
    // Long enough: it passes (the config's default, minLength 1, applied by the service).
    let rt = runtime(&db, &services, "hello");
    let run = turn(&rt, "conformance.short").await;
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    // A check that throws fails closed.
    let msg = failure(&turn(&rt, "conformance.thrower").await);
    assert!(
        msg.contains(
            "guardrail-violation: Turn blocked: guardrail 'conformance.check-throws' couldn't run its check (check-failed: guardrail \"conformance.check-throws\": its check threw: "
        ) && msg.contains("check boom"),
        "{msg}"
    );
    // No service serving the pack: the halt guardrail blocks, the check did not run.
    slot.set(None, "the pack service is restarting");
    let msg = failure(&turn(&rt, "conformance.short").await);
    assert!(
        msg.ends_with(
            "Turn blocked: guardrail 'conformance.min-length' couldn't run its check (pack-unreachable: unavailable: the pack service is restarting; the check did not run)"
        ),
        "{msg}"
    );
    svc.process.stop(std::time::Duration::from_secs(5)).await;
    db.close().await;
}

fn failure(run: &kindgi_runtime::RunRecord) -> String {
    assert_eq!(run.status, RunStatus::Failed, "{run:?}");
    run.failure_message.clone().unwrap_or_default()
}

// ----- a before-tool check declared with the Rust pack SDK ------------------------------

/// A model that asks for `calls` once, then answers `done`, keeping the tool results it was
/// handed.
#[derive(Debug)]
struct Asks {
    calls: Value,
    step: AtomicUsize,
    results: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl ModelProvider for Asks {
    fn provider_id(&self) -> &str {
        "test-asks"
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
        let answer = if self.step.fetch_add(1, Ordering::SeqCst) == 0 {
            json!({"text": "", "finishReason": "tool-use", "toolCalls": self.calls})
        } else {
            json!({"text": "done", "finishReason": "stop"})
        };
        Ok(serde_json::from_value(answer).unwrap())
    }
}

fn counted(id: &str, count: Arc<AtomicUsize>) -> kindgi_tools::Tool {
    let handler: kindgi_tools::Handler = Arc::new(move |_input, _ctx| {
        let count = count.clone();
        Box::pin(async move {
            count.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"done": true}))
        })
    });
    kindgi_tools::Tool::define(id)
        .version("1.0.0")
        .description("test tool")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .raw_handler(handler)
        .build()
        .unwrap()
}

/// `shop.refund` calls over `max` (the pending call is the trace's last) are refused.
fn shop(refunds: Arc<AtomicUsize>, lookups: Arc<AtomicUsize>) -> Pack {
    Pack::new("shop", "1.0.0")
        .tool("src/refund.rs", counted("shop.refund", refunds))
        .tool("src/lookup.rs", counted("shop.lookup", lookups))
        .check(
            "src/checks.rs",
            Check::define("shop.refund-limit")
                .check_id("shop.checks.refund-limit")
                .before_tool(["shop.refund"])
                .config(json!({"max": 100}))
                .evaluate(|config, trace, _| async move {
                    let max = config.get("max").and_then(Value::as_f64).unwrap_or(0.0);
                    let pending = trace["toolCalls"]
                        .as_array()
                        .and_then(|c| c.last())
                        .cloned();
                    let amount = pending
                        .and_then(|c| c["arguments"]["amount"].as_f64())
                        .unwrap_or(0.0);
                    Ok(if amount <= max {
                        CheckResult::pass()
                    } else {
                        CheckResult::fail(format!("refund of {amount} is over the limit of {max}"))
                    })
                })
                .build()
                .unwrap(),
        )
}

#[tokio::test]
async fn a_rust_sdk_before_tool_check_refuses_a_pack_call() {
    let (refunds, lookups) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let pack = shop(refunds.clone(), lookups.clone());
    let index = pack
        .index("20261001.1", "2026-10-01T12:00:00.000Z", None)
        .unwrap();
    let entry = &index.guardrails[0];
    assert_eq!(entry.extra["stage"], "before-tool");
    assert_eq!(entry.scope, Some(json!({"tools": ["shop.refund"]})));
    let file = IndexFile::parse(serde_json::to_string(&index).unwrap().as_bytes()).unwrap();
    let token = random_token();
    let logger = Arc::new(Logger::to_writer(
        LogConfig::default(),
        Box::new(std::io::sink()),
    ));
    let svc = kindgi_pack::service::start(
        &file,
        &pack.registry(),
        ServiceOptions::loopback(token.clone()),
        logger,
    )
    .await
    .unwrap();
    let base = format!("http://127.0.0.1:{}", svc.port());

    let dir = tempfile::tempdir().unwrap();
    let db = kindgi_store::Database::connect(&dir.path().join("k.db").display().to_string())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let defs = Definitions::new(db.clone());
    defs.put_guardrail("acme", &serde_json::to_value(entry).unwrap(), "pack:shop")
        .await
        .unwrap();
    let slot = ServiceSlot::new();
    let client = kindgi_pack_client::client::PackClient::new(
        kindgi_pack_client::client::PackClientConfig::new(&base, &token),
    )
    .unwrap();
    slot.set(
        Some(Arc::new(Serving {
            base_url: base.clone(),
            pid: None,
            client,
        })),
        "",
    );
    let caller = PackServiceCaller::new(slot);
    let services = PackServices::default();
    services.set("acme", "shop", caller.clone());
    let model = Arc::new(Asks {
        calls: json!([
            {"id": "c1", "name": "shop.refund", "arguments": {"amount": 500}},
            {"id": "c2", "name": "shop.lookup", "arguments": {}},
            {"id": "c3", "name": "shop.refund", "arguments": {"amount": 20}},
        ]),
        step: AtomicUsize::new(0),
        results: Mutex::new(Vec::new()),
    });
    let rt = Runtime::over(db.ports())
        .model(model.clone())
        .definition_source(Arc::new(defs))
        .guardrail_checks(Arc::new(services))
        .build();
    for tool in &index.tools {
        let manifest = kindgi_pack_client::dispatch::manifest_of(tool).unwrap();
        rt.tools()
            .insert_pack_tool(manifest, "shop", caller.clone());
    }
    let mut agent = AgentSpec::new("shop.clerk").with_tools([
        AgentTool::new("shop.refund", "*"),
        AgentTool::new("shop.lookup", "*"),
    ]);
    agent.guardrails = vec!["shop.refund-limit".into()];
    rt.agents().insert(agent);

    let run = turn(&rt, "shop.clerk").await;
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(
        refunds.load(Ordering::SeqCst),
        1,
        "only the refund under the limit ran"
    );
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
    let results = model.results.lock().unwrap().clone();
    let of = |id: &str| -> Value {
        serde_json::from_str(&results.iter().find(|(c, _)| c == id).unwrap().1).unwrap()
    };
    assert_eq!(of("c1")["status"], "refused");
    assert_eq!(of("c1")["guardrailId"], "shop.refund-limit");
    assert_eq!(of("c1")["reason"], "refund of 500 is over the limit of 100");
    assert_eq!(of("c2"), json!({"done": true}));
    assert_eq!(of("c3"), json!({"done": true}));
    svc.drain().await;
    db.close().await;
}
