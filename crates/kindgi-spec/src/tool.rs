//! The tool manifest, schema version 1.3.0 (seed 000): the JSON-serialisable half of a tool.
//!
//! Every optional field is an `Option` (or an empty-skipping collection) so a manifest
//! round-trips to the same JSON it was read from: absent stays absent, defaults are applied
//! by the accessors (`is_mutating`, `transport_or_default`, …), never written back.
//!
//! Deserializing checks the shape only (unknown keys are refused at every level); the rules
//! beyond shape (id convention, schemas that compile, origin of an HTTP URL, …) are
//! [`crate::validate::validate_manifest`]'s. `id` and `version` stay `String`s so any manifest
//! read from the wire can be held and reported on; [`ToolManifest::tool_id`] and
//! [`ToolManifest::parsed_version`] give the checked forms.

use crate::tool_id::{ToolId, ToolIdError, Version, VersionError};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool manifest (`tool.schema.json` 1.3.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolManifest {
    /// `<pack-id>.<tool-name>`, or a bare `kindgi_…` id for a tool built into the runtime.
    pub id: String,
    pub description: String,
    /// Plain `X.Y.Z`.
    pub version: String,
    /// JSON Schema of the input (Draft 2020-12, or the declared dialect for MCP tools).
    pub input: Value,
    /// JSON Schema of the output.
    pub output: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<Vec<Need>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Vec<Effect>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// Absent means `true`: see [`ToolManifest::is_mutating`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutating: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_approval_when_unattended: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pauses: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_is_outside_data: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<RuntimeLimits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_spec: Option<TypedNeeds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_artifact_ref: Option<CodeArtifactRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ToolSpec>,
}

impl ToolManifest {
    /// `mutating` with its default applied: absent means `true` (the safe side).
    pub fn is_mutating(&self) -> bool {
        self.mutating.unwrap_or(true)
    }

    /// The id as a [`ToolId`]: a pack id, or a well-formed built-in (`kindgi_…`) id.
    pub fn tool_id(&self) -> Result<ToolId, ToolIdError> {
        if self.id.starts_with(crate::tool_id::BUILT_IN_TOOL_PREFIX) {
            ToolId::built_in(&self.id)
        } else {
            ToolId::parse(&self.id)
        }
    }

    /// The version as a [`Version`] (plain `X.Y.Z`, no leading zeros).
    pub fn parsed_version(&self) -> Result<Version, VersionError> {
        Version::parse(&self.version)
    }

    /// `transport` with its default applied (`auto`).
    pub fn transport_or_default(&self) -> Transport {
        self.transport.unwrap_or(Transport::Auto)
    }

    /// Whether the tool's schemas are validated in MCP mode (non-strict, any supported dialect).
    pub fn is_mcp(&self) -> bool {
        self.transport == Some(Transport::Mcp)
    }

    pub fn pauses(&self) -> bool {
        self.pauses.unwrap_or(false)
    }

    pub fn result_is_outside_data(&self) -> bool {
        self.result_is_outside_data.unwrap_or(false)
    }

    pub fn needs_approval_when_unattended(&self) -> bool {
        self.needs_approval_when_unattended.unwrap_or(false)
    }

    /// The declared effects (empty when absent).
    pub fn effects(&self) -> &[Effect] {
        self.effects.as_deref().unwrap_or(&[])
    }

    /// Seed 004's read-only rule: `mutating: false` and no effect that changes the world.
    /// This is what lets a tool run in a dry run. An MCP tool is never read-only.
    pub fn is_read_only(&self) -> bool {
        !self.is_mcp()
            && self.mutating == Some(false)
            && !self.effects().iter().any(|e| e.kind.is_world_changing())
    }
}

/// A named context slot (`tenant`, `run`, `blob`, `memory:facts`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Need {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// A declared side effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Effect {
    pub kind: EffectKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffectKind {
    Reads,
    Writes,
    Deletes,
    Network,
    SpawnsRun,
    EmitsEvent,
    ExternalSideEffect,
    SensitiveDataEgress,
}

impl EffectKind {
    pub const ALL: [EffectKind; 8] = [
        EffectKind::Reads,
        EffectKind::Writes,
        EffectKind::Deletes,
        EffectKind::Network,
        EffectKind::SpawnsRun,
        EffectKind::EmitsEvent,
        EffectKind::ExternalSideEffect,
        EffectKind::SensitiveDataEgress,
    ];

    /// The wire name (`spawns-run`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            EffectKind::Reads => "reads",
            EffectKind::Writes => "writes",
            EffectKind::Deletes => "deletes",
            EffectKind::Network => "network",
            EffectKind::SpawnsRun => "spawns-run",
            EffectKind::EmitsEvent => "emits-event",
            EffectKind::ExternalSideEffect => "external-side-effect",
            EffectKind::SensitiveDataEgress => "sensitive-data-egress",
        }
    }

    /// Effects that contradict `mutating: false` and keep a tool out of dry runs.
    pub fn is_world_changing(self) -> bool {
        matches!(
            self,
            EffectKind::Writes
                | EffectKind::Deletes
                | EffectKind::SpawnsRun
                | EffectKind::EmitsEvent
                | EffectKind::ExternalSideEffect
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Auto,
    Native,
    Mcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    None,
    ContextIsolated,
    Strict,
}

/// Sandbox-enforced resource caps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeLimits {
    /// Wire name `memMB` (not camelCase `memMb`).
    #[serde(rename = "memMB")]
    pub mem_mb: u64,
    pub cpu_ms: u64,
}

