//! The model adapters (`model::adapters::connect`) against loopback servers speaking each
//! provider's wire format: OpenAI Responses and Chat Completions, Anthropic Messages, Google
//! Gemini. Tool-call round trips (the tool goes out, a call comes back, the result goes out in
//! the provider's form), streaming, the provider's error body as the error, the shared retry
//! rule (Retry-After honoured, 5xx retried, 400 not), the body budget, `check`, egress.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use kindgi_runtime::model::adapters::{self, Connection};
use kindgi_runtime::model::wire::Endpoint;
use kindgi_runtime::model::{
    FinishReason, Message, ModelError, ModelProvider, ModelRequest, ModelTool, ToolCall,
};
use kindgi_tools::egress::EgressPolicy;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One scripted answer.
#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    content_type: &'static str,
    body: String,
}

fn ok(body: Value) -> Reply {
    Reply {
        status: 200,
        headers: vec![],
        content_type: "application/json",
        body: body.to_string(),
    }
}

fn status(code: u16, body: Value) -> Reply {
    Reply {
        status: code,
        ..ok(body)
    }
}

fn sse(events: &[(Option<&str>, Value)]) -> Reply {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(n) = name {
            body.push_str(&format!("event: {n}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    Reply {
        status: 200,
        headers: vec![],
        content_type: "text/event-stream",
        body,
    }
}

/// One request seen: path and query, headers, body, when.
type Seen = (String, HeaderMap, Value, Instant);

#[derive(Clone, Default)]
struct Fake {
    script: Arc<Mutex<VecDeque<Reply>>>,
    /// (path and query, headers, body, when)
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    fn bodies(&self) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.2.clone())
            .collect()
    }
    fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

async fn answer(State(f): State<Fake>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    f.seen
        .lock()
        .unwrap()
        .push((uri.to_string(), headers, body, Instant::now()));
    let reply = {
        let mut s = f.script.lock().unwrap();
        if s.len() > 1 {
            s.pop_front().unwrap()
        } else {
            s.front().cloned().unwrap()
        }
    };
    let mut resp = (
        StatusCode::from_u16(reply.status).unwrap(),
        [("content-type", reply.content_type)],
        reply.body,
    )
        .into_response();
    for (k, v) in reply.headers {
        resp.headers_mut().insert(k, v.parse().unwrap());
    }
    resp
}

async fn serve(script: Vec<Reply>) -> (String, Fake) {
    let fake = Fake {
        script: Arc::new(Mutex::new(script.into())),
        ..Default::default()
    };
    let app = Router::new().fallback(answer).with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), fake)
}

fn connect(adapter: &str, config: Value, model: &str) -> Arc<dyn ModelProvider> {
    let config: Map<String, Value> = serde_json::from_value(config).unwrap();
    adapters::connect(&Connection {
        provider_id: "prov-1",
        adapter_id: adapter,
        config: &config,
        api_key: Some("sk-secret-key".into()),
        model,
        max_output_tokens: None,
        send_traceparent: false,
        sampling: true,
        egress: EgressPolicy::open(),
    })
    .unwrap()
}

fn tool() -> ModelTool {
    ModelTool {
        name: "acme.get_order".into(),
        description: "Looks an order up".into(),
        parameters: json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}),
    }
}

fn first_request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::system("be brief"), Message::user("where is o1?")],
        tools: vec![tool()],
        ..Default::default()
    }
}

/// The first request, the model's calls, their results (two, to see them merged).
fn second_request(calls: &[ToolCall]) -> ModelRequest {
    let mut r = first_request();
    r.messages.push(Message::assistant("", calls.to_vec()));
    for c in calls {
        r.messages
            .push(Message::tool(c.id.clone(), r#"{"status":"shipped"}"#));
    }
    r
}

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "acme.get_order".into(),
        arguments: json!({"id": "o1"}),
    }
}

fn no_text(_: &str) {}

// ----- Anthropic ------------------------------------------------------------------------

fn anthropic_message(content: Value, stop: &str) -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": content,
           "stop_reason": stop, "stop_sequence": null, "usage": {"input_tokens": 12, "output_tokens": 5, "cache_read_input_tokens": 3}})
}

