//! The model's tool calls of one agent step: which run together, which wait, and what each
//! call's result is for the model (runtime.md §3.3, §4, seed 004 "Calls that run together").
//!
//! - Consecutive calls to read-only tools run together, up to 8 at once; a call to any
//!   other tool runs on its own, and so does one to a tool that may pause or that declares
//!   connections (it may wait for its person to connect an app, `steps::connect`). `parallelToolCalls: false` runs every call on its own.
//! - A call a before-tool guardrail judges waits for every call before it, so its check sees
//!   them as calls that ran; a refusal is the call's result and the call does not run. The
//!   read-only calls after it may run alongside it.
//! - Each call's approval gate is decided just before it would start; once a call needs an
//!   approval, the step's calls that have not started run one at a time.
//! - A call that finished before a park or a restart keeps its recorded result and does not
//!   run again. Results come back in the model's order.
//! - A result (or retry text) reaches the model with the run's resolved secrets masked.

use futures::future::join_all;
use serde_json::{Value, json};
use std::sync::Arc;

use super::MAX_PARALLEL_TOOL_CALLS;
use super::gate::{self, GateRecord, Review};
use super::step::Step;
use crate::dispatch::ToolDispatcher;
use crate::engine::ctx::RunCtx;
use crate::engine::failure::Failure;
use crate::guardrail::RanCall;
use crate::model::ToolCall;
use crate::resolve::ResolveError;

