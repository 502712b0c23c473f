//! JSON Schemas derived from Rust types (schemars 1.x, Draft 2020-12), made acceptable to
//! the pack engine's strict mode.
//!
//! schemars writes a few things Ajv's strict mode refuses, which would make a typed tool
//! fail to define: Rust-specific numeric `format`s (`uint32`, `int64`, `double`, …; the
//! bounds they imply are already written as `minimum`/`maximum`), a `default` in the
//! schema root, and a `default` under `anyOf`/`oneOf`/`not`/`if` (Ajv cannot fill those and
//! says so). Those are removed; everything else is kept as schemars wrote it.
//!
//! The input is derived with the *deserialize* contract (what the handler accepts), the
//! output with the *serialize* contract (what the handler's value serialises to).

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::Value;

/// The schema of a handler's input type.
pub fn input_schema_for<T: JsonSchema + ?Sized>() -> Value {
    schema_for::<T>(Contract::Deserialize)
}

/// The schema of a handler's output type.
pub fn output_schema_for<T: JsonSchema + ?Sized>() -> Value {
    schema_for::<T>(Contract::Serialize)
}

fn schema_for<T: JsonSchema + ?Sized>(contract: Contract) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.contract = contract;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    make_strict_clean(&mut schema);
    schema
}

/// Numeric formats schemars writes that are not formats the validator knows.
const RUST_NUMERIC_FORMATS: [&str; 15] = [
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double", "uint256",
];

/// Removes what strict mode refuses from a derived schema (see the module docs).
pub fn make_strict_clean(schema: &mut Value) {
    let Value::Object(root) = schema else { return };
    root.remove("default");
    let mut defs = root.remove("$defs");
    // Names of `$defs` entries reached through `$ref` from inside a composite.
    let mut composite_refs: Vec<String> = Vec::new();
    clean(schema, false, &mut composite_refs);
    if let Some(Value::Object(defs)) = &mut defs {
        for def in defs.values_mut() {
            clean(def, false, &mut composite_refs);
        }
        // A definition used inside a composite is inlined there: clean it (and what it
        // refers to) as composite too, until nothing new is reached.
        let mut done: Vec<String> = Vec::new();
        while let Some(name) = composite_refs.pop() {
            if done.contains(&name) {
                continue;
            }
            if let Some(def) = defs.get_mut(&name) {
                clean(def, true, &mut composite_refs);
            }
            done.push(name);
        }
    }
    if let Value::Object(root) = schema {
        if let Some(defs) = defs {
            root.insert("$defs".to_owned(), defs);
        }
        // Read like a hand-written schema: `$schema`, `title`, `description` first.
        let mut ordered = serde_json::Map::with_capacity(root.len());
        for key in ["$schema", "title", "description"] {
            if let Some(value) = root.remove(key) {
                ordered.insert(key.to_owned(), value);
            }
        }
        ordered.append(root);
        *root = ordered;
    }
}

fn clean(schema: &mut Value, in_composite: bool, composite_refs: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| RUST_NUMERIC_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    if in_composite {
        map.remove("default");
        if let Some(name) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            composite_refs.push(name.to_owned());
        }
    }
    for (keyword, child) in map.iter_mut() {
        match keyword.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" => {
                if let Value::Object(children) = child {
                    for child in children.values_mut() {
                        clean(child, in_composite, composite_refs);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "contains"
            | "propertyNames"
            | "then"
            | "else" => clean(child, in_composite, composite_refs),
            "not" | "if" => clean(child, true, composite_refs),
            "prefixItems" | "allOf" => each(child, in_composite, composite_refs),
            "anyOf" | "oneOf" => each(child, true, composite_refs),
            _ => {}
        }
    }
}

fn each(list: &mut Value, in_composite: bool, composite_refs: &mut Vec<String>) {
    if let Value::Array(items) = list {
        for item in items {
            clean(item, in_composite, composite_refs);
        }
    }
}

/// Whether a schema describes an object (`type: "object"`, or `["object"]`): a tool's input
/// must, as the Python and JVM SDKs require.
pub fn is_object_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.len() == 1 && types[0] == "object",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_cleaning_removes_what_strict_mode_refuses() {
        let mut schema = json!({
            "type": "object",
            "default": {},
            "properties": {
                "n": {"type": "integer", "format": "uint32", "minimum": 0, "default": 3},
                "when": {"type": "string", "format": "date-time"},
                "choice": {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null", "default": null}]},
                "plain": {"$ref": "#/$defs/Plain"}
            },
            "$defs": {
                "Inner": {"type": "object", "properties": {"flag": {"type": "boolean", "default": false}, "deep": {"$ref": "#/$defs/Deep"}}},
                "Deep": {"type": "object", "properties": {"x": {"type": "number", "format": "double", "default": 1.5}}},
                "Plain": {"type": "object", "properties": {"y": {"type": "string", "default": "kept"}}}
            },
            "title": "T",
            "$schema": "https://json-schema.org/draft/2020-12/schema"
        });
        make_strict_clean(&mut schema);
        assert!(schema.get("default").is_none(), "root default removed");
        let n = &schema["properties"]["n"];
        assert!(n.get("format").is_none());
        assert_eq!(n["minimum"], 0);
        assert_eq!(n["default"], 3, "a default outside composites stays");
        assert_eq!(
            schema["properties"]["when"]["format"], "date-time",
            "real formats stay"
        );
        assert!(
            schema["properties"]["choice"]["anyOf"][1]
                .get("default")
                .is_none()
        );
        assert!(
            schema["$defs"]["Inner"]["properties"]["flag"]
                .get("default")
                .is_none()
        );
        let deep_x = &schema["$defs"]["Deep"]["properties"]["x"];
        assert!(deep_x.get("default").is_none() && deep_x.get("format").is_none());
        assert_eq!(
            schema["$defs"]["Plain"]["properties"]["y"]["default"],
            "kept"
        );
        let keys: Vec<&str> = schema
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(&keys[..2], ["$schema", "title"]);
    }

    #[test]
    fn object_schemas() {
        assert!(is_object_schema(&json!({"type": "object"})));
        assert!(is_object_schema(&json!({"type": ["object"]})));
        assert!(!is_object_schema(&json!({"type": ["object", "null"]})));
        assert!(!is_object_schema(&json!({"type": "string"})));
        assert!(!is_object_schema(&json!(true)));
        assert!(!is_object_schema(&json!({})));
    }
}
