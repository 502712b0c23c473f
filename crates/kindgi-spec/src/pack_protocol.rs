//! Pack protocol v2 (`pack-protocol.schema.json`, 2.7.0): the messages a runtime exchanges
//! with a pack service, the `info` answer, the transport bodies and the header names.
//!
//! Every struct keeps fields it does not know in an `extra` map, and every optional field is
//! an `Option` that stays absent when it was absent, so a message round-trips losslessly.
//! These types are for building and reading messages; a pack service does NOT validate
//! requests against them (or the schema) — it applies the protocol's parse rules only, and
//! tolerates unknown fields (see `kindgi_pack::service`).

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// The protocol version every message carries (`"v": 2`).
pub const PROTOCOL_VERSION: u64 = 2;

/// Request headers and response headers of the HTTP transport.
pub mod headers {
    /// The shared token; required on `/v1/invoke` and `/v1/info` (not `Authorization`).
    pub const PACK_TOKEN: &str = "kindgi-pack-token";
    /// Relative deadline in milliseconds (default [`super::DEFAULT_TIMEOUT_MS`]).
    pub const TIMEOUT_MS: &str = "kindgi-timeout-ms";
    pub const RUN_ID: &str = "kindgi-run-id";
    pub const REQUEST_ID: &str = "kindgi-request-id";
    pub const PROTOCOL: &str = "kindgi-protocol";
    /// The tenant a call is for (protocol 2.7.0), checked by a tenant-pinned service.
    pub const TENANT_ID: &str = "kindgi-tenant-id";
    /// W3C trace context (protocol 2.4.1).
    pub const TRACEPARENT: &str = "traceparent";
    /// Answer header: integer milliseconds since admission.
    pub const DURATION_MS: &str = "kindgi-duration-ms";
    /// Answer header: the index's `artifactVersion`.
    pub const ARTIFACT_VERSION: &str = "kindgi-artifact-version";
    /// Answer header on every 503: always `1`.
    pub const RETRY_AFTER: &str = "retry-after";
}

/// The longest a pausing call may make its run wait (24 days), the upper bound of a
/// `pause` answer's `timeoutMs` (docs/pauses.md).
pub const MAX_PAUSE_TIMEOUT_MS: u64 = 24 * DEFAULT_PAUSE_TIMEOUT_MS;
/// How long a pausing call waits when nothing says otherwise (24 hours).
pub const DEFAULT_PAUSE_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// The default deadline of a call when `kindgi-timeout-ms` is absent or invalid.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The largest accepted request body: exactly this many bytes is fine, one more is 413.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
/// How long a draining service waits for in-flight calls before it stops.
pub const DRAIN_MS: u64 = 8_000;
/// The default concurrency cap of a pack service.
pub const DEFAULT_MAX_CONCURRENCY: usize = 32;

/// The `v` of every message: the number 2 (`2.0` is the same number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct V2;

impl Serialize for V2 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(PROTOCOL_VERSION)
    }
}

impl<'de> Deserialize<'de> for V2 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if is_protocol_v2(&value) {
            Ok(V2)
        } else {
            Err(de::Error::custom(format_args!(
                "Expected protocol v2, got {value}"
            )))
        }
    }
}

/// Whether a JSON value is the protocol version 2 (the number; `2.0` counts, `"2"` doesn't).
pub fn is_protocol_v2(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_u64() == Some(2) || n.as_f64() == Some(2.0),
        _ => false,
    }
}

/// Deserializes a field that is present (even as `null`) into `Some`, so `null` survives.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A request: run a tool or run a guardrail check.
// Messages are built once per call and moved, never stored in bulk: boxing buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum Request {
    #[serde(rename = "invoke")]
    Invoke(ToolInvoke),
    #[serde(rename = "check-invoke")]
    CheckInvoke(CheckInvoke),
}

/// A response: a tool's result, a check's result, or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum Response {
    #[serde(rename = "result")]
    Result(ToolResult),
    #[serde(rename = "check-result")]
    CheckResult(CheckResultMessage),
    #[serde(rename = "error")]
    Error(ErrorMessage),
    /// Kindgi's extension (docs/pauses.md): a pausing tool handed `ctx.wait.link` to
    /// another system; the run waits for that system's answer. Only a tool declaring
    /// `pauses: true`, called with `ctx.wait`, may answer it.
    #[serde(rename = "pause")]
    Pause(ToolPause),
}

