//! Pausing tools (`pauses: true`, seed 000): a call gets a wait ticket — an unguessable,
//! single-use, tenant-scoped token and the link another system answers on — and may answer
//! "pause"; the run then waits (24 h by default, at most 24 days) for that system's answer,
//! which must match the tool's output schema and becomes the call's result.
//!
//! The token is never stored nor journaled: the wait's id is 40 hex of its sha256, and a
//! presented token is looked up by that id.

use base64::Engine;
use serde_json::{Value, json};
use std::sync::Arc;

use crate::dispatch::ToolDispatcher;
use crate::executor::{Failure, RunCtx, issues_text, journal_failure};
use crate::record::{JournalKind, format_millis, now_millis, parse_millis};
use crate::store::payload;
use crate::wait::{
    DEFAULT_WAIT_MS, MAX_PAUSE_MS, WaitAnswered, WaitError, WaitOutcome, WaitPurpose, WaitRequest,
};
use crate::wait_store::{PauseRecord, PauseStatus};
use kindgi_tools::WaitTicket;
use kindgi_tools::dispatch::CallOutcome;

/// A wait token: this prefix and 32 random bytes, base64url without padding.
const TOKEN_PREFIX: &str = kindgi_core::ids::WAIT_TOKEN_PREFIX;

/// The id of a wait token: 40 hex of its sha256 (`None`: not shaped like a token).
pub(crate) use kindgi_core::ids::wait_token_id as token_id_of;

fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// The recorded value under which a call keeps its ticket (without the token).
fn ticket_key(call_id: &str) -> String {
    format!("pause-ticket:{call_id}")
}

impl RunCtx {
    /// Calls a tool that may pause. A call that answers at once is done; one that pauses
    /// parks the run until the other system answers (the answer is the result) or the wait
    /// times out (the call fails `tool-pause-timeout`). Resumed, the same call gets its
    /// answer without the tool being called again.
    pub(crate) async fn call_pausing(
        &self,
        tool: &Arc<dyn ToolDispatcher>,
        input: Value,
        site: crate::executor::CallSite<'_>,
        scope: &str,
        node_id: Option<&str>,
        call_id: &str,
    ) -> Result<Value, Failure> {
        let key = (scope.to_owned(), ticket_key(call_id));
        let tool_id = tool.manifest().id.clone();
        if let Some(ticket) = self.replay.values.get(&key) {
            let token_id = ticket.get("tokenId").and_then(Value::as_str).unwrap_or("");
            let timeout = ticket.get("timeoutMs").and_then(Value::as_u64).unwrap_or(0);
            if let Some(outcome) = self.replay.waits.get(token_id) {
                return pause_result(&tool_id, timeout, outcome.clone());
            }
            if self.replay.waits_suspended.contains(token_id) {
                return Err(Failure::suspended(token_id));
            }
            // The call was under way when the process stopped: it runs again with a new
            // ticket (the old one is closed).
        }
        let (ticket, token_id) = self
            .issue_ticket(tool.as_ref(), scope, node_id, call_id)
            .await?;
        let mut ctx = self
            .call_context(tool.as_ref(), site)
            .await
            .map_err(|e| Failure::new(e.to_string()))?;
        ctx.wait = Some(ticket.clone());
        let outcome = tool.call_or_pause(input, ctx).await;
        let timeout_ms = match outcome {
            Err(e) => {
                self.close_pause(&token_id).await;
                return Err(Failure::new(e.to_string()));
            }
            Ok(CallOutcome::Done(v)) => {
                self.close_pause(&token_id).await;
                return Ok(v);
            }
            Ok(CallOutcome::Paused { timeout_ms }) => timeout_ms.unwrap_or(ticket.timeout_ms),
        };
        if timeout_ms > MAX_PAUSE_MS || timeout_ms == 0 {
            self.close_pause(&token_id).await;
            return Err(Failure::fatal(format!(
                "pause-timeout-too-long: tool \"{tool_id}\" asked to wait {timeout_ms} ms; a pausing call waits between 1 ms and {MAX_PAUSE_MS} ms (24 days)"
            )));
        }
        if timeout_ms != ticket.timeout_ms {
            self.extend_pause(&token_id, timeout_ms).await?;
        }
        self.record_ticket(scope, call_id, &token_id, timeout_ms, &ticket.expires_at)
            .await?;
        let m = tool.manifest();
        let req = WaitRequest {
            token_id: token_id.clone(),
            node_id: node_id.map(str::to_owned),
            timeout_ms,
            purpose: WaitPurpose::ToolPause {
                tool_id: m.id.clone(),
                tool_version: m.version.clone(),
                call_id: call_id.to_owned(),
            },
        };
        let outcome = self.wait(scope, req).await?;
        pause_result(&tool_id, timeout_ms, outcome)
    }

