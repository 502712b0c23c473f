//! A pausing call's wait (seed 000): the record kept beside the run's journal while another
//! system holds the call's ticket. The token itself is never stored, only its id
//! ([`crate::ids::wait_token_id`]).

/// Where a pausing call's wait stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PauseStatus {
    /// The ticket is out; the call has not answered yet or the run waits.
    Open,
    /// The other system answered.
    Answered,
    /// Nobody answered in time.
    Expired,
    /// The call answered at once, failed, was re-issued after a crash, or its run ended.
    Closed,
}

impl PauseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PauseStatus::Open => "open",
            PauseStatus::Answered => "answered",
            PauseStatus::Expired => "expired",
            PauseStatus::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<PauseStatus> {
        [
            PauseStatus::Open,
            PauseStatus::Answered,
            PauseStatus::Expired,
            PauseStatus::Closed,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }
}

/// A pausing call's wait. The token itself is never stored: `token_id` is 40 hex of its
/// sha256, and a presented token is looked up by that.
#[derive(Debug, Clone, PartialEq)]
pub struct PauseRecord {
    pub token_id: String,
    pub tenant_id: String,
    pub run_id: String,
    /// The journal scope of the call's value (`<scope>`), with `call_id` naming the call.
    pub scope: String,
    pub node_id: Option<String>,
    pub call_id: String,
    pub tool_id: String,
    pub tool_version: String,
    pub status: PauseStatus,
    pub created_at: String,
    pub expires_at: String,
    pub updated_at: String,
}
