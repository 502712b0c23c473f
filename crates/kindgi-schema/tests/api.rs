#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The public API others code against: options, defaults in place, `is_valid`, the inline
//! (needsSpec) compiler, the dialect message and the cache.

use kindgi_schema::{
    CompileOptions, Dialect, Mode, Side, ValidatorCache, check_dialect, compile, compile_inline,
    errors_text,
};
use serde_json::json;
use std::sync::Arc;

const PACK_IN: CompileOptions = CompileOptions {
    mode: Mode::Pack,
    side: Side::Input,
};
const PACK_OUT: CompileOptions = CompileOptions {
    mode: Mode::Pack,
    side: Side::Output,
};
const MCP_IN: CompileOptions = CompileOptions {
    mode: Mode::Mcp,
    side: Side::Input,
};

#[test]
fn input_side_fills_defaults_even_when_invalid() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer", "default": 1}, "b": {"type": "string"}}, "required": ["b"]});
    let v = compile(&schema, PACK_IN).unwrap();
    assert!(v.fills_defaults());
    let mut x = json!({});
    let issues = v.validate_in_place(&mut x).unwrap_err();
    assert_eq!(x, json!({"a": 1}));
    assert_eq!(
        issues.get(0).unwrap().message(),
        "must have required property 'b'"
    );
    // `validate` never changes anything and does not see defaults.
    let v_out = compile(&schema, PACK_OUT).unwrap();
    assert!(!v_out.fills_defaults());
    let mut y = json!({"b": "x"});
    v_out.validate_in_place(&mut y).unwrap();
    assert_eq!(y, json!({"b": "x"}));
}

#[test]
fn mcp_inputs_fill_defaults_too() {
    let v = compile(&json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"units": {"type": "string", "default": "metric"}}}), MCP_IN).unwrap();
    let mut x = json!({});
    v.validate_in_place(&mut x).unwrap();
    assert_eq!(x, json!({"units": "metric"}));
}

#[test]
fn is_valid_matches_validate() {
    let v = compile(&json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}), PACK_OUT).unwrap();
    for x in [
        json!({"n": 1}),
        json!({"n": -1}),
        json!({}),
        json!([]),
        json!({"n": 1.5}),
    ] {
        assert_eq!(v.is_valid(&x), v.validate(&x).is_ok(), "{x}");
    }
}

#[test]
fn needs_spec_schemas_allow_the_tunable_keyword() {
    let s = json!({"type": "string", "pattern": "^[a-z]+$", "x-kindgi-tunable": true});
    let v = compile_inline(&s).unwrap();
    assert!(v.is_valid(&json!("abc")));
    let issues = v.validate(&json!("ABC")).unwrap_err();
    assert_eq!(errors_text(&issues), "data must match pattern \"^[a-z]+$\"");
    // Elsewhere the keyword is unknown in strict mode.
    assert_eq!(
        compile(&s, PACK_OUT).unwrap_err().message,
        "strict mode: unknown keyword: \"x-kindgi-tunable\""
    );
    assert_eq!(
        compile_inline(&json!({"type": "string", "x-other": 1}))
            .unwrap_err()
            .message,
        "strict mode: unknown keyword: \"x-other\""
    );
}

#[test]
fn dialect_messages() {
    let all = [
        Dialect::Draft06,
        Dialect::Draft07,
        Dialect::Draft2019,
        Dialect::Draft2020,
    ];
    assert_eq!(check_dialect(&json!({}), &all).unwrap(), Dialect::Draft2020);
    assert_eq!(
        check_dialect(
            &json!({"$schema": "http://json-schema.org/draft-06/schema#"}),
            &all
        )
        .unwrap(),
        Dialect::Draft06
    );
    assert_eq!(
        check_dialect(&json!({"$schema": 7}), &all)
            .unwrap_err()
            .message,
        "The schema's $schema 7 isn't a JSON Schema dialect Kindgi validates: draft-06, draft-07, 2019-09 or 2020-12."
    );
    assert_eq!(
        check_dialect(
            &json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
            &[Dialect::Draft2020]
        )
        .unwrap_err()
        .message,
        "The schema's $schema \"http://json-schema.org/draft-07/schema#\" isn't a JSON Schema dialect Kindgi validates here: 2020-12."
    );
    assert_eq!(
        check_dialect(
            &json!({"$schema": "x"}),
            &[Dialect::Draft07, Dialect::Draft2020]
        )
        .unwrap_err()
        .message,
        "The schema's $schema \"x\" isn't a JSON Schema dialect Kindgi validates here: draft-07 or 2020-12."
    );
}

