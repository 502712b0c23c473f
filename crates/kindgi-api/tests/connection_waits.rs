//! An agent's call that waits for its person to connect an app (docs/connections.md
//! "Waiting for a person to connect"), over a loopback socket on SQLite and PostgreSQL, with
//! a scripted model: the run parks `suspended` with a `connection` entry in
//! `waitingFor.other`; another person's connection resumes nothing; a connection lacking a
//! permission resumes the call, which waits again; the right one resumes it and the tool sees
//! the token (never journaled). Cancel ends the wait; a timeout fails the call
//! `connection-missing`; a run with no person fails as before; and a second server on the
//! same database resumes a run the first one parked — through its own `POST /v1/connections`,
//! or its sweeper finding a connection added behind its back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_core::connection::{ConnectionHolder, ConnectionTokens, NewConnection};
use kindgi_core::connection_wait::ConnectionWaitQuery;
use kindgi_core::ports::{ConnectionStore, WaitStore};
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{AgentSpec, Runtime, ToolCallError, ToolDispatcher, ToolTransport};
use kindgi_spec::ToolManifest;
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyRole, NewToken, Principal};
use kindgi_tools::ToolContext;
use serde_json::{Value, json};

const AGENT: &str = "acme.mailer";
/// The same agent, its waits 1 ms long (`hitl.timeoutMs`).
const HASTY: &str = "acme.hasty-mailer";
const TOOL: &str = "t.inbox";
const TOKEN: &str = "ya29.inbox-access-token";
const OTHER_TOKEN: &str = "ya29.someone-elses-token";

/// Calls the inbox tool (call `c1`) until a tool result comes back, then says what it got.
#[derive(Debug)]
struct ReadsInbox;

#[async_trait]
impl ModelProvider for ReadsInbox {
    fn provider_id(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "script-1"
    }
    async fn invoke(&self, r: ModelRequest) -> Result<ModelResponse, ModelError> {
        let last = r.messages.last().filter(|m| m.role == Role::Tool);
        let (text, tool_calls, finish_reason) = match last {
            Some(m) => (format!("done: {}", m.content), vec![], FinishReason::Stop),
            None => (
                String::new(),
                vec![ToolCall {
                    id: "c1".into(),
                    name: TOOL.into(),
                    arguments: json!({}),
                }],
                FinishReason::ToolUse,
            ),
        };
        Ok(ModelResponse {
            text,
            tool_calls,
            finish_reason,
            usage: Default::default(),
            warnings: vec![],
        })
    }
}

/// A read-only tool acting with its person's Google connection: keeps the token it got.
#[derive(Debug)]
struct Inbox {
    manifest: ToolManifest,
    seen: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl ToolDispatcher for Inbox {
    fn manifest(&self) -> &ToolManifest {
        &self.manifest
    }
    fn transport(&self) -> ToolTransport {
        ToolTransport::Native
    }
    async fn call(&self, _input: Value, ctx: ToolContext) -> Result<Value, ToolCallError> {
        let token = ctx
            .connections
            .as_ref()
            .and_then(|c| c.get("inbox").cloned())
            .unwrap_or_default();
        self.seen.lock().unwrap().push(token);
        Ok(json!({"unread": 3}))
    }
}

fn runtime(db: &kindgi_store::Database, key: &SealKey, seen: &Arc<Mutex<Vec<String>>>) -> Runtime {
    let rt = Runtime::over(db.ports_sealed(Some(key.clone())))
        .model(Arc::new(ReadsInbox))
        .build();
    let manifest: ToolManifest = serde_json::from_value(json!({
        "id": TOOL, "version": "1.0.0", "description": "reads the inbox", "mutating": false,
        "input": {"type": "object"}, "output": {"type": "object"},
        "needsSpec": {"connections": {"inbox": {
            "app": "google", "permissions": ["gmail.read", "gmail.labels"], "as": "person"}}},
    }))
    .unwrap();
    rt.tools().insert(Arc::new(Inbox {
        manifest,
        seen: seen.clone(),
    }));
    for (id, policy) in [
        (AGENT, None),
        (HASTY, Some(json!({"hitl": {"timeoutMs": 1}}))),
    ] {
        let mut agent = AgentSpec::new(id).with_tools(vec![TOOL]);
        agent.conversation_policy = policy;
        rt.agents().insert(agent);
    }
    rt
}

struct Server {
    url: String,
    http: reqwest::Client,
    rt: Runtime,
    state: AppState,
    key: SealKey,
    /// `user:u1`'s key (a member of `acme`).
    u1: String,
    /// `user:u2`'s key.
    u2: String,
    /// An admin key of `acme` with no person behind it.
    nobody: String,
    /// The operator's (an admin person's) key.
    admin: String,
    seen: Arc<Mutex<Vec<String>>>,
    db: TestDatabase,
}

async fn person_key(state: &AppState, principal: Option<Principal>, role: KeyRole) -> String {
    state
        .tokens
        .mint(&NewToken {
            tenant: "acme".into(),
            principal,
            role,
            capabilities: vec![],
            label: None,
            project_id: None,
            created_by: None,
            expires_at: None,
        })
        .await
        .unwrap()
        .key
}

async fn serve(state: AppState) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(kindgi_api::serve(
        listener,
        router(state),
        kindgi_serve::Limits::default(),
        kindgi_serve::CancellationToken::new(),
    ));
    url
}

