//! The model's tool calls of one agent step: which run together, which wait, and what each
//! call's result is for the model (runtime.md §3.3, seed 004).

use futures::future::join_all;
use serde_json::{Value, json};
use std::sync::Arc;

use super::MAX_PARALLEL_TOOL_CALLS;
use crate::catalogue::{AgentSpec, AgentTool};
use crate::dispatch::ToolDispatcher;
use crate::executor::{Failure, RunCtx};
use crate::guardrail::{RanCall, TurnGuardrails};
use crate::model::ToolCall;
use crate::resolve::ResolveError;

pub(super) enum CallOutcome {
    /// Content for the model; `outside`: the tool declares `resultIsOutsideData`.
    Result { content: String, outside: bool },
    /// Retryable by the model (unknown tool, bad arguments): the content to send back and
    /// the failure if retries are exhausted.
    Retry { content: String, failure: String },
}

/// A step failure for a tool that did not resolve.
pub(super) fn resolve_failure(e: ResolveError) -> Failure {
    match e {
        e @ ResolveError::Registry { .. } => Failure::new(e.to_string()),
        e => Failure::fatal(e.to_string()),
    }
}

/// What a call's tool resolved to: `None` when the agent does not list it (the model gets
/// an `unknown-tool` retry).
type CallTool = Option<Result<Arc<dyn ToolDispatcher>, ResolveError>>;

/// Runs the model's calls: consecutive read-only calls together (≤ 8), others alone; the
/// outcomes (with the tool version each ran) come back in the model's order.
pub(super) async fn dispatch_calls(
    ctx: &RunCtx,
    agent: &AgentSpec,
    guards: &TurnGuardrails,
    ran: &[RanCall],
    value_scope: &str,
    calls: &[ToolCall],
    parallel: bool,
) -> Result<Vec<(CallOutcome, Option<String>)>, Failure> {
    // SCAFFOLD: before-tool guardrails (`guards`) and approval gates hook in here.
    let _ = (guards, ran);
    let agent_id = agent.id.as_str();
    let allowed: &[AgentTool] = &agent.tools;
    // Each call resolves its tool now: the highest version its range admits at this moment.
    let tools: Vec<CallTool> = join_all(calls.iter().map(|c| async move {
        let listed = allowed.iter().find(|t| t.id == c.name)?;
        Some(
            ctx.resolve_tool(&listed.id, listed.version.as_deref())
                .await,
        )
    }))
    .await;
    let concurrent =
        |i: usize| parallel && matches!(&tools[i], Some(Ok(t)) if t.runs_concurrently());
    let mut out = Vec::with_capacity(calls.len());
    let mut i = 0;
    while i < calls.len() {
        let mut j = i + 1;
        if concurrent(i) {
            while j < calls.len() && j - i < MAX_PARALLEL_TOOL_CALLS && concurrent(j) {
                j += 1;
            }
        }
        let batch = join_all(
            calls[i..j]
                .iter()
                .zip(&tools[i..j])
                .map(|(c, t)| one_call(ctx, agent_id, value_scope, c, t)),
        )
        .await;
        for r in batch {
            out.push(r?);
        }
        i = j;
    }
    Ok(out)
}

async fn one_call(
    ctx: &RunCtx,
    agent_id: &str,
    value_scope: &str,
    call: &ToolCall,
    tool: &CallTool,
) -> Result<(CallOutcome, Option<String>), Failure> {
    let key = format!("tool-call:{}:{}", call.id, call.name);
    // A call that finished before a restart keeps its result, whatever resolves now.
    let replayed = ctx
        .replay
        .values
        .get(&(value_scope.to_owned(), key.clone()))
        .cloned();
    let tool = match (tool, &replayed) {
        (Some(Ok(t)), _) => Some(t.clone()),
        (_, Some(_)) => None,
        (None | Some(Err(ResolveError::NotFound { .. })), None) => {
            return Ok((unknown_tool(agent_id, &call.name), None));
        }
        (Some(Err(e)), None) => return Err(resolve_failure(e.clone())),
    };
    let version = tool.as_ref().map(|t| t.manifest().version.clone());
    let tool_outside = tool.as_ref().map(|t| t.manifest().result_is_outside_data());
    let recorded = match (replayed, tool) {
        (Some(v), _) => v,
        (None, Some(tool)) => run_call(ctx, value_scope, &key, call, tool).await?,
        (None, None) => return Ok((unknown_tool(agent_id, &call.name), None)),
    };
    // A replayed call reports the version it ran with when it was recorded.
    let ran = recorded
        .get("toolVersion")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or(version);
    if let Some(v) = recorded.get("ok") {
        let content = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let outside = tool_outside.unwrap_or(false);
        return Ok((CallOutcome::Result { content, outside }, ran));
    }
    Ok((
        CallOutcome::Retry {
            content: recorded
                .get("retry")
                .map(Value::to_string)
                .unwrap_or_default(),
            failure: recorded
                .get("failure")
                .and_then(Value::as_str)
                .unwrap_or("tool-invocation-failed")
                .to_owned(),
        },
        ran,
    ))
}

/// The retry the model gets for a tool the agent does not have.
fn unknown_tool(agent_id: &str, name: &str) -> CallOutcome {
    let message =
        format!("Model requested tool \"{name}\" not registered for agent \"{agent_id}\"");
    let content = json!({
        "kindgi": "tool-error-retry",
        "status": "failed",
        "error": {"kind": "unknown-tool", "message": message},
        "instruction": "Call one of the tools you were given instead.",
    });
    CallOutcome::Retry {
        content: content.to_string(),
        failure: format!("unresolved-tool: {message}"),
    }
}

/// Runs one call and records its outcome (`ok`, or a retry for bad arguments) with the
/// tool version it ran.
async fn run_call(
    ctx: &RunCtx,
    value_scope: &str,
    key: &str,
    call: &ToolCall,
    tool: Arc<dyn ToolDispatcher>,
) -> Result<Value, Failure> {
    let request_key = format!("{value_scope}/{key}");
    let arguments = call.arguments.clone();
    let version = tool.manifest().version.clone();
    ctx.recorded(value_scope, key, async {
        let result = match ctx.call_context(tool.as_ref(), &request_key).await {
            Ok(call_ctx) => tool.call(arguments, call_ctx).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(v) => Ok(json!({"ok": v, "toolVersion": version})),
            Err(e) if e.code == "input-validation-failed" => Ok(json!({
                "retry": {
                    "kindgi": "tool-error-retry",
                    "status": "failed",
                    "error": {"kind": "invalid-arguments", "message": e.message, "issues": e.issues},
                    "instruction": "Fix the arguments to match the tool's input schema and call it again.",
                },
                "failure": format!("tool-invocation-failed: {e}"),
                "toolVersion": version,
            })),
            Err(e) => Err(Failure::new(format!("tool-invocation-failed: {e}"))),
        }
    })
    .await
}
