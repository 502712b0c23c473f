//! Tool manifest validation: every problem at once, each with a JSON Pointer and a message a
//! person can act on.
//!
//! The checks run on the raw JSON, so a manifest with many mistakes gets them all in one
//! answer; only a manifest with none is turned into a typed [`ToolManifest`]. Checks that
//! need a JSON Schema engine (the manifest's own shape, whether `input`/`output` and the
//! `needsSpec` schemas compile) go through the caller's [`SchemaEngine`], so this crate stays
//! free of any engine. Order, as the reference's `validateToolManifest` (tool.md §5), then
//! the rules it lacks:
//!
//! 1. the manifest is an object (else that is the only problem); a `handler` key is dropped;
//! 2. the shape, against the embedded 1.3.0 schema ([`TOOL_SCHEMA_1_3_0`]), Ajv pointers and messages;
//! 3. the id: the reserved `kindgi_` prefix, then the [`ToolId`] rule; the version has no leading zeros;
//! 4. `input`, then `output` compile (pack: 2020-12 strict; `transport: "mcp"`: the declared dialect);
//! 5. `needsSpec.secrets` then `needsSpec.env` schemas compile; env defaults are strings;
//! 6. an HTTP `spec.urlTemplate` fills placeholders in its path and query only;
//! 7. MCP endpoint, `spec`/handler exclusivity, `pauses`, filesystem artifacts in
//!    production, `mutating: false` against world-changing effects, connection auth.

use crate::tool::{EffectKind, ToolManifest};
use crate::tool_id::{BUILT_IN_TOOL_PREFIX, ToolId, Version, VersionError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The tool manifest JSON Schema, version 1.3.0: the public 1.1.0 schema extended with the
/// fields of seed 000 (`pauses`, `resultIsOutsideData`, `needsSpec.connections`,
/// `HttpAuthSpec` kind `connection`).
pub const TOOL_SCHEMA_1_3_0: &str = include_str!("../schemas/tool.schema.json");

/// The `$id` of the tool manifest schema (unchanged from 1.1.0).
pub const TOOL_SCHEMA_URI: &str = "https://kindgi.com/schemas/v1/tool.schema.json";

/// Appended to a "strict mode" compile error of `input`/`output`.
pub const STRICT_MODE_HINT: &str =
    ". For a field that may hold any JSON value, `{}` (a `serde_json::Value`) compiles.";

/// The URL schemes an MCP endpoint may use.
pub const MCP_ENDPOINT_SCHEMES: [&str; 3] = ["mcp+stdio://", "mcp+http://", "mcp+sse://"];

/// One thing wrong with a manifest. Serializes as the reference's issue `{path, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Problem {
    /// JSON Pointer into the manifest (`""` is the manifest itself).
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(manifest)"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// How a tool's `input`/`output` schema is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaMode {
    /// Draft 2020-12, strict (every tool that is not an MCP server's).
    Pack,
    /// `transport: "mcp"`: the dialect `$schema` declares (draft-06, draft-07, 2019-09,
    /// 2020-12), not strict.
    Mcp,
}

/// Which of a tool's schemas is being compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaSide {
    Input,
    Output,
}

/// The JSON Schema engine validation runs on; the caller provides it (kindgi-tools
/// implements it over kindgi-schema).
pub trait SchemaEngine {
    /// Err(message) when `schema` does not compile (message as the engine reports it).
    /// In [`SchemaMode::Pack`] a `$schema` other than 2020-12 does not compile, with the
    /// dialect message (`… isn't a JSON Schema dialect Kindgi validates here: 2020-12.`).
    fn check_schema(
        &self,
        schema: &Value,
        mode: SchemaMode,
        side: SchemaSide,
    ) -> Result<(), String>;
    /// Err(message) when an env/secret needsSpec schema does not compile (Ajv2020 strict + `x-kindgi-tunable`).
    fn check_need_schema(&self, schema: &Value) -> Result<(), String>;
    /// Validates `instance` against `schema` (2020-12 strict); each problem is (instancePath, message).
    fn validate(&self, schema: &Value, instance: &Value) -> Vec<Problem>;
}

/// What the caller knows that the manifest does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ManifestCheck {
    /// A production server: a `filesystem` code artifact is refused.
    pub production: bool,
    /// Whether the tool has an imperative handler; `None` on the wire path (`POST /v1/tools`,
    /// a pack's index), where a manifest never carries one.
    pub has_handler: Option<bool>,
}

