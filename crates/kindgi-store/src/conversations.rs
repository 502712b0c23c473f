//! Conversations and their messages (platform-api.md §11): `conversations` (one row per
//! conversation: its agent pinned at open, status by `closed_at`, a turn count and the next
//! message sequence) and `conversation_messages` (append-only, keyed by
//! `(conversation_id, sequence)`).
//!
//! The API opens, lists, reads and closes conversations; for a turn it checks the
//! conversation takes turns ([`ConversationStore::check_open`]),
//! [`appends`](ConversationStore::append_message) the user's message and
//! [`bumps`](ConversationStore::bump_turn) the turn count. The runtime, running the turn,
//! reaches the store through core's [`ConversationLog`] port, which [`ConversationStore`]
//! implements: it opens the conversation of a turn that named none (its first message and
//! one turn in one transaction), reads the [`recent messages`](ConversationStore::recent_messages)
//! as history and, at the turn's end, appends its replies and tool results in one
//! transaction. A message's sequence is taken from the conversation row in the same
//! transaction as the insert, so concurrent appends get distinct, gap-free sequences on both
//! databases. Every statement is written once for both ([`on_pool!`](crate::on_pool)); JSON
//! is TEXT and times are Unix milliseconds.
//!
//! As the log keeps a model message: user → `user`; the model's answer → `agent` (its text,
//! or `{text, toolCalls}` when it asked for tools); a tool result → `tool` with
//! `toolCall {toolId, invocationId}` and the content exactly as the model read it (an
//! outside-data result keeps its marking). Rows are core's records: [`Conversation`],
//! [`ConversationMessage`] and [`Role`]; refusals are core's [`ConversationError`].

use std::collections::HashMap;

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::conversation::{
    ContinueError, ContinuedConversation, Conversation, ConversationError, ConversationMessage,
    ConversationQuery, Message, NewConversation, Role, ToolCall, ToolCallRef, TurnOpening,
    UNTITLED,
};
use kindgi_core::ports::ConversationLog;
use serde_json::{Value, json};
use sqlx::Row;

use crate::{Database, StoreError, now_millis};

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS conversations (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        agent_version TEXT NOT NULL,
        title TEXT NOT NULL,
        participant_id TEXT,
        project_id TEXT,
        opened_by TEXT,
        scope TEXT NOT NULL,
        metadata TEXT,
        opened_at BIGINT NOT NULL,
        closed_at BIGINT,
        unregistered_at BIGINT,
        turn_count BIGINT NOT NULL DEFAULT 0,
        last_message_at BIGINT,
        next_sequence BIGINT NOT NULL DEFAULT 0
    )",
    "CREATE INDEX IF NOT EXISTS conversations_tenant_opened_idx ON conversations (tenant_id, opened_at, id)",
    "CREATE TABLE IF NOT EXISTS conversation_messages (
        conversation_id TEXT NOT NULL,
        sequence BIGINT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_call TEXT,
        actor TEXT,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (conversation_id, sequence)
    )",
];

/// Creates the tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("conversations", SCHEMA, SCHEMA).await
}

/// A message to insert (the store picks its sequence and time).
#[derive(Debug, Clone, PartialEq)]
struct NewMessage {
    role: Role,
    /// A string, or structured content.
    content: Value,
    tool_call: Option<ToolCallRef>,
    actor: Option<String>,
}

impl NewMessage {
    /// The `content` and `tool_call` columns as stored (JSON text).
    fn columns(&self) -> (String, Option<String>) {
        let tool_call = self.tool_call.as_ref().map(|t| {
            serde_json::json!({ "toolId": t.tool_id, "invocationId": t.invocation_id }).to_string()
        });
        (self.content.to_string(), tool_call)
    }
}

/// The store over a migrated [`Database`].
#[derive(Debug, Clone)]
pub struct ConversationStore {
    db: Database,
}

const COLUMNS: &str = "id, tenant_id, agent_id, agent_version, title, participant_id, project_id, opened_by, scope, metadata, opened_at, closed_at, unregistered_at, turn_count, last_message_at";

