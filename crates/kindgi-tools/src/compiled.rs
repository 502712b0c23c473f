//! A tool's compiled validators: input (fills defaults), output, and one per declared
//! `needsSpec.env` value. Built once — at definition, or on first use for a tool assembled
//! with [`Tool::from_parts`](crate::Tool::from_parts) — so invocation never compiles.

use kindgi_schema::{CompileError, Side, Validator};
use kindgi_spec::ToolManifest;
use serde_json::Value;
use std::sync::Arc;

use crate::engine::{ToolSchemaEngine, options_for};

/// Which schema of a tool failed to compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaSlot {
    Input,
    Output,
    /// `needsSpec.env.<name>` (the name is in [`SchemaCompileFailure::name`]).
    Env,
}

impl SchemaSlot {
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaSlot::Input => "input",
            SchemaSlot::Output => "output",
            SchemaSlot::Env => "env",
        }
    }
}

/// A tool schema that does not compile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} schema{} does not compile: {}", .slot.as_str(), .name.as_ref().map(|n| format!(" {n}")).unwrap_or_default(), .error.message)]
pub struct SchemaCompileFailure {
    pub slot: SchemaSlot,
    /// The env value's name, for [`SchemaSlot::Env`].
    pub name: Option<String>,
    pub error: CompileError,
}

/// A declared env value: its name, its string default, and its compiled schema.
#[derive(Debug)]
pub struct EnvNeed {
    pub name: String,
    pub default: Option<String>,
    pub validator: Arc<Validator>,
}

/// Everything invocation validates with.
#[derive(Debug)]
pub struct CompiledTool {
    pub input: Arc<Validator>,
    pub output: Arc<Validator>,
    /// In declaration order. Empty when the tool declares no env values.
    pub env: Vec<EnvNeed>,
}

impl CompiledTool {
    /// Compiles the tool's schemas through `engine` (already compiled ones are reused).
    pub fn compile(
        manifest: &ToolManifest,
        engine: &ToolSchemaEngine,
    ) -> Result<Self, SchemaCompileFailure> {
        let input = engine
            .compile(&manifest.input, options_for(manifest, Side::Input))
            .map_err(|error| SchemaCompileFailure {
                slot: SchemaSlot::Input,
                name: None,
                error,
            })?;
        let output = engine
            .compile(&manifest.output, options_for(manifest, Side::Output))
            .map_err(|error| SchemaCompileFailure {
                slot: SchemaSlot::Output,
                name: None,
                error,
            })?;
        let mut env = Vec::new();
        if let Some(declared) = manifest.needs_spec.as_ref().and_then(|n| n.env.as_ref()) {
            env.reserve(declared.len());
            for (name, schema) in declared {
                let validator =
                    engine
                        .compile_need(schema)
                        .map_err(|error| SchemaCompileFailure {
                            slot: SchemaSlot::Env,
                            name: Some(name.clone()),
                            error,
                        })?;
                let default = schema
                    .get("default")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                env.push(EnvNeed {
                    name: name.clone(),
                    default,
                    validator,
                });
            }
        }
        Ok(Self { input, output, env })
    }
}
