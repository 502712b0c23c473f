#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Per-validation budgets: exponential backtracking, `$ref` fan-out through every combinator
//! and `uniqueItems` over big arrays are answered promptly — with an issue saying which budget
//! ran out, where one does — never a hang or unbounded memory.
//!
//! Each case runs on a thread and must answer within [`ANSWER_WITHIN`]: a hang detector, not a
//! speed test (the budgets answer these in milliseconds; before them, they took minutes).

use kindgi_schema::{Budgets, CompileOptions, Issues, Mode, Side, Validator, compile};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

const PACK_OUT: CompileOptions = CompileOptions {
    mode: Mode::Pack,
    side: Side::Output,
};

const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// Runs `f` on a thread; panics if it does not answer within [`ANSWER_WITHIN`].
fn answers<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(ANSWER_WITHIN)
        .unwrap_or_else(|_| panic!("{what}: no answer within {ANSWER_WITHIN:?}"))
}

/// Validates on a thread (see [`answers`]), returning the issues as JSON values.
fn issues_of(what: &str, v: &Arc<Validator>, instance: Value) -> Option<Vec<Value>> {
    let v = Arc::clone(v);
    answers(what, move || {
        v.validate(&instance).err().map(|issues: Issues| {
            issues
                .iter()
                .map(|i| {
                    json!({
                        "instancePath": i.instance_path(),
                        "schemaPath": i.schema_path(),
                        "keyword": i.keyword(),
                        "params": Value::Object(i.params().into_owned()),
                        "message": i.message(),
                    })
                })
                .collect()
        })
    })
}

fn pattern_schema(p: &str) -> Validator {
    compile(&json!({"type": "string", "pattern": p}), PACK_OUT).unwrap()
}

/// Budgets a tenth of the defaults or less (the issue budget aside), so that the unoptimised test build answers fast
/// (the defaults' figures, in release builds, are in `docs/schema.md`).
const SMALL: Budgets = Budgets {
    regex_steps: 100_000,
    evaluated_nodes: 100_000,
    issues: 10_000,
};

/// The issue report's three backtracking cases: each is refused with the step-budget issue.
#[test]
fn exponential_backtracking_runs_out_of_steps_with_a_clear_issue() {
    let cases = [
        ("^(a+)+\\1$", format!("{}!", "a".repeat(31))),
        ("^(\\p{L}+\\s?)*$", format!("{}!", "a".repeat(27))),
        ("^(?=(a|aa)+$)a", format!("{}!", "a".repeat(60))),
    ];
    for (p, value) in cases {
        let v = Arc::new(pattern_schema(p).with_budgets(SMALL));
        let issues = issues_of(p, &v, json!(value)).expect("out of budget is invalid");
        assert_eq!(issues.len(), 1, "{p}: {issues:?}");
        let issue = &issues[0];
        assert_eq!(issue["keyword"], "pattern", "{p}");
        assert_eq!(issue["instancePath"], "");
        assert_eq!(issue["schemaPath"], "#/pattern");
        assert_eq!(
            issue["params"],
            json!({"pattern": p, "stepBudget": SMALL.regex_steps})
        );
        let message = issue["message"].as_str().unwrap();
        assert!(
            message.contains("ran out of its budget") && message.contains("simplify the pattern"),
            "{message}"
        );
        let v2 = Arc::clone(&v);
        assert!(!answers(p, move || v2.is_valid(&json!(value))));
        // Values the pattern settles quickly still get their ordinary answer.
        assert!(v.validate(&json!("aa")).is_ok() || p.contains("(?="));
    }
}

/// The budget is the validator's option, per validation, shared by every pattern match.
#[test]
fn the_step_budget_is_configurable_and_shared_by_the_validation() {
    let p = "^(\\p{L}+\\s?)*$";
    let value = "abcdefghij klmnopq rstu";
    let one = compile(&json!({"type": "string", "pattern": p}), PACK_OUT).unwrap();
    assert_eq!(one.budgets(), Budgets::DEFAULT);
    assert_eq!(
        (
            Budgets::DEFAULT.regex_steps,
            Budgets::DEFAULT.evaluated_nodes,
            Budgets::DEFAULT.issues
        ),
        (1_000_000, 1_000_000, 10_000),
        "the documented defaults"
    );
    let fits = |steps: u64| {
        one.validate_within(
            &json!(value),
            &Budgets {
                regex_steps: steps,
                ..Budgets::DEFAULT
            },
        )
        .is_ok()
    };
    assert!(fits(u64::MAX), "the value matches");
    assert!(!fits(0), "no steps, no answer");
    // The fewest steps this value needs (binary search).
    let (mut lo, mut hi) = (0u64, 1u64 << 20);
    assert!(fits(hi));
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if fits(mid) { hi = mid } else { lo = mid }
    }
    let need = hi;
    let two = compile(
        &json!({"type": "object", "properties": {"a": {"type": "string", "pattern": p}, "b": {"type": "string", "pattern": p}}}),
        PACK_OUT,
    )
    .unwrap()
    .with_budgets(Budgets {
        regex_steps: need,
        ..Budgets::DEFAULT
    });
    assert_eq!(two.budgets().regex_steps, need);
    assert!(two.validate(&json!({"a": value})).is_ok());
    let issues = two.validate(&json!({"a": value, "b": value})).unwrap_err();
    let last = issues.last().unwrap();
    assert_eq!(last.keyword(), "pattern");
    assert_eq!(last.instance_path(), "/b", "the second match ran out");
    assert_eq!(last.schema_path(), "#/properties/b/pattern");
    assert_eq!(last.params()["stepBudget"], json!(need));
}

