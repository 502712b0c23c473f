//! Guardrails of an agent turn (runtime.md §7, seed 004): after-turn guardrails judge the
//! final answer before it is kept; before-tool guardrails (our extension, docs/guardrails.md)
//! judge a call before it starts.
//!
//! - [`TurnGuardrails::resolve`] looks up the agent's `guardrails[]` when the turn starts
//!   (an unknown id fails the turn `unresolved-guardrail`).
//! - [`TurnGuardrails::after_turn`] evaluates the after-turn ones over the turn's trace: a
//!   blocking verdict fails the turn `guardrail-violation: Turn blocked by …`; the others
//!   come back as the step's `violations`.
//! - [`TurnGuardrails::before_tool`] evaluates the before-tool ones that judge a call: a
//!   failing `halt` guardrail (or one whose check cannot run) refuses the call, and the
//!   model gets the refusal as the call's result.
//!
//! Each verdict is recorded (`value.recorded`), so a resumed step neither judges again nor
//! calls a pack's check twice; each violation is journaled once (`guardrail.violated`).
//! Checks other than the built-ins ([`checks`]) run through the runtime's
//! [`GuardrailChecks`] (the host routes a pack's check to its pack service, `check-invoke`).

mod checks;
mod engine;
mod spec;
mod trace;

pub use checks::BUILT_IN_CHECKS;
pub use spec::{GuardrailCatalogue, GuardrailSpec, Scope, Stage, When, parse_stage};

use serde_json::{Value, json};
use std::sync::Arc;

use crate::catalogue::AgentSpec;
use crate::engine::ctx::{RunCtx, node_scope};
use crate::engine::failure::Failure;
use crate::model::ToolCall;

pub use kindgi_core::ports::{CheckError, CheckRequest, GuardrailChecks};

/// A call of this turn that ran, as a guardrail's check sees it (`RunTrace.toolCalls` and
/// `toolResults`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RanCall {
    pub id: String,
    pub tool_id: String,
    pub arguments: Value,
    /// The result the model got (JSON when the content parses, else the string).
    pub output: Value,
    /// RFC 3339.
    pub at: String,
}

impl RanCall {
    pub(crate) fn new(call: &ToolCall, content: &str) -> RanCall {
        RanCall {
            id: call.id.clone(),
            tool_id: call.name.clone(),
            arguments: call.arguments.clone(),
            output: serde_json::from_str(content)
                .unwrap_or_else(|_| Value::String(content.to_owned())),
            at: crate::record::format_millis(crate::record::now_millis()),
        }
    }
}

/// The guardrails that apply to one turn, resolved when it starts.
#[derive(Debug, Default)]
pub(crate) struct TurnGuardrails {
    after_turn: Vec<Arc<GuardrailSpec>>,
    before_tool: Vec<Arc<GuardrailSpec>>,
    /// The agent step's node and the scope it runs in (where verdicts are recorded).
    node_id: Option<String>,
    scope: String,
}

impl TurnGuardrails {
    /// Resolves the agent's `guardrails[]` (an unknown id fails the turn
    /// `unresolved-guardrail`).
    pub(crate) async fn resolve(ctx: &RunCtx, agent: &AgentSpec) -> Result<Self, Failure> {
        let mut found = Vec::with_capacity(agent.guardrails.len());
        let mut missing = Vec::new();
        for id in &agent.guardrails {
            match ctx
                .shared
                .definitions
                .guardrail(&ctx.run.tenant_id, id)
                .await
                .map_err(|e| Failure::fatal(e.to_string()))?
            {
                Some(g) => found.push(g),
                None => missing.push(id.as_str()),
            }
        }
        if !missing.is_empty() {
            return Err(Failure::fatal(format!(
                "unresolved-guardrail: Agent \"{}\" references guardrails not in the registry: {}",
                agent.id,
                missing.join(", ")
            )));
        }
        let (before_tool, after_turn) = found
            .into_iter()
            .partition(|g| g.stage == Stage::BeforeTool);
        Ok(TurnGuardrails {
            after_turn,
            before_tool,
            node_id: None,
            scope: String::new(),
        })
    }

