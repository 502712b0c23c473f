//! The approval tests' fixture, shared by kindgi-runtime's `tests/approvals.rs` (memory
//! store) and kindgi-host's (SQLite, PostgreSQL): a scripted model asking for one `t.pay`
//! call, the agent gating it, and the calls a test makes of the approval API.
#![allow(clippy::unwrap_used, dead_code)]

use async_trait::async_trait;
use kindgi_runtime::model::{
    FinishReason, ModelError, ModelProvider, ModelRequest, ModelResponse, Role, ToolCall,
};
use kindgi_runtime::{
    AgentSpec, ApprovalQuery, ApprovalStatus, DecisionInput, DecisionKind, ReviewerRole,
    RunOptions, RunRecord, RunStatus, Runtime, RuntimeBuilder,
};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use crate::support::counting_tool;

/// A model that asks for one call of `t.pay`, then says "done"; it keeps what it was sent.
#[derive(Debug, Default)]
pub struct Script {
    pub answers: Mutex<VecDeque<ModelResponse>>,
    pub seen: Mutex<Vec<ModelRequest>>,
}

#[async_trait]
impl ModelProvider for Script {
    fn provider_id(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "script-1"
    }
    async fn invoke(&self, r: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.seen.lock().unwrap().push(r);
        let next = self.answers.lock().unwrap().pop_front();
        Ok(next.unwrap_or(ModelResponse {
            text: "done".into(),
            tool_calls: vec![],
            finish_reason: FinishReason::Stop,
            usage: Default::default(),
            warnings: vec![],
        }))
    }
}

impl Script {
    pub fn tool_results(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .flat_map(|r| r.messages.iter())
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.content.clone())
            .collect()
    }
}

pub struct Fixture {
    pub rt: Runtime,
    pub model: Arc<Script>,
    pub runs: Arc<AtomicUsize>,
}

/// The runtime of `b` with the scripted model, `t.pay` (mutating, counted) and `t.agent`
/// (its `hitl` policy `hitl`).
pub async fn fixture(b: RuntimeBuilder, hitl: Value) -> Fixture {
    let model = Arc::new(Script::default());
    model.answers.lock().unwrap().push_back(ModelResponse {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: "call-1".into(),
            name: "t.pay".into(),
            arguments: json!({"amount": 5}),
        }],
        finish_reason: FinishReason::ToolUse,
        usage: Default::default(),
        warnings: vec![],
    });
    let rt = b.model(model.clone()).build();
    let runs = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "t.pay",
        json!({"mutating": true}),
        runs.clone(),
        |_| json!({"paid": true}),
    ));
    rt.agents().insert(
        AgentSpec::new("t.agent")
            .with_tools(["t.pay"])
            .with_conversation_policy(json!({"hitl": hitl})),
    );
    Fixture { rt, model, runs }
}

pub async fn turn(rt: &Runtime) -> RunRecord {
    rt.start_agent_turn(
        "t.agent",
        None,
        json!({"message": "pay"}),
        RunOptions {
            wait: true,
            ..Default::default()
        },
    )
    .await
    .unwrap()
}

pub fn reviewer(
    decision: DecisionKind,
    role: ReviewerRole,
    rationale: Option<&str>,
) -> DecisionInput {
    DecisionInput {
        decision,
        rationale: rationale.map(str::to_owned),
        decided_by: "user:rita".into(),
        reviewer_id: "rita".into(),
        reviewer_role: role,
    }
}

/// The one open approval the suspended turn waits on.
pub async fn open_approval(rt: &Runtime, run: &RunRecord) -> kindgi_runtime::Approval {
    assert_eq!(
        run.status,
        RunStatus::Suspended,
        "{:?}",
        run.failure_message
    );
    let page = rt
        .list_approvals(&ApprovalQuery {
            tenant_id: run.tenant_id.clone(),
            statuses: vec![ApprovalStatus::Pending],
            run_id: Some(run.id.clone()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.len(), 1, "{page:?}");
    page.into_iter().next().unwrap()
}

pub fn kinds(rt_journal: &[kindgi_runtime::JournalEntry]) -> Vec<&str> {
    rt_journal.iter().map(|e| e.kind.as_str()).collect()
}
