//! The agent definition (`agent.schema.json` 1.6.0), plus `parallelToolCalls` (seed 004).
//!
//! Lossless: parse → serialize gives the same JSON. Absent optional fields stay absent (no
//! defaults are written back), numbers the schema types as `number` keep their exact JSON
//! form ([`Number`]), and the places the schema leaves open (`capabilities[]` entries, the
//! output `schema`, a parameter's `default`, including `null`) are kept as raw JSON. Where the
//! schema is closed (`additionalProperties: false`) unknown keys are refused.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};

/// An agent definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentDefinition {
    /// `<pack>.<agent>` by convention (`acme.citation-verifier`).
    pub id: String,
    /// Semver; a prerelease is allowed (`1.0.0-beta.1`).
    pub version: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub instructions: Instructions,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Vec<BlockRef>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_settings: Option<BlockRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<PromptParameter>>,
    /// Capability grants; each entry is an open object (`capability.schema.json`).
    pub capabilities: Vec<Map<String, Value>>,
    pub tools: Vec<ToolRef>,
    pub retrieval: Vec<RetrievalIntent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<AgentMemory>,
    /// Guardrail ids.
    pub guardrails: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_policy: Option<ConversationPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<TurnBudget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<AgentOutputSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_errors: Option<ToolErrorsSpec>,
    /// Seed 004 (runtime 0.3.0): `false` runs every tool call of a model step on its own.
    /// Absent means `true` (read-only calls run together, up to 8 at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
}

impl AgentDefinition {
    /// `parallelToolCalls` with its default applied.
    pub fn parallel_tool_calls(&self) -> bool {
        self.parallel_tool_calls.unwrap_or(true)
    }
}

/// The system prompt: inline text, or a reference to a versioned prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Instructions {
    Text(String),
    Prompt(PromptRef),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptRef {
    /// Dotted kebab id (`acme.prompts.triage`).
    pub prompt: String,
    pub version: String,
}

/// A versioned settings block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockRef {
    pub id: String,
    pub version: String,
}

/// A tool the agent may call, by id and semver range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolRef {
    pub id: String,
    /// A semver range matched against the tool's versions.
    pub version: String,
}

/// A prompt parameter the caller fills in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptParameter {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: PromptParameterType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Any JSON; `Some(Value::Null)` is an explicit `"default": null`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub default: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptParameterType {
    String,
    Number,
    Boolean,
    Date,
}

/// What memory the agent reads before a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetrievalIntent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<RetrievalSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<RetrievalRole>>,
    pub scope: RetrievalScope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RetrievalMode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalSource {
    Facts,
    Conversations,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalRole {
    User,
    Agent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetrievalScope {
    SameConversation,
    SameUser,
    SameSegment,
    SameProject,
    Tenant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalMode {
    Keyword,
    Semantic,
    Both,
}

/// What the agent remembers and which fact types shape its instructions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentMemory {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remember: Option<RememberSpec>,
}

/// Lets the agent call the built-in `kindgi_remember` tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RememberSpec {
    pub types: Vec<String>,
    pub scope: RememberScope,
    /// 1..=3650.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_days: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RememberScope {
    SameUser,
    SameConversation,
    SameProject,
    Tenant,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationPolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_limit: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_close_after_inactive_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitl_after_turns: Option<u64>,
    /// Approval gates (`{afterTurns?, tools?, defaultReviewerRole?, timeoutMs?, onTimeout?}`,
    /// runtime.md §4), beyond agent.schema.json 1.6.0: kept as written; the runtime's
    /// `kindgi_runtime::agent::hitl` checks and applies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitl: Option<Value>,
}

/// Per-turn limits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnBudget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u64>,
    /// Kept as the JSON number it was (`1` stays `1`, not `1.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wall_ms: Option<u64>,
}

/// Structured output: the final answer must validate against `schema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentOutputSpec {
    pub schema: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repairs: Option<u64>,
}

/// How the agent loop answers a failed tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolErrorsSpec {
    /// 0..=10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_on: Option<Vec<ToolErrorKind>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolErrorKind {
    InvalidArguments,
    UnknownTool,
    ToolError,
}

/// Deserializes a field that is present as `Some(value)`, `null` included (serde's
/// `Option` would read an explicit `null` as absent and lose it).
pub(crate) fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}
