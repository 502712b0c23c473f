//! The OpenAI-compatible client against a fake chat-completions server speaking the real wire
//! format over loopback HTTP, and the agent tool loop it drives (order, parallel read-only
//! calls, mutating calls alone, retries of model errors).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use kindgi_runtime::model::openai::OpenAiCompatProvider;
use kindgi_runtime::model::{FinishReason, Message, ModelProvider, ModelRequest, ModelTool};
use kindgi_runtime::{AgentSpec, JournalKind, RunOptions, RunStatus, Runtime};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{read_only, tool};

#[derive(Clone, Default)]
struct Fake {
    /// (status, body) answered in order; the last one repeats.
    script: Arc<Mutex<VecDeque<(u16, Value)>>>,
    seen: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
}

async fn chat(
    State(f): State<Fake>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    f.seen.lock().unwrap().push((headers, body));
    let mut s = f.script.lock().unwrap();
    let (status, body) = if s.len() > 1 {
        s.pop_front().unwrap()
    } else {
        s.front().cloned().unwrap()
    };
    (StatusCode::from_u16(status).unwrap(), Json(body))
}

async fn serve(script: Vec<(u16, Value)>) -> (String, Fake) {
    let fake = Fake {
        script: Arc::new(Mutex::new(script.into())),
        ..Default::default()
    };
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), fake)
}

fn completion(content: Option<&str>, calls: &[(&str, &str, Value)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": content});
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
}

#[tokio::test]
async fn the_client_speaks_chat_completions() {
    let (base, fake) = serve(vec![(
        200,
        completion(None, &[("call_1", "acme__get_order", json!({"id": "o1"}))]),
    )])
    .await;
    let p = OpenAiCompatProvider::new(base, Some("sk-test".into()), "gpt-test").unwrap();
    let r = p
        .invoke(ModelRequest {
            messages: vec![Message::system("be brief"), Message::user("where is o1?")],
            tools: vec![ModelTool {
                name: "acme.get_order".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            temperature: Some(0.5),
            max_output_tokens: Some(100),
            traceparent: None,
        })
        .await
        .unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolUse);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(
        r.tool_calls[0].name, "acme.get_order",
        "`__` decodes back to `.`"
    );
    assert_eq!(r.tool_calls[0].arguments, json!({"id": "o1"}));
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (11, 7));
    let seen = fake.seen.lock().unwrap();
    let (headers, body) = &seen[0];
    assert_eq!(headers["authorization"], "Bearer sk-test");
    assert_eq!(
        body,
        &json!({
            "model": "gpt-test",
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "where is o1?"}],
            "tools": [{"type": "function", "function": {"name": "acme__get_order", "description": "d", "parameters": {"type": "object"}}}],
            "temperature": 0.5,
            "max_tokens": 100,
            "stream": false
        })
    );
}