#[tokio::test]
async fn anthropic_tool_call_round_trip() {
    let (base, fake) = serve(vec![
        ok(anthropic_message(
            json!([{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "toolu_1", "name": "acme__get_order", "input": {"id": "o1"}},
                   {"type": "tool_use", "id": "toolu_2", "name": "acme__get_order", "input": {"id": "o2"}}]),
            "tool_use",
        )),
        ok(anthropic_message(json!([{"type": "text", "text": "Shipped."}]), "end_turn")),
    ])
    .await;
    let p = connect(adapters::ANTHROPIC, json!({"baseUrl": base}), "claude-x");
    assert_eq!(p.provider_id(), "prov-1");
    let r = p.invoke(first_request()).await.unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolUse);
    assert_eq!(r.text, "Looking.");
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.tool_calls[0].id, "toolu_1");
    assert_eq!(r.tool_calls[0].name, "acme.get_order");
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (15, 5));
    let r2 = p.invoke(second_request(&r.tool_calls)).await.unwrap();
    assert_eq!(
        (r2.text.as_str(), r2.finish_reason),
        ("Shipped.", FinishReason::Stop)
    );

    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen[0].0, "/v1/messages");
    assert_eq!(seen[0].1["x-api-key"], "sk-secret-key");
    assert_eq!(seen[0].1["anthropic-version"], "2023-06-01");
    let first = &seen[0].2;
    assert_eq!(first["system"], "be brief");
    assert_eq!(first["max_tokens"], 4096, "always sent");
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "where is o1?"}]}])
    );
    assert_eq!(first["tools"][0]["name"], "acme__get_order");
    assert_eq!(first["tools"][0]["input_schema"], tool().parameters);
    let msgs = seen[1].2["messages"].as_array().unwrap().clone();
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["content"][0]["type"], "tool_use");
    assert_eq!(msgs[1]["content"][0]["input"], json!({"id": "o1"}));
    assert_eq!(
        msgs[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"status\":\"shipped\"}"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "{\"status\":\"shipped\"}"}]}),
        "consecutive tool results are one user message"
    );
}

#[tokio::test]
async fn anthropic_streams_text_and_tool_input() {
    let (base, _) = serve(vec![sse(&[
        (Some("message_start"), json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "c", "stop_reason": null, "usage": {"input_tokens": 9, "output_tokens": 1}}})),
        (Some("content_block_start"), json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        (Some("ping"), json!({"type": "ping"})),
        (Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}})),
        (Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}})),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})),
        (Some("content_block_start"), json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "acme__get_order", "input": {}}})),
        (Some("content_block_delta"), json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"id\": "}})),
        (Some("content_block_delta"), json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"o1\"}"}})),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 1})),
        (Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 17}})),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ])])
    .await;
    let p = connect(adapters::ANTHROPIC, json!({"baseUrl": base}), "claude-x");
    let pieces = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = pieces.clone();
    let r = p
        .invoke_streaming(first_request(), &move |t: &str| {
            sink.lock().unwrap().push(t.to_owned())
        })
        .await
        .unwrap();
    assert_eq!(*pieces.lock().unwrap(), vec!["Hel", "lo"]);
    assert_eq!(r.text, "Hello");
    assert_eq!(r.finish_reason, FinishReason::ToolUse);
    assert_eq!(
        r.tool_calls,
        vec![ToolCall {
            id: "toolu_9".into(),
            ..call("x")
        }]
    );
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (9, 17));
}

#[tokio::test]
async fn anthropic_error_body_is_the_error_and_400_is_not_retried() {
    let (base, fake) = serve(vec![status(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}}),
    )])
    .await;
    let p = connect(adapters::ANTHROPIC, json!({"baseUrl": base}), "claude-x");
    let err = p.invoke(first_request()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "HTTP 400: invalid_request_error: max_tokens: Field required"
    );
    assert_eq!(fake.count(), 1, "a 400 is not tried again");
}