    /// A fresh ticket for a call, its wait stored (hashed) before the tool sees it.
    async fn issue_ticket(
        &self,
        tool: &dyn ToolDispatcher,
        scope: &str,
        node_id: Option<&str>,
        call_id: &str,
    ) -> Result<(WaitTicket, String), Failure> {
        let token = new_token();
        let token_id = token_id_of(&token).unwrap_or_default();
        let now = now_millis();
        let expires_at = format_millis(now.saturating_add(DEFAULT_WAIT_MS as i64));
        let m = tool.manifest();
        let pause = PauseRecord {
            token_id: token_id.clone(),
            tenant_id: self.run.tenant_id.clone(),
            run_id: self.run.id.clone(),
            scope: scope.to_owned(),
            node_id: node_id.map(str::to_owned),
            call_id: call_id.to_owned(),
            tool_id: m.id.clone(),
            tool_version: m.version.clone(),
            status: PauseStatus::Open,
            created_at: format_millis(now),
            expires_at: expires_at.clone(),
            updated_at: format_millis(now),
        };
        self.shared
            .waits
            .insert_pause(&pause)
            .await
            .map_err(|e| Failure::fatal(format!("wait-store-unavailable: {e}")))?;
        self.record_ticket(scope, call_id, &token_id, DEFAULT_WAIT_MS, &expires_at)
            .await?;
        self.journal.flush().await.map_err(journal_failure)?;
        let link = format!(
            "{}/v1/waits/{token}",
            self.shared.config.public_url.trim_end_matches('/')
        );
        let ticket = WaitTicket {
            token,
            link,
            expires_at,
            timeout_ms: DEFAULT_WAIT_MS,
        };
        Ok((ticket, token_id))
    }

    async fn record_ticket(
        &self,
        scope: &str,
        call_id: &str,
        token_id: &str,
        timeout_ms: u64,
        expires_at: &str,
    ) -> Result<(), Failure> {
        let value = json!({"tokenId": token_id, "timeoutMs": timeout_ms, "expiresAt": expires_at});
        self.journal
            .write(
                JournalKind::ValueRecorded,
                None,
                "",
                Some(payload([
                    ("scope", json!(scope)),
                    ("key", json!(ticket_key(call_id))),
                    ("value", value),
                ])),
            )
            .await
            .map_err(journal_failure)
    }

    /// The tool asked for another timeout than the ticket's: the wait's deadline moves.
    async fn extend_pause(&self, token_id: &str, timeout_ms: u64) -> Result<(), Failure> {
        let store = &self.shared.waits;
        let stored = store.get_pause(token_id).await;
        if let Ok(Some(mut p)) = stored {
            let created = parse_millis(&p.created_at);
            p.expires_at = format_millis(created.saturating_add(timeout_ms as i64));
            p.updated_at = format_millis(now_millis());
            store
                .update_pause_if(&p, PauseStatus::Open)
                .await
                .map_err(|e| Failure::fatal(format!("wait-store-unavailable: {e}")))?;
        }
        Ok(())
    }

    /// The call did not pause (or failed): its link no longer answers anything.
    async fn close_pause(&self, token_id: &str) {
        let store = &self.shared.waits;
        if let Ok(Some(mut p)) = store.get_pause(token_id).await {
            p.status = PauseStatus::Closed;
            p.updated_at = format_millis(now_millis());
            if let Err(e) = store.update_pause_if(&p, PauseStatus::Open).await {
                tracing::warn!(run = %self.run.id, error = %e, "could not close a pausing call's wait");
            }
        }
    }
}

/// Why the answer to a pause could not be checked against its tool (answered as the store
/// failure it is treated as: `503`, nothing changes).
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
struct PausedToolUnchecked {
    what: &'static str,
    #[source]
    source: kindgi_core::BoxError,
}

fn paused_tool(what: &'static str, source: impl Into<kindgi_core::BoxError>) -> WaitError {
    WaitError::Store(kindgi_core::StorageError::backend(
        "pauses.check_answer",
        PausedToolUnchecked {
            what,
            source: source.into(),
        },
    ))
}

fn pause_result(tool_id: &str, timeout_ms: u64, outcome: WaitOutcome) -> Result<Value, Failure> {
    match outcome {
        WaitOutcome::Resumed(v) => Ok(v),
        WaitOutcome::Cancelled { reason } if reason == "timeout" => Err(Failure::fatal(format!(
            "tool-pause-timeout: tool \"{tool_id}\" got no answer within {timeout_ms} ms"
        ))),
        WaitOutcome::Cancelled { reason } => Err(Failure::fatal(format!(
            "tool-pause-cancelled: the wait of tool \"{tool_id}\" was cancelled ({reason})"
        ))),
    }
}

