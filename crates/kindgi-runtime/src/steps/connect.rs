//! An agent's call that waits for its run's person to connect an app (seed 004 "Calls that
//! run together"; docs/connections.md "Waiting for a person to connect"): before a call of
//! a tool acting with a person's connection (`needsSpec.connections.<name>.as: person`), the
//! connections are resolved; when the person has not connected the app, or the connection
//! lacks a permission the tool declares, the run parks on a wait (`wait.suspended`, a
//! [`ConnectionWait`] row) instead of failing the call.
//!
//! A connection that comes (`POST /v1/connections`, or the sweeper finding one) resumes the
//! run (`service::connection_waits`) and the call resolves again: it runs, or — a permission
//! still missing — waits again on the next attempt's token. Nobody connecting in time fails
//! the call `connection-missing` (timed out). A run with no person, and a flow's tool step,
//! never wait here: their calls fail as before.
//!
//! The wait's token id is 40 hex of sha256 `connection:<runId>:<scope>:<callId>:<attempt>`,
//! so a replay walks the attempts the journal answered and stops at the first it did not.

use kindgi_core::connection_wait::ConnectionWait;
use kindgi_core::pause::PauseStatus;
use kindgi_spec::ToolManifest;
use kindgi_spec::tool::ConnectionOwner;
use kindgi_tools::ToolContext;

use crate::connections::{self, CallFor, ConnectionError, run_person};
use crate::engine::ctx::RunCtx;
use crate::engine::failure::Failure;
use crate::engine::journal::WaitOutcome;
use crate::record::{format_millis, now_millis, parse_millis};
use crate::steps::wait::{WaitPurpose, WaitRequest};

/// The token id of attempt `attempt` of a call's connection wait.
fn token_of(run_id: &str, scope: &str, call_id: &str, attempt: u32) -> String {
    kindgi_core::ids::token_id(&format!("connection:{run_id}:{scope}:{call_id}:{attempt}"))
}

/// Where a connection wait is made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectSite<'a> {
    /// The step's value scope (the call's recorded values live there).
    pub scope: &'a str,
    pub node_id: Option<&'a str>,
    /// The model's id for the call.
    pub call_id: &'a str,
    /// How long the person has (the agent's approval timeout).
    pub timeout_ms: u64,
}

impl RunCtx {
    /// Waits, when it has to, until the run's person has connected every app `tool` acts
    /// with as them. `Ok`: the call may go on (its own resolution then succeeds, or fails
    /// for a reason no connecting fixes); `Err`: the run parks, or the wait timed out.
    pub(crate) async fn await_connections(
        &self,
        tool: &ToolManifest,
        site: ConnectSite<'_>,
    ) -> Result<(), Failure> {
        let actor = self.run.meta.started_by_actor.as_deref();
        let Some(person) = run_person(actor) else {
            return Ok(());
        };
        let needs = connections::declared(tool);
        let Some(connector) = self.shared.connections.as_ref() else {
            return Ok(());
        };
        if !needs.iter().any(|(_, n)| n.as_ == ConnectionOwner::Person) {
            return Ok(());
        }
        let token = self.next_connection_token(tool, site, person).await?;
        let mut scratch = ToolContext::new(self.run.tenant_id.clone());
        let call = CallFor {
            tenant: &self.run.tenant_id,
            actor,
            now: now_millis(),
        };
        let resolved = connections::prepare(
            Some(connector),
            self.shared.call_values.as_ref(),
            tool,
            call,
            &mut scratch,
            self.journal.mask(),
        )
        .await;
        let Err(e) = resolved else { return Ok(()) };
        let Some(name) = e.person_can_connect() else {
            return Ok(());
        };
        let Some((_, need)) = needs.iter().find(|(n, _)| *n == name) else {
            return Ok(());
        };
        let now = now_millis();
        let wait = ConnectionWait {
            token_id: token.clone(),
            tenant_id: self.run.tenant_id.clone(),
            run_id: self.run.id.clone(),
            person: person.to_owned(),
            app: need.app.clone(),
            permissions: need.permissions.clone(),
            tool_id: tool.id.clone(),
            call_id: site.call_id.to_owned(),
            status: PauseStatus::Open,
            created_at: format_millis(now),
            expires_at: format_millis(
                now.saturating_add(i64::try_from(site.timeout_ms).unwrap_or(i64::MAX)),
            ),
            updated_at: format_millis(now),
        };
        tracing::info!(run = %self.run.id, tool = %tool.id, app = %need.app, "the call waits for the run's person to connect the app");
        let req = WaitRequest {
            token_id: token,
            node_id: site.node_id.map(str::to_owned),
            timeout_ms: site.timeout_ms,
            purpose: WaitPurpose::Connection(Box::new(wait)),
        };
        // Never answered yet (the replay said so): this parks the run.
        self.wait(site.scope, req).await.map(drop)
    }

    /// The token of the call's first attempt the journal has not answered: an answered one
    /// (a connection came) moves on to the next; a cancelled one (timed out) fails the
    /// call; one parked on before and still open parks the run again.
    async fn next_connection_token(
        &self,
        tool: &ToolManifest,
        site: ConnectSite<'_>,
        person: &str,
    ) -> Result<String, Failure> {
        let mut attempt = 0u32;
        loop {
            let token = token_of(&self.run.id, site.scope, site.call_id, attempt);
            match self.replay.waits.get(&token) {
                Some(WaitOutcome::Resumed(_)) => attempt = attempt.saturating_add(1),
                Some(WaitOutcome::Cancelled { reason }) => {
                    return Err(self
                        .connection_wait_failed(tool, &token, person, reason)
                        .await);
                }
                None if self.replay.waits_suspended.contains(&token) => {
                    return Err(Failure::suspended(&token));
                }
                None => return Ok(token),
            }
        }
    }

    /// The call's failure after its wait `token` was cancelled: on a timeout,
    /// `connection-missing` naming the app it waited for (its row says which).
    async fn connection_wait_failed(
        &self,
        tool: &ToolManifest,
        token: &str,
        person: &str,
        reason: &str,
    ) -> Failure {
        let cancelled = || {
            Failure::fatal(format!(
                "tool-invocation-failed: the wait of tool \"{}\" for the run's person to connect an app was cancelled ({reason})",
                tool.id
            ))
        };
        if reason != "timeout" {
            return cancelled();
        }
        let row = self
            .shared
            .waits
            .get_connection_wait(token)
            .await
            .ok()
            .flatten();
        let needs = connections::declared(tool);
        let found = needs.iter().find(|(_, n)| {
            n.as_ == ConnectionOwner::Person && row.as_ref().is_none_or(|w| w.app == n.app)
        });
        let Some((name, need)) = found else {
            return cancelled();
        };
        let waited_ms = row.map_or(0, |w| {
            (parse_millis(&w.expires_at) - parse_millis(&w.created_at)).max(0) as u64
        });
        let e = ConnectionError::TimedOut {
            tool: tool.id.clone(),
            name: (*name).to_owned(),
            app: need.app.clone(),
            who: format!("the run's person (user \"{person}\")"),
            waited_ms,
            howto: connections::howto(need),
        };
        Failure::fatal(format!(
            "tool-invocation-failed: {}",
            e.into_call_error(&tool.id)
        ))
    }
}
