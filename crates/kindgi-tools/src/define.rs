//! Defining tools: the builder ([`Tool::define`]) and the manifest path ([`define_manifest`]).
//!
//! A tool is defined once, checked once, and compiled once:
//!
//! - the builder writes the manifest as wire JSON (every method is named after the manifest
//!   field it sets) and remembers the handler;
//! - a typed handler `async fn(I, ToolContext) -> Result<O, HandlerError>` gives the input
//!   and output schemas (derived from `I` and `O` with schemars, see [`crate::derive`]) unless
//!   [`ToolBuilder::input`]/[`ToolBuilder::output`] set them explicitly;
//! - [`ToolBuilder::build`] runs the same manifest validation as the wire path
//!   (`kindgi_spec::validate::validate_manifest`, with `has_handler`), requires the input to
//!   be an object type, synthesizes the handler of a declarative (`spec`) tool, and keeps the
//!   validators compiled during the check in the [`Tool`].
//!
//! `mutating` left unset means `true` (the manifest omits it; readers apply the default).

use kindgi_spec::validate::{ManifestCheck, Problem, TOOL_SCHEMA_URI, validate_manifest};
use kindgi_spec::{
    CodeArtifactRef, Effect, EffectKind, Need, NetworkPolicy, RuntimeLimits, SandboxMode, ToolSpec,
    Transport, TypedNeeds,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use crate::compiled::{CompiledTool, SchemaSlot};
use crate::context::ToolContext;
use crate::derive::{input_schema_for, is_object_schema, output_schema_for};
use crate::engine::ToolSchemaEngine;
use crate::synth::SynthesizerRegistry;
use crate::tool::{Handler, HandlerError, Tool};

/// The kind of definition failure (the reference's `ToolError` codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DefineErrorCode {
    /// The manifest is wrong (shape, id, version, needs, spec, handler).
    InvalidToolDefinition,
    /// Only the `input` and/or `output` schema is wrong: it does not compile.
    InvalidSchema,
}

impl DefineErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            DefineErrorCode::InvalidToolDefinition => "invalid-tool-definition",
            DefineErrorCode::InvalidSchema => "invalid-schema",
        }
    }
}

/// Why a tool could not be defined: every problem found, each at a JSON Pointer into the
/// manifest, and a one-line summary.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
pub struct DefineError {
    pub code: DefineErrorCode,
    pub tool_id: String,
    pub message: String,
    pub problems: Vec<Problem>,
}

