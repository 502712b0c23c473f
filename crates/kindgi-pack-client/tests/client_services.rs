//! The pack client against real pack services: the Rust fixture (`target/debug/conformance-pack`,
//! built with `cargo build -p conformance-pack`) and the official Python service running the
//! Python twin (`KINDGI_REFERENCE_PYTHON`). Each missing one is skipped with a message, or fails
//! under `KINDGI_REQUIRE_REFERENCE=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use kindgi_conformance::service::{Launch, Service, ServiceCommand, random_token};
use kindgi_pack_client::client::{CallOptions, PackCallError, PackClient, PackClientConfig};
use kindgi_spec::pack_protocol::{
    CallContext, CheckInvoke, CheckRef, ErrorCode, Response, ToolInvoke, ToolRef,
};
use serde_json::{Map, Value, json};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn unavailable(what: &str) {
    kindgi_spec::testing::skip_without_reference("client_services", what);
}

/// The commands of the services available here, by name.
fn services() -> Vec<(&'static str, Vec<String>)> {
    let root = workspace();
    let mut out = Vec::new();
    let fixture = root.join("target/debug/conformance-pack");
    if fixture.is_file() {
        out.push((
            "rust fixture",
            vec![
                fixture.display().to_string(),
                "serve".into(),
                "--index".into(),
                root.join("examples/conformance-pack/index.json")
                    .display()
                    .to_string(),
            ],
        ));
    } else {
        unavailable("target/debug/conformance-pack is not built (cargo build -p conformance-pack)");
    }
    match std::env::var("KINDGI_REFERENCE_PYTHON") {
        Ok(py) if Path::new(&py).is_file() => out.push((
            "python 0.1.10",
            vec![
                py,
                "-m".into(),
                "kindgi.pack".into(),
                "serve".into(),
                "--index".into(),
                root.join("examples/conformance-pack-python/index.json")
                    .display()
                    .to_string(),
            ],
        )),
        _ => unavailable("KINDGI_REFERENCE_PYTHON is not set (source .cache/reference.env)"),
    }
    out
}

async fn start(argv: &[String], env: &[(&str, &str)]) -> (Service, PackClient) {
    let cmd = ServiceCommand::parse(argv).unwrap();
    let launch = Launch {
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..Launch::default()
    };
    let svc = cmd.start(&launch, &random_token()).await.unwrap();
    let client = PackClient::new(PackClientConfig::new(&svc.base, &svc.process.token)).unwrap();
    (svc, client)
}

fn tool(id: &str, input: Value) -> ToolInvoke {
    let mut ctx = CallContext::new("t-client", "run-client");
    ctx.request_id = Some("req-client".into());
    ToolInvoke::new(
        ToolRef {
            id: id.into(),
            version: None,
            extra: Map::new(),
        },
        input,
        ctx,
    )
}

