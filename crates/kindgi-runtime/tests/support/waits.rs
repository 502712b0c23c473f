//! The wait tests' fixture, shared by kindgi-runtime's `tests/waits.rs` (memory store) and
//! kindgi-host's (SQLite, PostgreSQL): a pausing tool handing its ticket to the test, the
//! flow `$start → ask (pausing) → after → $end`, and journal kinds.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use async_trait::async_trait;
use kindgi_runtime::{
    JournalEntry, RunOptions, Runtime, RuntimeBuilder, ToolCallError, ToolDispatcher, ToolTransport,
};
use kindgi_spec::ToolManifest;
use kindgi_tools::dispatch::CallOutcome;
use kindgi_tools::{ToolContext, WaitTicket};
use serde_json::{Value, json};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use crate::support::counting_tool;

/// A pausing tool: hands its ticket to "the other system" (the test) and pauses for
/// `timeout_ms`.
#[derive(Debug)]
pub struct PausingTool {
    manifest: ToolManifest,
    tickets: Arc<Mutex<Vec<WaitTicket>>>,
    timeout_ms: Option<u64>,
}

#[async_trait]
impl ToolDispatcher for PausingTool {
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
        self.tickets
            .lock()
            .unwrap()
            .push(ctx.wait.clone().expect("a ticket"));
        Ok(CallOutcome::Paused {
            timeout_ms: self.timeout_ms,
        })
    }
}

pub struct Fixture {
    pub rt: Runtime,
    pub tickets: Arc<Mutex<Vec<WaitTicket>>>,
    pub after: Arc<AtomicUsize>,
}

/// The runtime of `b` with the pausing `acme.ask-human` (pausing for `timeout_ms`), the
/// counted `acme.after` and the flow [`flow`].
pub async fn fixture(b: RuntimeBuilder, timeout_ms: Option<u64>) -> Fixture {
    let rt = b.build();
    let tickets = Arc::new(Mutex::new(Vec::new()));
    let manifest = crate::support::manifest(
        "acme.ask-human",
        json!({
            "pauses": true,
            "output": {"type": "object", "properties": {"answer": {"type": "string"}},
                       "required": ["answer"], "additionalProperties": false}
        }),
    );
    rt.tools().insert(Arc::new(PausingTool {
        manifest,
        tickets: tickets.clone(),
        timeout_ms,
    }));
    let after = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "acme.after",
        json!({}),
        after.clone(),
        |input| json!({"got": input}),
    ));
    rt.flows().insert_json(&flow().to_string()).unwrap();
    Fixture { rt, tickets, after }
}

/// `$start → ask (pausing) → after → $end`.
pub fn flow() -> Value {
    json!({
        "id": "acme.ask", "version": "1.0.0",
        "nodes": [
            {"id": "ask", "kind": "tool", "ref": "acme.ask-human"},
            {"id": "after", "kind": "tool", "ref": "acme.after"}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "ask"},
            {"id": "e2", "from": "ask", "to": "after"},
            {"id": "e3", "from": "after", "to": "$end"}
        ]
    })
}

pub fn waited() -> RunOptions {
    RunOptions {
        wait: true,
        tenant_id: Some("acme".into()),
        ..RunOptions::default()
    }
}

pub fn kinds(j: &[JournalEntry]) -> Vec<String> {
    j.iter()
        .map(|e| match &e.node_id {
            Some(n) => format!("{} {n}", e.kind),
            None => e.kind.to_string(),
        })
        .collect()
}
