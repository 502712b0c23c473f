#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Leaf nodes (subschemas that only check a scalar) run on a lean path of their own. A schema
//! with an `allOf` added that no data here can fail is no leaf, and takes the general path; both
//! must report exactly the same issues, in the same order, for every combination tried here —
//! at the root, under `properties` and under `items`.

use kindgi_schema::{CompileOptions, Mode, Side, compile};
use serde_json::{Value, json};

const PACK_OUT: CompileOptions = CompileOptions {
    mode: Mode::Pack,
    side: Side::Output,
};

fn types() -> Vec<Option<Value>> {
    vec![
        None,
        Some(json!("string")),
        Some(json!("number")),
        Some(json!("integer")),
        Some(json!("array")),
        Some(json!("object")),
        Some(json!(["string", "null"])),
        Some(json!(["integer", "string"])),
    ]
}

fn keyword_sets() -> Vec<Value> {
    vec![
        json!({}),
        json!({"minLength": 2, "maxLength": 4}),
        json!({"pattern": "^[a-z]+$", "format": "email"}),
        json!({"minimum": 0, "maximum": 10, "multipleOf": 2}),
        json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1}),
        json!({"enum": ["ab", 3, null]}),
        json!({"const": "abc", "minLength": 5}),
        json!({"maxLength": 1, "minimum": 5, "enum": ["x", "yy", 7]}),
    ]
}

fn data() -> Vec<Value> {
    vec![
        json!("ab"),
        json!("abcdefg"),
        json!("A@b.co"),
        json!(""),
        json!(3),
        json!(12),
        json!(0.5),
        json!(-4),
        json!(null),
        json!(true),
        json!([1, 2]),
        json!({"k": 1}),
        json!("ü"),
    ]
}

/// The issues as JSON, or the compile error (both paths must agree on either).
fn issues(schema: &Value, instance: &Value) -> Result<Value, String> {
    let v = compile(schema, PACK_OUT).map_err(|e| e.message)?;
    Ok(match v.validate(instance) {
        Ok(()) => json!([]),
        Err(issues) => serde_json::to_value(&issues).unwrap(),
    })
}

/// `schema` made a non-leaf with a keyword that never reports anything for the data here.
fn general(schema: &Value) -> Value {
    let mut s = schema.clone();
    s["allOf"] = json!([{"not": {"const": "none of the data is this"}}]);
    s
}

#[test]
fn leaf_path_reports_what_the_general_path_reports() {
    let mut compared = 0;
    for t in types() {
        for kws in keyword_sets() {
            let mut schema = kws.clone();
            if let Some(t) = &t {
                schema["type"] = t.clone();
            }
            for d in data() {
                let lean = issues(&schema, &d);
                assert_eq!(lean, issues(&general(&schema), &d), "{schema} on {d}");
                if lean.is_err() {
                    continue;
                }
                compared += 1;
                // Under `properties` and `items`, where a leaf is handed over directly.
                let by_prop = json!({"type": "object", "properties": {"p": schema}});
                let by_prop_general =
                    json!({"type": "object", "properties": {"p": general(&schema)}});
                let x = json!({"p": d});
                assert_eq!(
                    issues(&by_prop, &x),
                    issues(&by_prop_general, &x),
                    "{by_prop} on {x}"
                );
                let by_item = json!({"type": "array", "items": schema});
                let by_item_general = json!({"type": "array", "items": general(&schema)});
                let x = json!([d, "ab", 3]);
                assert_eq!(
                    issues(&by_item, &x),
                    issues(&by_item_general, &x),
                    "{by_item} on {x}"
                );
            }
        }
    }
    // Most combinations compile in strict mode; the test means nothing if none did.
    assert!(compared > 200, "only {compared} combinations compiled");
}
