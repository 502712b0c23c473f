//! A step's wait: a run parks (`suspended`) on a wait token until another party answers it
//! — a reviewer deciding an approval, another system answering a pausing tool's call, or
//! the run's person connecting an app (`steps::connect`) — or
//! until it times out. The journal holds `wait.suspended {nodeId?, tokenId, timeoutMs}`, then
//! `wait.resumed {tokenId, value}` or `wait.cancelled {tokenId, reason}`; a resumed run
//! replays them, so the step that waited gets its answer ([`WaitOutcome`]).
//!
//! This is the executing half; answering a wait is the service's ([`crate::service::waits`]).

use serde_json::{Map, Value, json};

use crate::engine::ctx::{RunCtx, journal_failure};
use crate::engine::failure::Failure;
use crate::engine::journal::WaitOutcome;
use crate::record::{JournalKind, format_millis, now_millis};
use kindgi_core::approval::{Approval, ApprovalQuery, ApprovalStatus, NewApproval};

/// The default wait: 24 hours (core's).
pub use kindgi_core::ids::DEFAULT_WAIT_MS;
/// The longest a pausing call may wait: 24 days.
pub const MAX_PAUSE_MS: u64 = 24 * DEFAULT_WAIT_MS;

/// A wait a step reaches.
#[derive(Debug, Clone)]
pub(crate) struct WaitRequest {
    /// The wait token id (for a tool gate: 40 hex of sha256 `tool-call:<runId>:<callId>:<argsHash>`).
    pub token_id: String,
    pub node_id: Option<String>,
    pub timeout_ms: u64,
    /// What the wait is for, created when the run first parks on it.
    pub purpose: WaitPurpose,
}

#[derive(Debug, Clone)]
// The agent's gates (h/gates) build `Approval`; the pause fields name the wait in logs.
#[allow(dead_code)]
pub(crate) enum WaitPurpose {
    /// A reviewer's decision.
    Approval(NewApproval),
    /// Another system's answer to a pausing tool call: the answer must validate against the
    /// output schema of `tool_id` at `tool_version`.
    ToolPause {
        tool_id: String,
        tool_version: String,
        call_id: String,
    },
    /// The run's person connecting an app (an agent's call of a tool acting with their
    /// connection): the row is stored before the run parks.
    Connection(Box<kindgi_core::connection_wait::ConnectionWait>),
}

impl RunCtx {
    /// Waits on `req.token_id`. If the journal already holds the wait's answer or
    /// cancellation, returns it; otherwise journals `wait.suspended` (once), creates what
    /// `req.purpose` asks for (once), and returns the failure that parks the run.
    pub(crate) async fn wait(&self, scope: &str, req: WaitRequest) -> Result<WaitOutcome, Failure> {
        if let Some(outcome) = self.replay.waits.get(&req.token_id) {
            return Ok(outcome.clone());
        }
        if self.replay.waits_suspended.contains(&req.token_id) {
            // Parked on it before; resumed because another of the run's waits was answered.
            return Err(Failure::suspended(&req.token_id));
        }
        self.journal.flush().await.map_err(journal_failure)?;
        if let WaitPurpose::Connection(w) = &req.purpose {
            self.shared
                .waits
                .insert_connection_wait(w)
                .await
                .map_err(store_failure)?;
        }
        if let WaitPurpose::Approval(new) = &req.purpose {
            let approval = self.open_approval(&req, new).await?;
            let p = requested_payload(&approval, &req.token_id);
            self.journal
                .write(
                    JournalKind::ApprovalRequested,
                    req.node_id.as_deref(),
                    scope,
                    Some(p),
                )
                .await
                .map_err(journal_failure)?;
        }
        let mut p = serde_json::Map::new();
        if let Some(n) = &req.node_id {
            p.insert("nodeId".into(), json!(n));
        }
        p.insert("tokenId".into(), json!(req.token_id));
        p.insert("timeoutMs".into(), json!(req.timeout_ms));
        self.journal
            .write(
                JournalKind::WaitSuspended,
                req.node_id.as_deref(),
                scope,
                Some(Value::Object(p)),
            )
            .await
            .map_err(journal_failure)?;
        self.journal.flush().await.map_err(journal_failure)?;
        self.shared.deadlines.notify_one();
        Err(Failure::suspended(&req.token_id))
    }

    /// The open approval of this wait: the one a previous executor created (a step re-run
    /// after a crash must not ask twice), else a new one.
    async fn open_approval(
        &self,
        req: &WaitRequest,
        new: &NewApproval,
    ) -> Result<Approval, Failure> {
        let store = &self.shared.waits;
        let tenant = &self.run.tenant_id;
        let query = ApprovalQuery {
            tenant_id: tenant.clone(),
            wait_token_ids: vec![req.token_id.clone()],
            limit: 100,
            ..ApprovalQuery::default()
        };
        let existing = store.list_approvals(&query).await.map_err(store_failure)?;
        // Newest first: the head of an escalation chain.
        if let Some(a) = existing.into_iter().next() {
            return Ok(a);
        }
        let now = now_millis();
        let approval = Approval {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: tenant.clone(),
            project_id: self.run.meta.project_id.clone(),
            subject_kind: new.subject_kind.clone(),
            subject_ref: new.subject_ref.clone(),
            required_role: new.required_role,
            status: ApprovalStatus::Pending,
            title: Some(new.title.clone()),
            description: Some(new.description.clone()),
            wait_token_id: Some(req.token_id.clone()),
            run_id: Some(self.run.id.clone()),
            created_at: format_millis(now),
            updated_at: format_millis(now),
            decided_at: None,
            expires_at: Some(format_millis(now.saturating_add(new.timeout_ms as i64))),
            decision: None,
            // Who started the run, when a person or service account did; else the runtime.
            requested_by: Some(
                self.run
                    .meta
                    .started_by_actor
                    .clone()
                    .unwrap_or_else(|| "system:runtime".to_owned()),
            ),
            separate_approver: new.separate_approver,
            withdrawn_because: None,
            escalated_from: None,
            escalated_to: None,
        };
        store
            .insert_approval(&approval)
            .await
            .map_err(store_failure)?;
        Ok(approval)
    }

    /// Whether this run's conversation already approved a call of `tool_id` with exactly
    /// these arguments (`ask_on_first_use`); false for a run without a conversation.
    #[allow(dead_code)] // called by the agent's gates
    pub(crate) async fn approved_before(
        &self,
        tool_id: &str,
        args_hash: &str,
    ) -> Result<bool, Failure> {
        let Some(conversation) = self
            .run
            .meta
            .agent
            .as_ref()
            .and_then(|a| a.conversation_id.as_deref())
        else {
            return Ok(false);
        };
        self.shared
            .waits
            .approved_in_conversation(&self.run.tenant_id, conversation, tool_id, args_hash)
            .await
            .map_err(store_failure)
    }
}

fn store_failure(e: crate::wait_store::WaitStoreError) -> Failure {
    Failure::fatal(format!(
        "wait-store-unavailable: the run's wait could not be stored: {e}"
    ))
}

/// `approval.requested {approvalId, tokenId, requiredRole, toolId?, callId?}`.
pub(crate) fn requested_payload(approval: &Approval, token: &str) -> Value {
    let mut p = Map::new();
    p.insert("approvalId".into(), json!(approval.id));
    p.insert("tokenId".into(), json!(token));
    p.insert("requiredRole".into(), json!(approval.required_role));
    for key in ["toolId", "callId"] {
        if let Some(v) = approval.subject_ref.get(key) {
            p.insert(key.into(), v.clone());
        }
    }
    Value::Object(p)
}
