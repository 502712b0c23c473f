//! `when` / `exitCondition` expressions: parse (`kindgi_spec::flow::Expr`) and evaluate
//! (`kindgi_runtime::expr::eval`). The input is an expression, a NUL byte, and an environment
//! `{"runInput", "state", "nodeOutputs", "iterationIndex", "iterationOutput"}` (a fixed one
//! when absent). Invariants:
//! - evaluation is total and deterministic;
//! - `not` negates; `exists`/`notExists` and `truthy`/`falsy` are complements; `and`/`or`
//!   agree with their children; `eq`/`ne` are complements when both sides resolve;
//! - an expression survives a serialisation round trip and evaluates the same after it;
//! - a mapping resolves to an object with no more keys than it names.
#![no_main]

use kindgi_fuzz::{json, split_nul};
use kindgi_runtime::expr::{Env, NodeOutputs, eval, resolve_mapping, resolve_operand};
use kindgi_spec::flow::{Expr, Mapping};
use serde_json::{Value, json};
use std::sync::Arc;

const DEFAULT_ENV: &str = r#"{"runInput": {"a": 1, "b": "x", "c": [1, 2], "d": null, "e": {"f": true}},
    "state": {"n": 0, "s": ""}, "nodeOutputs": {"n1": {"ok": true, "v": 2}, "a.b": {"c": "d"}},
    "iterationIndex": 3, "iterationOutput": {"done": false}}"#;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (head, tail) = split_nul(data);
    let env_value = tail
        .and_then(json)
        .unwrap_or_else(|| serde_json::from_str(DEFAULT_ENV).unwrap_or(Value::Null));
    let nodes: NodeOutputs = env_value["nodeOutputs"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), Arc::new(v.clone())))
                .collect()
        })
        .unwrap_or_default();
    let env = Env {
        run_input: &env_value["runInput"],
        state: &env_value["state"],
        node_outputs: &nodes,
        iteration_index: env_value["iterationIndex"].as_u64(),
        iteration_output: env_value.get("iterationOutput"),
    };
    if let Ok(expr) = serde_json::from_slice::<Expr>(head) {
        check_expr(&expr, &env);
    }
    if let Ok(mapping) = serde_json::from_slice::<Mapping>(head) {
        let out = resolve_mapping(&mapping, &env);
        let keys = out.as_object().map_or(usize::MAX, |m| m.len());
        assert!(
            keys <= mapping.0.len(),
            "a mapping resolved to more keys than it names"
        );
    }
});

fn check_expr(expr: &Expr, env: &Env<'_>) {
    let value = eval(expr, env);
    assert_eq!(value, eval(expr, env), "evaluation is not deterministic");
    let not = Expr::Not {
        child: Box::new(expr.clone()),
    };
    assert_eq!(eval(&not, env), !value, "`not` does not negate");
    match expr {
        Expr::Exists { value: v } => {
            let other = Expr::NotExists { value: v.clone() };
            assert_ne!(eval(&other, env), value, "exists/notExists agree");
        }
        Expr::Truthy { value: v } => {
            let other = Expr::Falsy { value: v.clone() };
            assert_ne!(eval(&other, env), value, "truthy/falsy agree");
        }
        Expr::Eq { left, right } => {
            let other = Expr::Ne {
                left: left.clone(),
                right: right.clone(),
            };
            let both =
                resolve_operand(left, env).is_some() && resolve_operand(right, env).is_some();
            if both {
                assert_ne!(
                    eval(&other, env),
                    value,
                    "eq/ne agree with both sides present"
                );
            }
        }
        Expr::And { children } => {
            assert_eq!(
                value,
                children.iter().all(|c| eval(c, env)),
                "`and` disagrees"
            );
        }
        Expr::Or { children } => {
            assert_eq!(
                value,
                children.iter().any(|c| eval(c, env)),
                "`or` disagrees"
            );
        }
        _ => {}
    }
    let written = match serde_json::to_value(expr) {
        Ok(v) => v,
        Err(e) => panic!("an expression does not serialize: {e}"),
    };
    match serde_json::from_value::<Expr>(written.clone()) {
        Ok(back) => {
            assert_eq!(
                &back, expr,
                "the expression changed on a round trip: {written}"
            );
            assert_eq!(eval(&back, env), value, "a round trip changed the value");
        }
        Err(e) => panic!(
            "an expression, written out, does not parse: {e}: {}",
            json!(written)
        ),
    }
}
