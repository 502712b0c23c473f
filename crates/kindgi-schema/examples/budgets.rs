#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Prints the figures behind the engine's budgets: time and peak memory of each adversarial
//! case (hostile patterns, backtracking, `$ref` fan-out, `uniqueItems` over big arrays, deep
//! instances and schemas), one child process per case so each peak is its own.
//!
//! `cargo run --release -p kindgi-schema --example budgets` (or `-- CASE` for one case).

use kindgi_schema::{Budgets, CompileOptions, Mode, Side, compile};
use serde_json::{Value, json};
use std::time::Instant;

const PACK_OUT: CompileOptions = CompileOptions {
    mode: Mode::Pack,
    side: Side::Output,
};

/// Patterns whose automata would be huge if built in full.
const NASTY: &[&str] = &[
    "^((a{1000}){1000}){1000}$",
    "((((a{9}){9}){9}){9}){9}",
    "^(\\w{1000}){1000}$",
    "^(?:[\\u{0}-\\u{10FFFF}]{1000}){1000}$",
    "^(.{1000}){1000}$",
    "a{0,1000}b{0,1000}c{0,1000}d{0,1000}",
    "^[a-z]{100000}$",
    "^(\\p{L}{1000}){1000}$",
];

fn fan_out(levels: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..levels {
        let r = json!({"$ref": format!("#/$defs/l{}", i + 1)});
        defs.insert(format!("l{i}"), json!({"anyOf": [r.clone(), r]}));
    }
    defs.insert(format!("l{levels}"), json!({"type": "string"}));
    json!({"$defs": defs, "$ref": "#/$defs/l0"})
}

fn nested_array(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

/// Validates and describes the outcome: "valid", or the issue count and the last keyword,
/// with the time the validation alone took.
fn outcome(schema: &Value, instance: &Value) -> String {
    let v = compile(schema, PACK_OUT).unwrap();
    let t = Instant::now();
    let result = v.validate(instance);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    match result {
        Ok(()) => format!("valid (validate {ms:.1} ms)"),
        Err(issues) => {
            let last = issues.last().unwrap();
            format!(
                "{} issues, last {} (validate {ms:.1} ms)",
                issues.len(),
                last.keyword()
            )
        }
    }
}

fn run(case: &str) -> String {
    match case {
        "compile-nested-counts" => {
            let mut worst = 0.0f64;
            for p in NASTY {
                let t = Instant::now();
                compile(&json!({"type": "string", "pattern": p}), PACK_OUT).unwrap();
                worst = worst.max(t.elapsed().as_secs_f64() * 1e3);
            }
            format!("{} patterns compiled, slowest {worst:.1} ms", NASTY.len())
        }
        "backtrack-backref" => outcome(
            &json!({"type": "string", "pattern": "^(a+)+\\1$"}),
            &json!(format!("{}!", "a".repeat(31))),
        ),
        "backtrack-letters" => outcome(
            &json!({"type": "string", "pattern": "^(\\p{L}+\\s?)*$"}),
            &json!(format!("{}!", "a".repeat(27))),
        ),
        "backtrack-lookahead" => outcome(
            &json!({"type": "string", "pattern": "^(?=(a|aa)+$)a"}),
            &json!(format!("{}!", "a".repeat(60))),
        ),
        "fan-out-22" => outcome(&fan_out(22), &json!(1)),
        "fan-out-30" => outcome(&fan_out(30), &json!(1)),
        "fan-out-30-is-valid" => {
            let v = compile(&fan_out(30), PACK_OUT).unwrap();
            let t = Instant::now();
            let valid = v.is_valid(&json!(1));
            format!(
                "is_valid {valid} ({:.1} ms)",
                t.elapsed().as_secs_f64() * 1e3
            )
        }
        "fan-out-30-nodes-only" => {
            // No issue budget in the way: the node budget alone stops it.
            let v = compile(&fan_out(30), PACK_OUT).unwrap();
            let b = Budgets {
                issues: usize::MAX,
                ..Budgets::DEFAULT
            };
            match v.validate_within(&json!(1), &b) {
                Ok(()) => "valid".into(),
                Err(i) => format!("{} issues, last {}", i.len(), i.last().unwrap().keyword()),
            }
        }
        "unique-100k-integers" => {
            let items: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
            outcome(
                &json!({"type": "array", "uniqueItems": true}),
                &Value::Array(items),
            )
        }
        "unique-100k-objects" => {
            let items: Vec<Value> = (0..100_000)
                .map(|i| json!({"id": i, "t": [i % 7]}))
                .collect();
            outcome(
                &json!({"type": "array", "uniqueItems": true}),
                &Value::Array(items),
            )
        }
        "deep-instance-10k" => {
            let schema = json!({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"});
            let deep = nested_array(10_000);
            let r = outcome(&schema, &deep);
            // Not dropped: serde_json's drop recurses (the engine never does).
            std::mem::forget(deep);
            r
        }
        "deep-schema-10k" => {
            let mut schema = json!({"type": "string"});
            for _ in 0..10_000 {
                // By hand: `json!` would serialise the inner value recursively.
                let mut m = serde_json::Map::new();
                m.insert("type".into(), json!("array"));
                m.insert("items".into(), schema);
                schema = Value::Object(m);
            }
            let r = match compile(&schema, PACK_OUT) {
                Ok(_) => "compiled".to_string(),
                Err(e) => e.message,
            };
            std::mem::forget(schema);
            r
        }
        "benchmark-evaluations" => {
            // The fewest evaluated nodes each benchmark case needs (binary search).
            let path = format!("{}/benches/data/cases.json", env!("CARGO_MANIFEST_DIR"));
            let cases: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let mut out = Vec::new();
            for c in &cases {
                let v = compile(&c["schema"], PACK_OUT).unwrap();
                let want = v.validate(&c["instance"]).map_err(|i| i.len());
                let fits = |n: u64| {
                    let b = Budgets {
                        evaluated_nodes: n,
                        ..Budgets::DEFAULT
                    };
                    v.validate_within(&c["instance"], &b).map_err(|i| i.len()) == want
                };
                let (mut lo, mut hi) = (0u64, Budgets::DEFAULT.evaluated_nodes);
                while lo + 1 < hi {
                    let mid = (lo + hi) / 2;
                    if fits(mid) { hi = mid } else { lo = mid }
                }
                out.push(format!("{} {hi}", c["name"].as_str().unwrap_or("?")));
            }
            format!("nodes needed: {}", out.join(", "))
        }
        other => format!("unknown case {other}"),
    }
}

/// This process's peak resident memory, in MiB (Linux).
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

const CASES: &[&str] = &[
    "compile-nested-counts",
    "backtrack-backref",
    "backtrack-letters",
    "backtrack-lookahead",
    "fan-out-22",
    "fan-out-30",
    "fan-out-30-is-valid",
    "fan-out-30-nodes-only",
    "unique-100k-integers",
    "unique-100k-objects",
    "deep-instance-10k",
    "deep-schema-10k",
    "benchmark-evaluations",
];

fn main() {
    if let Some(case) = std::env::args().nth(1) {
        let t = Instant::now();
        let what = run(&case);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        println!("| {case} | {what} | {ms:.1} ms | {:.1} MiB |", peak_mib());
        // (whole case: building the input, compiling, validating)
        return;
    }
    println!("| case | outcome | whole case | peak RSS |\n|---|---|---:|---:|");
    let me = std::env::current_exe().unwrap();
    for case in CASES {
        let out = std::process::Command::new(&me).arg(case).output().unwrap();
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            println!("| {case} | failed: {} | | |", out.status);
        }
    }
}
