#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Runs every Ajv vector (the shared corpus plus our own extra corpus, each with the oracle Ajv
//! 8.20.0 + ajv-formats 3.0.1 wrote) through the engine and compares the answers exactly:
//! compile or not (and the message), validity, every issue in order, and the instance after
//! defaults (key order included).

use kindgi_schema::{CompileOptions, Mode, Side, compile};
use serde_json::Value;

/// Cases the engine is known not to match, with the reason (see docs/schema.md). The test fails
/// when this list is not exactly the set of disagreements, so a fix or a regression shows.
const KNOWN_DIVERGENCES: &[&str] = &[];

fn num_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| num_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| num_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Same value and the same key order at every level.
fn ordered_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| ordered_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && ordered_eq(v1, v2))
        }
        _ => num_eq(a, b),
    }
}

fn answer(case: &Value) -> Value {
    let mode = if case["config"] == "mcp" {
        Mode::Mcp
    } else {
        Mode::Pack
    };
    let side = if case["side"] == "input" {
        Side::Input
    } else {
        Side::Output
    };
    let mut out = serde_json::Map::new();
    out.insert("id".into(), case["id"].clone());
    match compile(&case["schema"], CompileOptions { mode, side }) {
        Err(e) => {
            out.insert("compiles".into(), Value::Bool(false));
            out.insert("compileErrorName".into(), Value::String(e.name));
            out.insert("compileError".into(), Value::String(e.message));
        }
        Ok(v) => {
            // `is_valid` (short-circuiting, no issues) must agree with `validate`.
            let plain = v.validate(&case["instance"]).is_ok();
            if v.is_valid(&case["instance"]) != plain {
                out.insert("isValidMismatch".into(), Value::Bool(true));
            }
            let mut data = case["instance"].clone();
            let res = v.validate_in_place(&mut data);
            out.insert("compiles".into(), Value::Bool(true));
            out.insert("valid".into(), Value::Bool(res.is_ok()));
            let issues = match res {
                Ok(()) => Value::Array(Vec::new()),
                Err(issues) => serde_json::to_value(&issues).unwrap(),
            };
            out.insert("issues".into(), issues);
            if side == Side::Input {
                out.insert("instanceAfter".into(), data);
            }
        }
    }
    Value::Object(out)
}

fn agrees(want: &Value, got: &Value) -> bool {
    if got.get("isValidMismatch").is_some() || want["compiles"] != got["compiles"] {
        return false;
    }
    if want["compiles"] == false {
        return want["compileError"] == got["compileError"]
            && want["compileErrorName"] == got["compileErrorName"];
    }
    if want["valid"] != got["valid"] || !num_eq(&want["issues"], &got["issues"]) {
        return false;
    }
    match want.get("instanceAfter") {
        Some(after) => got
            .get("instanceAfter")
            .is_some_and(|g| ordered_eq(after, g)),
        None => true,
    }
}

fn load(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str::<Vec<Value>>(&text).unwrap()
}

#[test]
fn ajv_vectors_agree() {
    let mut total = 0;
    let mut disagree: Vec<String> = Vec::new();
    for (corpus, oracle) in [
        ("corpus.json", "oracle.json"),
        ("extra-corpus.json", "extra-oracle.json"),
    ] {
        let path = format!("{}/tests/vectors/{corpus}", env!("CARGO_MANIFEST_DIR"));
        if !std::path::Path::new(&path).exists() {
            continue;
        }
        let cases = load(corpus);
        let answers = load(oracle);
        assert_eq!(
            cases.len(),
            answers.len(),
            "{corpus} and {oracle} differ in length"
        );
        let mut agree = 0;
        for (case, want) in cases.iter().zip(&answers) {
            assert_eq!(case["id"], want["id"]);
            if std::env::var("TRACE").is_ok() {
                eprintln!("CASE {}", case["id"]);
            }
            let got = answer(case);
            if std::env::var("SHOW").is_ok_and(|s| s == case["id"]) {
                println!("GOT {got}");
            }
            if agrees(want, &got) {
                agree += 1;
            } else {
                let id = case["id"].as_str().unwrap_or("?").to_owned();
                println!("DISAGREE {id}\n  expected: {want}\n  got:      {got}");
                disagree.push(id);
            }
        }
        total += cases.len();
        println!("ajv vectors ({corpus}): {agree}/{} agree", cases.len());
    }
    println!("ajv vectors: {}/{total} agree", total - disagree.len());
    let mut known: Vec<String> = KNOWN_DIVERGENCES.iter().map(|s| s.to_string()).collect();
    known.sort();
    disagree.sort();
    assert_eq!(
        disagree, known,
        "disagreements differ from the known-divergence list"
    );
}
