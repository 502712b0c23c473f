//! One model step of an agent turn as its tool calls see it: the agent, its guardrails and
//! approval rules, and where the step records its values. Shared by the calls and their
//! gates, so neither imports the other for it.

use crate::catalogue::AgentSpec;
use crate::guardrail::TurnGuardrails;

use super::hitl::EffectiveHitl;

/// What the calls of one step share.
pub(super) struct Step<'a> {
    pub agent: &'a AgentSpec,
    pub guards: &'a TurnGuardrails,
    pub hitl: &'a EffectiveHitl,
    pub node_id: &'a str,
    /// Where the step's recorded values live.
    pub value_scope: &'a str,
    /// `parallelToolCalls` (default true).
    pub parallel: bool,
}