impl DefineError {
    /// Builds the error (code and summary) from the problems a manifest check found.
    pub fn from_problems(tool_id: &str, problems: Vec<Problem>) -> Self {
        let schema_only = !problems.is_empty()
            && problems.iter().all(|p| {
                (p.path == "/input" || p.path == "/output")
                    && p.message.starts_with("Tool ")
                    && p.message.contains(" schema does not compile")
            });
        let code = if schema_only {
            DefineErrorCode::InvalidSchema
        } else {
            DefineErrorCode::InvalidToolDefinition
        };
        let message = match problems.as_slice() {
            [one] => summary(tool_id, one),
            _ if schema_only => problems
                .iter()
                .map(|p| p.message.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            _ => format!(
                "Tool \"{tool_id}\" is not a valid tool definition ({} problems): {}",
                problems.len(),
                problems
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        };
        DefineError {
            code,
            tool_id: tool_id.to_owned(),
            message,
            problems,
        }
    }

    fn single(tool_id: &str, path: &str, problem: impl Into<String>, message: String) -> Self {
        DefineError {
            code: DefineErrorCode::InvalidToolDefinition,
            tool_id: tool_id.to_owned(),
            message,
            problems: vec![Problem::new(path, problem)],
        }
    }
}

/// The reference's message for a lone problem it has a message for; else `path: message`.
fn summary(id: &str, p: &Problem) -> String {
    let segments: Vec<&str> = p.path.split('/').skip(1).collect();
    match (segments.as_slice(), p.message.as_str()) {
        (["input" | "output"], m) if m.starts_with("Tool ") => m.to_owned(),
        (["needsSpec", slot, name], m) if m.starts_with("doesn't compile: ") => {
            format!("Tool \"{id}\": the schema for needsSpec.{slot}.{name} {m}")
        }
        (["needsSpec", "env", name, "default"], _) => {
            format!("Tool \"{id}\": needsSpec.env.{name}'s default must be a string: env values are strings.")
        }
        (["handler"], "handler + spec both set") => "`handler` and `spec` are mutually exclusive: a tool is either imperative (a handler) or declarative (a spec), not both.".to_owned(),
        (["handler"], "handler + spec both absent") => "A tool must declare exactly one of `handler` (imperative) or `spec` (declarative).".to_owned(),
        (["id"], m) if m.starts_with("must not start with \"kindgi_\"") => format!(
            "Tool id \"{id}\": the prefix \"kindgi_\" is reserved for tools built into Kindgi. Name pack tools \"<pack>.<tool>\"."
        ),
        (["spec", "urlTemplate"], m) => format!("Tool \"{id}\" spec.urlTemplate {m}"),
        _ => format!(
            "Tool \"{id}\" does not validate against {TOOL_SCHEMA_URI}: {p}"
        ),
    }
}

/// Defines a tool from a manifest as JSON (a file, a request body, an SDK's projection) and
/// an optional handler. A declarative tool (`spec`, no handler) gets its handler from
/// `synthesizers`. See [`ToolBuilder::build`] for the checks.
pub fn define_manifest(
    raw: &Value,
    handler: Option<Handler>,
    synthesizers: &SynthesizerRegistry,
) -> Result<Tool, DefineError> {
    define_checked(raw, handler, synthesizers, false)
}

fn define_checked(
    raw: &Value,
    handler: Option<Handler>,
    synthesizers: &SynthesizerRegistry,
    production: bool,
) -> Result<Tool, DefineError> {
    let id = raw.get("id").and_then(Value::as_str).unwrap_or("");

    // A declarative tool: its synthesizer must exist (checked first, as the reference does).
    let synthesizer = match (&handler, raw.get("spec")) {
        (None, Some(spec)) => {
            let kind = spec.get("kind").and_then(Value::as_str).unwrap_or("");
            match synthesizers.get(kind) {
                Some(s) => Some(s),
                None => {
                    return Err(DefineError::single(
                        id,
                        "/spec/kind",
                        format!("unknown kind \"{kind}\""),
                        format!(
                            "No synthesizer registered for tool spec kind \"{kind}\": register one with SynthesizerRegistry::register, or give the tool a handler instead of a spec"
                        ),
                    ));
                }
            }
        }
        _ => None,
    };

    let engine = ToolSchemaEngine::new();
    let check = ManifestCheck {
        production,
        has_handler: Some(handler.is_some()),
    };
    let mut problems = Vec::new();
    let manifest = match validate_manifest(raw, &check, &engine) {
        Ok(manifest) => Some(manifest),
        Err(found) => {
            problems = found;
            None
        }
    };
    let input_has_problem = problems.iter().any(|p| p.path == "/input");
    if let Some(input) = raw
        .get("input")
        .filter(|i| i.is_object() && !input_has_problem && !is_object_schema(i))
    {
        let got = input
            .get("type")
            .map_or_else(|| "no type".to_owned(), |t| format!("type {t}"));
        problems.push(Problem::new(
            "/input",
            format!(
                "must be an object type (\"type\": \"object\"), got {got}: a tool's input is a JSON object of named arguments; wrap other values in a property"
            ),
        ));
    }
    let manifest = match manifest {
        Some(manifest) if problems.is_empty() => manifest,
        _ => return Err(DefineError::from_problems(id, problems)),
    };

    let handler = match (handler, synthesizer, &manifest.spec) {
        (Some(handler), _, _) => handler,
        (None, Some(synthesizer), Some(spec)) => {
            synthesizer.synthesize(&manifest, spec).map_err(|why| {
                DefineError::single(
                    id,
                    "/spec",
                    why.clone(),
                    format!("Tool \"{id}\": its spec cannot become a handler: {why}"),
                )
            })?
        }
        _ => {
            // Only an MCP tool gets here (validation requires a handler or a spec otherwise).
            return Err(DefineError::single(
                id,
                "/handler",
                "handler + spec both absent",
                format!(
                    "Tool \"{id}\" has no handler: an MCP tool defined in-process needs a handler that calls its server"
                ),
            ));
        }
    };

    // Every schema was compiled by the check above; this takes them from the engine's cache.
    let compiled = CompiledTool::compile(&manifest, &engine).map_err(|failure| {
        let path = match (failure.slot, &failure.name) {
            (SchemaSlot::Env, Some(name)) => format!("/needsSpec/env/{name}"),
            (slot, _) => format!("/{}", slot.as_str()),
        };
        DefineError::from_problems(
            id,
            vec![Problem::new(
                path,
                format!(
                    "Tool {} schema does not compile: {}",
                    failure.slot.as_str(),
                    failure.error.message
                ),
            )],
        )
    })?;
    Ok(Tool::from_compiled(manifest, handler, compiled))
}

impl Tool {
    /// Starts defining a tool with the given id (`<pack-id>.<tool-name>`).
    pub fn define(id: impl Into<String>) -> ToolBuilder {
        ToolBuilder::new(id)
    }
}

/// Builds a tool; every method sets the manifest field of the same name.
pub struct ToolBuilder {
    manifest: Map<String, Value>,
    handler: Option<Handler>,
    derived_input: Option<Value>,
    derived_output: Option<Value>,
    synthesizers: Option<SynthesizerRegistry>,
    production: bool,
    /// The typed handler takes / returns `serde_json::Value` (no schema to derive).
    json_input: bool,
    json_output: bool,
}

impl std::fmt::Debug for ToolBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolBuilder")
            .field("manifest", &self.manifest)
            .field("has_handler", &self.handler.is_some())
            .finish_non_exhaustive()
    }
}

