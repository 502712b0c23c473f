//! The model router over an in-memory provider registry, with registered openai-compat
//! providers pointing at a fake Chat Completions server on loopback: a `fallback` provider
//! serves only when nothing else fits and the turn then carries the `fallback-provider`
//! warning; a non-fallback one wins; `preferredProvider`/`preferredModel` choose among them;
//! an agent's required feature no provider has fails the turn `capability-routing-failed`; a
//! chosen provider that can't be connected fails it naming provider, adapter and setting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use kindgi_core::memory::MemoryProviderRegistry;
use kindgi_core::ports::{ProviderRegistration, ProviderRegistry};
use kindgi_runtime::{AgentSpec, RunOptions, RunStatus, Runtime};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
struct Fake {
    models: Arc<Mutex<Vec<String>>>,
}

async fn chat(State(f): State<Fake>, Json(body): Json<Value>) -> Json<Value> {
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    f.models.lock().unwrap().push(model.clone());
    Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("from {model}")}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    }))
}

async fn fake() -> (String, Fake) {
    let fake = Fake::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), fake)
}

fn registration(
    id: &str,
    base: &str,
    models: &[(&str, &[&str])],
    fallback: bool,
) -> ProviderRegistration {
    let models: Vec<Value> = models
        .iter()
        .map(|(name, features)| {
            json!({"name": name, "contextWindow": 1000, "features": features,
            "cost": {"promptUsdPer1kTokens": 0, "completionUsdPer1kTokens": 0}})
        })
        .collect();
    ProviderRegistration {
        tenant: "default".into(),
        id: id.into(),
        adapter_id: "@kindgi/adapter-model-openai-compat".into(),
        metadata: json!({"id": id, "region": "unspecified", "models": models, "fallback": fallback}),
        secret_ref: None,
        adapter_config: json!({"baseUrl": base}).as_object().cloned().unwrap(),
        send_traceparent: false,
        created_at: 1,
        unregistered_at: None,
    }
}

async fn turn(rt: &Runtime, agent: &str) -> kindgi_runtime::RunRecord {
    let flow = format!("t.{}", agent.replace('.', "-"));
    rt.flows()
        .insert_json(&json!({"id": flow, "version": "1.0.0", "nodes": [{"id": "ask", "kind": "agent", "ref": agent}],
            "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]}).to_string())
        .unwrap();
    rt.start_run(
        &flow,
        None,
        json!({"message": "hi"}),
        RunOptions {
            wait: true,
            ..Default::default()
        },
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn the_router_picks_providers_and_models() {
    let (base, fake) = fake().await;
    let registry = Arc::new(MemoryProviderRegistry::new());
    let rt = Runtime::in_memory().providers(registry.clone()).build();
    rt.agents().insert(AgentSpec::new("t.any"));
    rt.agents().insert(
        AgentSpec::from_value(
            json!({"id": "t.picky", "preferredProvider": "b-second", "preferredModel": "m-big"}),
        )
        .unwrap(),
    );
    rt.agents().insert(
        AgentSpec::from_value(
            json!({"id": "t.seeing", "capabilities": [{"kind": "llm-inference",
            "requirements": [{"feature": "vision"}]}]}),
        )
        .unwrap(),
    );

    // Only a fallback registered: it serves, with the warning.
    registry
        .register(&registration("z-fallback", &base, &[("m-echo", &[])], true))
        .await
        .unwrap();
    let run = turn(&rt, "t.any").await;
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
    let out = run.output.unwrap();
    assert_eq!(
        (out["providerId"].as_str(), out["model"].as_str()),
        (Some("z-fallback"), Some("m-echo")),
        "{out}"
    );
    assert_eq!(out["warnings"][0]["code"], "fallback-provider", "{out}");
    assert!(
        out["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("fallback"),
        "{out}"
    );

    // A real provider wins over the fallback; ties break by id; preferences choose.
    registry
        .register(&registration(
            "a-first",
            &base,
            &[("m-one", &["tool-use"])],
            false,
        ))
        .await
        .unwrap();
    registry
        .register(&registration(
            "b-second",
            &base,
            &[("m-small", &[]), ("m-big", &["vision"])],
            false,
        ))
        .await
        .unwrap();
    let out = turn(&rt, "t.any").await.output.unwrap();
    assert_eq!(
        (out["providerId"].as_str(), out["model"].as_str()),
        (Some("a-first"), Some("m-one")),
        "{out}"
    );
    assert!(out.get("warnings").is_none(), "{out}");
    let out = turn(&rt, "t.picky").await.output.unwrap();
    assert_eq!(
        (out["providerId"].as_str(), out["model"].as_str()),
        (Some("b-second"), Some("m-big")),
        "{out}"
    );
    assert_eq!(out["text"], "from m-big");
    let out = turn(&rt, "t.seeing").await.output.unwrap();
    assert_eq!(
        (out["providerId"].as_str(), out["model"].as_str()),
        (Some("b-second"), Some("m-big")),
        "{out}"
    );
    assert_eq!(
        fake.models.lock().unwrap().clone(),
        ["m-echo", "m-one", "m-big", "m-big"]
    );

    // A required feature nobody has.
    rt.agents().insert(
        AgentSpec::from_value(json!({"id": "t.hearing", "capabilities": [{"requirements": [{"feature": "audio-input"}]}]})).unwrap(),
    );
    let run = turn(&rt, "t.hearing").await;
    assert_eq!(run.status, RunStatus::Failed);
    assert!(
        run.failure_message
            .as_deref()
            .unwrap()
            .starts_with("capability-routing-failed:"),
        "{:?}",
        run.failure_message
    );

    // A chosen provider that can't be connected.
    let mut broken = registration("0-broken", &base, &[("m", &[])], false);
    broken
        .adapter_config
        .insert("baseUrl".into(), json!("ftp://nowhere"));
    registry.register(&broken).await.unwrap();
    let run = turn(&rt, "t.any").await;
    assert_eq!(run.status, RunStatus::Failed);
    let why = run.failure_message.unwrap();
    assert!(
        why.starts_with("model-invocation-failed: Model provider \"0-broken\" (adapter @kindgi/adapter-model-openai-compat) cannot be used: /adapter_config/baseUrl"),
        "{why}"
    );
}

#[tokio::test]
async fn without_registrations_the_host_model_serves() {
    let registry = Arc::new(MemoryProviderRegistry::new());
    let rt = Runtime::in_memory().providers(registry).build();
    rt.agents().insert(AgentSpec::new("t.any"));
    let out = turn(&rt, "t.any").await.output.unwrap();
    assert_eq!(out["providerId"], "dev-echo", "{out}");
    let codes: Vec<&str> = out["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        ["dev-echo-not-a-model"],
        "no fallback-provider warning for the host's model"
    );
}
