//! The guardrail definition (`guardrail.schema.json` 1.1.0).
//!
//! Lossless like the agent types: absent stays absent, `number` fields keep their JSON form,
//! and the open parts (`config`, `configSchema`, `judgeCapabilities`) are raw JSON. `kind` and
//! `action.on-violation` are open strings in the schema (it lists examples, not an enum), so
//! they are strings here too; constants name the known values.
//!
//! Beyond the schema (Kindgi's extension, docs/guardrails.md): `stage` (`after-turn`, the
//! default, or `before-tool`) and `scope.tools` (the tools whose calls a before-tool
//! guardrail judges). Both are absent unless set, so a reference definition round-trips.

use crate::tool::{CodeArtifactRef, NetworkPolicy, RuntimeLimits, SandboxMode, TypedNeeds};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// Known guardrail kinds (the schema's examples).
pub const GUARDRAIL_KINDS: [&str; 3] = ["zero-llm", "llm-judge", "external"];

/// Known `on-violation` actions (the schema's examples).
pub const ON_VIOLATION_ACTIONS: [&str; 5] = ["halt", "retry", "escalate", "log-only", "compensate"];

/// A guardrail definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardrailDefinition {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `zero-llm`, `llm-judge`, `external`, … (open).
    pub kind: String,
    /// The check's id (`acme.checks.min-length`).
    pub check: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
    /// JSON Schema for `config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_schema: Option<Map<String, Value>>,
    pub action: GuardrailAction,
    /// Absent means `error`: see [`GuardrailDefinition::severity_or_default`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<GuardrailScope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<GuardrailBudget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<RuntimeLimits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkPolicy>,
    /// The schema's guardrail `needsSpec` has no `connections`; the shared type reads it
    /// anyway (a superset), and writes back only what was there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_spec: Option<TypedNeeds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_artifact_ref: Option<CodeArtifactRef>,
    /// What an `llm-judge` guardrail may use (open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_capabilities: Option<Map<String, Value>>,
    /// When it judges (extension): absent means after the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<GuardrailStage>,
}

/// When a guardrail judges (extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuardrailStage {
    /// Once per turn, on the final answer (the reference's only stage).
    AfterTurn,
    /// Before each call it judges starts; a refusal is the call's result.
    BeforeTool,
}

impl GuardrailDefinition {
    pub fn severity_or_default(&self) -> Severity {
        self.severity.unwrap_or(Severity::Error)
    }

    /// `scope.when` with its default applied (`always`).
    pub fn when(&self) -> ScopeWhen {
        self.scope
            .as_ref()
            .and_then(|s| s.when)
            .unwrap_or(ScopeWhen::Always)
    }
}

/// What happens on a violation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardrailAction {
    /// `halt`, `retry`, `escalate`, `log-only`, `compensate`, … (open).
    #[serde(rename = "on-violation")]
    pub on_violation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensate_with: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetryPolicy {
    /// 1..=10.
    pub max_attempts: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Error,
    Critical,
}

/// Where the guardrail applies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardrailScope {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<ScopeWhen>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenants: Option<Vec<String>>,
    /// Before-tool guardrails only (extension): the tools whose calls it judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScopeWhen {
    Always,
    CiOnly,
    RuntimeOnly,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardrailBudget {
    /// Kept as the JSON number it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency_ms: Option<u64>,
}
