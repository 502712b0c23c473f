//! Timeouts of waits: one sweeper task per [`Runtime`] (started by [`Runtime::recover`])
//! sleeps until the next deadline in the wait store — woken early when a wait is created —
//! and then, for each approval past its `expiresAt`, escalates it one tier (a successor on
//! the same wait token with a fresh deadline) or, at admin, expires it and cancels the wait
//! (`wait.cancelled {reason: "timeout"}`); for each pause past its deadline, expires it and
//! cancels its wait; for each call waiting for a connection, times it out the same way or,
//! when the connection is now made (on another replica too), resumes it
//! (`service::connection_waits`). A cancelled wait resumes its run, whose step turns it into
//! a failure.
//! It reads the stores, so deadlines survive a restart.

use serde_json::json;
use std::sync::Weak;
use std::time::Duration;

use crate::approval::{Approval, ApprovalStatus};
use crate::engine::shared::Shared;
use crate::record::{JournalKind, format_millis, now_millis, parse_millis};
use crate::service::{Runtime, RuntimeError};
use crate::wait_store::{PauseRecord, PauseStatus, WaitStoreError};

/// The longest the sweeper sleeps (another process may have created a wait).
const MAX_SLEEP: Duration = Duration::from_secs(60);
/// How long it waits after a sweep that failed.
const AFTER_FAILURE: Duration = Duration::from_secs(1);

fn store_err(e: WaitStoreError) -> RuntimeError {
    RuntimeError::Store(e)
}

impl Runtime {
    /// Starts the sweeper (once per runtime).
    pub(crate) fn start_sweeper(&self) {
        if self
            .shared
            .sweeper_started
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let weak = std::sync::Arc::downgrade(&self.shared);
        tokio::spawn(sweep_loop(weak));
    }

    /// Handles every wait past its deadline now — what the sweeper does when it wakes:
    /// escalates or expires approvals, expires pauses and connection waits, and resumes the
    /// runs whose waits were cancelled (inline); resumes the calls whose person has connected
    /// the app meanwhile. Returns how many waits it moved on.
    pub async fn expire_due_waits(&self) -> Result<usize, RuntimeError> {
        let now = now_millis();
        let approvals = self
            .shared
            .waits
            .approvals_due(now)
            .await
            .map_err(store_err)?;
        let pauses = self.shared.waits.pauses_due(now).await.map_err(store_err)?;
        let mut moved = 0;
        for a in approvals {
            moved += usize::from(self.time_out_approval(a).await?);
        }
        for p in pauses {
            moved += usize::from(self.time_out_pause(p).await?);
        }
        moved += self.sweep_connection_waits(now).await?;
        Ok(moved)
    }

    /// An approval past its deadline: escalated one tier, or at admin expired (its wait
    /// cancelled, its run resumed). False when something else moved it first.
    async fn time_out_approval(&self, approval: Approval) -> Result<bool, RuntimeError> {
        let waits = &self.shared.waits;
        let run = match &approval.run_id {
            Some(id) => self.shared.store.get_run(id).await?,
            None => None,
        };
        if let Some(r) = run.as_ref().filter(|r| r.status.is_terminal()) {
            // Its run ended (and missed withdrawing it): nothing waits for it any more.
            crate::engine::run_end::withdraw_open_waits(&self.shared, r).await;
            return Ok(true);
        }
        let guard = match &run {
            Some(r) => Some(self.lock_for_answer(r).await?),
            None => None,
        };
        let Some(current) = waits
            .get_approval(&approval.tenant_id, &approval.id)
            .await
            .map_err(store_err)?
            .filter(|a| a.status.is_open())
            .filter(|a| {
                a.expires_at
                    .as_deref()
                    .is_some_and(|t| parse_millis(t) <= now_millis())
            })
        else {
            return Ok(false);
        };
        let now = now_millis();
        let next = current
            .required_role
            .next()
            .map(|role| crate::service::decide::successor(&current, role, now));
        let status = if next.is_some() {
            ApprovalStatus::Escalated
        } else {
            ApprovalStatus::Expired
        };
        let moved = Approval {
            status,
            updated_at: format_millis(now),
            escalated_to: next.as_ref().map(|n| n.id.clone()),
            ..current.clone()
        };
        let token = current.wait_token_id.clone();
        let mut entries = Vec::new();
        if let (Some(token), Some(_)) = (&token, &guard) {
            entries.push((
                JournalKind::ApprovalCompleted,
                json!({"approvalId": current.id, "status": status, "reason": "timeout"}),
            ));
            match &next {
                Some(n) => entries.push((
                    JournalKind::ApprovalRequested,
                    crate::steps::wait::requested_payload(n, token),
                )),
                None => entries.push((
                    JournalKind::WaitCancelled,
                    json!({"tokenId": token, "reason": "timeout"}),
                )),
            }
        }
        let journal = run
            .as_ref()
            .filter(|_| !entries.is_empty())
            .map(|r| self.outside_journal(&r.id, &entries));
        // One step: a decision that came first (here or on another server) wins.
        let timed_out = waits
            .update_approval_journaled(&moved, current.status, next.as_ref(), journal)
            .await
            .map_err(store_err)?;
        if !timed_out {
            return Ok(false);
        }
        if let (Some(guard), None, Some(run)) = (guard, &next, &run) {
            self.resume_inline(guard, &run.id).await?;
        }
        Ok(true)
    }