/// Property names go through the same budget (`patternProperties`, `additionalProperties`).
#[test]
fn pattern_properties_run_out_of_steps_too() {
    let name = format!("{}!", "a".repeat(31));
    let schema = json!({
        "type": "object",
        "patternProperties": {"^(a+)+\\1$": {"type": "integer"}},
        "additionalProperties": false
    });
    let v = Arc::new(compile(&schema, PACK_OUT).unwrap().with_budgets(SMALL));
    let mut instance = serde_json::Map::new();
    instance.insert(name.clone(), json!(1));
    let issues = issues_of("patternProperties", &v, Value::Object(instance)).unwrap();
    let last = issues.last().unwrap();
    assert_eq!(last["keyword"], "pattern");
    assert_eq!(last["schemaPath"], "#/patternProperties");
    assert_eq!(last["instancePath"], format!("/{name}"));
}

/// `levels` levels of `level(next)` over a failing leaf (`{"type": "string"}`).
fn fan_out(levels: usize, level: impl Fn(Value) -> Value) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..levels {
        defs.insert(
            format!("l{i}"),
            level(json!({"$ref": format!("#/$defs/l{}", i + 1)})),
        );
    }
    defs.insert(format!("l{levels}"), json!({"type": "string"}));
    json!({"$defs": defs, "$ref": "#/$defs/l0"})
}

#[test]
fn ref_fan_out_stops_at_the_budget_with_a_clear_issue() {
    for levels in [22, 30] {
        let schema = fan_out(levels, |r| json!({"anyOf": [r.clone(), r]}));
        let v = Arc::new(compile(&schema, PACK_OUT).unwrap().with_budgets(SMALL));
        let issues = issues_of("anyOf fan-out", &v, json!(1)).expect("invalid");
        assert!(issues.len() <= SMALL.issues + 1, "{} issues", issues.len());
        let last = issues.last().unwrap();
        assert!(
            ["maxIssues", "maxEvaluations"].contains(&last["keyword"].as_str().unwrap()),
            "{last}"
        );
        assert_eq!(last["schemaPath"], "#");
        assert!(
            last["message"]
                .as_str()
                .unwrap()
                .contains("validation stops there")
        );
        // Without issues to collect, the node budget stops it.
        let v2 = Arc::clone(&v);
        assert!(!answers("is_valid fan-out", move || v2.is_valid(&json!(1))));
    }
    // A smaller node budget, reported as such.
    let schema = fan_out(22, |r| json!({"anyOf": [r.clone(), r]}));
    let v = compile(&schema, PACK_OUT).unwrap().with_budgets(Budgets {
        evaluated_nodes: 1000,
        ..Budgets::DEFAULT
    });
    let issues = v.validate(&json!(1)).unwrap_err();
    let last = issues.last().unwrap();
    assert_eq!(last.keyword(), "maxEvaluations");
    assert_eq!(last.params()["limit"], json!(1000));
}

/// Every combinator that applies several subschemas to the same value fans out the same way.
#[test]
fn every_combinator_fan_out_is_bounded() {
    type Level = fn(Value) -> Value;
    let shapes: [(&str, Level); 8] = [
        ("anyOf", |r| json!({"anyOf": [r.clone(), r]})),
        ("oneOf", |r| json!({"oneOf": [r.clone(), r]})),
        ("allOf", |r| json!({"allOf": [r.clone(), r]})),
        (
            "not",
            |r| json!({"allOf": [{"not": r.clone()}, {"not": r}]}),
        ),
        (
            "if",
            |r| json!({"if": r.clone(), "then": r.clone(), "else": r}),
        ),
        (
            "dependentSchemas",
            |r| json!({"type": "object", "dependentSchemas": {"a": r.clone()}, "allOf": [r]}),
        ),
        (
            "unevaluatedProperties",
            |r| json!({"type": "object", "anyOf": [r.clone(), r], "unevaluatedProperties": false}),
        ),
        (
            "contains",
            |r| json!({"type": "array", "anyOf": [r.clone(), r], "contains": true}),
        ),
    ];
    for (name, level) in shapes {
        let schema = fan_out(30, level);
        let v = Arc::new(compile(&schema, PACK_OUT).unwrap().with_budgets(SMALL));
        for instance in [json!({"a": 1}), json!([1])] {
            let v2 = Arc::clone(&v);
            let i2 = instance.clone();
            let _ = answers(name, move || v2.is_valid(&i2));
            let _ = issues_of(name, &v, instance);
        }
    }
}

