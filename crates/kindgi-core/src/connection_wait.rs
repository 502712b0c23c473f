//! A call waiting for its run's person to connect an app (seed 004 "Calls that run together";
//! docs/connections.md): the record kept beside the run's journal while an agent's call of a
//! tool with an `as: person` connection waits for that person to connect the app (or to
//! connect it again granting the permissions the tool declares).
//!
//! Journal first, as for every wait: the run parks on `wait.suspended {tokenId}`, and a
//! new or replaced connection of the person to the app — or the sweeper finding one — journals
//! `wait.resumed` on the run as the row moves (`open → answered`), in one step. The row is
//! what lets another process find the runs waiting on `(tenant, person, app)`.

use crate::pause::PauseStatus;

/// A call waiting for a person's connection. Its status is a pause's: `open` while the run
/// waits, `answered` once a connection came (the call is retried), `expired` when nobody
/// connected in time, `closed` when its run ended first.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionWait {
    /// The wait's token id: 40 hex of sha256 `connection:<runId>:<scope>:<callId>:<attempt>`
    /// ([`crate::ids::token_id`]). No token is handed out: nobody answers it but a connection.
    pub token_id: String,
    pub tenant_id: String,
    pub run_id: String,
    /// The run's person (the user id, without `user:`).
    pub person: String,
    /// The app's entry id (`google`).
    pub app: String,
    /// Every permission key the tool declares for the connection.
    pub permissions: Vec<String>,
    pub tool_id: String,
    /// The model's id for the call.
    pub call_id: String,
    pub status: PauseStatus,
    /// RFC 3339.
    pub created_at: String,
    pub expires_at: String,
    pub updated_at: String,
}

/// Which open connection waits to list: every filter that is set must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConnectionWaitQuery {
    pub tenant_id: Option<String>,
    pub person: Option<String>,
    pub app: Option<String>,
    pub run_id: Option<String>,
    /// Only those whose `expiresAt` is at or before this (ms).
    pub due_at: Option<i64>,
}

impl ConnectionWaitQuery {
    /// True when `w` is open and passes every filter.
    pub fn matches(&self, w: &ConnectionWait) -> bool {
        let eq = |f: &Option<String>, v: &str| f.as_deref().is_none_or(|f| f == v);
        w.status == PauseStatus::Open
            && eq(&self.tenant_id, &w.tenant_id)
            && eq(&self.person, &w.person)
            && eq(&self.app, &w.app)
            && eq(&self.run_id, &w.run_id)
            && self
                .due_at
                .is_none_or(|at| crate::ids::parse_millis(&w.expires_at) <= at)
    }
}