#[tokio::test]
async fn anthropic_529_overloaded_is_retried() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let (base, fake) = serve(vec![
        status(529, overloaded.clone()),
        ok(anthropic_message(
            json!([{"type": "text", "text": "ok"}]),
            "end_turn",
        )),
    ])
    .await;
    let e = Endpoint::new(
        "p",
        "claude-x",
        &base,
        Some("k".into()),
        EgressPolicy::open(),
    )
    .unwrap()
    .with_retries(3, Duration::from_millis(5));
    let p = kindgi_runtime::model::anthropic::AnthropicProvider::new(e);
    assert_eq!(p.invoke(first_request()).await.unwrap().text, "ok");
    assert_eq!(fake.count(), 2);
}

// ----- Gemini ---------------------------------------------------------------------------

fn gemini_answer(parts: Value, finish: &str) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
           "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 4, "thoughtsTokenCount": 2, "totalTokenCount": 26}})
}

#[tokio::test]
async fn gemini_tool_call_round_trip_with_stable_ids() {
    let (base, fake) = serve(vec![
        ok(gemini_answer(
            json!([{"text": "thinking", "thought": true},
                   {"functionCall": {"name": "acme__get_order", "args": {"id": "o1"}}, "thoughtSignature": "c2lnMQ=="},
                   {"functionCall": {"name": "acme__get_order", "args": {"id": "o2"}}}]),
            "STOP",
        )),
        ok(gemini_answer(json!([{"text": "Shipped."}]), "STOP")),
    ])
    .await;
    let p = connect(
        adapters::GEMINI,
        json!({"baseUrl": base}),
        "gemini-2.5-flash",
    );
    let r = p.invoke(first_request()).await.unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolUse);
    assert_eq!(r.text, "", "thought parts are not the answer");
    let ids: Vec<&str> = r.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["gemini-call-1-1~sig~c2lnMQ==", "gemini-call-1-2"]);
    assert_eq!(r.tool_calls[0].name, "acme.get_order");
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (20, 6));
    // The same answer parsed again gives the same ids (replay is stable).
    let again = kindgi_runtime::model::gemini::parse_response(
        &gemini_answer(json!([{"functionCall": {"name": "a", "args": {}}}]), "STOP"),
        1,
    )
    .unwrap();
    assert_eq!(again.tool_calls[0].id, "gemini-call-1-1");
    p.invoke(second_request(&r.tool_calls)).await.unwrap();

    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen[0].0, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(seen[0].1["x-goog-api-key"], "sk-secret-key");
    let first = &seen[0].2;
    assert_eq!(
        first["systemInstruction"],
        json!({"parts": [{"text": "be brief"}]})
    );
    assert_eq!(
        first["contents"],
        json!([{"role": "user", "parts": [{"text": "where is o1?"}]}])
    );
    assert_eq!(
        first["tools"],
        json!([{"functionDeclarations": [{"name": "acme__get_order", "description": "Looks an order up", "parametersJsonSchema": tool().parameters}]}])
    );
    let contents = seen[1].2["contents"].as_array().unwrap().clone();
    assert_eq!(contents.len(), 3);
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "acme__get_order", "args": {"id": "o1"}}, "thoughtSignature": "c2lnMQ=="},
            {"functionCall": {"name": "acme__get_order", "args": {"id": "o2"}}}]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "acme__get_order", "response": {"output": {"status": "shipped"}}}},
            {"functionResponse": {"name": "acme__get_order", "response": {"output": {"status": "shipped"}}}}]}),
        "results matched back to their calls' names, in order, in one user turn"
    );
}