    /// Where the step runs: its node and scope (verdicts are recorded under the node's
    /// scope, violations journaled on the node).
    pub(crate) fn at(mut self, node_id: &str, scope: &str) -> Self {
        self.node_id = Some(node_id.to_owned());
        self.scope = scope.to_owned();
        self
    }

    fn value_scope(&self) -> String {
        match &self.node_id {
            Some(n) => node_scope(&self.scope, n),
            None => self.scope.clone(),
        }
    }

    /// Whether a before-tool guardrail judges calls of `tool_id` (such a call waits for the
    /// calls before it).
    pub(crate) fn judges(&self, tool_id: &str) -> bool {
        self.before_tool.iter().any(|g| g.judges_tool(tool_id))
    }

    /// The before-tool verdict on `call`, given the calls that ran: `Some(content)` is the
    /// refusal the model gets instead of the call's result (the call does not run).
    pub(crate) async fn before_tool(
        &self,
        ctx: &RunCtx,
        agent: &AgentSpec,
        ran: &[RanCall],
        call: &ToolCall,
    ) -> Result<Option<String>, Failure> {
        let judging: Vec<Arc<GuardrailSpec>> = self
            .before_tool
            .iter()
            .filter(|g| g.judges_tool(&call.name))
            .cloned()
            .collect();
        if judging.is_empty() {
            return Ok(None);
        }
        let key = format!("before-tool:{}:{}", call.id, call.name);
        let recorded = ctx
            .recorded(&self.value_scope(), &key, async {
                let trace = trace::before_tool(ctx, agent, ran, call);
                let outcomes = engine::evaluate_all(ctx, &judging, &agent.id, &trace).await;
                // A check cut short by the run's stop is no verdict: nothing is recorded.
                if ctx.cancel.is_cancelled() {
                    return Err(ctx.stop_failure());
                }
                self.journal(ctx, "before-tool", Some(&call.id), &outcomes)
                    .await?;
                let verdict = engine::categorize(&outcomes);
                let refusal = verdict.first_block().map(|(id, reason)| {
                    json!({
                        "status": "refused",
                        "guardrailId": id,
                        "reason": reason,
                        "message": format!(
                            "Call blocked by guardrail '{id}': the tool was not run. Don't retry it with the same arguments."
                        ),
                    })
                    .to_string()
                });
                Ok(json!({"outcomes": outcomes, "refusal": refusal}))
            })
            .await?;
        Ok(recorded
            .get("refusal")
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    /// The after-turn verdict on the final `text`: the violations that did not block
    /// (`{guardrailId, action, severity, result}`), or the failure that blocks the turn
    /// (`guardrail-violation: Turn blocked by …`).
    pub(crate) async fn after_turn(
        &self,
        ctx: &RunCtx,
        agent: &AgentSpec,
        text: &str,
        ran: &[RanCall],
    ) -> Result<Vec<Value>, Failure> {
        if self.after_turn.is_empty() {
            return Ok(Vec::new());
        }
        let recorded = ctx
            .recorded(&self.value_scope(), "after-turn-guardrails", async {
                let trace = trace::after_turn(ctx, agent, ran, text);
                let outcomes = engine::evaluate_all(ctx, &self.after_turn, &agent.id, &trace).await;
                if ctx.cancel.is_cancelled() {
                    return Err(ctx.stop_failure());
                }
                self.journal(ctx, "after-turn", None, &outcomes).await?;
                Ok(Value::Array(outcomes))
            })
            .await?;
        let outcomes = recorded.as_array().map(Vec::as_slice).unwrap_or_default();
        let verdict = engine::categorize(outcomes);
        if let Some(message) = verdict.blocked_message() {
            return Err(Failure::fatal(format!("guardrail-violation: {message}")));
        }
        Ok(verdict.non_blocking())
    }

    async fn journal(
        &self,
        ctx: &RunCtx,
        stage: &str,
        call_id: Option<&str>,
        outcomes: &[Value],
    ) -> Result<(), Failure> {
        engine::journal_violations(
            ctx,
            self.node_id.as_deref(),
            &self.scope,
            stage,
            call_id,
            outcomes,
        )
        .await
        .map_err(|e| {
            Failure::fatal(format!(
                "journal-unavailable: the run's journal could not be written: {e}"
            ))
        })
    }
}
