//! The bridge between manifest validation (`kindgi-spec`, which does no schema work itself)
//! and the schema engine (`kindgi-schema`): compile options per tool, the need-schema
//! configuration, and a [`ToolSchemaEngine`] that keeps what it compiled so definition
//! compiles every schema once.

use kindgi_schema::{CompileError, CompileOptions, Dialect, Mode, Side, Validator, ValidatorCache};
use kindgi_spec::ToolManifest;
use kindgi_spec::validate::{Problem, SchemaEngine, SchemaMode, SchemaSide, tool_schema};
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// The compile mode of a tool's own schemas: MCP tools use their declared dialect,
/// everything else Draft 2020-12 strict.
pub fn mode_for(manifest: &ToolManifest) -> Mode {
    if manifest.is_mcp() {
        Mode::Mcp
    } else {
        Mode::Pack
    }
}

/// The compile options of a tool's input or output schema.
pub fn options_for(manifest: &ToolManifest, side: Side) -> CompileOptions {
    CompileOptions {
        mode: mode_for(manifest),
        side,
    }
}

/// Compiles a need schema (`needsSpec.env.*`, `needsSpec.secrets.*`): strict 2020-12 plus
/// the `x-kindgi-tunable` keyword, nothing filled in (env values are validated as given; a
/// default is applied before validation, by the invoker).
pub fn compile_need_schema(schema: &Value) -> Result<Validator, CompileError> {
    kindgi_schema::compile_inline(schema)
}

/// Compiles a tool's schema. A pack tool's schema must be Draft 2020-12: any other
/// `$schema` is refused with the reference's message (`… validates here: 2020-12.`) before
/// the engine tries to load a meta-schema it does not have.
pub fn compile_tool_schema(
    schema: &Value,
    options: CompileOptions,
) -> Result<Validator, CompileError> {
    check_pack_dialect(schema, options)?;
    kindgi_schema::compile(schema, options)
}

fn check_pack_dialect(schema: &Value, options: CompileOptions) -> Result<(), CompileError> {
    if options.mode == Mode::Pack && schema.get("$schema").is_some() {
        kindgi_schema::check_dialect(schema, &[Dialect::Draft2020])?;
    }
    Ok(())
}

/// The schema engine used while defining tools: every schema the manifest check compiles is
/// kept, so the tool's validators come out of the same compilation.
#[derive(Debug, Default)]
pub struct ToolSchemaEngine {
    cache: ValidatorCache,
}

impl ToolSchemaEngine {
    pub fn new() -> Self {
        Self::default()
    }

    /// Compiles (or returns the already compiled) validator.
    pub fn compile(
        &self,
        schema: &Value,
        options: CompileOptions,
    ) -> Result<Arc<Validator>, CompileError> {
        check_pack_dialect(schema, options)?;
        self.cache.get_or_compile(schema, options)
    }

    /// Compiles a need schema (see [`compile_need_schema`]).
    pub fn compile_need(&self, schema: &Value) -> Result<Arc<Validator>, CompileError> {
        self.cache.get_or_compile_inline(schema)
    }
}

impl SchemaEngine for ToolSchemaEngine {
    fn check_schema(
        &self,
        schema: &Value,
        mode: SchemaMode,
        side: SchemaSide,
    ) -> Result<(), String> {
        let mode = match mode {
            SchemaMode::Pack => Mode::Pack,
            SchemaMode::Mcp => Mode::Mcp,
        };
        let side = match side {
            SchemaSide::Input => Side::Input,
            SchemaSide::Output => Side::Output,
        };
        self.compile(schema, CompileOptions { mode, side })
            .map(drop)
            .map_err(|e| e.message)
    }

    fn check_need_schema(&self, schema: &Value) -> Result<(), String> {
        self.compile_need(schema).map(drop).map_err(|e| e.message)
    }

    fn validate(&self, schema: &Value, instance: &Value) -> Vec<Problem> {
        // The manifest schema is the one schema validated against again and again: it is
        // compiled once per process; anything else goes through this engine's cache.
        let validator = if std::ptr::eq(schema, tool_schema()) {
            manifest_validator().clone()
        } else {
            self.compile(schema, SHAPE_OPTIONS)
        };
        match validator {
            Ok(validator) => match validator.validate(instance) {
                Ok(()) => Vec::new(),
                Err(issues) => issues
                    .iter()
                    .map(|issue| Problem::new(issue.instance_path(), issue.message()))
                    .collect(),
            },
            Err(e) => vec![Problem::new(
                "",
                format!("the schema to check against does not compile: {e}"),
            )],
        }
    }
}

/// Shape checks (a manifest against the tool schema): 2020-12 strict, nothing filled in.
const SHAPE_OPTIONS: CompileOptions = CompileOptions {
    mode: Mode::Pack,
    side: Side::Output,
};

fn manifest_validator() -> &'static Result<Arc<Validator>, CompileError> {
    static VALIDATOR: OnceLock<Result<Arc<Validator>, CompileError>> = OnceLock::new();
    VALIDATOR.get_or_init(|| kindgi_schema::compile(tool_schema(), SHAPE_OPTIONS).map(Arc::new))
}