/// Validates a tool manifest; the typed manifest when there is no problem, else all of them.
pub fn validate_manifest(
    raw: &Value,
    check: &ManifestCheck,
    engine: &dyn SchemaEngine,
) -> Result<ToolManifest, Vec<Problem>> {
    let Some(object) = raw.as_object() else {
        return Err(vec![Problem::new("", "must be an object")]);
    };
    // A `handler` key can ride along from an SDK's in-process object; it is not wire data.
    let stripped;
    let (manifest, object) = if object.contains_key("handler") {
        let mut copy = object.clone();
        copy.remove("handler");
        stripped = Value::Object(copy);
        (&stripped, stripped.as_object().unwrap_or(object))
    } else {
        (raw, object)
    };

    let mut problems = engine.validate(tool_schema(), manifest);
    let id = object.get("id").and_then(Value::as_str).unwrap_or("");

    check_id(object, &mut problems);
    check_version(object, &mut problems);
    check_io_schemas(object, engine, &mut problems);
    check_needs_spec(object, engine, &mut problems);
    check_url_template(object, &mut problems);
    check_mcp_endpoint(object, &mut problems);
    check_spec_and_handler(object, check, &mut problems);
    check_pauses(object, check, &mut problems);
    check_code_artifact(object, check, &mut problems);
    check_mutating(object, &mut problems);
    check_connection_auth(object, &mut problems);

    if !problems.is_empty() {
        return Err(problems);
    }
    ToolManifest::deserialize(manifest).map_err(|e| {
        // The schema and the types agree, so this means the engine let through something
        // the types cannot hold (a float where an integer belongs, an out-of-range number).
        vec![Problem::new(
            "",
            format!("tool \"{id}\" cannot be read as a manifest: {e}"),
        )]
    })
}

/// The embedded 1.3.0 schema, parsed once.
pub fn tool_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        // The text is part of this crate and a unit test parses it; `Null` (which would
        // make every manifest fail the shape check loudly) is unreachable in practice.
        serde_json::from_str(TOOL_SCHEMA_1_3_0).unwrap_or(Value::Null)
    })
}

/// Escapes one JSON Pointer reference token (`~` → `~0`, `/` → `~1`).
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn is_mcp(object: &Map<String, Value>) -> bool {
    object.get("transport").and_then(Value::as_str) == Some("mcp")
}

fn check_id(object: &Map<String, Value>, problems: &mut Vec<Problem>) {
    let Some(id) = object.get("id").and_then(Value::as_str) else {
        return; // the shape check reports a missing or non-string id
    };
    if id.is_empty() {
        return; // minLength
    }
    if id.starts_with(BUILT_IN_TOOL_PREFIX) {
        problems.push(Problem::new(
            "/id",
            format!("must not start with \"{BUILT_IN_TOOL_PREFIX}\""),
        ));
        return;
    }
    if let Err(e) = ToolId::parse(id) {
        problems.push(Problem::new("/id", e.to_string()));
    }
}

fn check_version(object: &Map<String, Value>, problems: &mut Vec<Problem>) {
    let Some(version) = object.get("version").and_then(Value::as_str) else {
        return;
    };
    // Only what the schema's `^\d+\.\d+\.\d+$` lets through is ours to judge.
    if let Err(e @ (VersionError::LeadingZero { .. } | VersionError::TooLarge { .. })) =
        Version::parse(version)
    {
        problems.push(Problem::new("/version", e.to_string()));
    }
}

fn check_io_schemas(
    object: &Map<String, Value>,
    engine: &dyn SchemaEngine,
    problems: &mut Vec<Problem>,
) {
    let mode = if is_mcp(object) {
        SchemaMode::Mcp
    } else {
        SchemaMode::Pack
    };
    for (key, side) in [("input", SchemaSide::Input), ("output", SchemaSide::Output)] {
        let Some(schema) = object.get(key).filter(|s| s.is_object()) else {
            continue;
        };
        if let Err(why) = engine.check_schema(schema, mode, side) {
            let mut message = format!("Tool {key} schema does not compile: {why}");
            if why.contains("strict mode") {
                // As the reference does: say how to accept any JSON, the usual reason a
                // schema trips strict mode.
                message.push_str(STRICT_MODE_HINT);
            }
            problems.push(Problem::new(format!("/{key}"), message));
        }
    }
}

