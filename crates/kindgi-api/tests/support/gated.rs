//! A runtime with a gated agent and a pausing tool, served on a loopback socket: what the
//! approvals, waits and resume tests drive — the API's here, and the CLIs' (ours and the
//! official one) in crates/cli/tests/approvals_cli.rs, which includes this file.
//!
//! * `acme.agent` asks for `acme.write {"note": "hi"}` (call `c1`) until it sees a tool
//!   result, then answers `done: <result>`; its policy gates `acme.write` `always_ask`.
//! * `acme.write` counts its runs.
//! * Flow `acme.ask` is one step of `acme.ask-human`, a pausing tool whose output must be
//!   `{answer: string}`; its tickets are kept for the test (the "other system").
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use kindgi_api::{AppState, router};
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{AgentSpec, Runtime, ToolCallError, ToolDispatcher, ToolTransport};
use kindgi_spec::ToolManifest;
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyRole, NewToken, Principal};
use kindgi_tools::dispatch::CallOutcome;
use kindgi_tools::{HandlerError, Tool, ToolContext, WaitTicket};
use serde_json::{Value, json};

pub const AGENT: &str = "acme.agent";
pub const GATED_TOOL: &str = "acme.write";
pub const PAUSE_FLOW: &str = "acme.ask";
/// The same gate with a 1 ms deadline per reviewer tier.
pub const HASTY_AGENT: &str = "acme.hasty";
/// The same gate, for a `senior` reviewer.
pub const SENIOR_AGENT: &str = "acme.senior";
/// The same gate with four eyes (`hitl.separateApprover: true`).
pub const FOUR_EYES_AGENT: &str = "acme.four-eyes";
/// A flow whose sub-flow (`acme.inner`) is one step of the gated agent.
pub const OUTER_FLOW: &str = "acme.outer";
/// A pausing step whose call waits 1 ms.
pub const QUICK_PAUSE_FLOW: &str = "acme.ask-quick";

/// Asks for the gated call until a tool result comes back.
#[derive(Debug)]
struct AsksToWrite;

#[async_trait]
impl ModelProvider for AsksToWrite {
    fn provider_id(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "script-1"
    }
    async fn invoke(&self, r: ModelRequest) -> Result<ModelResponse, ModelError> {
        let last = r.messages.last().filter(|m| m.role == Role::Tool);
        Ok(match last {
            Some(m) => ModelResponse {
                text: format!("done: {}", m.content),
                tool_calls: vec![],
                finish_reason: FinishReason::Stop,
                usage: Default::default(),
                warnings: vec![],
            },
            None => ModelResponse {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: GATED_TOOL.into(),
                    arguments: json!({"note": "hi"}),
                }],
                finish_reason: FinishReason::ToolUse,
                usage: Default::default(),
                warnings: vec![],
            },
        })
    }
}

/// A pausing tool: hands its ticket to the test and pauses.
#[derive(Debug)]
struct AskHuman {
    manifest: ToolManifest,
    tickets: Arc<Mutex<Vec<WaitTicket>>>,
    timeout_ms: Option<u64>,
}

#[async_trait]
impl ToolDispatcher for AskHuman {
    fn manifest(&self) -> &ToolManifest {
        &self.manifest
    }
    fn transport(&self) -> ToolTransport {
        ToolTransport::Pack
    }
    async fn call(&self, _input: Value, _ctx: ToolContext) -> Result<Value, ToolCallError> {
        panic!("a pausing tool is called with call_or_pause")
    }
    async fn call_or_pause(
        &self,
        _input: Value,
        ctx: ToolContext,
    ) -> Result<CallOutcome, ToolCallError> {
        self.tickets.lock().unwrap().push(ctx.wait.clone().unwrap());
        Ok(CallOutcome::Paused {
            timeout_ms: self.timeout_ms,
        })
    }
}

pub struct Server {
    pub url: String,
    pub http: reqwest::Client,
    pub rt: Runtime,
    pub state: AppState,
    /// An admin person's key of tenant `acme` (the operator's, `user:<operator_user_id>`).
    pub admin: String,
    /// A member person's key of `acme` (not a reviewer).
    pub member: String,
    /// An admin key of `acme` with no person behind it.
    pub nobody: String,
    /// An admin key of tenant `other`.
    pub other: String,
    pub writes: Arc<AtomicUsize>,
    pub tickets: Arc<Mutex<Vec<WaitTicket>>>,
    pub db: TestDatabase,
}

