//! The resolution tests' fixture, shared by kindgi-runtime's `tests/resolve.rs` (catalogues,
//! a plugged-in source, the memory store) and kindgi-host's (the tool registry on SQLite and
//! PostgreSQL): one-node flows, run options, and a model calling one tool per step.
#![allow(clippy::unwrap_used, dead_code)]

use async_trait::async_trait;
use kindgi_runtime::RunOptions;
use kindgi_runtime::model::{ModelError, ModelProvider, ModelRequest, ModelResponse, Role};
use kindgi_tools::BoxFuture;
use serde_json::json;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn one_node_flow(id: &str, version: &str, kind: &str, reference: &str) -> String {
    json!({"id": id, "version": version,
        "nodes": [{"id": "n", "kind": kind, "ref": reference}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]})
    .to_string()
}

pub fn wait() -> RunOptions {
    RunOptions {
        wait: true,
        ..Default::default()
    }
}

pub fn for_tenant(tenant: &str) -> RunOptions {
    RunOptions {
        wait: true,
        tenant_id: Some(tenant.into()),
        ..Default::default()
    }
}

/// A model that calls `tool` once per step for `calls` steps, running `between` before its
/// second answer, then stops, reporting the tool results it was handed.
pub struct Caller {
    pub tool: String,
    pub calls: usize,
    pub step: AtomicUsize,
    pub between: Mutex<Option<BoxFuture<'static, ()>>>,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller").field("tool", &self.tool).finish()
    }
}

#[async_trait]
impl ModelProvider for Caller {
    fn provider_id(&self) -> &str {
        "test-caller"
    }
    fn model(&self) -> &str {
        "scripted"
    }
    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let n = self.step.fetch_add(1, Ordering::SeqCst) + 1;
        if n == 2 {
            let hook = self.between.lock().unwrap().take();
            if let Some(h) = hook {
                h.await;
            }
        }
        let answer = if n <= self.calls {
            json!({"text": "", "finishReason": "tool-use",
                "toolCalls": [{"id": format!("c{n}"), "name": self.tool, "arguments": {}}]})
        } else {
            let results: Vec<String> = request
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| m.content.clone())
                .collect();
            json!({"text": results.join("|"), "finishReason": "stop"})
        };
        Ok(serde_json::from_value(answer).unwrap())
    }
}
