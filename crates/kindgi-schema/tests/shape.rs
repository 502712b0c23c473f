#![allow(clippy::unwrap_used, clippy::expect_used)]
//! An object's `required`, `additionalProperties` and `properties` are fused at compile time
//! into one pass over its keys. A `propertyNames` that no key here fails keeps them apart (the
//! fusion only takes the three alone); both forms must report exactly the same issues, in the
//! same order, for every combination tried here.

use kindgi_schema::{CompileOptions, Mode, Side, compile};
use serde_json::{Map, Value, json};

const PACK_OUT: CompileOptions = CompileOptions {
    mode: Mode::Pack,
    side: Side::Output,
};

fn properties() -> Vec<Value> {
    vec![
        json!({"a": {"type": "integer"}, "b": {"type": "string", "minLength": 2}, "c": {}}),
        json!({"a": {"type": "object", "properties": {"x": {"const": 1}}, "required": ["x"]}, "b": true}),
        json!({"a~b": {"type": "string"}, "c/d": {"type": "number"}, "1": {"type": "boolean"}}),
        json!({"constructor": {"type": "string"}, "b": {"type": "integer"}}),
        json!({"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"},
               "d": {"type": "integer"}, "e": {"type": "integer"}}),
    ]
}

fn required() -> Vec<Option<Value>> {
    vec![
        None,
        Some(json!(["a"])),
        Some(json!(["b", "a", "zz"])),
        Some(json!(["toString", "c/d", "1"])),
    ]
}

fn additional() -> Vec<Option<Value>> {
    vec![None, Some(json!(false)), Some(json!({"type": "integer"}))]
}

fn instances() -> Vec<Value> {
    let mut big = Map::new();
    for i in 0..20 {
        big.insert(format!("k{i}"), json!(i));
    }
    big.insert("b".into(), json!("x"));
    big.insert("a".into(), json!("not an integer"));
    vec![
        json!({}),
        json!({"a": 1, "b": "xy", "c": null}),
        json!({"b": 3, "a": "x"}),
        json!({"a": 1, "extra": 2, "b": "x", "more": "y"}),
        json!({"2": 0, "z": 1, "1": true, "0": "s", "a": 5}),
        json!({"a~b": 1, "c/d": "x", "1": 0, "constructor": 2}),
        json!({"e": 1, "d": "x", "c": 2, "b": "y", "a": 3.5}),
        json!({"a": {"x": 2}, "b": 1}),
        // Four undeclared keys (all kept by the fused pass), five (one too many), and an
        // undeclared key that JavaScript enumerates first.
        json!({"x1": 1, "a": 1, "x2": "2", "x3": 3, "x4": 4}),
        json!({"x1": 1, "x2": "2", "x3": 3, "x4": 4, "x5": 5.5, "a": "s"}),
        json!({"a": 1, "z": "y", "9": 2, "b": "xy"}),
        Value::Object(big),
        json!([1, 2]),
        json!("s"),
    ]
}

fn issues(schema: &Value, instance: &Value) -> Result<Value, String> {
    let v = compile(schema, PACK_OUT).map_err(|e| e.message)?;
    Ok(match v.validate(instance) {
        Ok(()) => json!([]),
        Err(issues) => serde_json::to_value(&issues).unwrap(),
    })
}

/// `schema` with the three keywords kept apart.
fn apart(schema: &Value) -> Value {
    let mut s = schema.clone();
    s["propertyNames"] = json!({"not": {"const": "no key here is this"}});
    s
}

#[test]
fn fused_object_reports_what_the_keywords_apart_report() {
    let mut compared = 0;
    for props in properties() {
        for req in required() {
            for add in additional() {
                let mut schema = json!({"type": "object", "properties": props});
                if let Some(r) = &req {
                    schema["required"] = r.clone();
                }
                if let Some(a) = &add {
                    schema["additionalProperties"] = a.clone();
                }
                for x in instances() {
                    let fused = issues(&schema, &x);
                    assert_eq!(fused, issues(&apart(&schema), &x), "{schema} on {x}");
                    if fused.is_ok() {
                        compared += 1;
                    }
                    // Nested, where the object is reached through `items`.
                    let nested = json!({"type": "array", "items": schema});
                    let xs = json!([x, {}]);
                    assert_eq!(
                        issues(&nested, &xs),
                        issues(&json!({"type": "array", "items": apart(&schema)}), &xs),
                        "{nested} on {xs}"
                    );
                }
            }
        }
    }
    assert!(compared > 250, "only {compared} combinations compiled");
}

/// Stopping at the first problem (`is_valid`) agrees with the full report.
#[test]
fn fused_object_is_valid_agrees() {
    for props in properties() {
        let schema = json!({"type": "object", "properties": props, "required": ["a"], "additionalProperties": false});
        let Ok(v) = compile(&schema, PACK_OUT) else {
            continue;
        };
        for x in instances() {
            assert_eq!(v.is_valid(&x), v.validate(&x).is_ok(), "{schema} on {x}");
        }
    }
}