fn state_of(db: kindgi_store::Database, key: &SealKey, rt: &Runtime) -> AppState {
    AppState::new(db)
        .with_values(ValuesConfig::new("local", Some(key.clone())))
        .with_runtime(rt.clone())
}

async fn server(kind: DatabaseKind) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let key = SealKey::generate().0;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let rt = runtime(&db.db, &key, &seen);
    let state = state_of(db.db.clone(), &key, &rt);
    let admin = state.tokens.create("acme", None).await.unwrap().key;
    let u1 = person_key(&state, Some(Principal::user("u1")), KeyRole::Member).await;
    let u2 = person_key(&state, Some(Principal::user("u2")), KeyRole::Member).await;
    let nobody = person_key(&state, None, KeyRole::Admin).await;
    let url = serve(state.clone()).await;
    Server {
        url,
        http: reqwest::Client::new(),
        rt,
        state,
        key,
        u1,
        u2,
        nobody,
        admin,
        seen,
        db,
    }
}

/// A second server on the same database: its own pools, runtime, locks and socket.
struct Twin {
    url: String,
    rt: Runtime,
}

impl Server {
    async fn twin(&self) -> Twin {
        let db = self.db.reopen().await.unwrap();
        let rt = runtime(&db, &self.key, &self.seen);
        let url = serve(state_of(db, &self.key, &rt)).await;
        Twin { url, rt }
    }

    async fn call_at(
        &self,
        base: &str,
        key: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let url = format!("{base}{path}");
        let mut req = match method {
            "GET" => self.http.get(url),
            _ => self.http.post(url),
        }
        .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.call_at(&self.url, key, method, path, body).await
    }

    /// Starts a run of `agent` with `key`; answers it (as `POST /v1/runs` does).
    async fn start(&self, key: &str, agent: &str) -> Value {
        let (s, run) = self
            .call(
                key,
                "POST",
                "/v1/runs",
                Some(json!({"agent": agent, "input": {"userMessage": "how many unread?"}})),
            )
            .await;
        assert_eq!(s, 201, "{run}");
        run
    }

    async fn run(&self, id: &str) -> Value {
        let (s, run) = self
            .call(&self.admin, "GET", &format!("/v1/runs/{id}"), None)
            .await;
        assert_eq!(s, 200, "{run}");
        run
    }

    /// `POST /v1/connections` of google for the key's person, granting `permissions`.
    async fn connect_at(&self, base: &str, key: &str, token: &str, permissions: &[&str]) {
        let body = json!({"app": "google", "as": "person", "permissions": permissions, "accessToken": token});
        let (s, c) = self
            .call_at(base, key, "POST", "/v1/connections", Some(body))
            .await;
        assert_eq!(s, 201, "{c}");
    }

    async fn connect(&self, key: &str, token: &str, permissions: &[&str]) {
        self.connect_at(&self.url, key, token, permissions).await;
    }

    /// The open connection waits of run `id`, straight from the store.
    async fn open_waits(&self, id: &str) -> usize {
        let store = kindgi_store::waits::WaitsStore::new(self.state.db.clone());
        let query = ConnectionWaitQuery {
            run_id: Some(id.to_owned()),
            ..Default::default()
        };
        store.open_connection_waits(&query).await.unwrap().len()
    }