#[tokio::test]
async fn gemini_streams_and_reports_its_error_body() {
    let (base, fake) = serve(vec![sse(&[
        (None, json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]})),
        (None, json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}, "finishReason": "MAX_TOKENS"}],
                      "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2}})),
    ])])
    .await;
    let p = connect(
        adapters::GEMINI,
        json!({"baseUrl": base}),
        "models/gemini-x",
    );
    let pieces = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = pieces.clone();
    let r = p
        .invoke_streaming(first_request(), &move |t: &str| {
            sink.lock().unwrap().push(t.to_owned())
        })
        .await
        .unwrap();
    assert_eq!(*pieces.lock().unwrap(), vec!["Hel", "lo"]);
    assert_eq!(
        (r.text.as_str(), r.finish_reason),
        ("Hello", FinishReason::Length)
    );
    assert_eq!(
        fake.seen.lock().unwrap()[0].0,
        "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    );

    let (base, fake) = serve(vec![status(
        400,
        json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}}),
    )])
    .await;
    let p = connect(adapters::GEMINI, json!({"baseUrl": base}), "gemini-x");
    let err = p.invoke(first_request()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "HTTP 400: INVALID_ARGUMENT: API key not valid. Please pass a valid API key."
    );
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn gemini_safety_is_content_filter() {
    let (base, _) = serve(vec![ok(
        json!({"promptFeedback": {"blockReason": "SAFETY"}}),
    )])
    .await;
    let p = connect(adapters::GEMINI, json!({"baseUrl": base}), "gemini-x");
    assert_eq!(
        p.invoke(first_request()).await.unwrap().finish_reason,
        FinishReason::ContentFilter
    );
}

// ----- OpenAI Responses and Chat Completions ---------------------------------------------

fn response_object(output: Value, incomplete: Option<&str>) -> Value {
    json!({"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-x", "status": if incomplete.is_some() { "incomplete" } else { "completed" },
           "incomplete_details": incomplete.map(|r| json!({"reason": r})), "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
           "usage": {"input_tokens": 30, "output_tokens": 8, "total_tokens": 38, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}})
}

#[tokio::test]
async fn responses_tool_call_round_trip() {
    let (base, fake) = serve(vec![
        ok(response_object(
            json!([{"type": "reasoning", "id": "rs_1", "summary": []},
                   {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "acme__get_order", "arguments": "{\"id\":\"o1\"}", "status": "completed"}]),
            None,
        )),
        ok(response_object(
            json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "incomplete", "content": [{"type": "output_text", "text": "Ship", "annotations": []}]}]),
            Some("max_output_tokens"),
        )),
    ])
    .await;
    let p = connect(
        adapters::OPENAI_COMPAT,
        json!({"baseUrl": format!("{base}/v1"), "api": "responses"}),
        "gpt-x",
    );
    let r = p.invoke(first_request()).await.unwrap();
    assert_eq!(r.finish_reason, FinishReason::ToolUse);
    assert_eq!(r.tool_calls, vec![call("call_1")]);
    let r2 = p.invoke(second_request(&r.tool_calls)).await.unwrap();
    assert_eq!(
        (r2.text.as_str(), r2.finish_reason),
        ("Ship", FinishReason::Length)
    );
    assert_eq!((r2.usage.input_tokens, r2.usage.output_tokens), (30, 8));

    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen[0].0, "/v1/responses");
    assert_eq!(seen[0].1["authorization"], "Bearer sk-secret-key");
    let first = &seen[0].2;
    assert_eq!(first["store"], false);
    assert_eq!(
        first["tools"],
        json!([{"type": "function", "name": "acme__get_order", "description": "Looks an order up", "parameters": tool().parameters, "strict": false}])
    );
    assert_eq!(
        seen[1].2["input"],
        json!([
            {"type": "message", "role": "system", "content": "be brief"},
            {"type": "message", "role": "user", "content": "where is o1?"},
            {"type": "function_call", "call_id": "call_1", "name": "acme__get_order", "arguments": "{\"id\":\"o1\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "{\"status\":\"shipped\"}"}
        ])
    );
}

