//! The seam between an agent turn and its conversation (platform-api.md §11): a turn reads
//! the conversation's earlier messages as its history and, when it has its answer, appends
//! what it said and what its tools answered, so the next turn reads them.
//!
//! [`ConversationLog`] (core's port) is what a runtime is given
//! ([`crate::RuntimeBuilder::conversations`]); kindgi-store's `ConversationStore` implements
//! it over the `conversations` tables `/v1/conversations` serves, and is what the host's
//! `Runtime::over(db.ports())` plugs in. Without a log (an in-memory runtime) a turn
//! has no history and keeps nothing. What is left here is the runtime's own rule for a
//! history read back: [`well_formed`].

use crate::model::{Message, Role, ToolCall};

pub use kindgi_core::StorageError;
pub use kindgi_core::conversation::{TurnOpening, UNTITLED};
pub use kindgi_core::ports::ConversationLog;

/// A conversation log's error: core's one [`StorageError`] (the old name, kept for callers).
pub type ConversationLogError = StorageError;

/// History the model can read: every tool result answers a call of the model message just
/// before it, and every call there has its result (a history cut at its limit can start in
/// the middle of a turn).
pub fn well_formed(history: Vec<Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(history.len());
    let mut i = 0;
    while i < history.len() {
        let m = &history[i];
        match m.role {
            Role::Tool => i += 1,
            Role::Assistant if !m.tool_calls.is_empty() => {
                let mut j = i + 1;
                while j < history.len() && history[j].role == Role::Tool {
                    j += 1;
                }
                let results = &history[i + 1..j];
                let answered = |id: &str| {
                    results
                        .iter()
                        .any(|r| r.tool_call_id.as_deref() == Some(id))
                };
                let calls: Vec<ToolCall> = m
                    .tool_calls
                    .iter()
                    .filter(|c| answered(&c.id))
                    .cloned()
                    .collect();
                if calls.is_empty() {
                    if !m.content.is_empty() {
                        out.push(Message::assistant(m.content.clone(), Vec::new()));
                    }
                } else {
                    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
                    out.push(Message::assistant(m.content.clone(), calls.clone()));
                    let mut seen = std::collections::HashSet::new();
                    for r in results {
                        if let Some(id) = r.tool_call_id.as_deref()
                            && ids.contains(&id)
                            && seen.insert(id.to_owned())
                        {
                            out.push(r.clone());
                        }
                    }
                }
                i = j;
            }
            _ => {
                out.push(m.clone());
                i += 1;
            }
        }
    }
    out
}
