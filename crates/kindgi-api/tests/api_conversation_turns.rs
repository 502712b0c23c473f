//! Conversation turns over a real loopback socket, on SQLite and PostgreSQL (platform-api.md
//! §3.1, §11): two turns of one conversation — the second model call reads the first turn's
//! user message and reply as history, and the conversation keeps all four messages; a turn
//! that names no conversation gets one `GET /v1/conversations/{id}` finds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use kindgi_api::{AppState, router, serve};
use kindgi_runtime::model::{Message, ModelError, ModelRequest, ModelResponse};
use kindgi_runtime::{AgentSpec, ModelProvider};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// A model answering `reply <n>` to its n-th call, keeping every request's messages.
#[derive(Debug, Default)]
struct Recording {
    seen: Mutex<Vec<Vec<Message>>>,
}

#[async_trait]
impl ModelProvider for Recording {
    fn provider_id(&self) -> &str {
        "test-recording"
    }
    fn model(&self) -> &str {
        "scripted"
    }
    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut seen = self.seen.lock().unwrap();
        seen.push(request.messages);
        let text = format!("reply {}", seen.len());
        Ok(serde_json::from_value(json!({"text": text, "finishReason": "stop"})).unwrap())
    }
}

struct Server {
    url: String,
    key: String,
    http: reqwest::Client,
    stop: kindgi_serve::CancellationToken,
}

impl Server {
    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
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
    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.url))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }
}

async fn start(db: &TestDatabase, model: Arc<Recording>) -> Server {
    let rt = kindgi_runtime::Runtime::over(db.db.ports())
        .model(model)
        .build();
    rt.agents().insert(
        AgentSpec::new("acme.helper")
            .with_version("1.0.0")
            .with_instructions("Help."),
    );
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let app = router(state.with_runtime(rt));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = kindgi_serve::CancellationToken::new();
    let serving = stop.clone();
    tokio::spawn(async move {
        serve(listener, app, kindgi_serve::Limits::default(), serving).await;
    });
    Server {
        url,
        key,
        http: reqwest::Client::new(),
        stop,
    }
}

fn roles_and_contents(messages: &Value) -> Vec<(String, Value)> {
    messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap().to_owned(), m["content"].clone()))
        .collect()
}

async fn two_turns_of_one_conversation(kind: DatabaseKind) {
    let db = TestDatabase::new(kind).await.unwrap();
    let model = Arc::new(Recording::default());
    let s = start(&db, model.clone()).await;
    let (status, opened) = s
        .post(
            "/v1/conversations",
            json!({"agentId": "acme.helper", "agentVersion": "1.0.0"}),
        )
        .await;
    assert_eq!(status, 201, "{opened}");
    let id = opened["id"].as_str().unwrap().to_owned();
    for (n, said) in ["Where is my order?", "And the invoice?"]
        .iter()
        .enumerate()
    {
        let (status, run) = s
            .post(
                "/v1/runs",
                json!({"agent": "acme.helper", "input": {"userMessage": said, "conversationId": id}}),
            )
            .await;
        assert_eq!(status, 201, "{run}");
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["output"]["text"], format!("reply {}", n + 1), "{run}");
        assert_eq!(run["agent"]["conversationId"], id.as_str());
    }
    let seen = model.seen.lock().unwrap().clone();
    assert_eq!(
        seen[0],
        vec![
            Message::system("Help."),
            Message::user("Where is my order?")
        ]
    );
    assert_eq!(
        seen[1],
        vec![
            Message::system("Help."),
            Message::user("Where is my order?"),
            Message::assistant("reply 1", Vec::new()),
            Message::user("And the invoice?"),
        ]
    );
    let (status, messages) = s.get(&format!("/v1/conversations/{id}/messages")).await;
    assert_eq!(status, 200, "{messages}");
    assert_eq!(
        roles_and_contents(&messages),
        vec![
            ("user".to_owned(), json!("Where is my order?")),
            ("agent".to_owned(), json!("reply 1")),
            ("user".to_owned(), json!("And the invoice?")),
            ("agent".to_owned(), json!("reply 2")),
        ]
    );
    let (_, conversation) = s.get(&format!("/v1/conversations/{id}")).await;
    assert_eq!(conversation["turnCount"], 2, "{conversation}");
    s.stop.cancel();
    db.cleanup().await.unwrap();
}

async fn a_turn_without_a_conversation_opens_one(kind: DatabaseKind) {
    let db = TestDatabase::new(kind).await.unwrap();
    let model = Arc::new(Recording::default());
    let s = start(&db, model.clone()).await;
    let (status, run) = s
        .post(
            "/v1/runs",
            json!({"agent": "acme.helper", "input": {"userMessage": "Hello"}}),
        )
        .await;
    assert_eq!(status, 201, "{run}");
    assert_eq!(run["status"], "completed", "{run}");
    let id = run["agent"]["conversationId"].as_str().unwrap().to_owned();
    let (status, conversation) = s.get(&format!("/v1/conversations/{id}")).await;
    assert_eq!(status, 200, "{conversation}");
    assert_eq!(conversation["agentId"], "acme.helper");
    assert_eq!(conversation["agentVersion"], "1.0.0");
    assert_eq!(conversation["status"], "open");
    assert_eq!(conversation["turnCount"], 1);
    assert_eq!(conversation["title"], "Untitled conversation");
    assert_eq!(conversation["projectId"], run["projectId"], "{run}");
    let (_, messages) = s.get(&format!("/v1/conversations/{id}/messages")).await;
    assert_eq!(
        roles_and_contents(&messages),
        vec![
            ("user".to_owned(), json!("Hello")),
            ("agent".to_owned(), json!("reply 1")),
        ]
    );
    // The next turn names it, and reads it.
    let (status, run) = s
        .post(
            "/v1/runs",
            json!({"agent": "acme.helper", "input": {"userMessage": "Again", "conversationId": id}}),
        )
        .await;
    assert_eq!(status, 201, "{run}");
    let seen = model.seen.lock().unwrap().clone();
    assert_eq!(
        seen[1][1..3],
        [
            Message::user("Hello"),
            Message::assistant("reply 1", Vec::new())
        ]
    );
    s.stop.cancel();
    db.cleanup().await.unwrap();
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
    two_turns_of_one_conversation,
    a_turn_without_a_conversation_opens_one
);