#[tokio::test]
async fn responses_streams_and_the_api_rule_picks_by_host() {
    let done = response_object(
        json!([{"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}]),
        None,
    );
    let (base, fake) = serve(vec![sse(&[
        (Some("response.created"), json!({"type": "response.created", "sequence_number": 0, "response": response_object(json!([]), None)})),
        (Some("response.output_text.delta"), json!({"type": "response.output_text.delta", "sequence_number": 1, "item_id": "m", "output_index": 0, "content_index": 0, "delta": "Hel"})),
        (Some("response.output_text.delta"), json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "m", "output_index": 0, "content_index": 0, "delta": "lo"})),
        (Some("response.completed"), json!({"type": "response.completed", "sequence_number": 3, "response": done})),
    ])])
    .await;
    let p = connect(
        adapters::OPENAI_COMPAT,
        json!({"baseUrl": format!("{base}/v1"), "api": "responses"}),
        "gpt-x",
    );
    let pieces = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = pieces.clone();
    let r = p
        .invoke_streaming(first_request(), &move |t: &str| {
            sink.lock().unwrap().push(t.to_owned())
        })
        .await
        .unwrap();
    assert_eq!(*pieces.lock().unwrap(), vec!["Hel", "lo"]);
    assert_eq!(r.text, "Hello");
    assert_eq!(fake.bodies()[0]["stream"], true);

    let none = Map::new();
    assert_eq!(
        adapters::openai_api(&none, "https://api.openai.com/v1"),
        "responses"
    );
    assert_eq!(
        adapters::openai_api(&none, "http://localhost:11434/v1"),
        "chat-completions"
    );
    let chat: Map<String, Value> =
        serde_json::from_value(json!({"api": "chat-completions"})).unwrap();
    assert_eq!(
        adapters::openai_api(&chat, "https://api.openai.com/v1"),
        "chat-completions"
    );
}

#[tokio::test]
async fn chat_completions_for_a_compatible_server_streams_tool_calls() {
    let chunk = |delta: Value, finish: Value| json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "llama", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let mut last = chunk(json!({}), json!(null));
    last["choices"] = json!([]);
    last["usage"] = json!({"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8});
    let events: Vec<(Option<&str>, Value)> = vec![
        (
            None,
            chunk(json!({"role": "assistant", "content": "Le"}), json!(null)),
        ),
        (None, chunk(json!({"content": "t me"}), json!(null))),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_7", "type": "function", "function": {"name": "acme__get_order", "arguments": ""}}]}),
                json!(null),
            ),
        ),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"id\":"}}]}),
                json!(null),
            ),
        ),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"o1\"}"}}]}),
                json!(null),
            ),
        ),
        (None, chunk(json!({}), json!("tool_calls"))),
        (None, last),
    ];
    let mut reply = sse(&events);
    reply.body.push_str("data: [DONE]\n\n");
    let (base, fake) = serve(vec![reply]).await;
    let config: Map<String, Value> =
        serde_json::from_value(json!({"baseUrl": format!("{base}/v1")})).unwrap();
    let p = adapters::connect(&Connection {
        provider_id: "ollama-local",
        adapter_id: adapters::OPENAI_COMPAT,
        config: &config,
        api_key: None,
        model: "llama3",
        max_output_tokens: Some(256),
        send_traceparent: false,
        sampling: true,
        egress: EgressPolicy::open(),
    })
    .unwrap();
    assert_eq!((p.provider_id(), p.model()), ("ollama-local", "llama3"));
    let r = p.invoke_streaming(first_request(), &no_text).await.unwrap();
    assert_eq!(r.text, "Let me");
    assert_eq!(r.finish_reason, FinishReason::ToolUse);
    assert_eq!(r.tool_calls, vec![call("call_7")]);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (5, 3));
    let seen = fake.seen.lock().unwrap();
    assert_eq!(
        seen[0].0, "/v1/chat/completions",
        "a non-OpenAI host speaks chat completions"
    );
    assert_eq!(
        seen[0].1["authorization"], "Bearer unused",
        "no key: the reference's placeholder"
    );
    assert_eq!(seen[0].2["stream"], true);
    assert_eq!(seen[0].2["max_tokens"], 256, "the model's maxOutputTokens");
}

// ----- the shared retry rule, budgets -----------------------------------------------------

#[tokio::test]
async fn a_429_with_retry_after_is_retried_after_the_pause() {
    let mut limited = status(
        429,
        json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
    );
    limited.headers.push(("retry-after", "1".into()));
    let (base, fake) = serve(vec![
        limited,
        ok(anthropic_message(
            json!([{"type": "text", "text": "ok"}]),
            "end_turn",
        )),
    ])
    .await;
    let p = connect(adapters::ANTHROPIC, json!({"baseUrl": base}), "claude-x");
    assert_eq!(p.invoke(first_request()).await.unwrap().text, "ok");
    let seen = fake.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let pause = seen[1].3 - seen[0].3;
    assert!(
        pause >= Duration::from_millis(950) && pause < Duration::from_secs(3),
        "{pause:?}"
    );
}

