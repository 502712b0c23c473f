//! A stored definition (a flow, an agent or a guardrail version) as the registries keep it:
//! the definition exactly as published, the project that owns the id, server-set
//! annotations, where it came from, and its tombstone. Times are milliseconds since the
//! epoch.

use serde_json::Value;

use crate::error::StorageError;

/// What a row defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefinitionKind {
    Flow,
    Agent,
    Guardrail,
}

impl DefinitionKind {
    /// The `kind` column value.
    pub fn as_str(self) -> &'static str {
        match self {
            DefinitionKind::Flow => "flow",
            DefinitionKind::Agent => "agent",
            DefinitionKind::Guardrail => "guardrail",
        }
    }
}

/// One stored version.
#[derive(Debug, Clone, PartialEq)]
pub struct DefinitionRecord {
    pub kind: DefinitionKind,
    pub id: String,
    /// `""` for guardrails.
    pub version: String,
    /// `None` for items a host put in from a pack.
    pub project_id: Option<String>,
    /// The definition as published (JSON text).
    pub definition_json: String,
    /// Server-set fields (a JSON object), if any.
    pub annotations_json: Option<String>,
    pub source: String,
    pub created_at: i64,
    pub unregistered_at: Option<i64>,
}

impl DefinitionRecord {
    /// The definition as JSON.
    pub fn definition(&self) -> Result<Value, StorageError> {
        parse(&self.definition_json, self)
    }

    /// The server-set fields (an empty object when there are none).
    pub fn annotations(&self) -> Result<Value, StorageError> {
        match &self.annotations_json {
            Some(text) => parse(text, self),
            None => Ok(Value::Object(Default::default())),
        }
    }

    /// True when every run naming this version should be refused (it is tombstoned).
    pub fn is_unregistered(&self) -> bool {
        self.unregistered_at.is_some()
    }
}

fn parse(text: &str, r: &DefinitionRecord) -> Result<Value, StorageError> {
    serde_json::from_str(text).map_err(|e| {
        StorageError::corrupt(format!("{} {} {}", r.kind.as_str(), r.id, r.version), e)
    })
}