pub(super) enum CallOutcome {
    /// Content for the model; `outside`: the tool declares `resultIsOutsideData`.
    Result { content: String, outside: bool },
    /// The call did not run: a reviewer rejected it or a before-tool guardrail refused it;
    /// `content` is what the model gets instead of a result.
    NotRun { content: String },
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

/// A call's outcome and the tool version it ran.
type Outcome = (CallOutcome, Option<String>);

/// Runs the model's calls (`ran`: the calls of the turn's earlier steps); the outcomes come
/// back in the model's order.
pub(super) async fn dispatch_calls(
    ctx: &RunCtx,
    step: &Step<'_>,
    ran: &[RanCall],
    calls: &[ToolCall],
) -> Result<Vec<Outcome>, Failure> {
    let allowed = &step.agent.tools;
    // Each call resolves its tool now: the highest version its range admits at this moment.
    let tools: Vec<CallTool> = join_all(calls.iter().map(|c| async move {
        let listed = allowed.iter().find(|t| t.id == c.name)?;
        Some(
            ctx.resolve_tool(&listed.id, listed.version.as_deref())
                .await,
        )
    }))
    .await;
    let mut ran_so_far: Vec<RanCall> = ran.to_vec();
    let mut out: Vec<Outcome> = Vec::with_capacity(calls.len());
    let mut one_at_a_time = !step.parallel;
    // A gate decided for a call that then could not join the batch before it.
    let mut decided: Option<(usize, Option<GateRecord>)> = None;
    let mut i = 0;
    while i < calls.len() {
        let call = &calls[i];
        let Some(tool) = runnable(ctx, step, call, &tools[i]) else {
            let o = finished_call(ctx, step, call, &tools[i])?;
            push(&mut out, &mut ran_so_far, call, o);
            i += 1;
            continue;
        };
        if step.guards.judges(&call.name)
            && let Some(refusal) = step
                .guards
                .before_tool(ctx, step.agent, &ran_so_far, call)
                .await?
        {
            let version = Some(tool.manifest().version.clone());
            push(
                &mut out,
                &mut ran_so_far,
                call,
                (CallOutcome::NotRun { content: refusal }, version),
            );
            i += 1;
            continue;
        }
        let gate = match decided.take() {
            Some((k, g)) if k == i => g,
            _ => gate::decide(ctx, step, call, tool.as_ref()).await?,
        };
        if gate.is_some() || one_at_a_time || !tool.runs_concurrently() {
            if gate.is_some() {
                one_at_a_time = true;
            }
            let o = gated_call(ctx, step, call, tool, gate.as_ref()).await?;
            push(&mut out, &mut ran_so_far, call, o);
            i += 1;
            continue;
        }
        // A read-only call: the read-only calls right after it join it.
        let mut batch = vec![(i, tool)];
        let mut j = i + 1;
        while j < calls.len() && batch.len() < MAX_PARALLEL_TOOL_CALLS {
            let next = &calls[j];
            if ctx_replayed(ctx, step, next).is_some() {
                break;
            }
            let Some(Ok(t)) = &tools[j] else { break };
            if !t.runs_concurrently() || step.guards.judges(&next.name) {
                break;
            }
            let g = gate::decide(ctx, step, next, t.as_ref()).await?;
            if g.is_some() {
                decided = Some((j, g));
                break;
            }
            batch.push((j, t.clone()));
            j += 1;
        }
        let results = join_all(
            batch
                .iter()
                .map(|(k, t)| run_call(ctx, step, &calls[*k], t.clone())),
        )
        .await;
        for ((k, _), r) in batch.iter().zip(results) {
            push(&mut out, &mut ran_so_far, &calls[*k], r?);
        }
        i = j;
    }
    Ok(out)
}

fn push(out: &mut Vec<Outcome>, ran: &mut Vec<RanCall>, call: &ToolCall, o: Outcome) {
    if let CallOutcome::Result { content, .. } = &o.0 {
        ran.push(RanCall::new(call, content));
    }
    out.push(o);
}

/// The call's recorded result, when it finished before a park or a restart.
fn ctx_replayed(ctx: &RunCtx, step: &Step<'_>, call: &ToolCall) -> Option<Value> {
    ctx.replay
        .values
        .get(&(step.value_scope.to_owned(), call_key(call)))
        .cloned()
}

fn call_key(call: &ToolCall) -> String {
    format!("tool-call:{}:{}", call.id, call.name)
}

/// The tool to run the call with, or `None` when the call has nothing left to run: it
/// finished before (its recorded result stands, whatever resolves now) or its tool is
/// unknown or does not resolve.
fn runnable(
    ctx: &RunCtx,
    step: &Step<'_>,
    call: &ToolCall,
    tool: &CallTool,
) -> Option<Arc<dyn ToolDispatcher>> {
    if ctx_replayed(ctx, step, call).is_some() {
        return None;
    }
    match tool {
        Some(Ok(t)) => Some(t.clone()),
        _ => None,
    }
}

/// The outcome of a call [`runnable`] has nothing to run for.
fn finished_call(
    ctx: &RunCtx,
    step: &Step<'_>,
    call: &ToolCall,
    tool: &CallTool,
) -> Result<Outcome, Failure> {
    let resolved = match tool {
        Some(Ok(t)) => Some(t),
        _ => None,
    };
    if let Some(recorded) = ctx_replayed(ctx, step, call) {
        let version = resolved.map(|t| t.manifest().version.clone());
        let outside = resolved.is_some_and(|t| t.manifest().result_is_outside_data());
        return Ok(outcome_of(recorded, outside, version));
    }
    match tool {
        // A tool that resolves has something to run; only a lost race lands here.
        Some(Err(ResolveError::NotFound { .. }) | Ok(_)) | None => {
            Ok((unknown_tool(&step.agent.id, &call.name), None))
        }
        Some(Err(e)) => Err(resolve_failure(e.clone())),
    }
}

/// A call that runs on its own, after its gate's review when it has one.
async fn gated_call(
    ctx: &RunCtx,
    step: &Step<'_>,
    call: &ToolCall,
    tool: Arc<dyn ToolDispatcher>,
    gate: Option<&GateRecord>,
) -> Result<Outcome, Failure> {
    if let Some(g) = gate
        && let Review::Rejected(content) = gate::review(ctx, step, call, tool.as_ref(), g).await?
    {
        let version = Some(tool.manifest().version.clone());
        return Ok((CallOutcome::NotRun { content }, version));
    }
    run_call(ctx, step, call, tool).await
}

/// A recorded call outcome as the model gets it; a recorded call reports the version it
/// ran with.
fn outcome_of(recorded: Value, outside: bool, version: Option<String>) -> Outcome {
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
        return (CallOutcome::Result { content, outside }, ran);
    }
    (
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
    )
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
/// tool version it ran. A tool that may pause goes through [`RunCtx::call_pausing`]: the
/// run waits for the other system's answer, which is then the result. A call whose
/// person's connection is not made yet first waits for it ([`RunCtx::await_connections`]).
async fn run_call(
    ctx: &RunCtx,
    step: &Step<'_>,
    call: &ToolCall,
    tool: Arc<dyn ToolDispatcher>,
) -> Result<Outcome, Failure> {
    let key = call_key(call);
    let request_key = format!("{}/{key}", step.value_scope);
    let site = crate::engine::tool_call::CallSite {
        key: &request_key,
        step_scope: step.value_scope,
        model_call_id: Some(&call.id),
    };
    let arguments = call.arguments.clone();
    let m = tool.manifest();
    let version = m.version.clone();
    let outside = m.result_is_outside_data();
    let connect = crate::steps::connect::ConnectSite {
        scope: step.value_scope,
        node_id: Some(step.node_id),
        call_id: &call.id,
        timeout_ms: step.hitl.timeout_ms(),
    };
    let mut recorded = ctx
        .recorded(step.value_scope, &key, async {
            // A person's connection not made yet: the run waits for it (the call runs on
            // its own: `runs_concurrently` is false for a tool declaring connections).
            ctx.await_connections(m, connect).await?;
            if m.pauses() {
                let v = ctx
                    .call_pausing(
                        &tool,
                        arguments,
                        site,
                        step.value_scope,
                        Some(step.node_id),
                        &call.id,
                    )
                    .await?;
                return Ok(json!({"ok": v, "toolVersion": version}));
            }
            let result = match ctx.call_context(tool.as_ref(), site).await {
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
        .await?;
    // What the model (and the turn's guardrails) read: the run's secrets masked, as in the
    // journal's copy (which a replayed call gets).
    ctx.journal.mask().mask_value(&mut recorded);
    Ok(outcome_of(recorded, outside, Some(m.version.clone())))
}