    /// What the tool saw, in order.
    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    /// No token in run `id`'s record or journal.
    async fn no_token_recorded(&self, id: &str) {
        let journal = self.rt.journal(id, None, None).await.unwrap();
        let text = serde_json::to_string(&journal).unwrap() + &self.run(id).await.to_string();
        assert!(!text.contains(TOKEN), "the token leaked: {text}");
    }
}

/// The `waitingFor.other[]` entry of a run parked on the inbox call.
fn connection_entry(run: &Value) -> Value {
    assert_eq!(run["status"], "suspended", "{run}");
    let waiting = &run["waitingFor"];
    assert_eq!(waiting["approvals"], json!([]), "{run}");
    let other = waiting["other"].as_array().unwrap();
    assert_eq!(other.len(), 1, "{run}");
    let entry = other[0].clone();
    let times_out_at = entry["timesOutAt"].as_str().unwrap();
    assert!(
        chrono::DateTime::parse_from_rfc3339(times_out_at).is_ok(),
        "{entry}"
    );
    let mut expected = json!({
        "what": "connection", "app": "google", "permissions": ["gmail.read", "gmail.labels"],
        "toolId": TOOL, "callId": "c1",
        "connectUrl": "http://127.0.0.1:8080/v1/connections/connect?app=google&as=person&permissions=gmail.read,gmail.labels",
    });
    expected["timesOutAt"] = json!(times_out_at);
    assert_eq!(entry, expected);
    entry
}

async fn waits_for_the_person_then_resumes(kind: DatabaseKind) {
    let s = server(kind).await;
    let run = s.start(&s.u1, AGENT).await;
    let id = run["id"].as_str().unwrap().to_owned();
    connection_entry(&s.run(&id).await);
    assert_eq!(s.open_waits(&id).await, 1);
    // Another person's connection is not the one the call waits for.
    s.connect(&s.u2, OTHER_TOKEN, &["gmail.read", "gmail.labels"])
        .await;
    connection_entry(&s.run(&id).await);
    assert!(s.seen().is_empty());
    // The person connects without one of the permissions: the call resolves again and waits
    // again (a new wait: the first one was answered).
    s.connect(&s.u1, TOKEN, &["gmail.read"]).await;
    connection_entry(&s.run(&id).await);
    assert_eq!(s.open_waits(&id).await, 1);
    assert!(s.seen().is_empty(), "the tool did not run");
    // Connected with both: the run resumes and completes, the tool having seen the token.
    s.connect(&s.u1, TOKEN, &["gmail.read", "gmail.labels"])
        .await;
    let done = s.run(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(s.seen(), [TOKEN.to_owned()]);
    assert_eq!(s.open_waits(&id).await, 0);
    let journal = s.rt.journal(&id, None, None).await.unwrap();
    let kinds = |k: kindgi_runtime::JournalKind| journal.iter().filter(|e| e.kind == k).count();
    assert_eq!(kinds(kindgi_runtime::JournalKind::WaitSuspended), 2);
    assert_eq!(kinds(kindgi_runtime::JournalKind::WaitResumed), 2);
    s.no_token_recorded(&id).await;
    // Connected already: a new run does not wait.
    let again = s.start(&s.u1, AGENT).await;
    assert_eq!(again["status"], "completed", "{again}");
    s.db.cleanup().await.unwrap();
}

async fn cancel_ends_the_wait(kind: DatabaseKind) {
    let s = server(kind).await;
    let run = s.start(&s.u1, AGENT).await;
    let id = run["id"].as_str().unwrap().to_owned();
    connection_entry(&s.run(&id).await);
    let (status, cancelled) = s
        .call(&s.u1, "POST", &format!("/v1/runs/{id}/cancel"), None)
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(s.open_waits(&id).await, 0, "the wait was closed");
    // A connection coming afterwards resumes nothing.
    s.connect(&s.u1, TOKEN, &["gmail.read", "gmail.labels"])
        .await;
    assert_eq!(s.run(&id).await["status"], "cancelled");
    assert!(s.seen().is_empty());
    s.db.cleanup().await.unwrap();
}

async fn a_timeout_fails_the_call(kind: DatabaseKind) {
    let s = server(kind).await;
    let run = s.start(&s.u1, HASTY).await;
    let id = run["id"].as_str().unwrap().to_owned();
    connection_entry(&s.run(&id).await);
    // The wait is 1 ms long: sweep (what the sweeper does) until the run no longer waits.
    let mut ended = Value::Null;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        s.rt.expire_due_waits().await.unwrap();
        ended = s.run(&id).await;
        if ended["status"] != "suspended" {
            break;
        }
    }
    assert_eq!(ended["status"], "failed", "{ended}");
    let m = ended["failureMessage"].as_str().unwrap();
    assert!(
        m.contains("connection-missing: tool \"t.inbox\" timed out after 1 ms waiting for the run's person (user \"u1\") to connect \"google\" (its connection \"inbox\"): the run's person connects it with `kindgi connections add --app=google --as=person --permission=gmail.read --permission=gmail.labels --access-token-stdin`"),
        "{m}"
    );
    assert!(s.seen().is_empty());
    assert_eq!(s.open_waits(&id).await, 0);
    s.db.cleanup().await.unwrap();
}

