//! Waits: a run parks (`suspended`) on a wait token until another party answers it — a
//! reviewer deciding an approval, or another system answering a pausing tool's call — or
//! until it times out. The journal holds `wait.suspended {nodeId?, tokenId, timeoutMs}`,
//! then `wait.resumed {tokenId, value}` or `wait.cancelled {tokenId, reason}`; a resumed
//! executor replays them, so the step that waited gets its answer.
//!
//! Journal first: a decision or answer is journaled on the waiting run before anything
//! else changes, and the run is resumed from its journal ([`crate::resume`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use serde_json::json;

use crate::approval::{Approval, ApprovalQuery, ApprovalStatus, NewApproval};
use crate::executor::{Failure, RunCtx, journal_failure};
use crate::record::{JournalKind, format_millis, now_millis, parse_millis};

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
}

/// How a wait ended, as the journal says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WaitOutcome {
    /// Answered with this value (for an approval: `{decided, rationale?, decidedBy, approvalId}`).
    Resumed(Value),
    /// Cancelled: `timeout`, `withdrawn`, `run-cancelled`.
    Cancelled { reason: String },
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
        if let WaitPurpose::Approval(new) = &req.purpose {
            let approval = self.open_approval(&req, new).await?;
            let p = crate::decide::requested_payload(&approval, &req.token_id);
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
            requested_by: Some("system:runtime".to_owned()),
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

/// What a suspended run waits for (`OA:Run.waitingFor`): `approvals[]` are the open
/// approvals it waits on (never their arguments), `other[]` anything else
/// (`{what: "tool-pause", tokenId?, toolId, callId, timesOutAt}`, `{what:"no-open-wait"}`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitingFor {
    pub approvals: Vec<Value>,
    pub other: Vec<Value>,
}

/// What an answered pause did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitAnswered {
    pub run_id: String,
    pub run_status: crate::record::RunStatus,
}

/// Why an answer to a pausing call was refused. Nothing changes on any of them.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// `404 wait-not-found`: unknown, malformed, or another tenant's token.
    #[error("No open wait for this token")]
    NotFound,
    /// `409 wait-already-answered`.
    #[error("This wait was already answered")]
    AlreadyAnswered,
    /// `410 wait-expired`: the wait timed out (the call failed).
    #[error("This wait timed out at {expired_at}; the call it was for has failed")]
    Expired { expired_at: String },
    /// `400 wait-answer-invalid`: the answer does not match the tool's output schema; the run
    /// keeps waiting.
    #[error("The answer does not match the output schema of tool \"{tool_id}\": {summary}")]
    Invalid {
        tool_id: String,
        summary: String,
        issues: Vec<kindgi_schema::Issue>,
    },
    /// `409 run-already-terminal`.
    #[error("Run {run_id} has already ended ({status})")]
    RunTerminal { run_id: String, status: String },
    /// `503`: the store failed (or the paused tool could not be checked); the storage
    /// error is the source.
    #[error("wait store unavailable: {0}")]
    Store(#[from] kindgi_core::StorageError),
}

/// Equal when of one kind with the same data; two store failures when they say the same
/// (a storage error's source has no equality of its own).
impl PartialEq for WaitError {
    fn eq(&self, other: &Self) -> bool {
        use WaitError::*;
        match (self, other) {
            (NotFound, NotFound) | (AlreadyAnswered, AlreadyAnswered) => true,
            (Expired { expired_at: a }, Expired { expired_at: b }) => a == b,
            (
                Invalid {
                    tool_id: a,
                    summary: s,
                    issues: i,
                },
                Invalid {
                    tool_id: b,
                    summary: t,
                    issues: j,
                },
            ) => a == b && s == t && i == j,
            (
                RunTerminal {
                    run_id: a,
                    status: s,
                },
                RunTerminal {
                    run_id: b,
                    status: t,
                },
            ) => a == b && s == t,
            (Store(a), Store(b)) => a.to_string() == b.to_string(),
            _ => false,
        }
    }
}

impl WaitError {
    pub fn code(&self) -> &'static str {
        match self {
            WaitError::NotFound => "wait-not-found",
            WaitError::AlreadyAnswered => "wait-already-answered",
            WaitError::Expired { .. } => "wait-expired",
            WaitError::Invalid { .. } => "wait-answer-invalid",
            WaitError::RunTerminal { .. } => "run-already-terminal",
            WaitError::Store(_) => "store-unavailable",
        }
    }
}

impl crate::Runtime {
    /// Answers a pausing call's wait with the other system's `value` (checked against the
    /// tool's output schema) and resumes its run inline.
    pub async fn answer_wait(
        &self,
        tenant: &str,
        token: &str,
        value: Value,
    ) -> Result<WaitAnswered, WaitError> {
        self.answer_pause(tenant, token, value).await
    }