fn check_needs_spec(
    object: &Map<String, Value>,
    engine: &dyn SchemaEngine,
    problems: &mut Vec<Problem>,
) {
    let Some(needs) = object.get("needsSpec").and_then(Value::as_object) else {
        return;
    };
    for slot in ["secrets", "env"] {
        let Some(entries) = needs.get(slot).and_then(Value::as_object) else {
            continue;
        };
        for (name, schema) in entries {
            if !schema.is_object() {
                continue; // the shape check says "must be object"
            }
            let path = format!("/needsSpec/{slot}/{}", pointer_token(name));
            if let Err(why) = engine.check_need_schema(schema) {
                problems.push(Problem::new(
                    path.clone(),
                    format!("doesn't compile: {why}"),
                ));
            }
            if slot == "env" && schema.get("default").is_some_and(|d| !d.is_string()) {
                problems.push(Problem::new(
                    format!("{path}/default"),
                    "must be a string: env values are strings",
                ));
            }
        }
    }
}

/// tool.md §5 step 9: placeholders may fill the path and query, never the scheme or host.
fn check_url_template(object: &Map<String, Value>, problems: &mut Vec<Problem>) {
    let Some(spec) = object.get("spec").and_then(Value::as_object) else {
        return;
    };
    if spec.get("kind").and_then(Value::as_str) != Some("http") {
        return;
    }
    let Some(template) = spec.get("urlTemplate").and_then(Value::as_str) else {
        return;
    };
    if let Some(reason) = url_template_problem(template) {
        problems.push(Problem::new("/spec/urlTemplate", reason));
    }
}

/// Why an HTTP tool's `urlTemplate` has a bad origin, in the reference's words; `None` when
/// it is fine.
pub fn url_template_problem(template: &str) -> Option<&'static str> {
    let lower = template.get(..8).unwrap_or(template).to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &template[8..]
    } else if lower.starts_with("http://") {
        &template[7..]
    } else {
        return Some("must start with http:// or https:// and a host");
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if authority.contains(['{', '}']) {
        return Some("fills {placeholders} in its path and query only, never in its host or port");
    }
    if authority.is_empty() {
        return Some("must name a host");
    }
    None
}

fn check_mcp_endpoint(object: &Map<String, Value>, problems: &mut Vec<Problem>) {
    if !is_mcp(object) {
        return;
    }
    let example =
        "e.g. \"mcp+stdio://npx -y @acme/weather-server\" or \"mcp+http://127.0.0.1:3001/mcp\"";
    match object.get("mcpEndpoint") {
        None => problems.push(Problem::new(
            "/mcpEndpoint",
            format!(
                "is required when transport is \"mcp\": give the MCP server's endpoint, {example}"
            ),
        )),
        Some(Value::String(endpoint)) => {
            let scheme = MCP_ENDPOINT_SCHEMES
                .iter()
                .find(|s| endpoint.starts_with(**s));
            match scheme {
                None => problems.push(Problem::new(
                    "/mcpEndpoint",
                    format!(
                        "\"{endpoint}\" is not an MCP endpoint: it must start with mcp+stdio://, mcp+http:// or mcp+sse://, {example}"
                    ),
                )),
                Some(scheme) if endpoint[scheme.len()..].trim().is_empty() => problems.push(Problem::new(
                    "/mcpEndpoint",
                    format!("\"{endpoint}\" names no command or address after {scheme}: {example}"),
                )),
                Some(_) => {}
            }
        }
        Some(_) => {} // the shape check says "must be string"
    }
}

fn check_spec_and_handler(
    object: &Map<String, Value>,
    check: &ManifestCheck,
    problems: &mut Vec<Problem>,
) {
    let has_spec = object.contains_key("spec");
    match check.has_handler {
        Some(true) if has_spec => {
            problems.push(Problem::new("/handler", "handler + spec both set"))
        }
        Some(false) if !has_spec && !is_mcp(object) => {
            problems.push(Problem::new("/handler", "handler + spec both absent"))
        }
        _ => {}
    }
}

fn check_pauses(object: &Map<String, Value>, check: &ManifestCheck, problems: &mut Vec<Problem>) {
    if object.get("pauses") != Some(&Value::Bool(true)) {
        return;
    }
    let why = if object.contains_key("spec") {
        Some(
            "a tool with a declarative `spec` cannot pause: only a pack tool with a handler can; drop `pauses` or write a handler",
        )
    } else if is_mcp(object) {
        Some("an MCP tool cannot pause: only a pack tool with a handler can; drop `pauses`")
    } else if check.has_handler == Some(false) {
        Some(
            "a tool without a handler cannot pause: only a pack tool with a handler can; drop `pauses` or write a handler",
        )
    } else {
        None
    };
    if let Some(why) = why {
        problems.push(Problem::new("/pauses", why));
    }
}

