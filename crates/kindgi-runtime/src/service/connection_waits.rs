//! Resuming calls that wait for their person to connect an app, the service's half (the
//! executing half is [`crate::steps::connect`]):
//!
//! - [`Runtime::connection_added`]: a person's connection to an app was added or replaced
//!   (`POST /v1/connections`): every run of the tenant waiting on that person and app is
//!   resumed inline and its call resolves again.
//! - The sweeper's pass ([`Runtime::expire_due_waits`]): a wait past its deadline is
//!   cancelled (`timeout`: the call fails `connection-missing`), and an open wait whose
//!   connection now exists and grants every permission it needs is resumed — a connection
//!   added through another replica, whose request resumed nothing here. A connection that
//!   still lacks a permission resumes nothing on a sweep, so no run wakes just to wait again.
//!
//! Journal first: the row moves `open → answered` and `wait.resumed {tokenId, value:
//! {connected: <app>}}` is journaled in one step, so of two replicas resuming one wait, one
//! wins.

use serde_json::json;

use crate::record::{JournalKind, format_millis, now_millis, parse_millis};
use crate::service::{Runtime, RuntimeError};
use crate::wait_store::PauseStatus;
use kindgi_core::connection::ConnectionHolder;
use kindgi_core::connection_wait::{ConnectionWait, ConnectionWaitQuery};

impl Runtime {
    /// `person` (a user id, no `user:`) added or replaced their connection to `app` in
    /// `tenant`: resumes every run waiting on it (inline, one after the other) and answers how
    /// many were resumed. A call whose permissions are still missing waits again.
    pub async fn connection_added(
        &self,
        tenant: &str,
        person: &str,
        app: &str,
    ) -> Result<usize, RuntimeError> {
        let query = ConnectionWaitQuery {
            tenant_id: Some(tenant.to_owned()),
            person: Some(person.to_owned()),
            app: Some(app.to_owned()),
            ..ConnectionWaitQuery::default()
        };
        let open = self
            .shared
            .waits
            .open_connection_waits(&query)
            .await
            .map_err(RuntimeError::Store)?;
        let mut resumed = 0;
        for w in open {
            resumed += usize::from(self.resume_connection_wait(w).await?);
        }
        Ok(resumed)
    }

    /// The sweeper's part for connection waits: times out those due at `now`, then resumes
    /// those whose connection is now made. Returns how many it moved on.
    pub(crate) async fn sweep_connection_waits(&self, now: i64) -> Result<usize, RuntimeError> {
        let waits = &self.shared.waits;
        let open = waits
            .open_connection_waits(&ConnectionWaitQuery::default())
            .await
            .map_err(RuntimeError::Store)?;
        let mut moved = 0;
        for w in open {
            if parse_millis(&w.expires_at) <= now {
                moved += usize::from(self.time_out_connection_wait(w).await?);
            } else if self.connection_made(&w).await {
                moved += usize::from(self.resume_connection_wait(w).await?);
            }
        }
        Ok(moved)
    }

    /// Whether the wait's person now has a usable connection to its app granting every
    /// permission it needs (a store failure: not yet, the next sweep looks again).
    async fn connection_made(&self, w: &ConnectionWait) -> bool {
        let Some(connector) = self.shared.connections.as_ref() else {
            return false;
        };
        let holder = ConnectionHolder::Person(w.person.clone());
        match connector
            .store()
            .resolve(&w.tenant_id, &w.app, &holder)
            .await
        {
            Ok(Some((record, Some(_)))) => {
                record.revoked_at.is_none() && record.missing_permissions(&w.permissions).is_empty()
            }
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(run = %w.run_id, app = %w.app, error = %e, "could not look up the connection a call waits for");
                false
            }
        }
    }

    /// Resumes the wait's run: the row answered and `wait.resumed` journaled in one step,
    /// then the run executed again inline. False when something else moved it first.
    async fn resume_connection_wait(&self, w: ConnectionWait) -> Result<bool, RuntimeError> {
        self.end_connection_wait(w, WaitEnd::Connected).await
    }

    /// A connection wait past its deadline: expired, its wait cancelled (`timeout`), its
    /// run resumed (the call fails).
    async fn time_out_connection_wait(&self, w: ConnectionWait) -> Result<bool, RuntimeError> {
        self.end_connection_wait(w, WaitEnd::TimedOut).await
    }

    /// Takes an open connection wait (`Open` → the end's status) and journals the end in one
    /// step — a connection and a timeout, here or on another server, race for it and one
    /// wins — then resumes its run inline. False when something else moved it first.
    async fn end_connection_wait(
        &self,
        w: ConnectionWait,
        end: WaitEnd,
    ) -> Result<bool, RuntimeError> {
        let waits = &self.shared.waits;
        let Some(run) = self.shared.store.get_run(&w.run_id).await? else {
            return Ok(false);
        };
        if run.status.is_terminal() {
            // Its run ended (and missed closing it): nothing waits for it any more.
            crate::engine::run_end::withdraw_open_waits(&self.shared, &run).await;
            return Ok(end == WaitEnd::TimedOut);
        }
        let guard = self.lock_for_answer(&run).await?;
        let Some(current) = waits
            .get_connection_wait(&w.token_id)
            .await
            .map_err(RuntimeError::Store)?
            .filter(|c| c.status == PauseStatus::Open)
        else {
            return Ok(false);
        };
        let (status, entry) = match end {
            WaitEnd::Connected => (
                PauseStatus::Answered,
                (
                    JournalKind::WaitResumed,
                    json!({"tokenId": current.token_id, "value": {"connected": current.app}}),
                ),
            ),
            WaitEnd::TimedOut => (
                PauseStatus::Expired,
                (
                    JournalKind::WaitCancelled,
                    json!({"tokenId": current.token_id, "reason": "timeout"}),
                ),
            ),
        };
        let entries = [entry];
        let ended = ConnectionWait {
            status,
            updated_at: format_millis(now_millis()),
            ..current
        };
        let taken = waits
            .update_connection_wait_journaled(
                &ended,
                PauseStatus::Open,
                self.outside_journal(&run.id, &entries),
            )
            .await
            .map_err(RuntimeError::Store)?;
        if !taken {
            return Ok(false);
        }
        self.resume_inline(guard, &run.id).await?;
        Ok(true)
    }
}

/// How a connection wait ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitEnd {
    /// The person connected the app: the call is tried again.
    Connected,
    /// Its deadline passed: the call fails.
    TimedOut,
}