async fn key(
    state: &AppState,
    tenant: &str,
    principal: Option<Principal>,
    role: KeyRole,
) -> String {
    state
        .tokens
        .mint(&NewToken {
            tenant: tenant.into(),
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

fn runtime(
    db: &kindgi_store::Database,
    writes: &Arc<AtomicUsize>,
    tickets: &Arc<Mutex<Vec<WaitTicket>>>,
) -> Runtime {
    let rt = Runtime::over(db.ports())
        .model(Arc::new(AsksToWrite))
        .build();
    let counter = writes.clone();
    let write = Tool::define(GATED_TOOL)
        .version("1.0.0")
        .description("writes a note")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .effect(kindgi_spec::tool::EffectKind::Writes, "notes")
        .handler(move |input: Value, _ctx| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<Value, HandlerError>(json!({"wrote": input}))
            }
        })
        .build()
        .unwrap();
    rt.tools().insert_tool(write);
    for (id, policy) in [
        (
            AGENT,
            json!({"tools": {"overrides": {GATED_TOOL: "always_ask"}}}),
        ),
        (
            HASTY_AGENT,
            json!({"tools": {"overrides": {GATED_TOOL: "always_ask"}}, "timeoutMs": 1}),
        ),
        (
            SENIOR_AGENT,
            json!({"tools": {"overrides": {GATED_TOOL: {"mode": "always_ask", "requiredRole": "senior"}}}}),
        ),
        (
            FOUR_EYES_AGENT,
            json!({"tools": {"overrides": {GATED_TOOL: "always_ask"}}, "separateApprover": true}),
        ),
    ] {
        let mut agent = AgentSpec::new(id).with_tools(vec![GATED_TOOL]);
        agent.conversation_policy = Some(json!({ "hitl": policy }));
        rt.agents().insert(agent);
    }
    for flow in [
        json!({"id": "acme.inner", "version": "1.0.0",
            "nodes": [{"id": "turn", "kind": "agent", "ref": AGENT}],
            "edges": [{"id": "e1", "from": "$start", "to": "turn"}, {"id": "e2", "from": "turn", "to": "$end"}]}),
        json!({"id": OUTER_FLOW, "version": "1.0.0",
            "nodes": [{"id": "sub", "kind": "subgraph", "flowRef": {"flowId": "acme.inner", "version": "1.0.0"},
                       "inputMapping": {"userMessage": {"path": "runInput.userMessage"}},
                       "outputSchema": {}, "convergence": "success-only"}],
            "edges": [{"id": "e1", "from": "$start", "to": "sub"}, {"id": "e2", "from": "sub", "to": "$end"}]}),
    ] {
        rt.flows().insert_json(&flow.to_string()).unwrap();
    }
    for (tool, flow, timeout_ms) in [
        ("acme.ask-human", PAUSE_FLOW, None),
        ("acme.ask-quick", QUICK_PAUSE_FLOW, Some(1)),
    ] {
        let manifest: ToolManifest = serde_json::from_value(json!({
            "id": tool, "version": "1.0.0", "description": "asks a person",
            "input": {"type": "object"}, "pauses": true,
            "output": {"type": "object", "properties": {"answer": {"type": "string"}},
                       "required": ["answer"], "additionalProperties": false}
        }))
        .unwrap();
        rt.tools().insert(Arc::new(AskHuman {
            manifest,
            tickets: tickets.clone(),
            timeout_ms,
        }));
        let flow = json!({
            "id": flow, "version": "1.0.0",
            "nodes": [{"id": "ask", "kind": "tool", "ref": tool}],
            "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]
        });
        rt.flows().insert_json(&flow.to_string()).unwrap();
    }
    rt
}

pub async fn server(kind: DatabaseKind) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let writes = Arc::new(AtomicUsize::new(0));
    let tickets = Arc::new(Mutex::new(Vec::new()));
    let rt = runtime(&db.db, &writes, &tickets);
    let state = AppState::new(db.db.clone());
    let admin = state.tokens.create("acme", None).await.unwrap().key;
    let member = key(&state, "acme", Some(Principal::user("u2")), KeyRole::Member).await;
    let nobody = key(&state, "acme", None, KeyRole::Admin).await;
    let other = state.tokens.create("other", None).await.unwrap().key;
    let url = serve(&state, &rt).await;
    Server {
        url,
        http: reqwest::Client::new(),
        rt,
        state,
        admin,
        member,
        nobody,
        other,
        writes,
        tickets,
        db,
    }
}

