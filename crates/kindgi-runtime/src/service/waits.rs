//! Answering waits, the service's half: what a suspended run waits for
//! ([`crate::Runtime::waiting_for`]) and an answer to a pausing call's wait
//! ([`crate::Runtime::answer_wait`]), refused with a [`WaitError`] when it cannot be taken.
//!
//! Journal first: a decision or answer is journaled on the waiting run before anything
//! else changes, and the run is resumed from its journal (`service::resume`). The
//! executing half (a step parking on a wait) is `steps::wait`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::approval::{Approval, ApprovalQuery, ApprovalStatus};
use crate::record::{JournalKind, format_millis, parse_millis};

pub use crate::steps::wait::{DEFAULT_WAIT_MS, MAX_PAUSE_MS};

/// What a suspended run waits for (`OA:Run.waitingFor`): `approvals[]` are the open
/// approvals it waits on (never their arguments), `other[]` anything else
/// (`{what: "tool-pause", tokenId?, toolId, callId, timesOutAt}`, `{what: "connection", app,
/// permissions, toolId, callId, connectUrl, timesOutAt}`, `{what:"no-open-wait"}`, …).
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
        if let Some(c) = self
            .shared
            .waits
            .get_connection_wait(token)
            .await
            .map_err(store_err)?
        {
            let connect_url = crate::connections::connect_url(
                &self.shared.config.public_url,
                &c.app,
                &c.permissions,
            );
            out.other.push(json!({
                "what": "connection", "app": c.app, "permissions": c.permissions,
                "toolId": c.tool_id, "callId": c.call_id, "connectUrl": connect_url,
                "timesOutAt": c.expires_at,
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
