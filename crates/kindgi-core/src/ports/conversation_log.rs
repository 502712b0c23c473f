//! The conversation-log port (platform-api.md §11): an agent turn reads the conversation's
//! earlier messages as its history and, when it has its answer, appends what it said and
//! what its tools answered, so the next turn reads them. A turn that names a conversation
//! first checks it ([`ConversationLog::continued`]) and records its start
//! ([`ConversationLog::begin_turn`]). Without a log (an in-memory
//! runtime) a turn has no history and keeps nothing. A failure fails the turn
//! `persistence-error`.

use async_trait::async_trait;

use serde_json::Value;

use crate::conversation::{ContinueError, ContinuedConversation, Message, TurnOpening};
use crate::error::StorageError;

/// Where agent turns keep their conversations.
#[async_trait]
pub trait ConversationLog: Send + Sync + std::fmt::Debug {
    /// Opens conversation `id` for a turn that named none: its first message is the user's
    /// and it counts one turn. Opening an `id` that exists changes nothing.
    async fn open(&self, tenant: &str, id: &str, opening: TurnOpening) -> Result<(), StorageError>;

    /// The conversation `id` a turn names (`input.conversationId`), when it is the tenant's
    /// and open.
    async fn continued(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<ContinuedConversation, ContinueError>;

    /// A turn of conversation `id` begins: appends the user's message (as the run was given
    /// it) and counts the turn.
    async fn begin_turn(
        &self,
        tenant: &str,
        id: &str,
        user_message: &Value,
    ) -> Result<(), ContinueError>;

    /// The newest `limit` messages of the conversation, oldest first.
    async fn history(
        &self,
        tenant: &str,
        conversation_id: &str,
        limit: usize,
    ) -> Result<Vec<Message>, StorageError>;

    /// Appends `messages` (in order, all or none).
    async fn append(
        &self,
        tenant: &str,
        conversation_id: &str,
        messages: &[Message],
    ) -> Result<(), StorageError>;

    /// How many turns the conversation counts, the running one included (`None`: not
    /// known). The session approval gate (`hitl.afterTurns`) reads it.
    async fn turn_count(
        &self,
        tenant: &str,
        conversation_id: &str,
    ) -> Result<Option<u64>, StorageError> {
        let _ = (tenant, conversation_id);
        Ok(None)
    }
}
