//! Conversations (platform-api.md §11), the one family of their records: a [`Conversation`]
//! (`OA:Conversation`), what opening one takes ([`NewConversation`]), a page request
//! ([`ConversationQuery`]) and why a conversation call was refused ([`ConversationError`]);
//! and one conversation message, as a model reads it and a conversation log keeps it: who
//! wrote it ([`Role`]), what it says, the tool calls it asks for ([`ToolCall`]) and the call
//! a tool result answers. The model providers send these; the
//! [`crate::ports::ConversationLog`] stores them. [`ConversationMessage`] is a message as the
//! log keeps and serves it (`OA:ConversationMessage`): its sequence, the JSON content as
//! written, the tool call it answers by tool and invocation, its actor and time.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::StorageError;

/// A conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub id: String,
    pub tenant_id: String,
    pub agent_id: String,
    pub agent_version: String,
    pub title: String,
    pub participant_id: Option<String>,
    pub project_id: Option<String>,
    pub opened_by: Option<String>,
    /// Free-form scope object.
    pub scope: Value,
    pub metadata: Option<Value>,
    /// Unix milliseconds, as the other times here.
    pub opened_at: i64,
    pub closed_at: Option<i64>,
    pub unregistered_at: Option<i64>,
    pub turn_count: i64,
    pub last_message_at: Option<i64>,
}

/// What opening a conversation needs (the store picks the id and the time).
#[derive(Debug, Clone, Default)]
pub struct NewConversation {
    pub agent_id: String,
    pub agent_version: String,
    pub title: String,
    pub participant_id: Option<String>,
    pub project_id: Option<String>,
    pub opened_by: Option<String>,
    pub scope: Value,
    pub metadata: Option<Value>,
}

/// A page of a tenant's conversations, newest first (`opened_at desc, id desc`).
#[derive(Debug, Clone, Default)]
pub struct ConversationQuery {
    pub agent_id: Option<String>,
    /// `Some(true)`: open only; `Some(false)`: closed only.
    pub open: Option<bool>,
    pub project_id: Option<String>,
    /// Start after (older than) this `(opened_at, id)` position.
    pub before: Option<(i64, String)>,
    pub limit: usize,
}

/// A conversation-domain failure; [`ConversationError::code`] and
/// [`ConversationError::status`] are its Platform API answer.
#[derive(Debug, thiserror::Error)]
pub enum ConversationError {
    #[error("No conversation with id \"{id}\"")]
    NotFound { id: String },
    #[error("Conversation \"{id}\" is closed")]
    Closed { id: String },
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl ConversationError {
    /// The wire error code (`conversation-not-found`, `conversation-closed`, or
    /// `internal-server-error` for a storage failure).
    pub fn code(&self) -> &'static str {
        match self {
            ConversationError::NotFound { .. } => "conversation-not-found",
            ConversationError::Closed { .. } => "conversation-closed",
            ConversationError::Storage(_) => "internal-server-error",
        }
    }

    /// The HTTP status: 404, 409 or 500.
    pub fn status(&self) -> u16 {
        match self {
            ConversationError::NotFound { .. } => 404,
            ConversationError::Closed { .. } => 409,
            ConversationError::Storage(_) => 500,
        }
    }

    /// The envelope's `details`: `{conversationId}` (none for storage failures).
    pub fn details(&self) -> Option<Value> {
        match self {
            ConversationError::NotFound { id } | ConversationError::Closed { id } => {
                Some(serde_json::json!({ "conversationId": id }))
            }
            ConversationError::Storage(_) => None,
        }
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    /// The role's name in a conversation log (platform-api.md §11): the model's answer is
    /// `agent` there, the other roles keep their own names.
    pub fn conversation_name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "agent",
            Role::Tool => "tool",
            Role::System => "system",
        }
    }

    /// The role a conversation log's name stands for (`None`: no role of this name).
    pub fn from_conversation_name(name: &str) -> Option<Role> {
        match name {
            "user" => Some(Role::User),
            "agent" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            "system" => Some(Role::System),
            _ => None,
        }
    }
}

/// A tool call the model asked for. `name` is the Kindgi tool id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// One conversation message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `role: tool`: the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
            tool_calls,
            tool_call_id: None,
        }
    }
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
}

/// The title of a conversation a turn opened (the API's default too).
pub const UNTITLED: &str = "Untitled conversation";

/// What opening a conversation for a turn that named none records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOpening {
    pub agent_id: String,
    pub agent_version: String,
    /// The run's project.
    pub project_id: Option<String>,
    /// The turn's user message: the conversation's first message.
    pub user_message: String,
}

/// The conversation a turn that names one continues: whom it is with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuedConversation {
    pub agent_id: String,
    pub agent_version: String,
}

/// Why a turn cannot continue the conversation it names.
#[derive(Debug, thiserror::Error)]
pub enum ContinueError {
    /// Not the tenant's, or not there.
    #[error("No conversation with id \"{id}\"")]
    NotFound { id: String },
    #[error("Conversation \"{id}\" is closed")]
    Closed { id: String },
    #[error(transparent)]
    Storage(#[from] crate::error::StorageError),
}

/// The tool call a logged `tool` message answers: the tool and the invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRef {
    pub tool_id: String,
    pub invocation_id: String,
}

/// A message as a conversation log keeps it (`OA:ConversationMessage`). An agent turn's
/// messages are kept so: the model's answer is its text, or `{text, toolCalls}` when it asked
/// for tools; a tool result is its content as the model read it, with [`ToolCallRef`].
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationMessage {
    /// 0, 1, 2, … per conversation.
    pub sequence: i64,
    pub role: Role,
    /// A string, or structured content.
    pub content: Value,
    pub tool_call: Option<ToolCallRef>,
    pub actor: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
}