#[test]
fn cache_compiles_once_per_schema_and_options() {
    let cache = ValidatorCache::new();
    let s = json!({"type": "string", "minLength": 2});
    let a = cache.get_or_compile(&s, PACK_OUT).unwrap();
    let b = cache
        .get_or_compile(&json!({"type": "string", "minLength": 2}), PACK_OUT)
        .unwrap();
    assert!(
        Arc::ptr_eq(&a, &b),
        "same content and options must share one validator"
    );
    let c = cache.get_or_compile(&s, PACK_IN).unwrap();
    assert!(!Arc::ptr_eq(&a, &c), "options are part of the key");
    // Key order is part of the content (it decides issue order).
    let d = cache
        .get_or_compile(&json!({"minLength": 2, "type": "string"}), PACK_OUT)
        .unwrap();
    assert!(!Arc::ptr_eq(&a, &d));
    assert_eq!(cache.len(), 3);
    // Compile errors are remembered as well.
    let bad = json!({"type": "string", "x-label": 1});
    let e1 = cache.get_or_compile(&bad, PACK_OUT).unwrap_err();
    let e2 = cache.get_or_compile(&bad, PACK_OUT).unwrap_err();
    assert_eq!(e1, e2);
    assert_eq!(cache.len(), 4);
}

#[test]
fn cache_is_shared_across_threads() {
    let cache = Arc::new(ValidatorCache::new());
    let s = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let cache = cache.clone();
            let s = s.clone();
            std::thread::spawn(move || cache.get_or_compile(&s, PACK_OUT).unwrap())
        })
        .collect();
    let got: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for v in &got {
        assert!(Arc::ptr_eq(v, &got[0]));
    }
    assert_eq!(cache.len(), 1);
}

#[test]
fn issue_serialises_like_ajv() {
    let v = compile(
        &json!({"type": "object", "propertyNames": {"maxLength": 1}}),
        PACK_OUT,
    )
    .unwrap();
    let issues = v.validate(&json!({"ab": 1})).unwrap_err();
    let text = serde_json::to_value(&issues).unwrap();
    assert_eq!(
        text,
        json!([
            {"instancePath": "", "schemaPath": "#/propertyNames/maxLength", "keyword": "maxLength", "params": {"limit": 1}, "message": "must NOT have more than 1 characters", "propertyName": "ab"},
            {"instancePath": "", "schemaPath": "#/propertyNames", "keyword": "propertyNames", "params": {"propertyName": "ab"}, "message": "property name must be valid"}
        ])
    );
}

/// Declared properties are looked up from a cursor that expects the declared order; instances
/// in any other order (or with many keys, which are hashed) must find the same values, and the
/// issues still come in the schema's order.
#[test]
fn properties_found_in_any_instance_order() {
    // MCP mode: not strict, so a 1-tuple with `unevaluatedItems` compiles.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer"},
            "c": {"type": "integer"},
            "d": {"type": "integer"}
        }
    });
    let v = compile(&schema, PACK_OUT).unwrap();
    let paths = |x: serde_json::Value| -> Vec<String> {
        v.validate(&x)
            .unwrap_err()
            .iter()
            .map(|i| i.instance_path().to_owned())
            .collect()
    };
    let want = vec!["/a", "/b", "/d"];
    assert_eq!(paths(json!({"a": "x", "b": "x", "d": "x"})), want);
    assert_eq!(paths(json!({"d": "x", "b": "x", "a": "x"})), want);
    assert_eq!(paths(json!({"b": "x", "c": 1, "d": "x", "a": "x"})), want);
    // More keys than a linear search covers: the hashed lookup, same answer.
    let mut big = serde_json::Map::new();
    for i in 0..20 {
        big.insert(format!("k{i}"), json!(i));
    }
    big.insert("d".into(), json!("x"));
    big.insert("a".into(), json!("x"));
    big.insert("b".into(), json!("x"));
    assert_eq!(paths(serde_json::Value::Object(big)), want);
    assert!(v.is_valid(&json!({"d": 4, "c": 3, "b": 2, "a": 1})));
}