/// `{v, kind:"pause", timeoutMs?}`: the call waits for the other system's answer, at most
/// `timeoutMs` (absent: the ticket's `timeoutMs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolPause {
    pub v: V2,
    /// A positive number of milliseconds, at most [`MAX_PAUSE_TIMEOUT_MS`]. Kept as sent
    /// (any JSON) so a reader can say what is wrong with a bad one.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_ms: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolPause {
    pub fn new(timeout_ms: Option<u64>) -> Self {
        Self {
            v: V2,
            timeout_ms: timeout_ms.map(Value::from),
            extra: Map::new(),
        }
    }

    /// The timeout asked for: `Ok(None)` when absent, `Err` naming what is wrong when it
    /// is not a whole number of milliseconds in `1..=MAX_PAUSE_TIMEOUT_MS`.
    pub fn timeout(&self) -> Result<Option<u64>, String> {
        match &self.timeout_ms {
            None => Ok(None),
            Some(v) => pause_timeout(v).map(Some),
        }
    }
}

/// A `timeoutMs` of a pause: a whole number of milliseconds, positive, at most 24 days.
pub fn pause_timeout(value: &Value) -> Result<u64, String> {
    let ms = match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1e19)
                .map(|f| f as u64)
        }),
        _ => None,
    };
    match ms {
        Some(0) | None => Err(format!(
            "`timeoutMs` must be a positive whole number of milliseconds, got {value}"
        )),
        Some(ms) if ms > MAX_PAUSE_TIMEOUT_MS => Err(format!(
            "`timeoutMs` {ms} is longer than 24 days ({MAX_PAUSE_TIMEOUT_MS} ms), the longest a call may wait"
        )),
        Some(ms) => Ok(ms),
    }
}

/// `ctx.wait` (Kindgi's extension, docs/pauses.md): sent only in a call of a tool that
/// declares `pauses: true`. The other system answers by `POST`ing `{value}` to `link`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallWait {
    /// Unguessable, single use, scoped to the run's tenant: a capability.
    pub token: String,
    /// `{apiUrl}/v1/waits/{token}`.
    pub link: String,
    /// RFC 3339 UTC: when the wait times out unless the tool's pause asks for another.
    pub expires_at: String,
    pub timeout_ms: u64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for CallWait {
    // The token (and the link that carries it) is a capability: never in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallWait")
            .field("token", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field("timeout_ms", &self.timeout_ms)
            .finish_non_exhaustive()
    }
}

/// One connection of a call (`ctx.connections.<name>`): its app, whose it is and the
/// access token to act with. `Debug` prints no token.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallConnection {
    pub app: String,
    /// `person` or `company`.
    #[serde(rename = "as")]
    pub as_: String,
    pub access_token: String,
}

impl fmt::Debug for CallConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallConnection")
            .field("app", &self.app)
            .field("as", &self.as_)
            .field("access_token", &"<redacted>")
            .finish()
    }
}

/// Per-call context (`callContext`). Serializable only: the service adds cancellation.
/// `Debug` names the secrets but never prints their values.
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallContext {
    pub tenant_id: String,
    pub run_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// UUIDv5 computed by the runtime (2.6.0); passed through by the service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// Resolved env values the tool declares (2.5.0: strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<Map<String, Value>>,
    /// Reserved: no runtime sends it yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
    /// Settings blocks by block id (2.4.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Map<String, Value>>,
    /// The wait ticket of a call of a tool that may pause (Kindgi's extension,
    /// docs/pauses.md); absent for every other tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<CallWait>,
    /// The connections the tool declares (`needsSpec.connections`), resolved for this call,
    /// by the tool's name for each (Kindgi's extension, docs/connections.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<BTreeMap<String, CallConnection>>,
    /// Fields this version does not know (tolerated, kept).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secrets = self.secrets.as_ref().map(|s| {
            s.keys()
                .map(|k| format!("{k}: <redacted>"))
                .collect::<Vec<_>>()
        });
        f.debug_struct("CallContext")
            .field("tenant_id", &self.tenant_id)
            .field("run_id", &self.run_id)
            .field("project_id", &self.project_id)
            .field("org_id", &self.org_id)
            .field("request_id", &self.request_id)
            .field("idempotency_key", &self.idempotency_key)
            .field("env", &self.env)
            .field("secrets", &secrets)
            .field("config", &self.config)
            .field("settings", &self.settings)
            .field("wait", &self.wait)
            .field("connections", &self.connections)
            .field("extra", &self.extra)
            .finish()
    }
}

impl CallContext {
    pub fn new(tenant_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        Self {
            tenant_id: tenant_id.into(),
            run_id: run_id.into(),
            ..Self::default()
        }
    }
}

