#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Hostile input never panics, overflows the stack or hangs: deep schemas and instances get a
//! clear error, recursive `$ref`s compile, and validation of self-referencing schemas stops.

use kindgi_schema::{CompileOptions, Mode, Side, ValidatorCache, compile};
use serde_json::{Value, json};

const PACK_OUT: CompileOptions = CompileOptions {
    mode: Mode::Pack,
    side: Side::Output,
};
const MCP_OUT: CompileOptions = CompileOptions {
    mode: Mode::Mcp,
    side: Side::Output,
};

/// `levels` arrays nested in one another (built without recursion).
fn nested_array(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// Drops a deep value without recursing (serde_json's drop is recursive).
fn drop_deep(mut v: Value) {
    let mut stack = Vec::new();
    loop {
        match std::mem::take(&mut v) {
            Value::Array(mut a) => stack.append(&mut a),
            Value::Object(o) => stack.extend(o.into_iter().map(|(_, x)| x)),
            _ => {}
        }
        match stack.pop() {
            Some(next) => v = next,
            None => break,
        }
    }
}

#[test]
fn schema_nested_ten_thousand_levels_is_a_compile_error() {
    // Built by hand: `json!` would serialise the inner value recursively.
    let mut schema = json!({"type": "string"});
    for _ in 0..10_000 {
        let mut m = serde_json::Map::new();
        m.insert("type".into(), json!("array"));
        m.insert("items".into(), schema);
        schema = Value::Object(m);
    }
    for opts in [PACK_OUT, MCP_OUT] {
        let err = compile(&schema, opts).unwrap_err();
        assert_eq!(err.name, "Error");
        assert!(err.message.contains("nested too deeply"), "{}", err.message);
    }
    let cache = ValidatorCache::new();
    let err = cache.get_or_compile(&schema, PACK_OUT).unwrap_err();
    assert!(err.message.contains("nested too deeply"));
    drop_deep(schema);
}

#[test]
fn instance_nested_ten_thousand_levels_gets_an_issue() {
    // A recursive schema makes evaluation follow the instance all the way down.
    let schema = json!({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"});
    let v = compile(&schema, PACK_OUT).unwrap();
    let deep = nested_array(10_000);
    let issues = v.validate(&deep).unwrap_err();
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues.get(0).unwrap().keyword(), "maxDepth");
    assert!(
        issues
            .get(0)
            .unwrap()
            .message()
            .contains("nested too deeply")
    );
    assert!(!v.is_valid(&deep));
    // Shallow enough instances still validate normally.
    let ok = nested_array(100);
    assert!(!v.is_valid(&Value::Array(vec![ok.clone()])));
    drop_deep(deep);
    drop_deep(ok);
}

/// The same through objects whose `properties`, `required` and `additionalProperties` are
/// fused into one pass, in both walkers (the one that fills defaults keeps them apart).
#[test]
fn instance_nested_ten_thousand_objects_gets_an_issue() {
    let schema = json!({
        "$defs": {"n": {
            "type": "object",
            "properties": {"next": {"$ref": "#/$defs/n"}, "v": {"type": "integer", "default": 1}},
            "required": ["next"],
            "additionalProperties": false
        }},
        "$ref": "#/$defs/n"
    });
    // Built without recursion (`clone` and `drop` of such a value would recurse).
    let nested = || {
        let mut deep = json!({});
        for _ in 0..10_000 {
            let mut m = serde_json::Map::new();
            m.insert("next".into(), deep);
            deep = Value::Object(m);
        }
        deep
    };
    for side in [Side::Output, Side::Input] {
        let v = compile(
            &schema,
            CompileOptions {
                mode: Mode::Pack,
                side,
            },
        )
        .unwrap();
        let deep = nested();
        let issues = v.validate(&deep).unwrap_err();
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues.get(0).unwrap().keyword(), "maxDepth");
        assert!(!v.is_valid(&deep));
        drop_deep(deep);
        let mut filled = nested();
        let issues = v.validate_in_place(&mut filled).unwrap_err();
        assert_eq!(issues.get(0).unwrap().keyword(), "maxDepth");
        drop_deep(filled);
    }
}

#[test]
fn deep_instance_against_permissive_schemas_is_fine() {
    let deep = nested_array(10_000);
    for schema in [json!({}), json!(true), json!({"type": "array"})] {
        let v = compile(&schema, PACK_OUT).unwrap();
        assert!(v.validate(&deep).is_ok());
    }
    // Deep equality (const/enum/uniqueItems) must not overflow either.
    let v = compile(&json!({"type": "array", "uniqueItems": true}), PACK_OUT).unwrap();
    let pair = Value::Array(vec![nested_array(5_000), nested_array(5_000)]);
    assert!(
        !compile(&json!({"const": [[1]]}), PACK_OUT)
            .unwrap()
            .is_valid(&pair)
    );
    let issues = v.validate(&pair).unwrap_err();
    assert_eq!(issues.get(0).unwrap().keyword(), "uniqueItems");
    drop_deep(pair);
    drop_deep(deep);
}

#[test]
fn self_reference_without_progress_stops() {
    // `{"$ref": "#"}` at the root recurses forever in Ajv (stack overflow); here it is bounded.
    for opts in [PACK_OUT, MCP_OUT] {
        let v = compile(&json!({"$ref": "#"}), opts).unwrap();
        let issues = v.validate(&json!(1)).unwrap_err();
        assert_eq!(issues.last().unwrap().keyword(), "maxDepth");
    }
    let v = compile(&json!({"allOf": [{"$ref": "#"}]}), MCP_OUT).unwrap();
    assert!(!v.is_valid(&json!({})));
}

#[test]
fn recursive_ref_cycles_compile() {
    let schemas = [
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
        json!({"$defs": {"a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}}, "b": {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}}}, "$ref": "#/$defs/a"}),
        json!({"type": "object", "properties": {"self": {"$ref": "#"}}}),
    ];
    for s in &schemas {
        for opts in [PACK_OUT, MCP_OUT] {
            // Must return (either way) rather than loop.
            let _ = compile(s, opts);
        }
    }
    let v = compile(&schemas[1], PACK_OUT).unwrap();
    assert!(v.is_valid(&json!({"b": {"a": {"b": {}}}})));
    assert!(!v.is_valid(&json!({"b": {"a": 1}})));
}

#[test]
fn huge_documents_validate() {
    let items: Vec<Value> = (0..200_000)
        .map(|i| json!({"id": i, "name": format!("n{i}")}))
        .collect();
    let doc = Value::Array(items);
    let schema = json!({"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}, "required": ["id", "name"]}});
    let v = compile(&schema, PACK_OUT).unwrap();
    assert!(v.validate(&doc).is_ok());
    let bad = json!([{"id": "x"}]);
    assert_eq!(v.validate(&bad).unwrap_err().len(), 2);
}

#[test]
fn non_schema_values_are_refused_cleanly() {
    assert_eq!(
        compile(&json!(5), PACK_OUT).unwrap_err().message,
        "schema must be object or boolean"
    );
    assert_eq!(
        compile(&json!("x"), PACK_OUT).unwrap_err().message,
        "schema must be object or boolean"
    );
    assert_eq!(
        compile(&Value::Null, PACK_OUT).unwrap_err().name,
        "TypeError"
    );
    assert!(
        compile(&json!([]), PACK_OUT)
            .unwrap_err()
            .message
            .starts_with("schema is invalid: data must be object,boolean")
    );
}

/// `regress` compiles recursively: deeply nested groups or very many alternatives used to
/// overflow the stack (a crash) — in a schema's `pattern`, and in any value checked against
/// `format: "regex"`. Now such a pattern is a clear compile error, such a value an invalid
/// format, and the complex-but-allowed ones compile on a stack of their own.
#[test]
fn patterns_too_complex_to_compile_safely_are_refused() {
    let nested = |n: usize| format!("{}a{}", "(".repeat(n), ")".repeat(n));
    let lookaheads = |n: usize| format!("{}a{}", "(?=".repeat(n), ")".repeat(n));
    let alternatives = |n: usize| format!("{}a", "a|".repeat(n));
    for (p, why) in [
        (nested(100_000), "nest 100000 deep"),
        (lookaheads(1000), "nest 1000 deep"),
        (alternatives(100_000), "100000 alternatives"),
    ] {
        let schema =
            json!({"type": "object", "properties": {"x": {"type": "string", "pattern": p}}});
        let err = compile(&schema, PACK_OUT).unwrap_err();
        assert!(err.message.contains("is too complex"), "{}", err.message);
        assert!(err.message.contains(why), "{}", err.message);
        assert!(err.message.contains("simplify the pattern"));
        assert!(
            err.message.contains("(at \"#/properties/x/pattern\")"),
            "{}",
            err.message
        );
        let schema = json!({"type": "object", "patternProperties": {p.clone(): true}});
        let err = compile(&schema, PACK_OUT).unwrap_err();
        assert!(
            err.message.contains("(at \"#/patternProperties\")"),
            "{}",
            err.message
        );
        // The same text as a value of `format: "regex"` is just not a valid regex.
        let v = compile(&json!({"type": "string", "format": "regex"}), PACK_OUT).unwrap();
        let issues = v.validate(&json!(p)).unwrap_err();
        assert_eq!(issues.get(0).unwrap().keyword(), "format");
    }
    // At the limits, patterns compile and match (on the test thread's own stack).
    for p in [nested(32), lookaheads(32), alternatives(4096)] {
        let v = compile(&json!({"type": "string", "pattern": p}), PACK_OUT).unwrap();
        assert!(v.validate(&json!("a")).is_ok());
        assert!(v.validate(&json!("b")).is_err());
        let f = compile(&json!({"type": "string", "format": "regex"}), PACK_OUT).unwrap();
        assert!(f.validate(&json!(p)).is_ok());
    }
}
