//! `kindgi conversations list|get|open|close|unregister|messages`: the official CLI's
//! commands, flags and checks, through the one API client ([`crate::api`]).
//!
//! * `list [--status=open|closed] [--opened-by=me] [--replays=exclude|include|only]
//!   [--limit] [--cursor]` → `GET /v1/conversations`; with `--opened-by` the page must say
//!   `openedBy:"me"`, else exit 1 (an older runtime ignored the filter).
//! * `get <id>` → `GET /v1/conversations/{id}`; `close <id>` → `POST …/close`;
//!   `unregister <id>` → `POST …/unregister`; `messages <id> [--limit] [--cursor]` →
//!   `GET …/messages`.
//! * `open <agent-id> <version> [--title] [--project] [--participant]` →
//!   `POST /v1/conversations {agentId, agentVersion, title?, projectId?, participantId?}`.

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use super::args::required;
use crate::api::{ApiArgs, CliError, push, segment};

#[derive(Debug, clap::Subcommand)]
pub enum ConversationsCommand {
    /// List conversations, newest first.
    List {
        /// Only the conversations with this status: `open` or `closed`.
        #[arg(long)]
        status: Option<String>,
        /// `me`: only the conversations you opened.
        #[arg(long = "opened-by")]
        opened_by: Option<String>,
        /// Replay conversations: `exclude` (the default), `include` or `only`.
        #[arg(long)]
        replays: Option<String>,
        /// The most conversations to return.
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch a conversation by id.
    Get {
        #[arg(value_name = "CONVERSATION_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Open a conversation with an agent version, pinned for every turn.
    Open {
        #[arg(value_name = "AGENT_ID")]
        agent: Option<String>,
        #[arg(value_name = "VERSION")]
        version: Option<String>,
        /// A title for the conversation. Default: "Untitled conversation".
        #[arg(long)]
        title: Option<String>,
        /// The project the conversation is in. Default: the agent's own project.
        #[arg(long)]
        project: Option<String>,
        /// Your app's opaque id for the user the conversation is with.
        #[arg(long)]
        participant: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Close a conversation: it takes no more turns.
    Close {
        #[arg(value_name = "CONVERSATION_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Unregister a conversation: reads, lists and recall no longer return it.
    Unregister {
        #[arg(value_name = "CONVERSATION_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List a conversation's messages, oldest first.
    Messages {
        #[arg(value_name = "CONVERSATION_ID")]
        id: Option<String>,
        /// The most messages to return.
        #[arg(long)]
        limit: Option<u32>,
        /// Resume after this cursor, from the previous page's `nextCursor`.
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

impl ConversationsCommand {
    fn parts(&self) -> (&'static str, &ApiArgs) {
        match self {
            ConversationsCommand::List { api, .. } => ("conversations list", api),
            ConversationsCommand::Get { api, .. } => ("conversations get", api),
            ConversationsCommand::Open { api, .. } => ("conversations open", api),
            ConversationsCommand::Close { api, .. } => ("conversations close", api),
            ConversationsCommand::Unregister { api, .. } => ("conversations unregister", api),
            ConversationsCommand::Messages { api, .. } => ("conversations messages", api),
        }
    }
}

pub async fn run(command: ConversationsCommand) -> ExitCode {
    let (name, api) = command.parts();
    let api = api.clone();
    match dispatch(command, name, &api).await {
        Ok(code) => code,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

/// `value` when it is one of `allowed`, else the official CLI's usage error.
pub(crate) fn one_of(
    flag: &str,
    value: Option<String>,
    allowed: &[&str],
) -> Result<Option<String>, CliError> {
    match value {
        Some(v) if !allowed.contains(&v.as_str()) => Err(CliError::Usage(format!(
            "--{flag} must be one of {}, got \"{v}\"",
            allowed.join(", ")
        ))),
        v => Ok(v.filter(|v| !v.is_empty())),
    }
}

fn page_query(limit: Option<u32>, cursor: Option<String>) -> Vec<(&'static str, String)> {
    let mut q = Vec::new();
    push(&mut q, "limit", limit.map(|l| l.to_string()));
    push(&mut q, "cursor", cursor);
    q
}

async fn dispatch(
    command: ConversationsCommand,
    name: &str,
    api: &ApiArgs,
) -> Result<ExitCode, CliError> {
    let out = api.output();
    let one = |id: String, tail: &str| format!("/v1/conversations/{}{tail}", segment(&id));
    match command {
        ConversationsCommand::List {
            status,
            opened_by,
            replays,
            limit,
            cursor,
            ..
        } => {
            let status = one_of("status", status, &["open", "closed"])?;
            let replays = one_of("replays", replays, &["exclude", "include", "only"])?;
            let opened_by = one_of("opened-by", opened_by, &["me"])?;
            let mut q = Vec::new();
            push(&mut q, "status", status);
            push(&mut q, "replays", replays);
            let filtered = opened_by.is_some();
            push(&mut q, "openedBy", opened_by);
            q.extend(page_query(limit, cursor));
            let page = api.connect(name)?.get("/v1/conversations", q).await?;
            if filtered && page.get("openedBy").and_then(Value::as_str) != Some("me") {
                return Err(CliError::Local(
                    "--opened-by needs a runtime on Kindgi 0.1.9 or later.".into(),
                ));
            }
            out.json(&page);
        }
        ConversationsCommand::Get { id, .. } => {
            let path = one(required(id, "conversation-id")?, "");
            out.json(&api.connect(name)?.get(&path, vec![]).await?);
        }
        ConversationsCommand::Open {
            agent,
            version,
            title,
            project,
            participant,
            ..
        } => {
            let mut body = Map::new();
            body.insert("agentId".into(), json!(required(agent, "agent-id")?));
            body.insert("agentVersion".into(), json!(required(version, "version")?));
            for (key, v) in [
                ("title", title),
                ("projectId", project),
                ("participantId", participant),
            ] {
                if let Some(v) = v.filter(|v| !v.is_empty()) {
                    body.insert(key.into(), Value::String(v));
                }
            }
            let answer = api
                .connect(name)?
                .post("/v1/conversations", &Value::Object(body), None)
                .await?;
            out.json(&answer);
        }
        ConversationsCommand::Close { id, .. } => {
            let path = one(required(id, "conversation-id")?, "/close");
            out.json(&api.connect(name)?.post(&path, &json!({}), None).await?);
        }
        ConversationsCommand::Unregister { id, .. } => {
            let path = one(required(id, "conversation-id")?, "/unregister");
            out.json(&api.connect(name)?.post(&path, &json!({}), None).await?);
        }
        ConversationsCommand::Messages {
            id, limit, cursor, ..
        } => {
            let path = one(required(id, "conversation-id")?, "/messages");
            let page = api
                .connect(name)?
                .get(&path, page_query(limit, cursor))
                .await?;
            out.json(&page);
        }
    }
    Ok(ExitCode::SUCCESS)
}