#[tokio::test]
async fn results_errors_checks_and_info_come_back_typed() {
    for (name, argv) in services() {
        let (mut svc, client) = start(&argv, &[]).await;
        let answer = client
            .invoke_tool(
                &tool("conformance.echo", json!({"message": "hi"})),
                &CallOptions::default(),
            )
            .await
            .unwrap();
        match &answer.response {
            Response::Result(r) => assert_eq!(r.output, json!({"message": "hi"}), "{name}"),
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(
            answer.artifact_version.as_deref(),
            Some("20261001.7"),
            "{name}"
        );
        assert!(answer.duration_ms.is_some(), "{name}");

        let answer = client
            .invoke_tool(
                &tool("conformance.throws", json!({})),
                &CallOptions::default(),
            )
            .await
            .unwrap();
        match &answer.response {
            Response::Error(e) => {
                assert_eq!(e.code, ErrorCode::HandlerThrow, "{name}");
                assert_eq!(e.tool_id.as_deref(), Some("conformance.throws"), "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }

        let check = CheckInvoke {
            v: Default::default(),
            check: CheckRef {
                id: "conformance.checks.min-length".into(),
                extra: Map::new(),
            },
            config: json!({"minLength": 3}).as_object().cloned().unwrap(),
            trace: Some(
                json!({"runId": "run-client", "tenantId": "t-client", "output": "a",
                "toolCalls": [], "toolResults": [], "modelCalls": []}),
            ),
            extra: Map::new(),
        };
        let answer = client
            .invoke_check(&check, &CallOptions::default())
            .await
            .unwrap();
        match &answer.response {
            Response::CheckResult(c) => {
                assert!(!c.result.passed, "{name}");
                assert_eq!(c.result.reason.as_deref(), Some("too short"), "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }

        // The deadline travels: the service itself answers deadline-exceeded.
        let options = CallOptions {
            timeout: Some(Duration::from_millis(300)),
            ..Default::default()
        };
        let answer = client
            .invoke_tool(&tool("conformance.sleep", json!({"ms": 5000})), &options)
            .await
            .unwrap();
        match &answer.response {
            Response::Error(e) => assert_eq!(e.code, ErrorCode::DeadlineExceeded, "{name}"),
            other => panic!("{name}: {other:?}"),
        }

        let info = client.info().await.unwrap();
        assert_eq!(info.pack_id, "conformance", "{name}");
        client.ready().await.unwrap();
        svc.process.stop(Duration::from_secs(10)).await;
    }
}

#[tokio::test]
async fn a_call_refused_at_the_cap_is_retried_until_the_service_has_room() {
    for (name, argv) in services() {
        let (mut svc, client) = start(&argv, &[("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "1")]).await;
        let release = std::env::temp_dir().join(format!(
            "kindgi-client-release-{:016x}",
            rand::random::<u64>()
        ));
        let held = {
            let client = client.clone();
            let invoke = tool(
                "conformance.hold",
                json!({"release": release.display().to_string()}),
            );
            tokio::spawn(async move { client.invoke_tool(&invoke, &CallOptions::default()).await })
        };
        let line = format!("hold: {}", release.display());
        svc.process
            .stdout
            .wait_for(Duration::from_secs(10), |l| l.contains(&line))
            .await
            .unwrap();
        // Release the held call after the echo was refused at least once.
        let releaser = {
            let release = release.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                std::fs::write(release, b"go").unwrap();
            })
        };
        let answer = client
            .invoke_tool(
                &tool("conformance.echo", json!({"message": "after"})),
                &CallOptions::default(),
            )
            .await
            .unwrap();
        assert!(
            matches!(answer.response, Response::Result(_)),
            "{name}: {:?}",
            answer.response
        );
        assert!(
            answer.attempts >= 2,
            "{name}: the echo should have met a 503 first, attempts {}",
            answer.attempts
        );
        releaser.await.unwrap();
        let held = held.await.unwrap().unwrap();
        assert!(matches!(held.response, Response::Result(_)), "{name}");
        let _ = std::fs::remove_file(&release);
        svc.process.stop(Duration::from_secs(10)).await;
    }
}

#[tokio::test]
async fn a_wrong_token_is_a_refusal_and_a_stopped_service_is_a_connect_error() {
    for (name, argv) in services() {
        let (mut svc, _) = start(&argv, &[]).await;
        let wrong = PackClient::new(PackClientConfig::new(&svc.base, "not-the-token")).unwrap();
        let err = wrong
            .invoke_tool(
                &tool("conformance.echo", json!({"message": "hi"})),
                &CallOptions::default(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, PackCallError::Refused { status: 401, .. }),
            "{name}: {err:?}"
        );
        assert!(!err.may_have_run());
        let base = svc.base.clone();
        svc.process.stop(Duration::from_secs(10)).await;
        let gone = PackClient::new(PackClientConfig::new(&base, "tok")).unwrap();
        let err = gone
            .invoke_tool(
                &tool("conformance.echo", json!({"message": "hi"})),
                &CallOptions::default(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, PackCallError::Connect { .. }),
            "{name}: {err:?}"
        );
        assert!(!err.may_have_run());
    }
}

/// The pause extension's `ctx.wait` (docs/pauses.md) sent to a service that does not know
/// it: the official Python service ignores the field (its `ToolContext.from_wire` reads the
/// keys it knows; the parse rules never refuse an unknown ctx field), and so does ours for a
/// tool that does not declare `pauses`: an ordinary tool answers as ever and its handler
/// never sees the ticket. Our client sends `wait` only to a
/// tool that declares `pauses`, so this is what an older service would meet at worst.
#[tokio::test]
async fn a_service_that_does_not_know_pausing_ignores_ctx_wait() {
    const TOKEN: &str = "wt_0123456789abcdefghijklmnopqrstuvwxyzABCDEF";
    for (name, argv) in services() {
        let (mut svc, client) = start(&argv, &[]).await;
        let with_wait = |id: &str, input: Value| {
            let mut invoke = tool(id, input);
            invoke.ctx.wait = Some(kindgi_spec::pack_protocol::CallWait {
                token: TOKEN.into(),
                link: format!("http://127.0.0.1:9/v1/waits/{TOKEN}"),
                expires_at: "2026-12-02T00:00:00.000Z".into(),
                timeout_ms: 86_400_000,
                extra: Map::new(),
            });
            invoke
        };
        let answer = client
            .invoke_tool(
                &with_wait("conformance.echo", json!({"message": "hi"})),
                &CallOptions::default(),
            )
            .await
            .unwrap();
        match &answer.response {
            Response::Result(r) => assert_eq!(r.output, json!({"message": "hi"}), "{name}"),
            other => panic!("{name}: {other:?}"),
        }
        let answer = client
            .invoke_tool(
                &with_wait("conformance.context", json!({})),
                &CallOptions::default(),
            )
            .await
            .unwrap();
        let Response::Result(r) = &answer.response else {
            panic!("{name}: {:?}", answer.response)
        };
        // Neither handler's context has such a field: the ticket is dropped unseen.
        assert_eq!(
            r.output,
            json!({"tenantId": "t-client", "runId": "run-client", "requestId": "req-client"}),
            "{name}"
        );
        svc.process.stop(Duration::from_secs(10)).await;
        let logged =
            svc.process.stderr.snapshot().join("\n") + &svc.process.stdout.snapshot().join("\n");
        assert!(!logged.contains(TOKEN), "{name}: the wait token was logged");
    }
}
