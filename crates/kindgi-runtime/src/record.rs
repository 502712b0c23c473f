//! The run record and the journal entry: what a run is on the wire (`kindgi runs get`,
//! `GET /v1/runs/{id}`) and what its journal holds (runtime.md §1.4). They are
//! `kindgi_core::run`'s, re-exported at their old path.

pub use kindgi_core::ids::{format_millis, now_millis, parse_millis};
pub use kindgi_core::run::{
    AGENT_TURN_CODES, AGENT_TURN_FLOW_ID, JournalEntry, JournalKind, RunAgent, RunFailure, RunMeta,
    RunRecord, RunStatus, Segment,
};