#[test]
fn big_arrays_under_unique_items_and_contains_answer() {
    let n = 100_000;
    let distinct: Vec<Value> = (0..n).map(|i| json!(i)).collect();
    let v = Arc::new(compile(&json!({"type": "array", "uniqueItems": true}), PACK_OUT).unwrap());
    assert!(issues_of("uniqueItems distinct", &v, Value::Array(distinct.clone())).is_none());
    // One duplicate, `5` and `5.0`: Ajv's pair and message.
    let mut dup = distinct.clone();
    dup[n - 1] = serde_json::from_str("5.0").unwrap();
    let issues = issues_of("uniqueItems duplicate", &v, Value::Array(dup)).unwrap();
    assert_eq!(issues.len(), 1);
    assert_eq!(
        issues[0]["message"],
        format!(
            "must NOT have duplicate items (items ## 5 and {} are identical)",
            n - 1
        )
    );
    assert_eq!(issues[0]["params"], json!({"i": n - 1, "j": 5}));
    // Objects, equal whatever their key order.
    let objects: Vec<Value> = (0..n)
        .map(|i| json!({"id": i, "tags": [i % 7, "x"]}))
        .chain(std::iter::once(
            serde_json::from_str(r#"{"tags": [3, "x"], "id": 3.0}"#).unwrap(),
        ))
        .collect();
    let issues = issues_of("uniqueItems objects", &v, Value::Array(objects)).unwrap();
    assert_eq!(issues[0]["params"], json!({"i": n, "j": 3}));
    // `contains` over a big array is linear; every failing item is an issue (allErrors), so
    // the issue budget ends the list.
    let c = Arc::new(
        compile(
            &json!({"type": "array", "contains": {"type": "string"}}),
            PACK_OUT,
        )
        .unwrap(),
    );
    let issues = issues_of("contains", &c, Value::Array(distinct.clone())).unwrap();
    assert_eq!(issues.len(), Budgets::DEFAULT.issues + 1);
    assert_eq!(issues.last().unwrap()["keyword"], "maxIssues");
    assert_eq!(
        issues.last().unwrap()["params"],
        json!({"limit": Budgets::DEFAULT.issues})
    );
    let issues = issues_of("contains", &c, Value::Array(distinct[..100].to_vec())).unwrap();
    assert_eq!(issues.last().unwrap()["keyword"], "contains");
}

/// A validation tried under small budgets answers `None` when one runs out (so the caller can
/// run it again where it may take longer), and otherwise exactly what `validate` answers.
#[test]
fn an_attempt_under_small_budgets_gives_up_or_answers_as_validate_does() {
    let tiny = Budgets {
        regex_steps: 1_000,
        evaluated_nodes: 1_000,
        issues: 10_000,
    };
    let backtracking = pattern_schema("^(a+)+\\1$");
    let slow = json!(format!("{}!", "a".repeat(24)));
    assert!(backtracking.try_validate_within(&slow, &tiny).is_none());
    let fan = compile(&fan_out(12, |r| json!({"anyOf": [r.clone(), r]})), PACK_OUT).unwrap();
    assert!(fan.try_validate_within(&json!(1), &tiny).is_none());

    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^[a-z]+-[0-9]+$"},
            "n": {"type": "integer", "minimum": 1, "default": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
        },
        "required": ["id"],
        "additionalProperties": false
    });
    let input = CompileOptions {
        mode: Mode::Pack,
        side: Side::Input,
    };
    let v = compile(&schema, input).unwrap();
    for instance in [
        json!({"id": "ord-1", "tags": ["a", "b"]}),
        json!({"id": "ORD", "n": 0, "tags": ["a", "a"], "extra": true}),
        json!({"n": "x"}),
    ] {
        let full = v.validate(&instance).map_err(|i| i.to_string());
        let tried = v
            .try_validate_within(&instance, &tiny)
            .expect("a small instance fits the small budgets")
            .map_err(|i| i.to_string());
        assert_eq!(tried, full, "{instance}");
        let (mut a, mut b) = (instance.clone(), instance.clone());
        let full = v.validate_in_place(&mut a).map_err(|i| i.to_string());
        let tried = v
            .try_validate_in_place_within(&mut b, &tiny)
            .expect("fits")
            .map_err(|i| i.to_string());
        assert_eq!((tried, b), (full, a), "{instance}");
    }
}
