//! The evaluator's exact rules (runtime.md §1.2), MISSING included.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_runtime::expr::{Env, NodeOutputs, eval, resolve_mapping};
use kindgi_spec::flow::{Expr, Mapping};
use serde_json::{Value, json};
use std::sync::Arc;

fn check(expr: Value, expected: bool) {
    let input = json!({"a": 1, "s": "b", "n": null, "f": false, "z": 0, "e": "", "arr": [1, "x", {"k": 1}], "o": {"k": [1]}});
    let mut outputs = NodeOutputs::new();
    outputs.insert(
        "get.order".into(),
        Arc::new(json!({"status": "shipped", "total": 1.0})),
    );
    outputs.insert("get".into(), Arc::new(json!({"other": true})));
    let state = json!({});
    let env = Env {
        run_input: &input,
        state: &state,
        node_outputs: &outputs,
        iteration_index: None,
        iteration_output: None,
    };
    let e: Expr = serde_json::from_value(expr.clone()).unwrap();
    assert_eq!(eval(&e, &env), expected, "{expr}");
}

fn p(path: &str) -> Value {
    json!({"path": path})
}
fn l(v: Value) -> Value {
    json!({"literal": v})
}

#[test]
fn comparisons_with_missing_are_false_except_ne() {
    check(
        json!({"op": "eq", "left": p("runInput.missing"), "right": l(json!(null))}),
        false,
    );
    check(
        json!({"op": "eq", "left": p("runInput.n"), "right": l(json!(null))}),
        true,
    );
    check(
        json!({"op": "ne", "left": p("runInput.missing"), "right": l(json!(1))}),
        true,
    );
    check(
        json!({"op": "ne", "left": p("runInput.missing"), "right": p("runInput.other")}),
        false,
    );
    check(
        json!({"op": "ne", "left": p("runInput.a"), "right": l(json!(1))}),
        false,
    );
    for op in ["lt", "lte", "gt", "gte"] {
        check(
            json!({"op": op, "left": p("runInput.missing"), "right": l(json!(1))}),
            false,
        );
    }
    check(
        json!({"op": "not", "child": {"op": "eq", "left": p("runInput.missing"), "right": l(json!(1))}}),
        true,
    );
}

#[test]
fn ordering_needs_two_numbers_or_two_strings() {
    check(
        json!({"op": "lt", "left": p("runInput.a"), "right": l(json!(2))}),
        true,
    );
    check(
        json!({"op": "lte", "left": p("runInput.a"), "right": l(json!(1.0))}),
        true,
    );
    check(
        json!({"op": "gt", "left": p("runInput.s"), "right": l(json!("a"))}),
        true,
    );
    check(
        json!({"op": "gte", "left": p("runInput.s"), "right": l(json!("b"))}),
        true,
    );
    check(
        json!({"op": "lt", "left": p("runInput.a"), "right": l(json!("2"))}),
        false,
    );
    check(
        json!({"op": "gte", "left": p("runInput.a"), "right": l(json!("1"))}),
        false,
    );
    check(
        json!({"op": "lt", "left": p("runInput.n"), "right": l(json!(1))}),
        false,
    );
}

#[test]
fn equality_is_structural_json_equality() {
    check(
        json!({"op": "eq", "left": p("runInput.a"), "right": l(json!(1.0))}),
        true,
    );
    check(
        json!({"op": "eq", "left": p("runInput.arr"), "right": l(json!([1, "x", {"k": 1.0}]))}),
        true,
    );
    check(
        json!({"op": "eq", "left": p("runInput.o"), "right": l(json!({"k": [1]}))}),
        true,
    );
    check(
        json!({"op": "eq", "left": p("runInput.arr"), "right": l(json!([1, "x"]))}),
        false,
    );
    check(
        json!({"op": "eq", "left": p("runInput.z"), "right": l(json!(false))}),
        false,
    );
}

#[test]
fn in_and_not_in_need_an_array_set() {
    check(
        json!({"op": "in", "value": p("runInput.s"), "set": l(json!(["a", "b"]))}),
        true,
    );
    check(
        json!({"op": "in", "value": l(json!({"k": 1})), "set": p("runInput.arr")}),
        true,
    );
    check(
        json!({"op": "notIn", "value": p("runInput.s"), "set": l(json!(["a"]))}),
        true,
    );
    check(
        json!({"op": "in", "value": p("runInput.s"), "set": l(json!("abc"))}),
        false,
    );
    check(
        json!({"op": "notIn", "value": p("runInput.s"), "set": l(json!("abc"))}),
        false,
    );
    check(
        json!({"op": "notIn", "value": p("runInput.missing"), "set": l(json!([1]))}),
        false,
    );
    check(
        json!({"op": "in", "value": p("runInput.a"), "set": p("runInput.missing")}),
        false,
    );
}

#[test]
fn existence_and_truthiness() {
    check(json!({"op": "exists", "value": p("runInput.n")}), true);
    check(
        json!({"op": "exists", "value": p("runInput.missing")}),
        false,
    );
    check(
        json!({"op": "notExists", "value": p("runInput.missing")}),
        true,
    );
    check(json!({"op": "exists", "value": p("runInput.arr.0")}), false);
    check(
        json!({"op": "truthy", "value": p("runInput.missing")}),
        false,
    );
    check(json!({"op": "falsy", "value": p("runInput.missing")}), true);
    for falsy in ["runInput.n", "runInput.f", "runInput.z", "runInput.e"] {
        check(json!({"op": "falsy", "value": p(falsy)}), true);
        check(json!({"op": "truthy", "value": p(falsy)}), false);
    }
    check(json!({"op": "truthy", "value": l(json!([]))}), true);
    check(json!({"op": "truthy", "value": l(json!({}))}), true);
    check(json!({"op": "truthy", "value": l(json!("0"))}), true);
}

#[test]
fn logic_and_paths_into_node_outputs() {
    check(
        json!({"op": "and", "children": [{"op": "exists", "value": p("runInput.a")}, {"op": "eq", "left": p("nodeOutputs.get.order.status"), "right": l(json!("shipped"))}]}),
        true,
    );
    check(
        json!({"op": "or", "children": [{"op": "exists", "value": p("runInput.missing")}, {"op": "eq", "left": p("nodeOutputs.get.other"), "right": l(json!(true))}]}),
        true,
    );
    check(
        json!({"op": "eq", "left": p("nodeOutputs.get.order.total"), "right": l(json!(1))}),
        true,
    );
    check(json!({"op": "exists", "value": p("iterationIndex")}), false);
    check(json!({"op": "exists", "value": p("state.anything")}), false);
}

#[test]
fn a_mapping_omits_missing_keys() {
    let input = json!({"a": 1, "n": null});
    let outputs = NodeOutputs::new();
    let state = json!({});
    let env = Env {
        run_input: &input,
        state: &state,
        node_outputs: &outputs,
        iteration_index: Some(3),
        iteration_output: None,
    };
    let m: Mapping = serde_json::from_value(json!({
        "a": p("runInput.a"), "n": p("runInput.n"), "gone": p("runInput.b"), "lit": l(json!([1])), "i": p("iterationIndex")
    })).unwrap();
    assert_eq!(
        resolve_mapping(&m, &env),
        json!({"a": 1, "n": null, "lit": [1], "i": 3})
    );
}
