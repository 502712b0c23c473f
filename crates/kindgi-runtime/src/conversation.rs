//! The seam between an agent turn and its conversation (platform-api.md §11): a turn reads
//! the conversation's earlier messages as its history and, when it has its answer, appends
//! what it said and what its tools answered, so the next turn reads them.
//!
//! [`ConversationLog`] is what a runtime is given ([`crate::RuntimeBuilder::conversations`]);
//! [`DatabaseConversationLog`] keeps conversations in kindgi-store's `conversations` tables,
//! the ones `/v1/conversations` serves, and is what [`crate::Runtime::with_database`] plugs
//! in. Without a log (an in-memory runtime) a turn has no history and keeps nothing.
//!
//! In the store a model message becomes: user → `user`; the model's answer → `agent` (its
//! text, or `{text, toolCalls}` when it asked for tools); a tool result → `tool` with
//! `toolCall {toolId, invocationId}` and the content exactly as the model read it (an
//! outside-data result keeps its marking).

use async_trait::async_trait;
use kindgi_store::conversations::{
    ConversationError, ConversationStore, Message as StoredMessage, NewConversation, NewMessage,
    Role as StoredRole, ToolCallRef,
};
use serde_json::{Value, json};
use std::collections::HashMap;

use crate::model::{Message, Role, ToolCall};

pub use kindgi_core::StorageError;
pub use kindgi_core::conversation::{TurnOpening, UNTITLED};
pub use kindgi_core::ports::ConversationLog;

/// A conversation log's error: core's one [`StorageError`] (the old name, kept for callers).
pub type ConversationLogError = StorageError;

/// [`ConversationLog`] over kindgi-store's conversations (SQLite or PostgreSQL).
#[derive(Debug, Clone)]
pub struct DatabaseConversationLog {
    store: ConversationStore,
}

impl DatabaseConversationLog {
    pub fn new(db: kindgi_store::Database) -> Self {
        DatabaseConversationLog {
            store: ConversationStore::new(db),
        }
    }
}

/// What a failed log operation says of its conversation, the store's error as its source.
#[derive(Debug, thiserror::Error)]
#[error("Conversation \"{conversation_id}\": could not {what}: {source}")]
struct LogFailure {
    conversation_id: String,
    what: &'static str,
    #[source]
    source: kindgi_core::BoxError,
}

fn log_error<E: Into<kindgi_core::BoxError>>(
    op: &'static str,
    conversation_id: &str,
    what: &'static str,
) -> impl FnOnce(E) -> StorageError {
    move |source| {
        StorageError::backend(
            op,
            LogFailure {
                conversation_id: conversation_id.to_owned(),
                what,
                source: source.into(),
            },
        )
    }
}

#[async_trait]
impl ConversationLog for DatabaseConversationLog {
    async fn open(&self, tenant: &str, id: &str, opening: TurnOpening) -> Result<(), StorageError> {
        let new = NewConversation {
            agent_id: opening.agent_id,
            agent_version: opening.agent_version,
            title: UNTITLED.to_owned(),
            project_id: opening.project_id,
            scope: json!({}),
            ..NewConversation::default()
        };
        let first = NewMessage {
            role: StoredRole::User,
            content: Value::String(opening.user_message),
            tool_call: None,
            actor: None,
        };
        self.store
            .open_for_turn(tenant, id, new, first)
            .await
            .map(drop)
            .map_err(log_error("conversations.open", id, "open it"))
    }

    async fn history(
        &self,
        tenant: &str,
        conversation_id: &str,
        limit: usize,
    ) -> Result<Vec<Message>, StorageError> {
        match self
            .store
            .recent_messages(tenant, conversation_id, limit)
            .await
        {
            Ok(stored) => Ok(stored.iter().filter_map(from_stored).collect()),
            // A turn whose conversation is gone (unregistered) reads no history.
            Err(ConversationError::NotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(log_error(
                "conversations.history",
                conversation_id,
                "read its history",
            )(e)),
        }
    }

    async fn append(
        &self,
        tenant: &str,
        conversation_id: &str,
        messages: &[Message],
    ) -> Result<(), StorageError> {
        let rows = to_stored(messages);
        if rows.is_empty() {
            return Ok(());
        }
        match self
            .store
            .append_messages(tenant, conversation_id, &rows)
            .await
        {
            Ok(_) | Err(ConversationError::NotFound { .. }) => Ok(()),
            Err(e) => Err(log_error(
                "conversations.append",
                conversation_id,
                "append the turn's messages",
            )(e)),
        }
    }

    async fn turn_count(
        &self,
        tenant: &str,
        conversation_id: &str,
    ) -> Result<Option<u64>, StorageError> {
        match self.store.get(tenant, conversation_id).await {
            Ok(c) => Ok(c.map(|c| u64::try_from(c.turn_count).unwrap_or(0))),
            Err(e) => Err(log_error(
                "conversations.turn_count",
                conversation_id,
                "read its turn count",
            )(e)),
        }
    }
}

/// Model messages as stored; a tool result names the tool of the call it answers.
pub fn to_stored(messages: &[Message]) -> Vec<NewMessage> {
    let mut tool_of: HashMap<&str, &str> = HashMap::new();
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let (role, content, tool_call) = match m.role {
            Role::System => (StoredRole::System, json!(m.content), None),
            Role::User => (StoredRole::User, json!(m.content), None),
            Role::Assistant if m.tool_calls.is_empty() => {
                (StoredRole::Agent, json!(m.content), None)
            }
            Role::Assistant => {
                for c in &m.tool_calls {
                    tool_of.insert(c.id.as_str(), c.name.as_str());
                }
                let content = json!({"text": m.content, "toolCalls": m.tool_calls});
                (StoredRole::Agent, content, None)
            }
            Role::Tool => {
                let invocation = m.tool_call_id.clone().unwrap_or_default();
                let tool_id = tool_of.get(invocation.as_str()).copied().unwrap_or("");
                let call = ToolCallRef {
                    tool_id: tool_id.to_owned(),
                    invocation_id: invocation,
                };
                (StoredRole::Tool, json!(m.content), Some(call))
            }
        };
        out.push(NewMessage {
            role,
            content,
            tool_call,
            actor: None,
        });
    }
    out
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A stored message as the model reads it (`None`: a tool message answering no call).
fn from_stored(m: &StoredMessage) -> Option<Message> {
    Some(match m.role {
        StoredRole::User => Message::user(text_of(&m.content)),
        StoredRole::System => Message::system(text_of(&m.content)),
        StoredRole::Tool => {
            let call = m.tool_call.as_ref()?;
            Message::tool(call.invocation_id.clone(), text_of(&m.content))
        }
        StoredRole::Agent => {
            let calls = m
                .content
                .get("toolCalls")
                .cloned()
                .and_then(|c| serde_json::from_value::<Vec<ToolCall>>(c).ok());
            match (calls, m.content.get("text")) {
                (Some(calls), Some(text)) => Message::assistant(text_of(text), calls),
                _ => Message::assistant(text_of(&m.content), Vec::new()),
            }
        }
    })
}

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