impl ToolBuilder {
    pub fn new(id: impl Into<String>) -> Self {
        let mut manifest = Map::new();
        manifest.insert("id".to_owned(), Value::String(id.into()));
        Self {
            manifest,
            handler: None,
            derived_input: None,
            derived_output: None,
            synthesizers: None,
            production: false,
            json_input: false,
            json_output: false,
        }
    }

    fn set(mut self, field: &str, value: impl Serialize) -> Self {
        // The manifest's types serialise infallibly (plain data); `Null` would be reported
        // by the manifest check as a wrong type at that field.
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.manifest.insert(field.to_owned(), value);
        self
    }

    /// What the tool does, written for the model deciding whether to call it.
    pub fn description(self, description: impl Into<String>) -> Self {
        self.set("description", description.into())
    }

    /// Plain `X.Y.Z`.
    pub fn version(self, version: impl Into<String>) -> Self {
        self.set("version", version.into())
    }

    /// The input JSON Schema, given explicitly (wins over a typed handler's derived one).
    pub fn input(self, schema: Value) -> Self {
        self.set("input", schema)
    }

    /// The output JSON Schema, given explicitly (wins over a typed handler's derived one).
    pub fn output(self, schema: Value) -> Self {
        self.set("output", schema)
    }

    /// The input schema derived from `T` (for a declarative tool, which has no typed handler).
    pub fn input_type<T: JsonSchema + ?Sized>(self) -> Self {
        self.input(input_schema_for::<T>())
    }

    /// The output schema derived from `T`.
    pub fn output_type<T: JsonSchema + ?Sized>(self) -> Self {
        self.output(output_schema_for::<T>())
    }

