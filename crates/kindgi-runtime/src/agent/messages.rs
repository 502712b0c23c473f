//! What the model is told in an agent turn: the system prompt, the conversation's history,
//! the user's message, and each tool result (runtime.md §3, §6).
//!
//! SCAFFOLD: today's behaviour (system prompt + user message; results as-is). The outside
//! data work (seed 000 `resultIsOutsideData`) and the conversation history fill these in.

use serde_json::Value;

use super::user_message;
use crate::catalogue::AgentSpec;
use crate::executor::{Failure, RunCtx};
use crate::model::Message;

/// The messages a turn starts with.
pub(super) async fn initial_messages(
    ctx: &RunCtx,
    agent: &AgentSpec,
    input: &Value,
) -> Result<Vec<Message>, Failure> {
    let _ = ctx;
    let mut messages = Vec::new();
    if let Some(sys) = &agent.instructions {
        messages.push(Message::system(sys.clone()));
    }
    messages.push(Message::user(user_message(input)));
    Ok(messages)
}

/// A tool result as the model reads it; `outside`: the tool's results are outside data.
pub(super) fn tool_message(call_id: &str, content: String, outside: bool) -> Message {
    let _ = outside;
    Message::tool(call_id.to_owned(), content)
}

/// Called once when the turn has its final answer (after the guardrails passed).
pub(super) async fn remember_turn(
    ctx: &RunCtx,
    agent: &AgentSpec,
    messages: &[Message],
    reply: &str,
) -> Result<(), Failure> {
    let _ = (ctx, agent, messages, reply);
    Ok(())
}