/// Which tool to run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolRef {
    pub id: String,
    /// When set, the service refuses a different indexed version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{v, kind:"invoke", tool, input, ctx}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInvoke {
    pub v: V2,
    pub tool: ToolRef,
    /// The tool's input (any JSON); `None` only when the field was absent.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub input: Option<Value>,
    pub ctx: CallContext,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolInvoke {
    pub fn new(tool: ToolRef, input: Value, ctx: CallContext) -> Self {
        Self {
            v: V2,
            tool,
            input: Some(input),
            ctx,
            extra: Map::new(),
        }
    }
}

/// Which check to run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CheckRef {
    /// The indexed guardrail's `checkId`, else its `id`.
    pub id: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{v, kind:"check-invoke", check, config, trace}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckInvoke {
    pub v: V2,
    pub check: CheckRef,
    pub config: Map<String, Value>,
    /// The run trace (`RunTrace`); `None` only when the field was absent.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub trace: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{v, kind:"result", output}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub v: V2,
    pub output: Value,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{v, kind:"check-result", result}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResultMessage {
    pub v: V2,
    pub result: CheckResult,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a guardrail check returns — open beyond the listed fields.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckResult {
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_response: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Map<String, Value>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CheckResult {
    pub fn pass() -> Self {
        Self {
            passed: true,
            ..Self::default()
        }
    }

    pub fn fail(reason: impl Into<String>) -> Self {
        Self {
            passed: false,
            reason: Some(reason.into()),
            ..Self::default()
        }
    }
}

/// Why running pack code did not produce a result (the 14 codes of `$defs/errorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    InputValidationFailed,
    OutputValidationFailed,
    HandlerImportFailed,
    HandlerShapeInvalid,
    HandlerThrow,
    CheckShapeInvalid,
    MalformedMessage,
    UnknownProtocolVersion,
    UnexpectedMessageKind,
    ToolNotInPack,
    CheckNotInPack,
    ToolVersionMismatch,
    DeadlineExceeded,
    Cancelled,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::InputValidationFailed,
        ErrorCode::OutputValidationFailed,
        ErrorCode::HandlerImportFailed,
        ErrorCode::HandlerShapeInvalid,
        ErrorCode::HandlerThrow,
        ErrorCode::CheckShapeInvalid,
        ErrorCode::MalformedMessage,
        ErrorCode::UnknownProtocolVersion,
        ErrorCode::UnexpectedMessageKind,
        ErrorCode::ToolNotInPack,
        ErrorCode::CheckNotInPack,
        ErrorCode::ToolVersionMismatch,
        ErrorCode::DeadlineExceeded,
        ErrorCode::Cancelled,
    ];

    /// The wire name (`input-validation-failed`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InputValidationFailed => "input-validation-failed",
            ErrorCode::OutputValidationFailed => "output-validation-failed",
            ErrorCode::HandlerImportFailed => "handler-import-failed",
            ErrorCode::HandlerShapeInvalid => "handler-shape-invalid",
            ErrorCode::HandlerThrow => "handler-throw",
            ErrorCode::CheckShapeInvalid => "check-shape-invalid",
            ErrorCode::MalformedMessage => "malformed-message",
            ErrorCode::UnknownProtocolVersion => "unknown-protocol-version",
            ErrorCode::UnexpectedMessageKind => "unexpected-message-kind",
            ErrorCode::ToolNotInPack => "tool-not-in-pack",
            ErrorCode::CheckNotInPack => "check-not-in-pack",
            ErrorCode::ToolVersionMismatch => "tool-version-mismatch",
            ErrorCode::DeadlineExceeded => "deadline-exceeded",
            ErrorCode::Cancelled => "cancelled",
        }
    }

    /// The code for a wire name, if it is one of the 14.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One validation issue, Ajv-shaped; open (an implementation may add fields).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireIssue {
    pub instance_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_path: Option<String>,
    /// Absent when the failure came from a model's own validation, not a schema keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
    pub message: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{v, kind:"error", code, message, toolId?, checkId?, cause?, issues?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorMessage {
    pub v: V2,
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_id: Option<String>,
    /// The serialized throw (`{name, message, stack}` for an error object).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub cause: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issues: Option<Vec<WireIssue>>,
}

impl ErrorMessage {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            v: V2,
            code,
            message: message.into(),
            tool_id: None,
            check_id: None,
            cause: None,
            issues: None,
        }
    }
}