#[tokio::test]
async fn bad_arguments_become_an_empty_object_and_errors_are_reported() {
    let mut bad = completion(None, &[("c1", "t__x", json!({}))]);
    bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = json!("{not json");
    let (base, _) = serve(vec![(200, bad)]).await;
    let p = OpenAiCompatProvider::new(base, None, "m").unwrap();
    let r = p
        .invoke(ModelRequest {
            messages: vec![Message::user("x")],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(r.tool_calls[0].arguments, json!({}));

    // 503 then 200: retried.
    let (base, fake) = serve(vec![
        (503, json!({"error": {"message": "busy"}})),
        (200, completion(Some("hi"), &[])),
    ])
    .await;
    let p = OpenAiCompatProvider::new(base, None, "m")
        .unwrap()
        .with_retries(3, Duration::from_millis(5));
    let r = p
        .invoke(ModelRequest {
            messages: vec![Message::user("x")],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(r.text, "hi");
    assert_eq!(fake.seen.lock().unwrap().len(), 2);
    assert_eq!(
        fake.seen.lock().unwrap()[0].0["authorization"],
        "Bearer unused"
    );

    // 400 is not retried and fails the agent step with the documented message.
    let (base, fake) = serve(vec![(400, json!({"error": {"message": "bad model"}}))]).await;
    let p = OpenAiCompatProvider::new(base, None, "m")
        .unwrap()
        .with_retries(3, Duration::from_millis(5));
    let rt = Runtime::in_memory().model(Arc::new(p)).build();
    rt.agents().insert(AgentSpec::new("t.agent"));
    rt.flows()
        .insert_json(&json!({"id": "t.ask", "version": "1.0.0", "nodes": [{"id": "ask", "kind": "agent", "ref": "t.agent"}],
            "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]}).to_string())
        .unwrap();
    let run = rt
        .start_run(
            "t.ask",
            None,
            json!({"message": "hi"}),
            RunOptions {
                wait: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            "model-invocation-failed: Model call to openai-compat (m) failed: HTTP 400: bad model"
        )
    );
    assert_eq!(fake.seen.lock().unwrap().len(), 1);

    assert!(OpenAiCompatProvider::new("ftp://x", None, "m").is_err());
}

/// Tools that log when they start and end, to observe overlap.
fn timed_tool(
    id: &str,
    mutating: bool,
    log: Arc<Mutex<Vec<String>>>,
    live: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
) -> kindgi_tools::Tool {
    let name = id.to_owned();
    let extra = if mutating { json!({}) } else { read_only() };
    tool(id, extra, move |input: Value| {
        let (log, live, peak, name) = (log.clone(), live.clone(), peak.clone(), name.clone());
        async move {
            let now = live.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            log.lock()
                .unwrap()
                .push(format!("start {name} {}", input["k"]));
            tokio::time::sleep(Duration::from_millis(60)).await;
            log.lock()
                .unwrap()
                .push(format!("end {name} {}", input["k"]));
            live.fetch_sub(1, Ordering::SeqCst);
            Ok(json!({"from": name, "k": input["k"]}))
        }
    })
}

#[tokio::test]
async fn an_agent_runs_read_only_calls_together_and_others_alone_in_model_order() {
    let calls = [
        ("c1", "t__read", json!({"k": 1})),
        ("c2", "t__read", json!({"k": 2})),
        ("c3", "t__write", json!({"k": 3})),
        ("c4", "t__read", json!({"k": 4})),
        ("c5", "t__read", json!({"k": 5})),
    ];
    let (base, fake) = serve(vec![
        (200, completion(Some("let me look"), &calls)),
        (200, completion(Some("all done"), &[])),
    ])
    .await;
    let p = OpenAiCompatProvider::new(base, Some("k".into()), "m").unwrap();
    let rt = Runtime::in_memory().model(Arc::new(p)).build();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (live, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    rt.tools().insert_tool(timed_tool(
        "t.read",
        false,
        log.clone(),
        live.clone(),
        peak.clone(),
    ));
    rt.tools().insert_tool(timed_tool(
        "t.write",
        true,
        log.clone(),
        live.clone(),
        peak.clone(),
    ));
    rt.agents().insert(
        AgentSpec::new("t.agent")
            .with_tools(["t.read", "t.write"])
            .with_instructions("help"),
    );
    rt.flows()
        .insert_json(&json!({"id": "t.ask", "version": "1.0.0", "nodes": [{"id": "ask", "kind": "agent", "ref": "t.agent"}],
            "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]}).to_string())
        .unwrap();
    let run = rt
        .start_run(
            "t.ask",
            None,
            json!("go"),
            RunOptions {
                wait: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
    let out = run.output.unwrap();
    assert_eq!(out["text"], "all done");
    assert_eq!(out["steps"], 2);
    assert_eq!(out["usage"], json!({"inputTokens": 22, "outputTokens": 14}));
    assert_eq!(out["toolCalls"].as_array().unwrap().len(), 5);

    let log = log.lock().unwrap().clone();
    let pos = |s: &str| {
        log.iter()
            .position(|l| l == s)
            .unwrap_or_else(|| panic!("{s} not in {log:?}"))
    };
    // r1 and r2 overlap; the write runs alone between them and r4/r5, which overlap.
    assert!(pos("start t.read 2") < pos("end t.read 1"), "{log:?}");
    assert!(
        pos("end t.read 1") < pos("start t.write 3")
            && pos("end t.read 2") < pos("start t.write 3"),
        "{log:?}"
    );
    assert!(pos("end t.write 3") < pos("start t.read 4"), "{log:?}");
    assert!(pos("start t.read 5") < pos("end t.read 4"), "{log:?}");
    assert_eq!(peak.load(Ordering::SeqCst), 2);

    // The second request carries the assistant's calls and the results in the model's order.
    let msgs = fake.seen.lock().unwrap()[1].1["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(msgs[0], json!({"role": "system", "content": "help"}));
    assert_eq!(msgs[1], json!({"role": "user", "content": "go"}));
    assert_eq!(msgs[2]["role"], "assistant");
    assert_eq!(msgs[2]["tool_calls"][2]["function"]["name"], "t__write");
    let results: Vec<(String, String)> = msgs[3..]
        .iter()
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        results,
        vec![
            ("c1".into(), "{\"from\":\"t.read\",\"k\":1}".into()),
            ("c2".into(), "{\"from\":\"t.read\",\"k\":2}".into()),
            ("c3".into(), "{\"from\":\"t.write\",\"k\":3}".into()),
            ("c4".into(), "{\"from\":\"t.read\",\"k\":4}".into()),
            ("c5".into(), "{\"from\":\"t.read\",\"k\":5}".into()),
        ]
    );
    // Model answers and tool results are recorded for replay.
    let j = rt.journal(&run.id, None, None).await.unwrap();
    let keys: Vec<String> = j
        .iter()
        .filter(|e| e.kind == JournalKind::ValueRecorded)
        .map(|e| {
            e.payload.as_ref().unwrap()["key"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(
        keys.contains(&"model-call:1".to_owned()) && keys.contains(&"model-call:2".to_owned()),
        "{keys:?}"
    );
    assert!(
        keys.contains(&"tool-call:c3:t.write".to_owned()),
        "{keys:?}"
    );
}

#[tokio::test]
async fn an_unknown_tool_goes_back_to_the_model_once_then_fails_the_step() {
    let (base, fake) = serve(vec![(
        200,
        completion(None, &[("c1", "t__ghost", json!({}))]),
    )])
    .await;
    let p = OpenAiCompatProvider::new(base, None, "m").unwrap();
    let rt = Runtime::in_memory().model(Arc::new(p)).build();
    rt.agents().insert(AgentSpec::new("t.agent"));
    rt.flows()
        .insert_json(&json!({"id": "t.ask", "version": "1.0.0", "nodes": [{"id": "ask", "kind": "agent", "ref": "t.agent"}],
            "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]}).to_string())
        .unwrap();
    let run = rt
        .start_run(
            "t.ask",
            None,
            json!("hi"),
            RunOptions {
                wait: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(
        run.failure_message.as_deref(),
        Some(
            "unresolved-tool: Model requested tool \"t.ghost\" not registered for agent \"t.agent\""
        )
    );
    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "one retry went back to the model");
    let retry: Value =
        serde_json::from_str(seen[1].1["messages"][2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(retry["kindgi"], "tool-error-retry");
    assert_eq!(retry["error"]["kind"], "unknown-tool");
    assert_eq!(
        retry["instruction"],
        "Call one of the tools you were given instead."
    );
}

#[tokio::test]
async fn an_answer_over_the_size_limit_is_a_bad_response_not_held_in_memory() {
    let big = completion(Some(&"x".repeat(4096)), &[]);
    let (base, _) = serve(vec![(200, big)]).await;
    let err = OpenAiCompatProvider::new(base.clone(), None, "m")
        .unwrap()
        .with_max_response_bytes(1024)
        .invoke(ModelRequest {
            messages: vec![Message::user("x")],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("larger than the 1024 byte limit"),
        "{err}"
    );
    // The default limit reads the same answer.
    let r = OpenAiCompatProvider::new(base, None, "m")
        .unwrap()
        .invoke(ModelRequest {
            messages: vec![Message::user("x")],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(r.text.len(), 4096);
}

#[tokio::test]
async fn a_failed_answer_quotes_at_most_500_characters_of_its_body() {
    let (base, _) = serve(vec![(400, json!({"error": {"message": "y".repeat(5000)}}))]).await;
    let err = OpenAiCompatProvider::new(base, None, "m")
        .unwrap()
        .invoke(ModelRequest {
            messages: vec![Message::user("x")],
            ..Default::default()
        })
        .await
        .unwrap_err();
    match err {
        kindgi_runtime::model::ModelError::Status {
            status,
            message,
            body,
        } => {
            assert_eq!(status, 400);
            assert_eq!(message.chars().count(), 500);
            assert!(message.starts_with("yyy"), "{message}");
            assert_eq!(body.chars().count(), 500);
            assert!(body.starts_with(r#"{"error":{"message":"yyy"#), "{body}");
        }
        other => panic!("{other:?}"),
    }
}

// ----- secrets in tool results ----------------------------------------------------------

const SECRET: &str = "sk-model-must-not-see-0123456789";

#[derive(Debug)]
struct OneSecret;

impl kindgi_tools::context::SecretResolver for OneSecret {
    fn resolve<'a>(
        &'a self,
        _env_name: &'a str,
        name: &'a str,
    ) -> kindgi_tools::BoxFuture<'a, Result<String, String>> {
        let answer = (name == "api-token")
            .then(|| SECRET.to_owned())
            .ok_or_else(|| format!("no secret \"{name}\""));
        Box::pin(async move { answer })
    }
}

/// Every tenant has the one secret `api-token`.
#[derive(Debug)]
struct SecretValues;

#[async_trait::async_trait]
impl kindgi_runtime::CallValues for SecretValues {
    async fn env(
        &self,
        _tenant: &str,
        _project: Option<&str>,
        _tool: &kindgi_spec::ToolManifest,
        _names: &[String],
    ) -> Result<std::collections::BTreeMap<String, String>, kindgi_core::StorageError> {
        Ok(Default::default())
    }
    fn secrets(
        &self,
        _tenant: &str,
        _project: Option<&str>,
        _tool: &kindgi_spec::ToolManifest,
    ) -> Option<Arc<dyn kindgi_tools::context::SecretResolver>> {
        Some(Arc::new(OneSecret))
    }
    async fn secret_values(
        &self,
        _tenant: &str,
        _project: Option<&str>,
        _tool: &kindgi_spec::ToolManifest,
        _names: &[String],
    ) -> Result<std::collections::BTreeMap<String, String>, kindgi_core::StorageError> {
        Ok(Default::default())
    }
    fn served_env(&self) -> &str {
        "local"
    }
}

#[tokio::test]
async fn a_tool_result_carrying_a_resolved_secret_reaches_the_model_masked() {
    let (base, fake) = serve(vec![
        (200, completion(None, &[("c1", "t__leaky", json!({}))])),
        (200, completion(Some("done"), &[])),
    ])
    .await;
    let p = OpenAiCompatProvider::new(base, None, "m").unwrap();
    let rt = Runtime::in_memory()
        .model(Arc::new(p))
        .call_values(Arc::new(SecretValues))
        .build();
    // A tool that resolves the secret and (wrongly) hands it back in its result.
    let handler: kindgi_tools::Handler =
        Arc::new(|_input: Value, ctx: kindgi_tools::ToolContext| {
            let fut: kindgi_tools::BoxFuture<'static, Result<Value, kindgi_tools::HandlerError>> =
                Box::pin(async move {
                    let secrets = ctx.secrets.clone().unwrap();
                    let value = secrets.resolve("local", "api-token").await.unwrap();
                    Ok(json!({"debug": format!("sent Authorization: Bearer {value}")}))
                });
            fut
        });
    rt.tools().insert_tool(kindgi_tools::Tool::from_parts(
        support::manifest("t.leaky", read_only()),
        handler,
    ));
    rt.agents()
        .insert(AgentSpec::new("t.agent").with_tools(["t.leaky"]));
    rt.flows()
        .insert_json(&json!({"id": "t.ask", "version": "1.0.0", "nodes": [{"id": "ask", "kind": "agent", "ref": "t.agent"}],
            "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]}).to_string())
        .unwrap();
    let run = rt
        .start_run(
            "t.ask",
            None,
            json!("hi"),
            RunOptions {
                wait: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let next = seen[1].1.to_string();
    assert!(!next.contains(SECRET), "{next}");
    let result = seen[1].1["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    let content: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(content, json!({"debug": "sent Authorization: Bearer ***"}));
}