fn corrupt(what: String, e: serde_json::Error) -> StoreError {
    StoreError::Corrupt {
        what,
        reason: e.to_string(),
    }
}

macro_rules! conversation_from_row {
    ($row:expr) => {{
        let row = $row;
        let d = |source: sqlx::Error| StoreError::Query {
            op: "conversations.decode",
            source,
        };
        let id: String = row.try_get("id").map_err(&d)?;
        let scope: String = row.try_get("scope").map_err(&d)?;
        let metadata: Option<String> = row.try_get("metadata").map_err(&d)?;
        Conversation {
            scope: serde_json::from_str(&scope)
                .map_err(|e| corrupt(format!("conversation {id} scope"), e))?,
            metadata: metadata
                .map(|m| serde_json::from_str(&m))
                .transpose()
                .map_err(|e| corrupt(format!("conversation {id} metadata"), e))?,
            tenant_id: row.try_get("tenant_id").map_err(&d)?,
            agent_id: row.try_get("agent_id").map_err(&d)?,
            agent_version: row.try_get("agent_version").map_err(&d)?,
            title: row.try_get("title").map_err(&d)?,
            participant_id: row.try_get("participant_id").map_err(&d)?,
            project_id: row.try_get("project_id").map_err(&d)?,
            opened_by: row.try_get("opened_by").map_err(&d)?,
            opened_at: row.try_get("opened_at").map_err(&d)?,
            closed_at: row.try_get("closed_at").map_err(&d)?,
            unregistered_at: row.try_get("unregistered_at").map_err(&d)?,
            turn_count: row.try_get("turn_count").map_err(&d)?,
            last_message_at: row.try_get("last_message_at").map_err(&d)?,
            id,
        }
    }};
}

macro_rules! message_from_row {
    ($row:expr, $conversation:expr) => {{
        let row = $row;
        let d = |source: sqlx::Error| StoreError::Query {
            op: "conversation_messages.decode",
            source,
        };
        let sequence: i64 = row.try_get("sequence").map_err(&d)?;
        let what = |part: &str| format!("conversation {} message {sequence} {part}", $conversation);
        let role: String = row.try_get("role").map_err(&d)?;
        let content: String = row.try_get("content").map_err(&d)?;
        let tool_call: Option<String> = row.try_get("tool_call").map_err(&d)?;
        let tool_call = match tool_call {
            None => None,
            Some(text) => {
                let v: Value =
                    serde_json::from_str(&text).map_err(|e| corrupt(what("toolCall"), e))?;
                Some(ToolCallRef {
                    tool_id: v
                        .get("toolId")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    invocation_id: v
                        .get("invocationId")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                })
            }
        };
        ConversationMessage {
            sequence,
            role: Role::from_conversation_name(&role).ok_or_else(|| StoreError::Corrupt {
                what: what("role"),
                reason: format!("unknown role {role:?}"),
            })?,
            content: serde_json::from_str(&content).map_err(|e| corrupt(what("content"), e))?,
            tool_call,
            actor: row.try_get("actor").map_err(&d)?,
            created_at: row.try_get("created_at").map_err(&d)?,
        }
    }};
}

impl ConversationStore {
    pub fn new(db: Database) -> ConversationStore {
        ConversationStore { db }
    }

