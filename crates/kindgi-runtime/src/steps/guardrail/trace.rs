//! The `RunTrace` a guardrail's check reads (runtime.md §7, `buildRunTrace`): built from the
//! turn — its calls that ran, their results, the final text — in `runtime` mode. A
//! before-tool trace lists the pending call last, with no result, and says so in
//! `attributes` (`{stage: "before-tool", pendingCallId}`).

use serde_json::{Map, Value, json};

use super::RanCall;
use crate::catalogue::AgentSpec;
use crate::engine::ctx::RunCtx;
use crate::model::ToolCall;
use crate::record::AGENT_TURN_FLOW_ID;

/// The flow whose step runs the turn (`None` for an agent turn run of its own).
pub(crate) fn flow_of_turn(ctx: &RunCtx) -> Option<&str> {
    let id = ctx.flow.flow.id.as_str();
    (id != AGENT_TURN_FLOW_ID).then_some(id)
}

fn call_record(tool_id: &str, arguments: &Value, at: &str) -> Value {
    json!({"toolId": tool_id, "toolName": tool_id, "arguments": arguments, "at": at})
}

/// The trace fields every stage shares; `toolCalls` are `ran`'s.
fn base(ctx: &RunCtx, agent: &AgentSpec, ran: &[RanCall]) -> Map<String, Value> {
    let mut t = Map::new();
    t.insert("runId".into(), json!(ctx.run.id));
    t.insert("tenantId".into(), json!(ctx.run.tenant_id));
    if let Some(p) = &ctx.run.meta.project_id {
        t.insert("projectId".into(), json!(p));
    }
    t.insert("agentId".into(), json!(agent.id));
    if let Some(f) = flow_of_turn(ctx) {
        t.insert("flowId".into(), json!(f));
    }
    let calls: Vec<Value> = ran
        .iter()
        .map(|c| call_record(&c.tool_id, &c.arguments, &c.at))
        .collect();
    let results: Vec<Value> = ran
        .iter()
        .map(|c| json!({"toolCallId": c.id, "output": c.output, "at": c.at}))
        .collect();
    t.insert("toolCalls".into(), Value::Array(calls));
    t.insert("toolResults".into(), Value::Array(results));
    t.insert("modelCalls".into(), json!([]));
    if let Some(c) = ctx
        .run
        .meta
        .agent
        .as_ref()
        .and_then(|a| a.conversation_id.as_ref())
    {
        t.insert("conversationId".into(), json!(c));
    }
    t.insert("mode".into(), json!("runtime"));
    t
}

/// The trace of a finished turn: `output` is the final text.
pub(crate) fn after_turn(ctx: &RunCtx, agent: &AgentSpec, ran: &[RanCall], text: &str) -> Value {
    let mut t = base(ctx, agent, ran);
    t.insert("output".into(), json!(text));
    t.insert("attributes".into(), json!({"stage": "after-turn"}));
    Value::Object(t)
}

/// The trace a before-tool check sees: the calls that ran, then `pending` (no result, no
/// output yet).
pub(crate) fn before_tool(
    ctx: &RunCtx,
    agent: &AgentSpec,
    ran: &[RanCall],
    pending: &ToolCall,
) -> Value {
    let mut t = base(ctx, agent, ran);
    let at = crate::record::format_millis(crate::record::now_millis());
    if let Some(Value::Array(calls)) = t.get_mut("toolCalls") {
        calls.push(call_record(&pending.name, &pending.arguments, &at));
    }
    t.insert(
        "attributes".into(),
        json!({"stage": "before-tool", "pendingCallId": pending.id}),
    );
    Value::Object(t)
}
