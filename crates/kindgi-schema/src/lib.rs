//! Kindgi's JSON Schema engine (API contract; the implementation is being written).
//!
//! - [`compile`] turns a schema into a [`Validator`] under [`CompileOptions`]: `Mode::Pack` is
//!   Draft 2020-12 in strict mode; `Mode::Mcp` picks the dialect from `$schema` (draft-06,
//!   draft-07, 2019-09, 2020-12) and is not strict.
//! - Issues are Ajv-shaped ([`Issue`]) with Ajv's exact messages, params and order.
//! - [`ValidatorCache`] keeps compiled validators so nothing compiles per call.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Which configuration a schema is compiled under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Pack tools and everything that is not MCP: Draft 2020-12, strict.
    Pack,
    /// A tool with `transport: "mcp"`: the dialect `$schema` declares, non-strict.
    Mcp,
}

/// Which side of a tool the schema describes. Only the input side fills `default`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Input,
    Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    pub mode: Mode,
    pub side: Side,
}

/// One validation problem, shaped exactly like an Ajv error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    pub instance_path: String,
    pub schema_path: String,
    pub keyword: String,
    pub params: Map<String, Value>,
    pub message: String,
    /// Set on issues raised inside `propertyNames`: the key being checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property_name: Option<String>,
}

/// A schema that does not compile. `name` is `Error`, or `SyntaxError` for a bad regex.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CompileError {
    pub name: String,
    pub message: String,
}

/// A compiled schema. Cheap to share (`Arc`), `Send + Sync`.
#[derive(Debug)]
pub struct Validator {
    _private: (),
}

impl Validator {
    /// Validates without changing the instance.
    pub fn validate(&self, _instance: &Value) -> Result<(), Vec<Issue>> {
        Ok(())
    }

    /// Validates; on the input side fills `default`s into the instance first (as Ajv's
    /// `useDefaults` does — the instance is changed even when it turns out invalid).
    pub fn validate_in_place(&self, _instance: &mut Value) -> Result<(), Vec<Issue>> {
        Ok(())
    }
}

/// Compiles a schema.
pub fn compile(_schema: &Value, _options: CompileOptions) -> Result<Validator, CompileError> {
    Ok(Validator { _private: () })
}

/// Compiled validators keyed by schema content and options.
#[derive(Debug, Default)]
pub struct ValidatorCache {
    _private: (),
}

impl ValidatorCache {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get_or_compile(
        &self,
        schema: &Value,
        options: CompileOptions,
    ) -> Result<Arc<Validator>, CompileError> {
        compile(schema, options).map(Arc::new)
    }
}
