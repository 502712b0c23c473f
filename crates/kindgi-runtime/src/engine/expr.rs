//! Evaluation of `when` / `exitCondition` expressions and of mappings, with the reference
//! evaluator's exact rules (runtime.md §1.2):
//!
//! - Total: never fails. A path that does not resolve is MISSING; `null` is a real value.
//! - Comparisons with a MISSING operand are false, except `ne`, which is true unless both
//!   sides are MISSING. `lt/lte/gt/gte` need two numbers or two strings, else false.
//! - Equality is structural JSON equality (numbers compare by value: `1` equals `1.0`).
//! - `in`/`notIn` need an array `set`, else false (both forms), and a present `value`.
//! - `truthy` of MISSING is false, `falsy` of MISSING is true (JavaScript truthiness).
//! - A mapping omits keys whose path is MISSING.

use kindgi_spec::flow::{Expr, Mapping, Operand};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// Node outputs visible to an expression, by node id.
pub type NodeOutputs = HashMap<String, Arc<Value>>;

/// What paths resolve against.
#[derive(Debug, Clone, Copy)]
pub struct Env<'a> {
    pub run_input: &'a Value,
    pub state: &'a Value,
    pub node_outputs: &'a NodeOutputs,
    /// Set only while evaluating a loop's exit condition.
    pub iteration_index: Option<u64>,
    /// Set only while evaluating a loop's exit condition.
    pub iteration_output: Option<&'a Value>,
}

fn walk<'v>(mut value: &'v Value, segments: &[&str]) -> Option<&'v Value> {
    for seg in segments {
        match value {
            Value::Object(map) => value = map.get(*seg)?,
            // No array indexing: the path grammar has none.
            _ => return None,
        }
    }
    Some(value)
}

/// Resolves a dot-path; `None` is MISSING.
pub fn resolve_path<'a>(path: &str, env: &Env<'a>) -> Option<Cow<'a, Value>> {
    let segments: Vec<&str> = path.split('.').collect();
    let (root, rest) = segments.split_first()?;
    match *root {
        "runInput" => walk(env.run_input, rest).map(Cow::Borrowed),
        "state" => walk(env.state, rest).map(Cow::Borrowed),
        "iterationIndex" => {
            let i = env.iteration_index?;
            if rest.is_empty() {
                Some(Cow::Owned(Value::from(i)))
            } else {
                None
            }
        }
        "iterationOutput" => walk(env.iteration_output?, rest).map(Cow::Borrowed),
        "nodeOutputs" => {
            // Node ids may contain dots: the longest dotted prefix naming a node wins.
            for take in (1..=rest.len()).rev() {
                let id = rest[..take].join(".");
                if let Some(out) = env.node_outputs.get(&id) {
                    let out: &'a Value = out;
                    return walk(out, &rest[take..]).map(Cow::Borrowed);
                }
            }
            None
        }
        _ => None,
    }
}

/// Resolves an operand; `None` is MISSING.
pub fn resolve_operand<'a>(op: &'a Operand, env: &Env<'a>) -> Option<Cow<'a, Value>> {
    match op {
        Operand::Literal(v) => Some(Cow::Borrowed(v)),
        Operand::Path(p) => resolve_path(p, env),
    }
}

/// Structural JSON equality, numbers by value.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// JavaScript truthiness of a JSON value.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

fn order(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        // JavaScript compares strings by UTF-16 code units.
        (Value::String(x), Value::String(y)) => Some(x.encode_utf16().cmp(y.encode_utf16())),
        _ => None,
    }
}

/// Evaluates an expression. Total.
pub fn eval(expr: &Expr, env: &Env<'_>) -> bool {
    use std::cmp::Ordering::*;
    let cmp = |left: &Operand, right: &Operand, f: &dyn Fn(std::cmp::Ordering) -> bool| match (
        resolve_operand(left, env),
        resolve_operand(right, env),
    ) {
        (Some(a), Some(b)) => order(&a, &b).is_some_and(f),
        _ => false,
    };
    match expr {
        Expr::Eq { left, right } => match (resolve_operand(left, env), resolve_operand(right, env))
        {
            (Some(a), Some(b)) => json_eq(&a, &b),
            _ => false,
        },
        Expr::Ne { left, right } => match (resolve_operand(left, env), resolve_operand(right, env))
        {
            (Some(a), Some(b)) => !json_eq(&a, &b),
            (None, None) => false,
            _ => true,
        },
        Expr::Lt { left, right } => cmp(left, right, &|o| o == Less),
        Expr::Lte { left, right } => cmp(left, right, &|o| o != Greater),
        Expr::Gt { left, right } => cmp(left, right, &|o| o == Greater),
        Expr::Gte { left, right } => cmp(left, right, &|o| o != Less),
        Expr::In { value, set } | Expr::NotIn { value, set } => {
            let want_in = matches!(expr, Expr::In { .. });
            match (resolve_operand(value, env), resolve_operand(set, env)) {
                (Some(v), Some(s)) => match s.as_ref() {
                    Value::Array(items) => items.iter().any(|i| json_eq(i, &v)) == want_in,
                    _ => false,
                },
                _ => false,
            }
        }
        Expr::Exists { value } => resolve_operand(value, env).is_some(),
        Expr::NotExists { value } => resolve_operand(value, env).is_none(),
        Expr::Truthy { value } => resolve_operand(value, env).is_some_and(|v| truthy(&v)),
        Expr::Falsy { value } => !resolve_operand(value, env).is_some_and(|v| truthy(&v)),
        Expr::And { children } => children.iter().all(|c| eval(c, env)),
        Expr::Or { children } => children.iter().any(|c| eval(c, env)),
        Expr::Not { child } => !eval(child, env),
    }
}

/// Resolves a mapping to an object; keys whose path is MISSING are omitted.
pub fn resolve_mapping(mapping: &Mapping, env: &Env<'_>) -> Value {
    let mut out = Map::new();
    for (key, op) in mapping.iter() {
        if let Some(v) = resolve_operand(op, env) {
            out.insert(key.clone(), v.into_owned());
        }
    }
    Value::Object(out)
}