#[tokio::test]
async fn a_500_then_success_and_retries_run_out() {
    let mut fail = status(500, json!({"error": {"message": "boom"}}));
    fail.headers.push(("retry-after-ms", "20".into()));
    let (base, fake) = serve(vec![
        fail.clone(),
        ok(gemini_answer(json!([{"text": "ok"}]), "STOP")),
    ])
    .await;
    let p = connect(adapters::GEMINI, json!({"baseUrl": base}), "gemini-x");
    assert_eq!(p.invoke(first_request()).await.unwrap().text, "ok");
    assert_eq!(fake.count(), 2);

    let (base, fake) = serve(vec![fail]).await;
    let p = connect(
        adapters::GEMINI,
        json!({"baseUrl": base, "maxRetries": 1}),
        "gemini-x",
    );
    let err = p.invoke(first_request()).await.unwrap_err();
    assert_eq!(err.to_string(), "HTTP 500: boom");
    assert_eq!(fake.count(), 2, "maxRetries 1: two tries in all");
}

#[tokio::test]
async fn no_answer_is_retried_and_named() {
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let e = Endpoint::new(
        "p",
        "m",
        &format!("http://{addr}"),
        None,
        EgressPolicy::open(),
    )
    .unwrap()
    .with_retries(2, Duration::from_millis(5));
    let started = Instant::now();
    let err = kindgi_runtime::model::gemini::GeminiProvider::new(e)
        .invoke(first_request())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Transport(_)), "{err:?}");
    assert!(
        err.to_string().contains(&format!(
            "POST http://{addr}/v1beta/models/m:generateContent"
        )),
        "{err}"
    );
    assert!(started.elapsed() >= Duration::from_millis(5));
}

#[tokio::test]
async fn bodies_over_the_budget_are_refused() {
    let big = anthropic_message(
        json!([{"type": "text", "text": "x".repeat(4096)}]),
        "end_turn",
    );
    let (base, _) = serve(vec![ok(big)]).await;
    let e = Endpoint::new("p", "claude-x", &base, None, EgressPolicy::open())
        .unwrap()
        .with_max_response_bytes(1024);
    let p = kindgi_runtime::model::anthropic::AnthropicProvider::new(e.clone());
    let err = p.invoke(first_request()).await.unwrap_err();
    assert!(
        err.to_string().contains("larger than the 1024 byte limit"),
        "{err}"
    );

    let events: Vec<(Option<&str>, Value)> = (0..100)
        .map(|_| (Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "xxxxxxxxxxxxxxxxxxxx"}})))
        .collect();
    let (base, _) = serve(vec![sse(&events)]).await;
    let e = Endpoint {
        base_url: base,
        ..e
    };
    let err = kindgi_runtime::model::anthropic::AnthropicProvider::new(e)
        .invoke_streaming(first_request(), &no_text)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("streamed body is larger than the 1024 byte limit"),
        "{err}"
    );
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    // Headers, one event, then silence: the server holds the connection open.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        let _ = s.read(&mut buf).await;
        let event = "data: {\"type\":\"ping\"}\n\n";
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
            event.len()
        );
        s.write_all(head.as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(10)).await;
    });
    let e = Endpoint::new(
        "p",
        "c",
        &format!("http://{addr}"),
        None,
        EgressPolicy::open(),
    )
    .unwrap()
    .with_idle_timeout(Duration::from_millis(300));
    let err = kindgi_runtime::model::anthropic::AnthropicProvider::new(e)
        .invoke_streaming(first_request(), &no_text)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("silent for more than"), "{err}");
}

// ----- check, egress, secrets -------------------------------------------------------------