/// Serves `rt` and `state` on a fresh loopback socket; answers its base URL.
async fn serve(state: &AppState, rt: &Runtime) -> String {
    let app = router(state.clone().with_runtime(rt.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = kindgi_serve::CancellationToken::new();
    tokio::spawn(kindgi_api::serve(
        listener,
        app,
        kindgi_serve::Limits::default(),
        stop,
    ));
    url
}

/// A second server on the same database: its own pools, runtime (and so its own in-process
/// locks) and socket — what a second `kindgi server` process on one database is. Its tools
/// count into the first server's `writes` and `tickets`.
pub struct Twin {
    pub url: String,
    pub rt: Runtime,
}

impl Server {
    /// The same state and runtime served on another socket, signing exports with `signer`.
    pub async fn signed(&self, signer: Arc<kindgi_api::export_signing::ExportSigner>) -> String {
        serve(
            &self.state.clone().with_export_signer(Some(signer)),
            &self.rt,
        )
        .await
    }

    /// A key of `acme` for the person `user` (made by the operator: no `createdBy`), with
    /// `role`; the person is on no roster.
    pub async fn person_key(&self, user: &str, role: KeyRole) -> String {
        key(&self.state, "acme", Some(Principal::user(user)), role).await
    }

    pub async fn twin(&self) -> Twin {
        let db = self.db.reopen().await.unwrap();
        let rt = runtime(&db, &self.writes, &self.tickets);
        let url = serve(&AppState::new(db), &rt).await;
        Twin { url, rt }
    }

    pub async fn call(
        &self,
        key: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
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

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call(&self.admin, "GET", path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(&self.admin, "POST", path, Some(body)).await
    }

    /// Starts a turn of the gated agent: it parks on its approval.
    pub async fn gated_turn(&self) -> (String, String) {
        self.turn_of(AGENT).await
    }

    /// Starts a turn of `agent` (gated): it parks on its approval.
    pub async fn turn_of(&self, agent: &str) -> (String, String) {
        let (s, run) = self
            .post(
                "/v1/runs",
                json!({"agent": agent, "input": {"userMessage": "write it"}}),
            )
            .await;
        assert_eq!(s, 201, "{run}");
        assert_eq!(run["status"], "suspended", "{run}");
        let id = run["id"].as_str().unwrap().to_owned();
        let (s, got) = self.get(&format!("/v1/runs/{id}")).await;
        assert_eq!(s, 200);
        let approval = got["waitingFor"]["approvals"][0]["approvalId"]
            .as_str()
            .unwrap_or_else(|| panic!("no approval: {got}"))
            .to_owned();
        (id, approval)
    }

    /// Starts a run of the pausing flow: it parks; returns the run and its ticket.
    pub async fn paused_run(&self) -> (String, WaitTicket) {
        self.paused_run_of(PAUSE_FLOW).await
    }

    /// Starts a run of the pausing flow `flow`: it parks; returns the run and its ticket.
    pub async fn paused_run_of(&self, flow: &str) -> (String, WaitTicket) {
        let (s, run) = self
            .post("/v1/runs", json!({"flow": flow, "input": {"q": "ok?"}}))
            .await;
        assert_eq!(s, 201, "{run}");
        assert_eq!(run["status"], "suspended", "{run}");
        let ticket = self.tickets.lock().unwrap().last().cloned().unwrap();
        (run["id"].as_str().unwrap().to_owned(), ticket)
    }

    /// Times out every wait past its deadline (what the sweeper does), until `run` no longer
    /// waits: deadlines here are 1 ms, so a few rounds at most.
    pub async fn expire(&self, run: &str) -> Value {
        for _ in 0..50 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            self.rt.expire_due_waits().await.unwrap();
            let (_, got) = self.get(&format!("/v1/runs/{run}")).await;
            if got["status"] != "suspended" {
                return got;
            }
        }
        panic!("run {run} still waits after its deadlines passed");
    }

    pub fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }
}
