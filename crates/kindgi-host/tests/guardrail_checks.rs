//! A pack's guardrail check judging agent turns, with the real pieces: the official Python
//! SDK's pack service (`KINDGI_REFERENCE_PYTHON -m kindgi.pack serve`) running the Python
//! conformance pack, its guardrails put in the store as the host lists a pack's
//! (`put_guardrail` of the index entries), the host's [`StoreDefinitions`] and
//! [`PackServices`] (the check routed to its pack by the check id's prefix, over pack
//! protocol `check-invoke`), runs on SQLite.
//!
//! - `conformance.min-length` (halt) blocks a turn whose answer is too short with the
//!   check's own reason, and lets a long enough one through;
//! - `conformance.check-throws` (halt) fails closed: the turn is blocked, naming the throw;
//! - with no service serving the pack, the halt guardrail blocks as `pack-unreachable`.
//!
//! Skipped with a message when the reference is missing, failing under
//! `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use kindgi_host::sources::{PackServices, StoreDefinitions};
use kindgi_pack::conformance::service::{Launch, Service, ServiceCommand, random_token};
use kindgi_pack::dispatch::{PackServiceCaller, ServiceSlot, Serving};
use kindgi_runtime::model::{ModelRequest, ModelResponse};
use kindgi_runtime::{AgentSpec, ModelError, ModelProvider, RunOptions, RunStatus, Runtime};
use kindgi_store::definitions::Definitions;
use serde_json::json;

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
            let what = "KINDGI_REFERENCE_PYTHON is not set (source .cache/reference.env)";
            assert!(
                std::env::var("KINDGI_REQUIRE_REFERENCE").as_deref() != Ok("1"),
                "KINDGI_REQUIRE_REFERENCE=1 but {what}"
            );
            eprintln!("skipped: {what}");
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
    let rt = Runtime::with_database(db.clone())
        .model(Arc::new(Says(says)))
        .definition_source(Arc::new(StoreDefinitions::new(Definitions::new(
            db.clone(),
        ))))
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
    let client = kindgi_pack::client::PackClient::new(kindgi_pack::client::PackClientConfig::new(
        &svc.base,
        &svc.process.token,
    ))
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
