//! The steps a run executes inside a node: an agent turn ([`agent`]) with its guardrails
//! ([`guardrail`]), a wait on another party's answer ([`wait`]), a pausing tool call
//! ([`pause`]) and a call waiting for its person to connect an app ([`connect`]). Each is the executing half (`impl RunCtx`); what answers a wait from outside
//! is the service's. A step imports the engine's vocabulary, never the driver or the service.

pub mod agent;
pub(crate) mod connect;
pub mod guardrail;
pub(crate) mod pause;
pub(crate) mod wait;