/// A failed validation's `Issues`: read in place, in order, or as standalone issues; the same
/// JSON either way; usable after the validator is gone; and issues whose site the validation
/// built on the spot (`unevaluatedItems`' count, the depth limit) read like the others.
#[test]
fn issues_read_in_place_and_as_standalone_issues() {
    // MCP mode: not strict, so a 1-tuple with `unevaluatedItems` compiles.
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "t": {"type": "array", "prefixItems": [{"type": "string"}], "unevaluatedItems": false},
            "u": {"type": "array", "uniqueItems": true}
        },
        "additionalProperties": false
    });
    let v = compile(&schema, MCP_IN).unwrap();
    let instance = json!({"a": "x", "t": ["s", 1, 2], "u": [1, 1], "zz": true});
    let issues = v.validate(&instance).unwrap_err();
    drop(v);
    let keywords: Vec<&str> = issues.iter().map(|i| i.keyword()).collect();
    assert_eq!(
        keywords,
        [
            "additionalProperties",
            "type",
            "unevaluatedItems",
            "uniqueItems"
        ]
    );
    assert_eq!(issues.len(), 4);
    assert!(!issues.is_empty());
    assert_eq!(issues.first().unwrap().instance_path(), "");
    assert_eq!(issues.last().unwrap().keyword(), "uniqueItems");
    assert!(issues.get(4).is_none());
    let uneval = issues.get(2).unwrap();
    assert_eq!(uneval.schema_path(), "#/properties/t/unevaluatedItems");
    assert_eq!(uneval.message(), "must NOT have more than 1 items");
    assert_eq!(uneval.params()["limit"], 1);
    assert_eq!(issues.get(0).unwrap().params()["additionalProperty"], "zz");
    // Items of any type: Ajv's deep-equal loop reports i = 1, j = 0.
    assert_eq!(
        issues.get(3).unwrap().message(),
        "must NOT have duplicate items (items ## 0 and 1 are identical)"
    );

    // The standalone issues say the same, in the same JSON.
    let owned: Vec<kindgi_schema::Issue> = issues.clone().into();
    assert_eq!(issues, owned);
    assert_eq!(
        serde_json::to_value(&issues).unwrap(),
        serde_json::to_value(&owned).unwrap()
    );
    for (view, issue) in issues.iter().zip(&owned) {
        assert_eq!(view, *issue);
        assert_eq!(view.to_owned(), *issue);
        assert_eq!(view.to_string(), issue.to_string());
        assert_eq!(
            serde_json::to_value(view).unwrap(),
            serde_json::to_value(issue).unwrap()
        );
    }
    assert_eq!(issues.to_string(), errors_text(&owned));
    assert_eq!(errors_text(&issues), errors_text(&owned));
    assert_eq!(issues.iter().next_back().unwrap().keyword(), "uniqueItems");
    assert_eq!(issues.iter().len(), 4);
    let by_ref: Vec<String> = (&issues).into_iter().map(|i| i.to_string()).collect();
    let by_value: Vec<String> = issues.into_iter().map(|i| i.to_string()).collect();
    assert_eq!(by_ref, by_value);

    // The depth limit's issue is built on the spot, too.
    let mut deep = json!(1);
    for _ in 0..3000 {
        deep = serde_json::Value::Array(vec![deep]);
    }
    let v = compile(&json!({"$ref": "#/$defs/n", "$defs": {"n": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/n"}}}}), PACK_OUT).unwrap();
    let issues = v.validate(&deep).unwrap_err();
    let last = issues.last().unwrap();
    assert_eq!(last.keyword(), "maxDepth");
    assert!(
        last.message().contains("nested too deeply"),
        "{}",
        last.message()
    );
}