    /// `false` for a read-only tool. Unset means `true`.
    pub fn mutating(self, mutating: bool) -> Self {
        self.set("mutating", mutating)
    }

    /// All the declared effects (replaces any set before).
    pub fn effects(self, effects: impl IntoIterator<Item = Effect>) -> Self {
        self.set("effects", effects.into_iter().collect::<Vec<_>>())
    }

    /// Adds one effect on a resource (`"db:orders"`, `"external:api.example.com"`).
    pub fn effect(self, kind: EffectKind, resource: impl Into<String>) -> Self {
        self.push_effect(Effect {
            kind,
            resource: Some(resource.into()),
            notes: None,
        })
    }

    /// Adds one effect with no resource.
    pub fn effect_kind(self, kind: EffectKind) -> Self {
        self.push_effect(Effect {
            kind,
            resource: None,
            notes: None,
        })
    }

    fn push_effect(mut self, effect: Effect) -> Self {
        let value = serde_json::to_value(effect).unwrap_or(Value::Null);
        match self.manifest.get_mut("effects") {
            Some(Value::Array(effects)) => effects.push(value),
            _ => {
                self.manifest
                    .insert("effects".to_owned(), Value::Array(vec![value]));
            }
        }
        self
    }

    /// Named context slots (`tenant`, `run`, `memory:facts`, …).
    pub fn needs(self, needs: impl IntoIterator<Item = Need>) -> Self {
        self.set("needs", needs.into_iter().collect::<Vec<_>>())
    }

    /// Typed needs: env values, secrets, config, capabilities, bindings, connections.
    pub fn needs_spec(self, needs_spec: TypedNeeds) -> Self {
        self.set("needsSpec", needs_spec)
    }

    pub fn transport(self, transport: Transport) -> Self {
        self.set("transport", transport)
    }

    pub fn mcp_endpoint(self, endpoint: impl Into<String>) -> Self {
        self.set("mcpEndpoint", endpoint.into())
    }

    /// Free-form annotations (replaces any set before).
    pub fn metadata(self, metadata: Map<String, Value>) -> Self {
        self.set("metadata", metadata)
    }

    pub fn sandbox(self, sandbox: SandboxMode) -> Self {
        self.set("sandbox", sandbox)
    }

    pub fn needs_approval_when_unattended(self, yes: bool) -> Self {
        self.set("needsApprovalWhenUnattended", yes)
    }

    pub fn pauses(self, pauses: bool) -> Self {
        self.set("pauses", pauses)
    }

    pub fn result_is_outside_data(self, yes: bool) -> Self {
        self.set("resultIsOutsideData", yes)
    }

    pub fn limits(self, limits: RuntimeLimits) -> Self {
        self.set("limits", limits)
    }

    pub fn network(self, network: NetworkPolicy) -> Self {
        self.set("network", network)
    }

    pub fn code_artifact_ref(self, artifact: CodeArtifactRef) -> Self {
        self.set("codeArtifactRef", artifact)
    }

    /// A declarative handler spec: the handler is synthesized (see [`ToolBuilder::build`]).
    /// A tool cannot have both a spec and a handler.
    pub fn spec(self, spec: ToolSpec) -> Self {
        self.set("spec", spec)
    }

    /// The synthesizers a declarative tool's handler comes from (default:
    /// [`SynthesizerRegistry::builtin`], which knows `http`).
    pub fn synthesizers(mut self, synthesizers: SynthesizerRegistry) -> Self {
        self.synthesizers = Some(synthesizers);
        self
    }

    /// Check as a production server does (a `filesystem` code artifact is refused).
    pub fn production(mut self, production: bool) -> Self {
        self.production = production;
        self
    }

