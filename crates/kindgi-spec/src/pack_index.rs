//! The pack index (`pack-index.schema.json` 1.4.0): what a built pack contains — tools with
//! their schemas and module paths, guardrails with their check modules, agents and flows —
//! and its canonical text (sorted keys, 2-space indent, trailing newline), which makes two
//! builds with the same pins byte-identical.
//!
//! Fields not named here are kept in `extra` maps, so an index round-trips losslessly.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// The index envelope version (`"v": 1`).
pub const INDEX_VERSION: u64 = 1;

/// The `v` of an index: the number 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct V1;

impl Serialize for V1 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(INDEX_VERSION)
    }
}

impl<'de> Deserialize<'de> for V1 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.as_f64() == Some(1.0) {
            Ok(V1)
        } else {
            Err(de::Error::custom(format_args!(
                "Index envelope v{value} is not v1"
            )))
        }
    }
}

/// A pack index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackIndex {
    pub v: V1,
    pub pack_id: String,
    pub pack_version: String,
    /// `YYYYMMDD.N` by default.
    pub artifact_version: String,
    /// ISO 8601 with milliseconds, UTC (`2026-10-01T12:00:00.000Z`).
    pub published_at: String,
    pub tools: Vec<IndexTool>,
    pub guardrails: Vec<IndexGuardrail>,
    pub agents: Vec<IndexAgent>,
    pub flows: Vec<IndexFlow>,
    /// Declared env names; absent when nothing is declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<IndexEnv>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One tool of the index.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexTool {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the input.
    pub input: Value,
    /// JSON Schema of the output.
    pub output: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_spec: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutating: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_approval_when_unattended: Option<bool>,
    /// Whether a call may pause its run (`tool.schema.json` 1.3.0 `pauses`). An extension of
    /// the 1.4.0 index (docs/pauses.md): written only when `true`, so an index without a
    /// pausing tool is exactly 1.4.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pauses: Option<bool>,
    /// A declarative tool: the runtime runs it itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<Value>,
    /// Source file relative to the pack root, forward slashes, no leading `./`.
    pub module_path: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl IndexTool {
    /// The version, when present and non-empty.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref().filter(|v| !v.is_empty())
    }

    /// Whether the entry says its calls may pause (`pauses: true`).
    pub fn pauses(&self) -> bool {
        self.pauses == Some(true)
    }
}

/// One guardrail of the index.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexGuardrail {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub kind: String,
    pub action: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Value>,
    pub check_module_path: String,
    /// What `check-invoke` resolves; absent → `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_built_in: Option<bool>,
    /// JSON Schema the check's config is validated against (as sent, no defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl IndexGuardrail {
    /// The id a `check-invoke` names: `checkId`, else `id`.
    pub fn check_id(&self) -> &str {
        self.check_id.as_deref().unwrap_or(&self.id)
    }
}

/// One agent of the index (data for the runtime; the pack service ignores it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexAgent {
    pub id: String,
    pub version: String,
    pub module_path: String,
    /// Everything else (`name`, `instructions`, `capabilities`, `tools`, …).
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// One flow of the index (data for the runtime; the pack service ignores it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexFlow {
    pub id: String,
    pub version: String,
    pub module_path: String,
    /// Everything else (`nodes`, `edges`, `kernelPayloadVersion`, …).
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// Declared env names: unique, sorted, disjoint, none starting `KINDGI_`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IndexEnv {
    #[serde(default)]
    pub required: Vec<String>,
    #[serde(default)]
    pub optional: Vec<String>,
}

/// JavaScript's string order (UTF-16 code units), which the index's list order follows.
pub fn code_unit_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

impl PackIndex {
    /// An empty index with its pins.
    pub fn new(
        pack_id: impl Into<String>,
        pack_version: impl Into<String>,
        artifact_version: impl Into<String>,
        published_at: impl Into<String>,
    ) -> Self {
        Self {
            v: V1,
            pack_id: pack_id.into(),
            pack_version: pack_version.into(),
            artifact_version: artifact_version.into(),
            published_at: published_at.into(),
            tools: Vec::new(),
            guardrails: Vec::new(),
            agents: Vec::new(),
            flows: Vec::new(),
            env: None,
            extra: Map::new(),
        }
    }

    /// Sorts every list by id (then version), as the canonical form requires.
    pub fn sort(&mut self) {
        self.tools.sort_by(|a, b| {
            code_unit_cmp(&a.id, &b.id).then_with(|| {
                code_unit_cmp(
                    a.version.as_deref().unwrap_or(""),
                    b.version.as_deref().unwrap_or(""),
                )
            })
        });
        self.guardrails.sort_by(|a, b| code_unit_cmp(&a.id, &b.id));
        self.agents.sort_by(|a, b| {
            code_unit_cmp(&a.id, &b.id).then_with(|| code_unit_cmp(&a.version, &b.version))
        });
        self.flows.sort_by(|a, b| {
            code_unit_cmp(&a.id, &b.id).then_with(|| code_unit_cmp(&a.version, &b.version))
        });
        if let Some(env) = &mut self.env {
            env.required.sort_by(|a, b| code_unit_cmp(a, b));
            env.required.dedup();
            env.optional.sort_by(|a, b| code_unit_cmp(a, b));
            env.optional.dedup();
        }
    }

    /// The canonical text: lists sorted, keys sorted at every level, 2-space indent,
    /// integral numbers without a fraction, trailing newline.
    pub fn to_canonical_string(&self) -> Result<String, serde_json::Error> {
        let mut sorted = self.clone();
        sorted.sort();
        let value = serde_json::to_value(&sorted)?;
        canonical_json_text(&value)
    }
}

/// `value` as canonical text: keys sorted (code-unit order) at every level, 2-space indent,
/// integral floats written as integers, and a trailing newline.
pub fn canonical_json_text(value: &Value) -> Result<String, serde_json::Error> {
    let canonical = canonicalize(value);
    let mut text = serde_json::to_string_pretty(&canonical)?;
    text.push('\n');
    Ok(text)
}

/// Keys sorted, integral floats as integers (what `JSON.stringify` prints).
pub fn canonicalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| code_unit_cmp(a, b));
            let mut out = Map::with_capacity(map.len());
            for key in keys {
                if let Some(v) = map.get(key) {
                    out.insert(key.clone(), canonicalize(v));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonicalize).collect()),
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                // Exactly representable: print as JavaScript does, without `.0`.
                Value::from(f as i64)
            }
            _ => value.clone(),
        },
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_text_sorts_keys_and_drops_fraction() {
        let text = canonical_json_text(&json!({"b": 1.0, "a": [ {"z": 1, "y": 2} ]})).unwrap();
        assert_eq!(
            text,
            "{\n  \"a\": [\n    {\n      \"y\": 2,\n      \"z\": 1\n    }\n  ],\n  \"b\": 1\n}\n"
        );
    }

    #[test]
    fn check_id_falls_back_to_id() {
        let g = IndexGuardrail {
            id: "a.g".into(),
            ..Default::default()
        };
        assert_eq!(g.check_id(), "a.g");
    }

    #[test]
    fn envelope_other_than_one_is_refused() {
        let err = serde_json::from_value::<V1>(json!(2)).unwrap_err();
        assert!(err.to_string().contains("Index envelope v2 is not v1"));
    }
}