async fn a_run_with_no_person_still_fails(kind: DatabaseKind) {
    let s = server(kind).await;
    // No person started it: the unattended rule asks for a yes first (a person's connection).
    let run = s.start(&s.nobody, AGENT).await;
    let id = run["id"].as_str().unwrap().to_owned();
    let parked = s.run(&id).await;
    assert_eq!(parked["status"], "suspended", "{parked}");
    let approval = parked["waitingFor"]["approvals"][0]["approvalId"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval: {parked}"))
        .to_owned();
    let (status, decided) = s
        .call(
            &s.admin,
            "POST",
            &format!("/v1/approvals/{approval}/complete"),
            Some(json!({"decision": "approve", "rationale": "fine"})),
        )
        .await;
    assert_eq!(status, 200, "{decided}");
    // Then nobody can connect it: the call fails, it does not wait.
    let ended = s.run(&id).await;
    assert_eq!(ended["status"], "failed", "{ended}");
    let m = ended["failureMessage"].as_str().unwrap();
    assert!(
        m.contains("connection-missing: tool \"t.inbox\" acts with the run's person's connection to \"google\" (its connection \"inbox\"), but no person started this run"),
        "{m}"
    );
    assert_eq!(s.open_waits(&id).await, 0);
    s.db.cleanup().await.unwrap();
}

async fn another_server_resumes_it(kind: DatabaseKind) {
    let s = server(kind).await;
    let twin = s.twin().await;
    // Parked by the first server, connected through the second: the second resumes it.
    let run = s.start(&s.u1, AGENT).await;
    let id = run["id"].as_str().unwrap().to_owned();
    connection_entry(&s.run(&id).await);
    s.connect_at(&twin.url, &s.u1, TOKEN, &["gmail.read", "gmail.labels"])
        .await;
    let done = s.run(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(s.seen(), [TOKEN.to_owned()]);
    // Connected behind both servers' backs (no request resumed anything): the sweeper's next
    // pass, on either server, finds the connection and resumes the run.
    let connections =
        kindgi_store::connections::ConnectionsStore::new(s.state.db.clone(), Some(s.key.clone()));
    let u3 = person_key(&s.state, Some(Principal::user("u3")), KeyRole::Member).await;
    let holder = ConnectionHolder::Person("u3".into());
    let run = s.start(&u3, AGENT).await;
    let id = run["id"].as_str().unwrap().to_owned();
    connection_entry(&s.run(&id).await);
    // A sweep before the connection exists moves nothing.
    twin.rt.expire_due_waits().await.unwrap();
    connection_entry(&s.run(&id).await);
    connections
        .add(&NewConnection {
            tenant: "acme".into(),
            app: "google".into(),
            holder,
            permissions: vec!["gmail.read".into(), "gmail.labels".into()],
            tokens: ConnectionTokens {
                access_token: TOKEN.into(),
                refresh_token: None,
                expires_at: None,
            },
            refresh: None,
            created_by: Some("user:u3".into()),
            now: kindgi_core::now_millis(),
        })
        .await
        .unwrap();
    assert_eq!(twin.rt.expire_due_waits().await.unwrap(), 1);
    let done = s.run(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(s.seen(), [TOKEN.to_owned(), TOKEN.to_owned()]);
    s.no_token_recorded(&id).await;
    s.db.cleanup().await.unwrap();
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite { $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name(kindgi_store::DatabaseKind::Sqlite).await })* }
        mod postgres { $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $name() { super::$name(kindgi_store::DatabaseKind::Postgres).await })* }
    };
}

both!(
    waits_for_the_person_then_resumes,
    cancel_ends_the_wait,
    a_timeout_fails_the_call,
    a_run_with_no_person_still_fails,
    another_server_resumes_it,
);