#[test]
fn check_names_bad_settings() {
    let config: Map<String, Value> =
        serde_json::from_value(json!({"api": "completions", "maxRetries": -1})).unwrap();
    let problems = adapters::check(adapters::OPENAI_COMPAT, &config);
    assert_eq!(problems[0].path, "/adapter_config/api");
    assert_eq!(
        problems[0].message,
        "adapter_config.api must be one of responses, chat-completions."
    );
    assert_eq!(problems[1].path, "/adapter_config/maxRetries");
    assert!(
        adapters::check(
            adapters::ANTHROPIC,
            &serde_json::from_value(json!({"baseUrl": "https://x"})).unwrap()
        )
        .is_empty()
    );
}

#[tokio::test]
async fn a_closed_egress_policy_keeps_a_base_url_off_loopback() {
    let (base, fake) = serve(vec![ok(json!({}))]).await;
    let config: Map<String, Value> = serde_json::from_value(json!({"baseUrl": base})).unwrap();
    let p = adapters::connect(&Connection {
        provider_id: "p",
        adapter_id: adapters::ANTHROPIC,
        config: &config,
        api_key: Some("k".into()),
        model: "c",
        max_output_tokens: None,
        send_traceparent: false,
        sampling: true,
        egress: EgressPolicy::public_only([]),
    })
    .unwrap();
    let t = Instant::now();
    let err = p.invoke(first_request()).await.unwrap_err();
    assert!(t.elapsed() < Duration::from_millis(900), "not retried");
    assert!(err.to_string().contains("loopback"), "{err}");
    assert_eq!(fake.count(), 0);
    // A name that resolves to loopback is refused by the resolver too.
    let config: Map<String, Value> =
        serde_json::from_value(json!({"baseUrl": base.replace("127.0.0.1", "localhost")})).unwrap();
    let p = adapters::connect(&Connection {
        provider_id: "p",
        adapter_id: adapters::GEMINI,
        config: &config,
        api_key: None,
        model: "g",
        max_output_tokens: None,
        send_traceparent: false,
        sampling: true,
        egress: EgressPolicy::public_only([]),
    })
    .unwrap();
    let t = Instant::now();
    let err = p.invoke(first_request()).await.unwrap_err();
    assert!(t.elapsed() < Duration::from_millis(900), "not retried");
    assert!(err.to_string().contains("loopback"), "{err}");
    assert_eq!(fake.count(), 0);
}

#[tokio::test]
async fn an_echoed_key_is_masked_in_the_error() {
    let (base, _) = serve(vec![status(401, json!({"error": {"message": "Incorrect API key provided: sk-secret-key", "type": "invalid_request_error"}}))]).await;
    let p = connect(
        adapters::OPENAI_COMPAT,
        json!({"baseUrl": format!("{base}/v1")}),
        "m",
    );
    let err = p.invoke(first_request()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "HTTP 401: invalid_request_error: Incorrect API key provided: ***"
    );
    if let ModelError::Status { body, .. } = err {
        assert!(!body.contains("sk-secret-key"));
    }
}

// ----- send_traceparent -----------------------------------------------------------------

fn connect_traced(adapter: &str, config: Value, model: &str, send: bool) -> Arc<dyn ModelProvider> {
    let config: Map<String, Value> = serde_json::from_value(config).unwrap();
    adapters::connect(&Connection {
        provider_id: "prov-1",
        adapter_id: adapter,
        config: &config,
        api_key: Some("sk-secret-key".into()),
        model,
        max_output_tokens: None,
        send_traceparent: send,
        sampling: true,
        egress: EgressPolicy::open(),
    })
    .unwrap()
}

