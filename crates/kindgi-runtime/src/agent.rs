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
//! - An unknown tool or arguments the tool's schema refuses go back to the model once with a
//!   `tool-error-retry` result; a second such failure, or any other tool failure, fails the
//!   step.
//!
//! The output of the step: `{text, output, finishReason, steps, usage, costUsd, providerId,
//! model, toolCalls, warnings?}` — `text` is what a flow maps (`nodeOutputs.<id>.text`).
//!
//! Designed for what comes next: approvals would gate a call before it starts (recorded gate
//! decision + a wait), and after the first gated call the rest of the step runs one at a time.

use futures::future::join_all;
use serde_json::{Value, json};

use crate::executor::{Failure, RunCtx, node_scope};
use crate::model::{FinishReason, Message, ModelRequest, ModelResponse, ModelTool, ToolCall};

/// What a dry-run agent step answers.
pub const DRY_RUN_REPLY: &str = "[dry-run: model call skipped]";
/// The most read-only calls an agent runs at the same time.
pub const MAX_PARALLEL_TOOL_CALLS: usize = 8;
/// Default model steps per turn.
pub const DEFAULT_MAX_STEPS: u32 = 8;
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

/// Runs one agent step of a flow.
pub(crate) async fn run_agent_step(
    ctx: &RunCtx,
    agent_id: &str,
    node_id: &str,
    scope: &str,
    input: Value,
) -> Result<Value, Failure> {
    let Some(agent) = ctx.shared.agents.get(agent_id) else {
        return Err(Failure::fatal(format!(
            "flow-unbound: node \"{node_id}\" runs agent \"{agent_id}\", which is not registered"
        )));
    };
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
    let value_scope = node_scope(scope, node_id);
    let mut messages = Vec::new();
    if let Some(sys) = &agent.instructions {
        messages.push(Message::system(sys.clone()));
    }
    messages.push(Message::user(user_message(&input)));
    let mut offered = Vec::new();
    for tool_id in &agent.tools {
        let Some(t) = ctx.shared.tools.get(tool_id) else {
            return Err(Failure::fatal(format!(
                "flow-unbound: agent \"{agent_id}\" lists tool \"{tool_id}\", which is not registered"
            )));
        };
        let m = t.manifest();
        offered.push(ModelTool {
            name: m.id.clone(),
            description: m.description.clone(),
            parameters: m.input.clone(),
        });
    }
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
        for (call, outcome) in answer.tool_calls.iter().zip(outcomes) {
            call_log.push(json!({"id": call.id, "toolId": call.name, "arguments": call.arguments}));
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

/// Runs the model's calls: consecutive read-only calls together (≤ 8), others alone; the
/// outcomes come back in the model's order.
async fn dispatch_calls(
    ctx: &RunCtx,
    agent_id: &str,
    allowed: &[String],
    value_scope: &str,
    calls: &[ToolCall],
    parallel: bool,
) -> Result<Vec<CallOutcome>, Failure> {
    let concurrent = |c: &ToolCall| {
        parallel
            && allowed.contains(&c.name)
            && ctx
                .shared
                .tools
                .get(&c.name)
                .is_some_and(|t| t.runs_concurrently())
    };
    let mut out = Vec::with_capacity(calls.len());
    let mut i = 0;
    while i < calls.len() {
        let mut j = i + 1;
        if concurrent(&calls[i]) {
            while j < calls.len() && j - i < MAX_PARALLEL_TOOL_CALLS && concurrent(&calls[j]) {
                j += 1;
            }
        }
        let batch = join_all(
            calls[i..j]
                .iter()
                .map(|c| one_call(ctx, agent_id, allowed, value_scope, c)),
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
    allowed: &[String],
    value_scope: &str,
    call: &ToolCall,
) -> Result<CallOutcome, Failure> {
    let tool = if allowed.contains(&call.name) {
        ctx.shared.tools.get(&call.name)
    } else {
        None
    };
    let Some(tool) = tool else {
        let message = format!(
            "Model requested tool \"{}\" not registered for agent \"{agent_id}\"",
            call.name
        );
        let content = json!({
            "kindgi": "tool-error-retry",
            "status": "failed",
            "error": {"kind": "unknown-tool", "message": message},
            "instruction": "Call one of the tools you were given instead.",
        });
        return Ok(CallOutcome::Retry {
            content: content.to_string(),
            failure: format!("unresolved-tool: {message}"),
        });
    };
    let key = format!("tool-call:{}:{}", call.id, call.name);
    let request_key = format!("{value_scope}/{key}");
    let arguments = call.arguments.clone();
    let recorded = ctx
        .recorded(value_scope, &key, async {
            match tool.call(arguments, ctx.tool_context(&request_key)).await {
                Ok(v) => Ok(json!({"ok": v})),
                Err(e) if e.code == "input-validation-failed" => Ok(json!({
                    "retry": {
                        "kindgi": "tool-error-retry",
                        "status": "failed",
                        "error": {"kind": "invalid-arguments", "message": e.message, "issues": e.issues},
                        "instruction": "Fix the arguments to match the tool's input schema and call it again.",
                    },
                    "failure": format!("tool-invocation-failed: {e}"),
                })),
                Err(e) => Err(Failure::new(format!("tool-invocation-failed: {e}"))),
            }
        })
        .await?;
    if let Some(v) = recorded.get("ok") {
        let content = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Ok(CallOutcome::Result(content));
    }
    Ok(CallOutcome::Retry {
        content: recorded
            .get("retry")
            .map(Value::to_string)
            .unwrap_or_default(),
        failure: recorded
            .get("failure")
            .and_then(Value::as_str)
            .unwrap_or("tool-invocation-failed")
            .to_owned(),
    })
}
