//! Answering a pausing call's wait, the service's half: the answer is checked against the
//! tool's output schema, journaled on the waiting run and the run resumed. The executing half
//! (the call getting its ticket and waiting) is [`crate::steps::pause`].

use serde_json::{Value, json};
use std::sync::Arc;

use crate::engine::ctx::issues_text;
use crate::record::{JournalKind, format_millis, now_millis, parse_millis};
use crate::service::waits::{WaitAnswered, WaitError};
use crate::wait_store::{PauseRecord, PauseStatus};
use kindgi_core::ids::wait_token_id as token_id_of;

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