impl crate::Runtime {
    /// See [`crate::Runtime::answer_wait`].
    pub(crate) async fn answer_pause(
        &self,
        tenant: &str,
        token: &str,
        value: Value,
    ) -> Result<WaitAnswered, WaitError> {
        let token_id = token_id_of(token).ok_or(WaitError::NotFound)?;
        let pause = self.open_pause(tenant, &token_id).await?;
        let run = self.pause_run(&pause).await?;
        self.check_answer(&pause, &value).await?;
        let guard = self
            .lock_for_answer(&run)
            .await
            .map_err(|e| WaitError::Store(e.into_storage("pauses.lock_for_answer")))?;
        // Looked at again under the lock: a concurrent answer, the timeout or the run's end
        // may have come first.
        let mut pause = self.open_pause(tenant, &token_id).await?;
        let run = self.pause_run(&pause).await?;
        let entries = [(
            JournalKind::WaitResumed,
            json!({"tokenId": token_id, "value": value}),
        )];
        pause.status = PauseStatus::Answered;
        pause.updated_at = format_millis(now_millis());
        // The token is taken (`open → answered`) and the answer journaled in one step: of two
        // answers, on this server or another one on the database, one wins.
        let taken = self
            .shared
            .waits
            .update_pause_journaled(
                &pause,
                PauseStatus::Open,
                self.outside_journal(&run.id, &entries),
            )
            .await
            .map_err(WaitError::Store)?;
        if !taken {
            // What came first says why (answered, timed out, closed with its run).
            return Err(self
                .open_pause(tenant, &token_id)
                .await
                .err()
                .unwrap_or(WaitError::AlreadyAnswered));
        }
        let after = self
            .resume_inline(guard, &run.id)
            .await
            .map_err(|e| WaitError::Store(e.into_storage("pauses.resume")))?;
        Ok(WaitAnswered {
            run_id: run.id,
            run_status: after.status,
        })
    }

    /// The pause `token_id` of `tenant` that may still be answered.
    async fn open_pause(&self, tenant: &str, token_id: &str) -> Result<PauseRecord, WaitError> {
        let pause = self
            .shared
            .waits
            .get_pause(token_id)
            .await
            .map_err(WaitError::Store)?
            .filter(|p| p.tenant_id == tenant)
            .ok_or(WaitError::NotFound)?;
        match pause.status {
            PauseStatus::Answered => Err(WaitError::AlreadyAnswered),
            PauseStatus::Expired => Err(WaitError::Expired {
                expired_at: pause.expires_at,
            }),
            PauseStatus::Closed => Err(WaitError::NotFound),
            PauseStatus::Open if parse_millis(&pause.expires_at) <= now_millis() => {
                Err(WaitError::Expired {
                    expired_at: pause.expires_at,
                })
            }
            PauseStatus::Open => Ok(pause),
        }
    }

    async fn pause_run(&self, pause: &PauseRecord) -> Result<crate::RunRecord, WaitError> {
        let run = self
            .shared
            .store
            .get_run(&pause.run_id)
            .await
            .map_err(WaitError::Store)?
            .ok_or(WaitError::NotFound)?;
        if run.status.is_terminal() {
            return Err(WaitError::RunTerminal {
                run_id: run.id,
                status: run.status.as_str().to_owned(),
            });
        }
        Ok(run)
    }

    /// The answer must match the output schema of the exact tool version that paused.
    async fn check_answer(&self, pause: &PauseRecord, value: &Value) -> Result<(), WaitError> {
        let key = (
            pause.tenant_id.clone(),
            pause.tool_id.clone(),
            pause.tool_version.clone(),
        );
        let cached = self
            .shared
            .answer_validators
            .lock()
            .ok()
            .and_then(|g| g.get(&key).cloned());
        let validator = match cached {
            Some(v) => v,
            None => {
                let tool = self
                    .shared
                    .resolver
                    .resolve(&pause.tenant_id, &pause.tool_id, Some(&pause.tool_version))
                    .await
                    .map_err(|e| paused_tool("the paused tool cannot be found", e))?;
                let m = tool.manifest();
                let options = kindgi_tools::engine::options_for(m, kindgi_schema::Side::Output);
                let v = kindgi_tools::engine::compile_tool_schema(&m.output, options)
                    .map(Arc::new)
                    .map_err(|e| paused_tool("the paused tool's output schema", e))?;
                if let Ok(mut g) = self.shared.answer_validators.lock() {
                    g.insert(key, v.clone());
                }
                v
            }
        };
        validator
            .validate(value)
            .map_err(|issues| WaitError::Invalid {
                tool_id: pause.tool_id.clone(),
                summary: issues_text(&issues),
                issues: issues.into(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_shaped_and_their_ids_are_40_hex() {
        let t = new_token();
        assert!(t.starts_with("kgw_"));
        let id = token_id_of(&t).unwrap();
        assert_eq!(id.len(), 40);
        assert_ne!(token_id_of(&new_token()).unwrap(), id);
        assert_eq!(token_id_of("kgw_short"), None);
        assert_eq!(token_id_of(&t.replace("kgw_", "xyz_")), None);
    }
}