/// One tool of `info.tools`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct InfoTool {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The answer to `GET /v1/info` (no `v`; `protocol: 2`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    pub protocol: V2,
    pub pack_id: String,
    pub pack_version: String,
    pub artifact_version: String,
    /// `sha256:<hex>` of the index file, byte for byte (2.7.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_hash: Option<String>,
    pub tools: Vec<InfoTool>,
    pub checks: Vec<String>,
    /// Required env names this process lacks, sorted (always sent by services).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_env: Option<Vec<String>>,
}

/// A transport-level (non-200) answer body: `{"error": …}`, plus `missingEnv` on a
/// missing-env 503 and `code` on a 421 tenant mismatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransportError {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_env: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// The 421 body code of a tenant-pinned service refusing a call (2.7.0).
pub const TENANT_MISMATCH_CODE: &str = "pack-tenant-mismatch";

/// Any message of the protocol (the schema's top-level `oneOf`).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Message {
    Request(Request),
    Response(Response),
    Info(Info),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn v_accepts_two_and_two_point_zero_only() {
        assert!(is_protocol_v2(&json!(2)));
        assert!(is_protocol_v2(
            &serde_json::from_str::<Value>("2.0").unwrap()
        ));
        assert!(!is_protocol_v2(&json!("2")));
        assert!(!is_protocol_v2(&json!(true)));
        assert!(!is_protocol_v2(&json!(1)));
    }

    #[test]
    fn unknown_fields_round_trip() {
        let raw = json!({"v":2,"kind":"invoke","tool":{"id":"a.b"},"input":null,
            "ctx":{"tenantId":"t","runId":"r","foo":1},"extra":true});
        let req: Request = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(serde_json::to_value(&req).unwrap(), raw);
    }

    #[test]
    fn a_pause_round_trips_and_its_timeout_is_checked() {
        let raw = json!({"v": 2, "kind": "pause", "timeoutMs": 3_600_000});
        let r: Response = serde_json::from_value(raw.clone()).unwrap();
        let Response::Pause(p) = &r else {
            panic!("{r:?}")
        };
        assert_eq!(p.timeout(), Ok(Some(3_600_000)));
        assert_eq!(serde_json::to_value(&r).unwrap(), raw);
        let bare: Response = serde_json::from_value(json!({"v": 2, "kind": "pause"})).unwrap();
        assert!(matches!(bare, Response::Pause(ref p) if p.timeout() == Ok(None)));
        assert_eq!(
            pause_timeout(&json!(MAX_PAUSE_TIMEOUT_MS)),
            Ok(2_073_600_000)
        );
        assert_eq!(pause_timeout(&json!(5000.0)), Ok(5000));
        for bad in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!("60"),
            json!(null),
            json!(MAX_PAUSE_TIMEOUT_MS + 1),
        ] {
            let e = pause_timeout(&bad).unwrap_err();
            assert!(e.contains("`timeoutMs`"), "{bad}: {e}");
        }
        assert!(
            pause_timeout(&json!(MAX_PAUSE_TIMEOUT_MS + 1))
                .unwrap_err()
                .contains("24 days")
        );
    }

    #[test]
    fn ctx_wait_is_sent_only_when_set_and_its_token_is_never_debug_printed() {
        let mut ctx = CallContext::new("t", "r");
        assert!(serde_json::to_value(&ctx).unwrap().get("wait").is_none());
        ctx.wait = Some(CallWait {
            token: "wt_secret".into(),
            link: "https://api.example/v1/waits/wt_secret".into(),
            expires_at: "2026-12-02T00:00:00.000Z".into(),
            timeout_ms: 86_400_000,
            extra: Map::new(),
        });
        let v = serde_json::to_value(&ctx).unwrap();
        assert_eq!(
            v["wait"],
            json!({"token": "wt_secret", "link": "https://api.example/v1/waits/wt_secret",
                "expiresAt": "2026-12-02T00:00:00.000Z", "timeoutMs": 86_400_000})
        );
        assert!(!format!("{ctx:?}").contains("wt_secret"));
    }

    #[test]
    fn ctx_secrets_travel_as_a_string_map_and_are_never_debug_printed() {
        let mut ctx = CallContext::new("t", "r");
        let mut secrets = Map::new();
        secrets.insert("API_KEY".into(), json!("s3cret-value"));
        ctx.secrets = Some(secrets);
        let v = serde_json::to_value(&ctx).unwrap();
        assert_eq!(v["secrets"], json!({"API_KEY": "s3cret-value"}));
        let printed = format!("{ctx:?}");
        assert!(printed.contains("API_KEY"), "{printed}");
        assert!(!printed.contains("s3cret-value"), "{printed}");
    }

    #[test]
    fn error_codes_round_trip() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        }
    }
}