/// Network egress policy, discriminated on `kind`.
///
/// Read through a flat wire struct (`NetworkPolicyWire`): serde's internally tagged unit variants ignore
/// extra keys even under `deny_unknown_fields`, which would drop data silently.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", try_from = "NetworkPolicyWire")]
pub enum NetworkPolicy {
    None,
    Unrestricted,
    Allowlist { hosts: Vec<String> },
}

/// The flat wire shape of [`NetworkPolicy`], checked key by key.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkPolicyWire {
    kind: String,
    hosts: Option<Vec<String>>,
}

impl TryFrom<NetworkPolicyWire> for NetworkPolicy {
    type Error = String;
    fn try_from(wire: NetworkPolicyWire) -> Result<Self, String> {
        match (wire.kind.as_str(), wire.hosts) {
            ("none", None) => Ok(NetworkPolicy::None),
            ("unrestricted", None) => Ok(NetworkPolicy::Unrestricted),
            ("allowlist", Some(hosts)) => Ok(NetworkPolicy::Allowlist { hosts }),
            ("allowlist", None) => Err("network policy \"allowlist\" needs `hosts`".to_owned()),
            (kind @ ("none" | "unrestricted"), Some(_)) => Err(format!(
                "network policy \"{kind}\" takes no `hosts` (only \"allowlist\" does)"
            )),
            (other, _) => Err(format!(
                "unknown network policy kind \"{other}\", expected \"none\", \"unrestricted\" or \"allowlist\""
            )),
        }
    }
}

/// Typed, discriminated needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TypedNeeds {
    /// Environment values by name; each value is a JSON Schema for the (string) value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bindings: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// In the manifest's own order (round-trips byte for byte).
    pub connections: Option<IndexMap<String, ConnectionNeed>>,
}

/// An account at another app the tool acts with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConnectionNeed {
    pub app: String,
    pub permissions: Vec<String>,
    #[serde(rename = "as")]
    pub as_: ConnectionOwner,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionOwner {
    Person,
    Company,
}

/// Where the handler's bytes live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum CodeArtifactRef {
    #[serde(rename_all = "camelCase")]
    Oci {
        image_ref: String,
        module_path: String,
        artifact_version: String,
    },
    #[serde(rename_all = "camelCase")]
    Filesystem { module_path: String },
}

/// A declarative handler spec, discriminated on `kind`. `http` is built in; other kinds
/// are kept as raw JSON so a synthesizer registered at run time can claim them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolSpec {
    Http(HttpToolSpec),
    Other(Map<String, Value>),
}

impl ToolSpec {
    pub fn kind(&self) -> &str {
        match self {
            ToolSpec::Http(_) => "http",
            ToolSpec::Other(m) => m.get("kind").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

/// Declarative HTTP invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpToolSpec {
    /// Always `"http"`.
    pub kind: HttpKind,
    pub method: HttpMethod,
    pub url_template: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<HttpHeaderSpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<HttpAuthSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<HttpRequestBodySpec>,
    /// Default 30000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parse_json: Option<bool>,
    /// Default 200–299.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_status: Option<StatusRange>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpKind {
    Http,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl HttpMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Delete => "DELETE",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpHeaderSpec {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolSecretRef {
    pub env_name: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum HttpAuthSpec {
    #[serde(rename_all = "camelCase")]
    Bearer { secret_ref: ToolSecretRef },
    #[serde(rename_all = "camelCase")]
    Header {
        header_name: String,
        secret_ref: ToolSecretRef,
    },
    /// A connection declared in `needsSpec.connections`, sent as `Authorization: Bearer …`.
    Connection { connection: String },
}

/// How an HTTP tool builds its request body. Read through `HttpRequestBodyWire`, for the
/// same reason as [`NetworkPolicy`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "kebab-case",
    try_from = "HttpRequestBodyWire"
)]
pub enum HttpRequestBodySpec {
    JsonInput,
    InputPassthrough,
    Text { template: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpRequestBodyWire {
    kind: String,
    template: Option<String>,
}

impl TryFrom<HttpRequestBodyWire> for HttpRequestBodySpec {
    type Error = String;
    fn try_from(wire: HttpRequestBodyWire) -> Result<Self, String> {
        match (wire.kind.as_str(), wire.template) {
            ("json-input", None) => Ok(HttpRequestBodySpec::JsonInput),
            ("input-passthrough", None) => Ok(HttpRequestBodySpec::InputPassthrough),
            ("text", Some(template)) => Ok(HttpRequestBodySpec::Text { template }),
            ("text", None) => Err("request body \"text\" needs `template`".to_owned()),
            (kind @ ("json-input" | "input-passthrough"), Some(_)) => Err(format!(
                "request body \"{kind}\" takes no `template` (only \"text\" does)"
            )),
            (other, _) => Err(format!(
                "unknown request body kind \"{other}\", expected \"json-input\", \"input-passthrough\" or \"text\""
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusRange {
    pub min: u16,
    pub max: u16,
}
