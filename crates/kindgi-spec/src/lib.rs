//! Kindgi wire types: the tool manifest 1.3.0, the pack index, pack protocol v2 messages,
//! flows, agents and guardrails — plus manifest validation.
//!
//! This crate does no I/O and depends on no schema engine: validation that needs to compile
//! or apply a JSON Schema takes a [`validate::SchemaEngine`] from the caller, so the wire
//! types stay a small crate that every other part shares.

pub mod agent;
pub mod flow;
pub mod guardrail;
pub mod pack_index;
pub mod pack_protocol;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tool;
pub mod tool_id;
pub mod validate;

pub use tool::*;
