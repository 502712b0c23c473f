//! An agent step: a model turn with its tool loop (runtime.md §3, seed 004).
//!
//! - In a dry run the model is not called: the step answers `[dry-run: model call skipped]`
//!   with finish reason stop, usage 0/0, and no tool runs.
//! - Otherwise: up to `maxSteps` (default 8) model calls. When the model asks for tools,
//!   consecutive calls to read-only tools run together (up to 8 at a time), a call to any
//!   other tool runs on its own, and results reach the model in the order it asked
//!   (`parallelToolCalls: false` runs every call on its own).
//! - Each model answer and each tool result is recorded in the journal (`value.recorded`),
//!   so a resumed run neither calls the model again nor repeats a tool call that finished.
//!   The agent version a step runs (a node's `config.version`, else the highest the tenant
//!   has) is recorded too, so a resumed step runs the same version.
//! - An unknown tool or arguments the tool's schema refuses go back to the model once with a
//!   `tool-error-retry` result; a second such failure, or any other tool failure, fails the
//!   step.
//!
//! The output of the step: `{text, output, finishReason, steps, usage, costUsd, providerId,
//! model, toolCalls, warnings?}` — `text` is what a flow maps (`nodeOutputs.<id>.text`);
//! each warning is `{code, message}` (the provider's stable code, and words for a person).
//!
//! - Each of the agent's `tools[]` is `{id, version}` with an npm semver range: the tools
//!   offered to the model are resolved when the step starts, and each call resolves its tool
//!   again (maxSatisfying over what the tenant has now: the catalogue, then the registry), so
//!   a version published mid-turn is used by the next call. A range nothing satisfies fails
//!   the step `tool-version-unresolvable`, naming the tool and the range. Each call's log
//!   entry (`toolCalls[]`) carries the `toolVersion` it ran.
//!
//! - Approval gates (`conversationPolicy.hitl`, held to the tenant's `hitl` policy): the
//!   rules are read when the turn starts (a tenant policy that cannot be read fails the turn
//!   `tenant-policy-unavailable` before any tool runs); each call's gate is decided once and
//!   recorded, and a gated call parks the run until a reviewer decides ([`gate`], [`hitl`]).
//!   Past `hitl.afterTurns` turns of its conversation, a turn waits for a reviewer before
//!   its first model call ([`session_gate`]).

mod calls;
mod gate;
pub mod hitl;
mod messages;
mod session_gate;
mod step;

use serde_json::{Value, json};
use std::sync::Arc;

use crate::catalogue::AgentSpec;
use crate::engine::ctx::{RunCtx, node_scope};
use crate::engine::failure::Failure;
use crate::guardrail::{RanCall, TurnGuardrails};
use crate::left_out::LeftOutKind;
use crate::model::{FinishReason, Message, ModelRequest, ModelResponse, ModelTool, ToolCall};
use crate::resolve::ResolveError;
use calls::{CallOutcome, resolve_failure};
pub use messages::{DEFAULT_HISTORY_LIMIT, OUTSIDE_DATA_RULE, outside_data};

/// What a dry-run agent step answers.
pub const DRY_RUN_REPLY: &str = "[dry-run: model call skipped]";
/// The most read-only calls an agent runs at the same time.
pub const MAX_PARALLEL_TOOL_CALLS: usize = 8;
/// Default model steps per turn.
pub const DEFAULT_MAX_STEPS: u32 = 8;
/// The recorded value under which a step keeps the agent version it runs.
const AGENT_VERSION_KEY: &str = "agent-version";
/// Tool errors sent back to the model per turn before the turn fails.
const MAX_TOOL_RETRIES: u32 = 1;

