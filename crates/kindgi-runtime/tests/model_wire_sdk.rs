//! Every model adapter against `tests/fixtures/model_fake.py`, which validates each request
//! body with the official SDKs' request types (`openai`, `anthropic`, `google-genai`, pydantic
//! `TypeAdapter`) and answers with bodies built from their response models: a tool-call round
//! trip and a plain answer, each with `invoke` and `invoke_streaming`. A request the SDK types
//! refuse comes back as a 422 whose message is the validation error, failing the test with it.
//!
//! Needs `KINDGI_REFERENCE_PYTHON` with those packages (scripts/setup-reference); without them
//! the tests skip, and fail under `KINDGI_REQUIRE_REFERENCE=1` or CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_runtime::model::adapters::{self, Connection};
use kindgi_runtime::model::{FinishReason, Message, ModelProvider, ModelRequest, ModelTool};
use kindgi_tools::egress::EgressPolicy;
use serde_json::{Map, Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

struct FakeServer {
    child: Child,
    base: String,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("KINDGI_REFERENCE_PYTHON")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .filter(|py| {
            Command::new(py)
                .args(["-c", "import openai, anthropic, google.genai, pydantic"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
    kindgi_spec::testing::reference_or_skip(
        test,
        found,
        "KINDGI_REFERENCE_PYTHON is not set or lacks openai, anthropic, google-genai (scripts/setup-reference)",
    )
}

fn start(py: PathBuf) -> FakeServer {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/model_fake.py");
    let mut child = Command::new(py)
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().strip_prefix("PORT ").expect(&line).to_owned();
    FakeServer {
        child,
        base: format!("http://127.0.0.1:{port}"),
    }
}

fn connect(adapter: &str, config: Value) -> Arc<dyn ModelProvider> {
    let config: Map<String, Value> = serde_json::from_value(config).unwrap();
    adapters::connect(&Connection {
        provider_id: "prov-sdk",
        adapter_id: adapter,
        config: &config,
        api_key: Some("sk-test-key".into()),
        model: "model-x",
        max_output_tokens: Some(512),
        send_traceparent: false,
        sampling: true,
        egress: EgressPolicy::open(),
    })
    .unwrap()
}

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::system("be brief"), Message::user("o1")],
        tools: vec![ModelTool {
            name: "acme.get_order".into(),
            description: "Looks an order up".into(),
            parameters: json!({"type": "object", "properties": {"id": {"type": "string", "minLength": 1}},
                               "required": ["id"], "additionalProperties": false}),
        }],
        temperature: Some(0.2),
        max_output_tokens: None,
        traceparent: None,
    }
}

/// Tool round trip and a plain answer, streamed or not.
async fn round_trip(p: &dyn ModelProvider, streaming: bool) {
    let pieces = Arc::new(Mutex::new(String::new()));
    let sink = pieces.clone();
    let on_text = move |t: &str| sink.lock().unwrap().push_str(t);
    let call = |r: ModelRequest| {
        let on_text = on_text.clone();
        async move {
            if streaming {
                p.invoke_streaming(r, &on_text).await
            } else {
                p.invoke(r).await
            }
        }
    };
    let first = call(request()).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.finish_reason, FinishReason::ToolUse, "{first:?}");
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].name, "acme.get_order");
    assert_eq!(first.tool_calls[0].arguments, json!({"id": "o1"}));
    let mut next = request();
    next.messages
        .push(Message::assistant("", first.tool_calls.clone()));
    next.messages.push(Message::tool(
        first.tool_calls[0].id.clone(),
        r#"{"status":"shipped"}"#,
    ));
    let second = call(next).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(second.finish_reason, FinishReason::Stop);
    assert!(
        second.text.starts_with("Tool responded: ") && second.text.contains("shipped"),
        "{second:?}"
    );
    assert_eq!(
        (second.usage.input_tokens, second.usage.output_tokens),
        (11, 7)
    );
    if streaming {
        assert_eq!(
            *pieces.lock().unwrap(),
            second.text,
            "the text arrived in pieces"
        );
    }
    let plain = call(ModelRequest {
        messages: vec![Message::user("hello there")],
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plain.text, "hello there");
}

async fn seen(base: &str) -> Vec<Value> {
    reqwest::get(format!("{base}/_seen"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn openai_chat_completions_requests_are_valid_sdk_params() {
    let Some(py) = python("openai_chat_completions_requests_are_valid_sdk_params") else {
        return;
    };
    let fake = start(py);
    let p = connect(
        adapters::OPENAI_COMPAT,
        json!({"baseUrl": format!("{}/v1", fake.base), "api": "chat-completions"}),
    );
    round_trip(p.as_ref(), false).await;
    round_trip(p.as_ref(), true).await;
    let seen = seen(&fake.base).await;
    assert_eq!(seen.len(), 6);
    assert!(seen.iter().all(|s| s["path"] == "/v1/chat/completions"));
    assert_eq!(seen[0]["headers"]["authorization"], "Bearer sk-test-key");
}

#[tokio::test]
async fn openai_responses_requests_are_valid_sdk_params() {
    let Some(py) = python("openai_responses_requests_are_valid_sdk_params") else {
        return;
    };
    let fake = start(py);
    let p = connect(
        adapters::OPENAI_COMPAT,
        json!({"baseUrl": format!("{}/v1", fake.base), "api": "responses"}),
    );
    round_trip(p.as_ref(), false).await;
    round_trip(p.as_ref(), true).await;
    let seen = seen(&fake.base).await;
    assert!(seen.iter().all(|s| s["path"] == "/v1/responses"));
    assert_eq!(seen[1]["body"]["input"][3]["type"], "function_call_output");
}

#[tokio::test]
async fn anthropic_requests_are_valid_sdk_params() {
    let Some(py) = python("anthropic_requests_are_valid_sdk_params") else {
        return;
    };
    let fake = start(py);
    let p = connect(adapters::ANTHROPIC, json!({"baseUrl": fake.base}));
    round_trip(p.as_ref(), false).await;
    round_trip(p.as_ref(), true).await;
    let seen = seen(&fake.base).await;
    assert!(seen.iter().all(|s| s["path"] == "/v1/messages"));
    assert_eq!(seen[0]["headers"]["x-api-key"], "sk-test-key");
    assert_eq!(seen[0]["body"]["max_tokens"], 512);
}

#[tokio::test]
async fn gemini_requests_are_valid_sdk_types() {
    let Some(py) = python("gemini_requests_are_valid_sdk_types") else {
        return;
    };
    let fake = start(py);
    let p = connect(adapters::GEMINI, json!({"baseUrl": fake.base}));
    round_trip(p.as_ref(), false).await;
    round_trip(p.as_ref(), true).await;
    let seen = seen(&fake.base).await;
    assert_eq!(seen[0]["path"], "/v1beta/models/model-x:generateContent");
    assert_eq!(
        seen[3]["path"],
        "/v1beta/models/model-x:streamGenerateContent?alt=sse"
    );
    assert_eq!(seen[0]["headers"]["x-goog-api-key"], "sk-test-key");
}

#[tokio::test]
async fn a_request_the_sdk_types_refuse_fails_with_the_validation_error() {
    let Some(py) = python("a_request_the_sdk_types_refuse_fails_with_the_validation_error") else {
        return;
    };
    let fake = start(py);
    // A body no Kindgi client sends: checked straight against the fake.
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/messages", fake.base))
        .json(&json!({"model": "m", "messages": [{"role": "robot", "content": "x"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 422);
    let body: Value = resp.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("MessageCreateParamsNonStreaming"),
        "{message}"
    );
    assert!(message.contains("max_tokens"), "{message}");
}