fn check_code_artifact(
    object: &Map<String, Value>,
    check: &ManifestCheck,
    problems: &mut Vec<Problem>,
) {
    if !check.production {
        return;
    }
    let kind = object
        .get("codeArtifactRef")
        .and_then(|c| c.get("kind"))
        .and_then(Value::as_str);
    if kind == Some("filesystem") {
        problems.push(Problem::new(
            "/codeArtifactRef/kind",
            "a \"filesystem\" code artifact is for local development and is refused in production: \
             publish the handler as an OCI artifact ({\"kind\": \"oci\", \"imageRef\", \"modulePath\", \"artifactVersion\"})",
        ));
    }
}

fn check_mutating(object: &Map<String, Value>, problems: &mut Vec<Problem>) {
    if object.get("mutating") != Some(&Value::Bool(false)) {
        return;
    }
    let Some(effects) = object.get("effects").and_then(Value::as_array) else {
        return;
    };
    let changing: Vec<String> = effects
        .iter()
        .enumerate()
        .filter_map(|(i, effect)| {
            let kind = effect.get("kind").and_then(Value::as_str)?;
            let parsed: EffectKind = serde_json::from_value(Value::String(kind.to_owned())).ok()?;
            parsed
                .is_world_changing()
                .then(|| format!("\"{kind}\" (/effects/{i})"))
        })
        .collect();
    if !changing.is_empty() {
        problems.push(Problem::new(
            "/mutating",
            format!(
                "is false, but the tool declares effects that change the world: {}; set `mutating` to true, or remove those effects if the tool only reads",
                changing.join(", ")
            ),
        ));
    }
}

fn check_connection_auth(object: &Map<String, Value>, problems: &mut Vec<Problem>) {
    let Some(auth) = object.get("spec").and_then(|s| s.get("authorization")) else {
        return;
    };
    if auth.get("kind").and_then(Value::as_str) != Some("connection") {
        return;
    }
    let Some(name) = auth.get("connection").and_then(Value::as_str) else {
        return;
    };
    let declared = object
        .get("needsSpec")
        .and_then(|n| n.get("connections"))
        .and_then(Value::as_object);
    if declared.is_some_and(|d| d.contains_key(name)) {
        return;
    }
    let known = match declared {
        Some(d) if !d.is_empty() => {
            let names: Vec<String> = d.keys().map(|k| format!("\"{k}\"")).collect();
            format!("it declares {}", names.join(", "))
        }
        _ => "it declares none".to_owned(),
    };
    problems.push(Problem::new(
        "/spec/authorization/connection",
        format!(
            "names connection \"{name}\", which needsSpec.connections does not declare ({known}): declare it as \
             \"needsSpec\": {{\"connections\": {{\"{name}\": {{\"app\": …, \"permissions\": […], \"as\": \"person\" or \"company\"}}}}}}"
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_schema_parses_and_is_1_3_0() {
        let schema = tool_schema();
        assert_eq!(schema["$id"], TOOL_SCHEMA_URI);
        assert_eq!(schema["$comment"], "schema-version: 1.3.0");
        for field in [
            "pauses",
            "resultIsOutsideData",
            "needsApprovalWhenUnattended",
        ] {
            assert_eq!(schema["properties"][field]["type"], "boolean", "{field}");
        }
        assert!(schema["properties"]["needsSpec"]["properties"]["connections"].is_object());
        let auth_kinds: Vec<&Value> = schema["$defs"]["HttpAuthSpec"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| &b["properties"]["kind"]["const"])
            .collect();
        assert_eq!(auth_kinds, ["bearer", "header", "connection"]);
    }

    #[test]
    fn url_templates() {
        for ok in [
            "https://api.example.com/{id}?q={q}",
            "http://localhost:8080/{id}",
            "HTTPS://API.EXAMPLE.COM/{id}",
            "https://api.example.com",
        ] {
            assert_eq!(url_template_problem(ok), None, "{ok}");
        }
        let host =
            Some("fills {placeholders} in its path and query only, never in its host or port");
        for bad in [
            "https://{host}/x",
            "https://api.{domain}/x",
            "https://api.example.com:{port}/x",
            "https://{user}@api.example.com/x",
        ] {
            assert_eq!(url_template_problem(bad), host, "{bad}");
        }
        let scheme = Some("must start with http:// or https:// and a host");
        for bad in [
            "{scheme}://api.example.com/x",
            "ftp://api.example.com/x",
            "",
            "héllo",
            "http:/x",
        ] {
            assert_eq!(url_template_problem(bad), scheme, "{bad}");
        }
        assert_eq!(url_template_problem("https:///x"), Some("must name a host"));
        assert_eq!(url_template_problem("https://?q"), Some("must name a host"));
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
    }
}