    /// What a suspended run waits for (`None` when the run is not suspended).
    pub async fn waiting_for(
        &self,
        run: &crate::record::RunRecord,
    ) -> Result<Option<WaitingFor>, crate::RuntimeError> {
        if run.status != crate::record::RunStatus::Suspended {
            return Ok(None);
        }
        let journal = self.shared.store.journal(&run.id, None, None).await?;
        let mut open: Vec<(String, Option<String>)> = Vec::new();
        for e in &journal {
            let Some(token) = e
                .payload
                .as_ref()
                .and_then(|p| p.get("tokenId"))
                .and_then(Value::as_str)
            else {
                continue;
            };
            match e.kind {
                JournalKind::WaitSuspended => {
                    let times_out_at = e
                        .payload
                        .as_ref()
                        .and_then(|p| p.get("timeoutMs"))
                        .and_then(Value::as_i64)
                        .map(|ms| format_millis(parse_millis(&e.timestamp).saturating_add(ms)));
                    open.retain(|(t, _)| t != token);
                    open.push((token.to_owned(), times_out_at));
                }
                JournalKind::WaitResumed | JournalKind::WaitCancelled => {
                    open.retain(|(t, _)| t != token);
                }
                _ => {}
            }
        }
        let mut out = WaitingFor::default();
        for (token, times_out_at) in open {
            self.describe_wait(&run.tenant_id, &token, times_out_at, &mut out)
                .await?;
        }
        if out.approvals.is_empty() && out.other.is_empty() {
            out.other.push(json!({"what": "no-open-wait"}));
        }
        Ok(Some(out))
    }

    /// Adds what the open wait `token` is to `out`.
    async fn describe_wait(
        &self,
        tenant: &str,
        token: &str,
        times_out_at: Option<String>,
        out: &mut WaitingFor,
    ) -> Result<(), crate::RuntimeError> {
        let store_err = crate::RuntimeError::Store;
        let query = ApprovalQuery {
            tenant_id: tenant.to_owned(),
            wait_token_ids: vec![token.to_owned()],
            limit: 100,
            ..ApprovalQuery::default()
        };
        let approvals = self
            .shared
            .waits
            .list_approvals(&query)
            .await
            .map_err(store_err)?;
        let linked: Vec<&Approval> = approvals
            .iter()
            .filter(|a| a.status.is_open() || a.status == ApprovalStatus::Escalated)
            .collect();
        if !linked.is_empty() {
            out.approvals
                .extend(linked.into_iter().map(waiting_approval));
            return Ok(());
        }
        if let Some(a) = approvals.first() {
            out.other.push(
                json!({"what": "decided-approval", "approvalId": a.id, "approvalStatus": a.status}),
            );
            return Ok(());
        }
        if let Some(p) = self
            .shared
            .waits
            .get_pause(token)
            .await
            .map_err(store_err)?
        {
            out.other.push(json!({
                "what": "tool-pause", "tokenId": token, "toolId": p.tool_id,
                "callId": p.call_id, "timesOutAt": p.expires_at,
            }));
            return Ok(());
        }
        let mut w = serde_json::Map::new();
        if let Some(child) = token
            .strip_prefix("child:")
            .and_then(|r| r.rsplit_once(':'))
            .map(|(c, _)| c)
        {
            w.insert("what".into(), json!("child-run"));
            w.insert("childRunId".into(), json!(child));
            if let Ok(Some(c)) = self.shared.store.get_run(child).await {
                w.insert("childStatus".into(), json!(c.status));
            }
        } else {
            w.insert("what".into(), json!("unattributed"));
            w.insert("tokenId".into(), json!(token));
        }
        if let Some(t) = times_out_at {
            w.insert("timesOutAt".into(), json!(t));
        }
        out.other.push(Value::Object(w));
        Ok(())
    }
}

/// An approval as `waitingFor.approvals[]` shows it: never its arguments.
fn waiting_approval(a: &Approval) -> Value {
    let mut w = serde_json::Map::new();
    w.insert("approvalId".into(), json!(a.id));
    w.insert("status".into(), json!(a.status));
    w.insert("requiredRole".into(), json!(a.required_role));
    if let Some(t) = &a.title {
        w.insert("title".into(), json!(t));
    }
    w.insert("createdAt".into(), json!(a.created_at));
    if let Some(e) = &a.expires_at {
        w.insert("expiresAt".into(), json!(e));
    }
    w.insert("subjectKind".into(), json!(a.subject_kind));
    let s = |k: &str| a.subject_ref.get(k).cloned();
    if let Some(id) = s("toolId") {
        w.insert(
            "tool".into(),
            json!({"id": id, "version": s("toolVersion"), "callId": s("callId")}),
        );
    }
    Value::Object(w)
}
