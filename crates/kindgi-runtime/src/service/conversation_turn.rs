//! An agent run naming `input.conversationId` is the next turn of that conversation
//! (platform-api.md §3.1, §11). Before the turn starts, the runtime does the conversation's
//! bookkeeping through its [`ConversationLog`]: the conversation must be the tenant's and
//! open, and with that agent; an omitted agent version is the conversation's; the user's
//! message is appended and the turn counted. Without a log (an in-memory runtime) there is
//! no conversation to continue and the turn runs as asked.

use serde_json::Value;

use kindgi_core::conversation::ContinueError;
use kindgi_core::ports::ConversationLog;

use super::Runtime;

/// Why an agent turn cannot continue the conversation it names (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum ConversationTurnError {
    /// Not the tenant's, not open, or the log failed.
    #[error(transparent)]
    Conversation(#[from] ContinueError),
    /// The conversation is with another agent.
    #[error("Conversation \"{id}\" is with agent \"{agent_id}\", not \"{asked}\"")]
    OtherAgent {
        id: String,
        /// The conversation's agent.
        agent_id: String,
        /// The agent the run asked for.
        asked: String,
    },
}

impl Runtime {
    /// The bookkeeping of an agent turn over `input` before it starts: when `input` names a
    /// `conversationId` (and the runtime has a log), checks it, appends `input.userMessage`
    /// as the user's message and counts the turn. Answers the agent version the turn runs:
    /// `version` when given, else the conversation's.
    pub async fn begin_conversation_turn(
        &self,
        tenant: &str,
        agent_id: &str,
        version: Option<String>,
        input: &Value,
    ) -> Result<Option<String>, ConversationTurnError> {
        let Some(id) = input.get("conversationId").and_then(Value::as_str) else {
            return Ok(version);
        };
        let log: Option<&dyn ConversationLog> = self.shared.conversations.as_deref();
        let Some(log) = log else {
            return Ok(version);
        };
        let conversation = log.continued(tenant, id).await?;
        if conversation.agent_id != agent_id {
            return Err(ConversationTurnError::OtherAgent {
                id: id.to_owned(),
                agent_id: conversation.agent_id,
                asked: agent_id.to_owned(),
            });
        }
        let version = version.or(Some(conversation.agent_version));
        let message = input.get("userMessage").cloned().unwrap_or(Value::Null);
        log.begin_turn(tenant, id, &message).await?;
        Ok(version)
    }
}