    /// Opens a conversation for `tenant` (a new UUID, opened now).
    pub async fn open(
        &self,
        tenant: &str,
        new: NewConversation,
    ) -> Result<Conversation, StoreError> {
        let conversation = Conversation {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: tenant.to_owned(),
            agent_id: new.agent_id,
            agent_version: new.agent_version,
            title: new.title,
            participant_id: new.participant_id,
            project_id: new.project_id,
            opened_by: new.opened_by,
            scope: new.scope,
            metadata: new.metadata,
            opened_at: now_millis(),
            closed_at: None,
            unregistered_at: None,
            turn_count: 0,
            last_message_at: None,
        };
        let scope = conversation.scope.to_string();
        let metadata = conversation.metadata.as_ref().map(Value::to_string);
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO conversations (id, tenant_id, agent_id, agent_version, title, participant_id, project_id, opened_by, scope, metadata, opened_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind(&conversation.id)
            .bind(tenant)
            .bind(&conversation.agent_id)
            .bind(&conversation.agent_version)
            .bind(&conversation.title)
            .bind(&conversation.participant_id)
            .bind(&conversation.project_id)
            .bind(&conversation.opened_by)
            .bind(&scope)
            .bind(&metadata)
            .bind(conversation.opened_at)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(StoreError::query("conversations.open"))?;
        Ok(conversation)
    }

    /// Opens conversation `id` for `tenant` as a turn that named none does: the turn's
    /// `first` message (the user's) at sequence 0 and one turn counted, in one transaction.
    /// Idempotent: when `id` exists already nothing changes and the answer is `false`.
    async fn open_for_turn(
        &self,
        tenant: &str,
        id: &str,
        new: NewConversation,
        first: NewMessage,
    ) -> Result<bool, StoreError> {
        let now = now_millis();
        let scope = new.scope.to_string();
        let metadata = new.metadata.as_ref().map(Value::to_string);
        let (content, tool_call) = first.columns();
        crate::on_pool!(self.db, write, |pool| {
            async {
                let mut tx = pool.begin().await?;
                let inserted = sqlx::query(
                    "INSERT INTO conversations (id, tenant_id, agent_id, agent_version, title, participant_id, project_id, opened_by, scope, metadata, opened_at, turn_count, last_message_at, next_sequence)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1, $11, 1)
                     ON CONFLICT (id) DO NOTHING",
                )
                .bind(id)
                .bind(tenant)
                .bind(&new.agent_id)
                .bind(&new.agent_version)
                .bind(&new.title)
                .bind(&new.participant_id)
                .bind(&new.project_id)
                .bind(&new.opened_by)
                .bind(&scope)
                .bind(&metadata)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                    == 1;
                if inserted {
                    sqlx::query(
                        "INSERT INTO conversation_messages (conversation_id, sequence, role, content, tool_call, actor, created_at)
                         VALUES ($1, 0, $2, $3, $4, $5, $6)",
                    )
                    .bind(id)
                    .bind(first.role.conversation_name())
                    .bind(&content)
                    .bind(&tool_call)
                    .bind(&first.actor)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok::<_, sqlx::Error>(inserted)
            }
            .await
        })
        .map_err(StoreError::query("conversations.open_for_turn"))
    }

    /// `tenant`'s conversation `id` (not unregistered).
    pub async fn get(&self, tenant: &str, id: &str) -> Result<Option<Conversation>, StoreError> {
        crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM conversations WHERE id = $1 AND tenant_id = $2 AND unregistered_at IS NULL"
            ))
            .bind(id)
            .bind(tenant)
            .fetch_optional(pool)
            .await
            .map_err(StoreError::query("conversations.get"))?;
            match row {
                None => Ok(None),
                Some(row) => Ok(Some(conversation_from_row!(&row))),
            }
        })
    }

    /// The conversation, or `NotFound`.
    pub async fn require(&self, tenant: &str, id: &str) -> Result<Conversation, ConversationError> {
        self.get(tenant, id)
            .await?
            .ok_or_else(|| ConversationError::NotFound { id: id.to_owned() })
    }

    /// For a turn: the conversation when it exists and is open; `NotFound` / `Closed` else.
    pub async fn check_open(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Conversation, ConversationError> {
        let conversation = self.require(tenant, id).await?;
        if conversation.closed_at.is_some() {
            return Err(ConversationError::Closed { id: id.to_owned() });
        }
        Ok(conversation)
    }

    /// A page of `tenant`'s conversations, newest first (`opened_at desc, id desc`).
    pub async fn list(
        &self,
        tenant: &str,
        filter: &ConversationQuery,
    ) -> Result<Vec<Conversation>, StoreError> {
        let mut sql = format!(
            "SELECT {COLUMNS} FROM conversations WHERE tenant_id = $1 AND unregistered_at IS NULL"
        );
        let mut n = 1;
        let mut next = || {
            n += 1;
            format!("${n}")
        };
        if filter.agent_id.is_some() {
            sql.push_str(&format!(" AND agent_id = {}", next()));
        }
        match filter.open {
            Some(true) => sql.push_str(" AND closed_at IS NULL"),
            Some(false) => sql.push_str(" AND closed_at IS NOT NULL"),
            None => {}
        }
        if filter.project_id.is_some() {
            sql.push_str(&format!(" AND project_id = {}", next()));
        }
        if filter.before.is_some() {
            let (a, b, c) = (next(), next(), next());
            sql.push_str(&format!(
                " AND (opened_at < {a} OR (opened_at = {b} AND id < {c}))"
            ));
        }
        let limit = next();
        sql.push_str(&format!(" ORDER BY opened_at DESC, id DESC LIMIT {limit}"));
        let limit = i64::try_from(filter.limit.max(1)).unwrap_or(i64::MAX);
        crate::on_pool!(self.db, read, |pool| {
            let mut q = sqlx::query(&sql).bind(tenant);
            if let Some(a) = &filter.agent_id {
                q = q.bind(a);
            }
            if let Some(p) = &filter.project_id {
                q = q.bind(p);
            }
            if let Some((at, id)) = &filter.before {
                q = q.bind(*at).bind(*at).bind(id);
            }
            let rows = q
                .bind(limit)
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("conversations.list"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in &rows {
                out.push(conversation_from_row!(row));
            }
            Ok(out)
        })
    }

    /// Closes the conversation (idempotent: an already closed one keeps its `closed_at`).
    pub async fn close(&self, tenant: &str, id: &str) -> Result<Conversation, ConversationError> {
        let now = now_millis();
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE conversations SET closed_at = $3
                 WHERE id = $1 AND tenant_id = $2 AND closed_at IS NULL AND unregistered_at IS NULL",
            )
            .bind(id)
            .bind(tenant)
            .bind(now)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(StoreError::query("conversations.close"))?;
        self.require(tenant, id).await
    }

    /// Counts one more turn.
    pub async fn bump_turn(&self, tenant: &str, id: &str) -> Result<i64, ConversationError> {
        let count: Option<i64> = crate::on_pool!(self.db, write, |pool| {
            sqlx::query_scalar(
                "UPDATE conversations SET turn_count = turn_count + 1
                 WHERE id = $1 AND tenant_id = $2 AND unregistered_at IS NULL
                 RETURNING turn_count",
            )
            .bind(id)
            .bind(tenant)
            .fetch_optional(pool)
            .await
        })
        .map_err(StoreError::query("conversations.bump_turn"))?;
        count.ok_or_else(|| ConversationError::NotFound { id: id.to_owned() })
    }

    /// Appends a message; returns it with its sequence (0, 1, 2, … per conversation).
    pub async fn append_message(
        &self,
        tenant: &str,
        id: &str,
        role: Role,
        content: &Value,
        tool_call: Option<&ToolCallRef>,
        actor: Option<&str>,
    ) -> Result<ConversationMessage, ConversationError> {
        let now = now_millis();
        let m = NewMessage {
            role,
            content: content.clone(),
            tool_call: tool_call.cloned(),
            actor: actor.map(str::to_owned),
        };
        let sequence = self
            .insert_messages(
                tenant,
                id,
                std::slice::from_ref(&m),
                now,
                "conversations.append_message",
            )
            .await?;
        Ok(ConversationMessage {
            sequence,
            role,
            content: m.content,
            tool_call: m.tool_call,
            actor: m.actor,
            created_at: now,
        })
    }

    /// Appends `messages` in order, in one transaction (a turn's messages land together or
    /// not at all); returns the first one's sequence.
    async fn append_messages(
        &self,
        tenant: &str,
        id: &str,
        messages: &[NewMessage],
    ) -> Result<i64, ConversationError> {
        self.insert_messages(
            tenant,
            id,
            messages,
            now_millis(),
            "conversations.append_messages",
        )
        .await
    }

    /// The one way messages are added: the conversation's sequence moved past them and
    /// their rows written, in one transaction; the first one's sequence.
    async fn insert_messages(
        &self,
        tenant: &str,
        id: &str,
        messages: &[NewMessage],
        now: i64,
        op: &'static str,
    ) -> Result<i64, ConversationError> {
        let count = i64::try_from(messages.len()).unwrap_or(i64::MAX);
        let rows: Vec<(String, Option<String>)> =
            messages.iter().map(NewMessage::columns).collect();
        let first: Option<i64> = crate::on_pool!(self.db, write, |pool| {
            async {
                let mut tx = pool.begin().await?;
                let next: Option<i64> = sqlx::query_scalar(
                    "UPDATE conversations SET next_sequence = next_sequence + $3, last_message_at = $4
                     WHERE id = $1 AND tenant_id = $2 AND unregistered_at IS NULL
                     RETURNING next_sequence",
                )
                .bind(id)
                .bind(tenant)
                .bind(count)
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?;
                let Some(next) = next else {
                    return Ok(None);
                };
                let first = next - count;
                for (offset, (m, (content, tool_call))) in messages.iter().zip(&rows).enumerate()
                {
                    sqlx::query(
                        "INSERT INTO conversation_messages (conversation_id, sequence, role, content, tool_call, actor, created_at)
                         VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    )
                    .bind(id)
                    .bind(first + i64::try_from(offset).unwrap_or(i64::MAX))
                    .bind(m.role.conversation_name())
                    .bind(content)
                    .bind(tool_call)
                    .bind(&m.actor)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok::<_, sqlx::Error>(Some(first))
            }
            .await
        })
        .map_err(StoreError::query(op))?;
        first.ok_or_else(|| ConversationError::NotFound { id: id.to_owned() })
    }

    /// The newest `limit` messages, ascending (what a turn reads as its history).
    pub async fn recent_messages(
        &self,
        tenant: &str,
        id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationMessage>, ConversationError> {
        self.require(tenant, id).await?;
        let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
        let out: Result<Vec<ConversationMessage>, StoreError> = crate::on_pool!(
            self.db,
            read,
            |pool| {
                let rows = sqlx::query(
                "SELECT sequence, role, content, tool_call, actor, created_at FROM conversation_messages
                 WHERE conversation_id = $1 ORDER BY sequence DESC LIMIT $2",
            )
            .bind(id)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("conversations.recent_messages"))?;
                let mut out = Vec::with_capacity(rows.len());
                for row in rows.iter().rev() {
                    out.push(message_from_row!(row, id));
                }
                Ok(out)
            }
        );
        Ok(out?)
    }

    /// Messages with `sequence >= from`, ascending, at most `limit`.
    pub async fn messages(
        &self,
        tenant: &str,
        id: &str,
        from: i64,
        limit: usize,
    ) -> Result<Vec<ConversationMessage>, ConversationError> {
        self.require(tenant, id).await?;
        let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
        let out: Result<Vec<ConversationMessage>, StoreError> = crate::on_pool!(
            self.db,
            read,
            |pool| {
                let rows = sqlx::query(
                "SELECT sequence, role, content, tool_call, actor, created_at FROM conversation_messages
                 WHERE conversation_id = $1 AND sequence >= $2 ORDER BY sequence ASC LIMIT $3",
            )
            .bind(id)
            .bind(from)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("conversations.messages"))?;
                let mut out = Vec::with_capacity(rows.len());
                for row in &rows {
                    out.push(message_from_row!(row, id));
                }
                Ok(out)
            }
        );
        Ok(out?)
    }

    /// The whole history, ascending (for the runtime to build a turn's context).
    pub async fn history(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Vec<ConversationMessage>, ConversationError> {
        self.messages(tenant, id, 0, MAX_HISTORY).await
    }
}

/// A store failure in a conversation call, as core's storage error it answers (named by
/// the failed statement's operation).
impl From<StoreError> for ConversationError {
    fn from(e: StoreError) -> Self {
        let op = match &e {
            StoreError::Query { op, .. } => op,
            _ => "conversations",
        };
        ConversationError::Storage(e.into_storage(op))
    }
}

/// The most messages [`ConversationStore::history`] reads.
pub const MAX_HISTORY: usize = 10_000;

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

/// A store refusal as the log port's (a storage failure logged as `what` of `op`).
fn continue_error(
    op: &'static str,
    conversation_id: &str,
    what: &'static str,
) -> impl FnOnce(ConversationError) -> ContinueError {
    move |e| match e {
        ConversationError::NotFound { id } => ContinueError::NotFound { id },
        ConversationError::Closed { id } => ContinueError::Closed { id },
        ConversationError::Storage(s) => {
            ContinueError::Storage(log_error(op, conversation_id, what)(s))
        }
    }
}

#[async_trait]
impl ConversationLog for ConversationStore {
    async fn continued(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<ContinuedConversation, ContinueError> {
        let c = self.check_open(tenant, id).await.map_err(continue_error(
            "conversations.continued",
            id,
            "read it",
        ))?;
        Ok(ContinuedConversation {
            agent_id: c.agent_id,
            agent_version: c.agent_version,
        })
    }

    async fn begin_turn(
        &self,
        tenant: &str,
        id: &str,
        user_message: &Value,
    ) -> Result<(), ContinueError> {
        self.append_message(tenant, id, Role::User, user_message, None, None)
            .await
            .map_err(continue_error(
                "conversations.begin_turn",
                id,
                "append the user's message",
            ))?;
        self.bump_turn(tenant, id).await.map_err(continue_error(
            "conversations.begin_turn",
            id,
            "count the turn",
        ))?;
        Ok(())
    }

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
            role: Role::User,
            content: Value::String(opening.user_message),
            tool_call: None,
            actor: None,
        };
        self.open_for_turn(tenant, id, new, first)
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
        match self.recent_messages(tenant, conversation_id, limit).await {
            Ok(kept) => Ok(kept.iter().filter_map(model_message).collect()),
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
        let rows = to_rows(messages);
        if rows.is_empty() {
            return Ok(());
        }
        match self.append_messages(tenant, conversation_id, &rows).await {
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
        match self.get(tenant, conversation_id).await {
            Ok(c) => Ok(c.map(|c| u64::try_from(c.turn_count).unwrap_or(0))),
            Err(e) => Err(log_error(
                "conversations.turn_count",
                conversation_id,
                "read its turn count",
            )(e)),
        }
    }
}

/// Model messages as kept; a tool result names the tool of the call it answers.
fn to_rows(messages: &[Message]) -> Vec<NewMessage> {
    let mut tool_of: HashMap<&str, &str> = HashMap::new();
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let (content, tool_call) = match m.role {
            Role::Assistant if !m.tool_calls.is_empty() => {
                for c in &m.tool_calls {
                    tool_of.insert(c.id.as_str(), c.name.as_str());
                }
                (json!({"text": m.content, "toolCalls": m.tool_calls}), None)
            }
            Role::Tool => {
                let invocation = m.tool_call_id.clone().unwrap_or_default();
                let tool_id = tool_of.get(invocation.as_str()).copied().unwrap_or("");
                let call = ToolCallRef {
                    tool_id: tool_id.to_owned(),
                    invocation_id: invocation,
                };
                (json!(m.content), Some(call))
            }
            Role::System | Role::User | Role::Assistant => (json!(m.content), None),
        };
        out.push(NewMessage {
            role: m.role,
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

/// A kept message as the model reads it (`None`: a tool message answering no call).
fn model_message(m: &ConversationMessage) -> Option<Message> {
    Some(match m.role {
        Role::User => Message::user(text_of(&m.content)),
        Role::System => Message::system(text_of(&m.content)),
        Role::Tool => {
            let call = m.tool_call.as_ref()?;
            Message::tool(call.invocation_id.clone(), text_of(&m.content))
        }
        Role::Assistant => {
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
