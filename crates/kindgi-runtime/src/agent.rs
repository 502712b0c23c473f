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
//! model, toolCalls, warnings?}` — `text` is what a flow maps (`nodeOutputs.<id>.text`).
//!
//! - Each of the agent's `tools[]` is `{id, version}` with an npm semver range: the tools
//!   offered to the model are resolved when the step starts, and each call resolves its tool
//!   again (maxSatisfying over what the tenant has now: the catalogue, then the registry), so
//!   a version published mid-turn is used by the next call. A range nothing satisfies fails
//!   the step `tool-version-unresolvable`, naming the tool and the range. Each call's log
//!   entry (`toolCalls[]`) carries the `toolVersion` it ran.
//!
//! Designed for what comes next: approvals would gate a call before it starts (recorded gate
//! decision + a wait), and after the first gated call the rest of the step runs one at a time.

use futures::future::join_all;
use serde_json::{Value, json};
use std::sync::Arc;

use crate::catalogue::{AgentSpec, AgentTool};
use crate::dispatch::ToolDispatcher;
use crate::executor::{Failure, RunCtx, node_scope};
use crate::model::{FinishReason, Message, ModelRequest, ModelResponse, ModelTool, ToolCall};
use crate::resolve::ResolveError;

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

/// The user message of a step: a string input as-is, an object's `message` (or `prompt`)
/// string, else the input as JSON.
pub fn user_message(input: &Value) -> String {
    match input {
        Value::String(s) => s.clone(),
        Value::Object(m) => match m.get("message").or_else(|| m.get("prompt")) {
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
        m.insert("warnings".into(), json!(warnings));
    }
    out
}

enum CallOutcome {
    /// Content for the model.
    Result(String),
    /// Retryable by the model (unknown tool, bad arguments): the content to send back and
    /// the failure if retries are exhausted.
    Retry { content: String, failure: String },
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
    let provider = ctx.shared.model.clone();
    let ids = (
        provider.provider_id().to_owned(),
        provider.model().to_owned(),
    );
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
    let mut messages = Vec::new();
    if let Some(sys) = &agent.instructions {
        messages.push(Message::system(sys.clone()));
    }
    messages.push(Message::user(user_message(&input)));
    let offered = offered_tools(ctx, &agent).await?;
    let parallel = agent.parallel_tool_calls.unwrap_or(true);
    let max_steps = agent.max_steps.unwrap_or(DEFAULT_MAX_STEPS).max(1);
    let mut usage = (0u64, 0u64);
    let mut call_log: Vec<Value> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut retries = 0u32;
    for step in 1..=max_steps {
        let request = ModelRequest {
            messages: messages.clone(),
            tools: offered.clone(),
            ..Default::default()
        };
        let provider = provider.clone();
        let recorded = ctx
            .recorded(&value_scope, &format!("model-call:{step}"), async move {
                let answer = provider.invoke(request).await.map_err(|e| {
                    let cause: String =
                        e.to_string().replace('\n', " ").chars().take(500).collect();
                    Failure::new(format!(
                        "model-invocation-failed: Model call to {} ({}) failed: {cause}",
                        provider.provider_id(),
                        provider.model()
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
            return Ok(step_output(
                answer.text,
                answer.finish_reason,
                step,
                usage,
                (&ids.0, &ids.1),
                &call_log,
                &warnings,
            ));
        }
        if step == max_steps {
            return Err(Failure::fatal(format!(
                "budget-exceeded: agent \"{agent_id}\" reached maxSteps ({max_steps}) while the model still asked for tools"
            )));
        }
        messages.push(Message::assistant(
            answer.text.clone(),
            answer.tool_calls.clone(),
        ));
        let outcomes = dispatch_calls(
            ctx,
            agent_id,
            &agent.tools,
            &value_scope,
            &answer.tool_calls,
            parallel,
        )
        .await?;
        for (call, (outcome, version)) in answer.tool_calls.iter().zip(outcomes) {
            let mut entry =
                json!({"id": call.id, "toolId": call.name, "arguments": call.arguments});
            if let (Some(v), Value::Object(m)) = (version, &mut entry) {
                m.insert("toolVersion".into(), json!(v));
            }
            call_log.push(entry);
            match outcome {
                CallOutcome::Result(content) => {
                    messages.push(Message::tool(call.id.clone(), content))
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
        return Err(Failure::fatal(format!(
            "flow-unbound: node \"{node_id}\" runs agent \"{agent_id}\"{v}, which is not registered"
        )));
    };
    Ok((agent, unpinned))
}

/// The tools offered to the model: each of the agent's `tools[]` resolved now.
async fn offered_tools(ctx: &RunCtx, agent: &AgentSpec) -> Result<Vec<ModelTool>, Failure> {
    let mut offered = Vec::with_capacity(agent.tools.len());
    for listed in &agent.tools {
        let t = match ctx
            .resolve_tool(&listed.id, listed.version.as_deref())
            .await
        {
            Ok(t) => t,
            Err(ResolveError::NotFound { .. }) => {
                return Err(Failure::fatal(format!(
                    "flow-unbound: agent \"{}\" lists tool \"{}\", which is not registered",
                    agent.id, listed.id
                )));
            }
            Err(e) => return Err(resolve_failure(e)),
        };
        let m = t.manifest();
        offered.push(ModelTool {
            name: m.id.clone(),
            description: m.description.clone(),
            parameters: m.input.clone(),
        });
    }
    Ok(offered)
}

/// A step failure for a tool that did not resolve.
fn resolve_failure(e: ResolveError) -> Failure {
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
async fn dispatch_calls(
    ctx: &RunCtx,
    agent_id: &str,
    allowed: &[AgentTool],
    value_scope: &str,
    calls: &[ToolCall],
    parallel: bool,
) -> Result<Vec<(CallOutcome, Option<String>)>, Failure> {
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
        return Ok((CallOutcome::Result(content), ran));
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