/// The user message of a step: a string input as-is, an object's `userMessage` (an agent
/// turn's, platform-api.md §3.1), `message` or `prompt` string, else the input as JSON.
pub fn user_message(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        Value::Object(m) => match m
            .get("userMessage")
            .or_else(|| m.get("message"))
            .or_else(|| m.get("prompt"))
        {
            Some(Value::String(s)) => s.clone(),
            _ => input.to_string(),
        },
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn step_output(
    text: String,
    finish: FinishReason,
    steps: u32,
    usage: (u64, u64),
    provider: (&str, &str),
    calls: &[Value],
    warnings: &[String],
) -> Value {
    let mut out = json!({
        "text": text,
        "output": null,
        "finishReason": finish,
        "steps": steps,
        "usage": {"inputTokens": usage.0, "outputTokens": usage.1},
        "costUsd": 0,
        "providerId": provider.0,
        "model": provider.1,
        "toolCalls": calls,
    });
    if !warnings.is_empty()
        && let Value::Object(m) = &mut out
    {
        let objects: Vec<Value> = warnings.iter().map(|c| turn_warning(c)).collect();
        m.insert("warnings".into(), Value::Array(objects));
    }
    out
}

/// A turn warning as the contract has it (`AgentTurnResult.warnings[]`: `{code, message}`),
/// from a provider's warning code: the official CLI prints each `message` as `⚠ <message>`.
/// A code this runtime has no words for is its own message.
fn turn_warning(code: &str) -> Value {
    let message = match code {
        crate::model::dev_echo::WARNING_CODE => crate::model::dev_echo::WARNING
            .trim_start_matches('\u{26a0}')
            .trim_start(),
        crate::model_router::FALLBACK_WARNING_CODE => crate::model_router::FALLBACK_WARNING,
        crate::model::sampling::WARNING_CODE => crate::model::sampling::WARNING,
        other => other,
    };
    json!({"code": code, "message": message})
}

/// The provider and model this turn calls ([`crate::model_router`]).
async fn route(ctx: &RunCtx, agent: &AgentSpec) -> Result<crate::model_router::Routed, Failure> {
    ctx.shared
        .router
        .route(
            &ctx.run.tenant_id,
            agent,
            ctx.shared.call_values.as_ref(),
            ctx.journal.mask(),
        )
        .await
        .map_err(|e| match e {
            crate::model_router::RouteError::Registry(_) => Failure::new(e.to_string()),
            other => Failure::fatal(other.to_string()),
        })
}

/// Runs one agent step of a flow: the agent `agent_id` as the run's tenant sees it, at
/// `version` (a node's `config.version`) or the highest.
pub(crate) async fn run_agent_step(
    ctx: &RunCtx,
    agent_id: &str,
    version: Option<&str>,
    node_id: &str,
    scope: &str,
    input: Value,
) -> Result<Value, Failure> {
    let value_scope = node_scope(scope, node_id);
    let (agent, unpinned) = find_agent(ctx, agent_id, version, node_id, &value_scope).await?;
    let routed = route(ctx, &agent).await?;
    let provider = routed.provider.clone();
    let ids = (routed.provider_id.clone(), routed.model.clone());
    messages::open_conversation(ctx, &agent, &input).await?;
    if ctx.run.dry_run {
        return Ok(step_output(
            crate::agent::DRY_RUN_REPLY.to_owned(),
            FinishReason::Stop,
            1,
            (0, 0),
            (&ids.0, &ids.1),
            &[],
            &[],
        ));
    }
    if unpinned {
        let v = json!(agent.version);
        ctx.recorded(&value_scope, AGENT_VERSION_KEY, async move { Ok(v) })
            .await?;
    }
    let guards = TurnGuardrails::resolve(ctx, &agent)
        .await?
        .at(node_id, scope);
    let hitl = gate::turn_rules(ctx, &agent, ctx.shared.tenant_hitl.as_deref()).await?;
    session_gate::pass(ctx, &agent, &hitl, node_id, &value_scope).await?;
    let (offered, outside) = offered_tools(ctx, &agent).await?;
    let mut messages = messages::initial_messages(ctx, &agent, &input, outside).await?;
    let mut ran: Vec<RanCall> = Vec::new();
    let parallel = agent.parallel_tool_calls.unwrap_or(true);
    let mut seen_call_ids = std::collections::HashSet::new();
    let max_steps = agent.max_steps.unwrap_or(DEFAULT_MAX_STEPS).max(1);
    let mut usage = (0u64, 0u64);
    let mut call_log: Vec<Value> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    if routed.fallback {
        warnings.push(crate::model_router::FALLBACK_WARNING_CODE.to_owned());
    }
    let mut retries = 0u32;
    for step in 1..=max_steps {
        let request = ModelRequest {
            messages: messages.clone(),
            tools: offered.clone(),
            // Sent only to a provider registered with `send_traceparent`.
            traceparent: (ctx.run.meta.trace_id.as_deref()).and_then(crate::model::traceparent_for),
            ..Default::default()
        };
        let provider = provider.clone();
        let (provider_id, model) = ids.clone();
        let recorded = ctx
            .recorded(&value_scope, &format!("model-call:{step}"), async move {
                let answer = provider.invoke(request).await.map_err(|e| {
                    let cause: String =
                        e.to_string().replace('\n', " ").chars().take(500).collect();
                    Failure::new(format!(
                        "model-invocation-failed: Model call to {provider_id} ({model}) failed: {cause}"
                    ))
                })?;
                serde_json::to_value(answer).map_err(|e| Failure::fatal(e.to_string()))
            })
            .await?;
        let answer: ModelResponse = serde_json::from_value(recorded).map_err(|e| {
            Failure::fatal(format!(
                "journal-unavailable: a recorded model answer is unreadable: {e}"
            ))
        })?;
        usage.0 += answer.usage.input_tokens;
        usage.1 += answer.usage.output_tokens;
        for w in &answer.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
        if answer.finish_reason != FinishReason::ToolUse || answer.tool_calls.is_empty() {
            let violations = guards.after_turn(ctx, &agent, &answer.text, &ran).await?;
            messages::remember_turn(ctx, &agent, &messages, &answer.text).await?;
            let mut out = step_output(
                answer.text,
                answer.finish_reason,
                step,
                usage,
                (&ids.0, &ids.1),
                &call_log,
                &warnings,
            );
            if !violations.is_empty()
                && let Value::Object(m) = &mut out
            {
                m.insert("violations".into(), Value::Array(violations));
            }
            return Ok(out);
        }
        if step == max_steps {
            return Err(Failure::fatal(format!(
                "budget-exceeded: agent \"{agent_id}\" reached maxSteps ({max_steps}) while the model still asked for tools"
            )));
        }
        let step_calls = unique_call_ids(&mut seen_call_ids, &answer.tool_calls, step);
        messages.push(Message::assistant(answer.text.clone(), step_calls.clone()));
        let calls_step = step::Step {
            agent: &agent,
            guards: &guards,
            hitl: &hitl,
            node_id,
            value_scope: &value_scope,
            parallel,
        };
        let outcomes = calls::dispatch_calls(ctx, &calls_step, &ran, &step_calls).await?;
        for (call, (outcome, version)) in step_calls.iter().zip(outcomes) {
            let mut entry =
                json!({"id": call.id, "toolId": call.name, "arguments": call.arguments});
            if let (Some(v), Value::Object(m)) = (version, &mut entry) {
                m.insert("toolVersion".into(), json!(v));
            }
            call_log.push(entry);
            match outcome {
                CallOutcome::Result { content, outside } => {
                    ran.push(RanCall::new(call, &content));
                    messages.push(messages::tool_message(
                        &call.id, &call.name, content, outside,
                    ));
                }
                CallOutcome::NotRun { content } => {
                    messages.push(messages::tool_message(&call.id, &call.name, content, false));
                }
                CallOutcome::Retry { content, failure } => {
                    retries += 1;
                    if retries > MAX_TOOL_RETRIES {
                        return Err(Failure::fatal(failure));
                    }
                    messages.push(Message::tool(call.id.clone(), content));
                }
            }
        }
    }
    Err(Failure::fatal(format!(
        "budget-exceeded: agent \"{agent_id}\" reached maxSteps ({max_steps})"
    )))
}

/// The model's calls of one step, each with an id no earlier call of this turn had: a reused
/// id (some models number their calls afresh each step) gets a `#<n>` suffix, so each call
/// keeps its own journaled result, gate and verdict and none is mistaken for another that ran
/// before. The model sees the ids it is given back consistently (assistant message and tool
/// results), and the renaming is the same on replay (it follows the recorded answers).
fn unique_call_ids(
    seen: &mut std::collections::HashSet<String>,
    calls: &[ToolCall],
    step: u32,
) -> Vec<ToolCall> {
    calls
        .iter()
        .map(|c| {
            let mut c = c.clone();
            let base = c.id.clone();
            let mut n = step;
            while !seen.insert(c.id.clone()) {
                c.id = format!("{base}#{n}");
                n += 1;
            }
            c
        })
        .collect()
}

/// The agent a step runs, and whether its version still has to be recorded: a resumed step
/// runs the version it first ran, whatever was published since.
async fn find_agent(
    ctx: &RunCtx,
    agent_id: &str,
    version: Option<&str>,
    node_id: &str,
    value_scope: &str,
) -> Result<(Arc<AgentSpec>, bool), Failure> {
    let pinned = ctx
        .replay
        .values
        .get(&(value_scope.to_owned(), AGENT_VERSION_KEY.to_owned()))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let unpinned = version.is_none() && pinned.is_none();
    let version = pinned.as_deref().or(version);
    let found = ctx
        .shared
        .definitions
        .agent(&ctx.run.tenant_id, agent_id, version)
        .await
        .map_err(|e| Failure::fatal(e.to_string()))?;
    let Some(agent) = found else {
        let v = version.map(|v| format!(" version {v}")).unwrap_or_default();
        return Err(Failure::fatal(ctx.shared.left_out.explain(
            &ctx.run.tenant_id,
            LeftOutKind::Agent,
            agent_id,
            format!(
                "flow-unbound: node \"{node_id}\" runs agent \"{agent_id}\"{v}, which is not registered"
            ),
        )));
    };
    Ok((agent, unpinned))
}

/// The tools offered to the model: each of the agent's `tools[]` resolved now; and whether
/// any of them declares `resultIsOutsideData`.
async fn offered_tools(ctx: &RunCtx, agent: &AgentSpec) -> Result<(Vec<ModelTool>, bool), Failure> {
    let mut offered = Vec::with_capacity(agent.tools.len());
    let mut outside = false;
    for listed in &agent.tools {
        let t = match ctx
            .resolve_tool(&listed.id, listed.version.as_deref())
            .await
        {
            Ok(t) => t,
            Err(ResolveError::NotFound { .. }) => {
                return Err(Failure::fatal(ctx.shared.left_out.explain(
                    &ctx.run.tenant_id,
                    LeftOutKind::Tool,
                    &listed.id,
                    format!(
                        "flow-unbound: agent \"{}\" lists tool \"{}\", which is not registered",
                        agent.id, listed.id
                    ),
                )));
            }
            Err(e) => return Err(resolve_failure(e)),
        };
        let m = t.manifest();
        outside |= m.result_is_outside_data();
        offered.push(ModelTool {
            name: m.id.clone(),
            description: m.description.clone(),
            parameters: m.input.clone(),
        });
    }
    Ok((offered, outside))
}