    /// A pause past its deadline: expired, its wait cancelled, its run resumed.
    async fn time_out_pause(&self, pause: PauseRecord) -> Result<bool, RuntimeError> {
        let waits = &self.shared.waits;
        let Some(run) = self.shared.store.get_run(&pause.run_id).await? else {
            return Ok(false);
        };
        let guard = if run.status.is_terminal() {
            None
        } else {
            Some(self.lock_for_answer(&run).await?)
        };
        let Some(current) = waits
            .get_pause(&pause.token_id)
            .await
            .map_err(store_err)?
            .filter(|p| p.status == PauseStatus::Open)
        else {
            return Ok(false);
        };
        let entries = [(
            JournalKind::WaitCancelled,
            json!({"tokenId": current.token_id, "reason": "timeout"}),
        )];
        let expired = PauseRecord {
            status: PauseStatus::Expired,
            updated_at: format_millis(now_millis()),
            ..current
        };
        // One step: an answer that came first (here or on another server) wins.
        let timed_out = if guard.is_some() {
            let journal = self.outside_journal(&run.id, &entries);
            waits.update_pause_journaled(&expired, PauseStatus::Open, journal)
        } else {
            waits.update_pause_if(&expired, PauseStatus::Open)
        }
        .await
        .map_err(store_err)?;
        if !timed_out {
            return Ok(false);
        }
        if let Some(guard) = guard {
            self.resume_inline(guard, &run.id).await?;
        }
        Ok(true)
    }
}

/// Sleeps until the next deadline (or a new wait, or [`MAX_SLEEP`]), sweeps, again — until
/// the runtime shuts down or is dropped.
async fn sweep_loop(weak: Weak<Shared>) {
    loop {
        let Some(shared) = weak.upgrade() else { return };
        let rt = Runtime {
            shared: shared.clone(),
        };
        let pause = match rt.expire_due_waits().await {
            Ok(_) => match shared.waits.next_deadline().await {
                Ok(Some(at)) => {
                    let ms = at.saturating_sub(now_millis()).max(0) as u64;
                    Duration::from_millis(ms).min(MAX_SLEEP)
                }
                Ok(None) => MAX_SLEEP,
                Err(e) => {
                    tracing::warn!(error = %e, "the wait sweeper could not read the next deadline");
                    AFTER_FAILURE
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "the wait sweeper failed; trying again");
                AFTER_FAILURE
            }
        };
        drop(rt);
        let shutdown = shared.shutdown.clone();
        let deadlines = shared.deadlines.clone();
        // Holding only the signals, not the runtime, while asleep.
        drop(shared);
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = deadlines.notified() => {}
            _ = tokio::time::sleep(pause) => {}
        }
    }
}