#[tokio::test]
async fn send_traceparent_sends_the_header_on_every_wire_and_only_when_registered() {
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let chat = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]});
    let text = json!([{"type": "message", "id": "m", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "ok", "annotations": []}]}]);
    let wires = [
        (
            adapters::ANTHROPIC,
            json!({}),
            ok(anthropic_message(
                json!([{"type": "text", "text": "ok"}]),
                "end_turn",
            )),
        ),
        (
            adapters::GEMINI,
            json!({}),
            ok(gemini_answer(json!([{"text": "ok"}]), "STOP")),
        ),
        (
            adapters::OPENAI_COMPAT,
            json!({"api": "responses"}),
            ok(response_object(text, None)),
        ),
        (
            adapters::OPENAI_COMPAT,
            json!({"api": "chat-completions"}),
            ok(chat),
        ),
    ];
    for (adapter, extra, reply) in wires {
        let (base, fake) = serve(vec![reply]).await;
        let mut config = extra.clone();
        config["baseUrl"] = json!(base);
        let mut request = first_request();
        request.traceparent = kindgi_runtime::model::traceparent_for(trace);
        let sent = request.traceparent.clone().unwrap();
        for send in [true, false] {
            let p = connect_traced(adapter, config.clone(), "m", send);
            assert_eq!(
                p.invoke(request.clone()).await.unwrap().text,
                "ok",
                "{adapter} {extra}"
            );
            p.invoke_streaming(request.clone(), &no_text).await.ok();
        }
        let seen = fake.seen.lock().unwrap();
        assert_eq!(seen.len(), 4, "{adapter} {extra}");
        for (i, s) in seen.iter().enumerate() {
            let got = s.1.get("traceparent").and_then(|v| v.to_str().ok());
            if i < 2 {
                // Registered with it: the run's trace id, a span id, on each call.
                assert_eq!(got, Some(sent.as_str()), "{adapter} {extra} call {i}");
            } else {
                assert_eq!(got, None, "{adapter} {extra}: not registered, no header");
            }
        }
    }
    let tp = kindgi_runtime::model::traceparent_for(trace).unwrap();
    let parts: Vec<&str> = tp.split('-').collect();
    assert_eq!((parts[0], parts[1], parts[3]), ("00", trace, "01"));
    assert_eq!(parts[2].len(), 16);
    assert_ne!(parts[2], "0000000000000000");
    assert_eq!(kindgi_runtime::model::traceparent_for("not-a-trace"), None);
    assert_eq!(
        kindgi_runtime::model::traceparent_for(&"0".repeat(32)),
        None
    );
}

// ----- sampling: false --------------------------------------------------------------------

#[tokio::test]
async fn a_model_without_sampling_gets_no_temperature_and_the_answer_says_so() {
    let chat = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]});
    let text = json!([{"type": "message", "id": "m", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "ok", "annotations": []}]}]);
    // Where each wire puts the temperature.
    let wires = [
        (
            adapters::GEMINI,
            json!({}),
            ok(gemini_answer(json!([{"text": "ok"}]), "STOP")),
            "/generationConfig/temperature",
        ),
        (
            adapters::OPENAI_COMPAT,
            json!({"api": "responses"}),
            ok(response_object(text, None)),
            "/temperature",
        ),
        (
            adapters::OPENAI_COMPAT,
            json!({"api": "chat-completions"}),
            ok(chat),
            "/temperature",
        ),
    ];
    for (adapter, extra, reply, at) in wires {
        let (base, fake) = serve(vec![reply]).await;
        let mut config: Map<String, Value> = serde_json::from_value(extra.clone()).unwrap();
        config.insert("baseUrl".into(), json!(base));
        let mut request = first_request();
        request.temperature = Some(0.25);
        for sampling in [true, false] {
            let p = adapters::connect(&Connection {
                provider_id: "prov-1",
                adapter_id: adapter,
                config: &config,
                api_key: None,
                model: "m",
                max_output_tokens: None,
                send_traceparent: false,
                sampling,
                egress: EgressPolicy::open(),
            })
            .unwrap();
            let answer = p.invoke(request.clone()).await.unwrap();
            let warned = answer.warnings.iter().any(|w| w == "sampling-unsupported");
            assert_eq!(
                warned, !sampling,
                "{adapter} {extra}: {:?}",
                answer.warnings
            );
            // Without a temperature in the request there is nothing to warn about.
            let plain = p.invoke(first_request()).await.unwrap();
            assert!(plain.warnings.is_empty(), "{adapter} {extra}");
        }
        let bodies = fake.bodies();
        assert_eq!(bodies.len(), 4, "{adapter} {extra}");
        assert_eq!(
            bodies[0].pointer(at),
            Some(&json!(0.25)),
            "{adapter} {extra}: {}",
            bodies[0]
        );
        assert_eq!(
            bodies[2].pointer(at),
            None,
            "{adapter} {extra}: {}",
            bodies[2]
        );
    }
}
