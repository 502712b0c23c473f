//! The steps a run executes inside a node: an agent turn ([`agent`]) with its guardrails
//! ([`guardrail`]), a wait on another party's answer ([`wait`]) and a pausing tool call
//! ([`pause`]). Each is the executing half (`impl RunCtx`); what answers a wait from outside
//! is the service's. A step imports the engine's vocabulary, never the driver or the service.

pub mod agent;
pub mod guardrail;
pub(crate) mod pause;
pub(crate) mod wait;
