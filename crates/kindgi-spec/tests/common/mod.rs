//! Schema engines for the validation tests.
//!
//! - [`RealEngine`]: kindgi-schema, the engine production uses (through kindgi-tools); the
//!   end-to-end tests go through it.
//! - [`ScriptedEngine`]: compiles nothing; a schema holding the key `"x-fail"` "does not
//!   compile" with the message it names. It lets the tests of this crate's own rules say
//!   exactly which engine answer they feed in.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use kindgi_schema::{CompileOptions, Dialect, Mode, Side};
use kindgi_spec::validate::{Problem, SchemaEngine, SchemaMode, SchemaSide};
use serde_json::Value;
use std::sync::Mutex;

pub fn data(name: &str) -> Value {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

pub struct RealEngine;

impl SchemaEngine for RealEngine {
    fn check_schema(
        &self,
        schema: &Value,
        mode: SchemaMode,
        side: SchemaSide,
    ) -> Result<(), String> {
        let side = match side {
            SchemaSide::Input => Side::Input,
            SchemaSide::Output => Side::Output,
        };
        let mode = match mode {
            SchemaMode::Pack => {
                // A pack tool's schemas are 2020-12 only: say so before compiling, as the
                // reference's `compileJsonSchema({dialects: ['2020-12']})` does.
                kindgi_schema::check_dialect(schema, &[Dialect::Draft2020])
                    .map_err(|e| e.message)?;
                Mode::Pack
            }
            SchemaMode::Mcp => Mode::Mcp,
        };
        kindgi_schema::compile(schema, CompileOptions { mode, side })
            .map(drop)
            .map_err(|e| e.message)
    }

    fn check_need_schema(&self, schema: &Value) -> Result<(), String> {
        // Ajv2020 strict with the one extension keyword need schemas may carry.
        kindgi_schema::compile_inline(schema)
            .map(drop)
            .map_err(|e| e.message)
    }

    fn validate(&self, schema: &Value, instance: &Value) -> Vec<Problem> {
        let options = CompileOptions {
            mode: Mode::Pack,
            side: Side::Output,
        };
        let validator = match kindgi_schema::compile(schema, options) {
            Ok(v) => v,
            Err(e) => panic!("the manifest schema does not compile: {e}"),
        };
        match validator.validate(instance) {
            Ok(()) => vec![],
            Err(issues) => issues
                .iter()
                .map(|i| Problem::new(i.instance_path(), i.message()))
                .collect(),
        }
    }
}

/// One compile request: the schema, and the mode and side (`None` for a need schema).
pub type Asked = (Value, Option<SchemaMode>, Option<SchemaSide>);

/// Records what it was asked, answers from the schemas themselves (`"x-fail": "<message>"`).
#[derive(Default)]
pub struct ScriptedEngine {
    pub compiled: Mutex<Vec<Asked>>,
    /// Problems `validate` reports, as if the shape check found them.
    pub shape_problems: Vec<Problem>,
}

fn scripted(schema: &Value) -> Result<(), String> {
    match schema.get("x-fail") {
        Some(Value::String(message)) => Err(message.clone()),
        _ => Ok(()),
    }
}

impl SchemaEngine for ScriptedEngine {
    fn check_schema(
        &self,
        schema: &Value,
        mode: SchemaMode,
        side: SchemaSide,
    ) -> Result<(), String> {
        self.compiled
            .lock()
            .unwrap()
            .push((schema.clone(), Some(mode), Some(side)));
        scripted(schema)
    }

    fn check_need_schema(&self, schema: &Value) -> Result<(), String> {
        self.compiled
            .lock()
            .unwrap()
            .push((schema.clone(), None, None));
        scripted(schema)
    }

    fn validate(&self, _schema: &Value, _instance: &Value) -> Vec<Problem> {
        self.shape_problems.clone()
    }
}
