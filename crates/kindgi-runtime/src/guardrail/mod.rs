//! Guardrails of an agent turn (runtime.md §7, seed 004): after-turn guardrails judge the
//! final answer before it is kept; before-tool guardrails judge a call before it starts.
//!
//! SCAFFOLD: no guardrail applies yet; the guardrails work fills these in.

use serde_json::Value;

use crate::catalogue::AgentSpec;
use crate::executor::{Failure, RunCtx};
use crate::model::ToolCall;

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
pub(crate) struct TurnGuardrails {}

impl TurnGuardrails {
    /// Resolves the agent's `guardrails[]` (an unknown id fails the turn
    /// `unresolved-guardrail`).
    pub(crate) async fn resolve(ctx: &RunCtx, agent: &AgentSpec) -> Result<Self, Failure> {
        let _ = (ctx, agent);
        Ok(TurnGuardrails {})
    }

    /// Whether a before-tool guardrail judges calls of `tool_id` (such a call waits for the
    /// calls before it).
    pub(crate) fn judges(&self, tool_id: &str) -> bool {
        let _ = tool_id;
        false
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
        let _ = (ctx, agent, ran, call);
        Ok(None)
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
        let _ = (ctx, agent, text, ran);
        Ok(Vec::new())
    }
}