    /// The typed handler. The input schema is derived from `I` and the output schema from
    /// `O` unless set explicitly. The input arrives validated with defaults filled.
    /// With `I = O = serde_json::Value` it is a raw JSON handler (give both schemas).
    pub fn handler<I, O, F, Fut>(mut self, handler: F) -> Self
    where
        I: DeserializeOwned + JsonSchema + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        self.json_input = is_json::<I>();
        self.json_output = is_json::<O>();
        self.derived_input = (!self.json_input).then(input_schema_for::<I>);
        self.derived_output = (!self.json_output).then(output_schema_for::<O>);
        self.handler = Some(typed_handler(handler));
        self
    }

    /// A handler already in the runtime's shape (the schemas must be given explicitly).
    pub fn raw_handler(mut self, handler: Handler) -> Self {
        self.handler = Some(handler);
        self
    }

    /// The manifest as it stands (schemas derived from a typed handler included).
    pub fn manifest_value(&self) -> Value {
        let mut manifest = self.manifest.clone();
        if let Some(input) = &self.derived_input {
            manifest.entry("input").or_insert_with(|| input.clone());
        }
        if let Some(output) = &self.derived_output {
            manifest.entry("output").or_insert_with(|| output.clone());
        }
        Value::Object(manifest)
    }

    /// Checks the manifest (exactly as the wire path does, plus: the handler/spec rule and
    /// an object-type input), synthesizes a declarative tool's handler, and compiles the
    /// validators once. Every problem is reported at once.
    pub fn build(self) -> Result<Tool, DefineError> {
        // A `serde_json::Value` side has no schema to derive: it must be given.
        let mut missing = Vec::new();
        for (slot, is_json) in [("input", self.json_input), ("output", self.json_output)] {
            if is_json && !self.manifest.contains_key(slot) {
                missing.push(Problem::new(
                    format!("/{slot}"),
                    format!(
                        "is required: a handler over serde_json::Value gives no {slot} schema to derive; set it with .{slot}(json!({{…}}))"
                    ),
                ));
            }
        }
        if !missing.is_empty() {
            let id = self
                .manifest
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(DefineError::from_problems(id, missing));
        }
        let raw = self.manifest_value();
        let synthesizers = self
            .synthesizers
            .unwrap_or_else(SynthesizerRegistry::builtin);
        define_checked(&raw, self.handler, &synthesizers, self.production)
    }
}

/// Wraps a typed handler into the runtime's JSON one. `serde_json::Value` on either side is
/// passed through without a conversion.
fn typed_handler<I, O, F, Fut>(handler: F) -> Handler
where
    I: DeserializeOwned + 'static,
    O: Serialize + 'static,
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
{
    Arc::new(move |input: Value, ctx: ToolContext| {
        let input: I = match from_json(input) {
            Ok(input) => input,
            Err(e) => {
                let message = format!("the input does not fit the handler's input type: {e}");
                return Box::pin(async move { Err(HandlerError::Failed(message)) });
            }
        };
        let running = handler(input, ctx);
        Box::pin(async move {
            let output = running.await?;
            to_json(output).map_err(|e| {
                HandlerError::Failed(format!(
                    "the handler's output cannot be written as JSON: {e}"
                ))
            })
        })
    })
}

fn is_json<T: 'static>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<Value>()
}

fn from_json<I: DeserializeOwned + 'static>(value: Value) -> Result<I, serde_json::Error> {
    let boxed: Box<dyn Any> = Box::new(value);
    match boxed.downcast::<I>() {
        Ok(same) => Ok(*same),
        Err(boxed) => match boxed.downcast::<Value>() {
            Ok(value) => serde_json::from_value(*value),
            Err(_) => serde_json::from_value(Value::Null),
        },
    }
}

fn to_json<O: Serialize + 'static>(output: O) -> Result<Value, serde_json::Error> {
    let boxed: Box<dyn Any> = Box::new(output);
    match boxed.downcast::<Value>() {
        Ok(value) => Ok(*value),
        Err(boxed) => match boxed.downcast::<O>() {
            Ok(output) => serde_json::to_value(*output),
            Err(_) => Ok(Value::Null),
        },
    }
}
