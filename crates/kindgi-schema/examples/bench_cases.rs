#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Times the engine on the benchmark cases (the same file `scripts/ajv/bench.mjs` times Ajv
//! on): `cargo run --release -p kindgi-schema --example bench_cases -- CASES.json [SECONDS]`.
//! Prints one JSON line per case, in the format bench.mjs uses.

use kindgi_schema::{CompileOptions, Mode, Side, compile};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn rate(budget: Duration, mut f: impl FnMut()) -> f64 {
    for _ in 0..200 {
        f();
    }
    let start = Instant::now();
    let mut n: u64 = 0;
    let mut batch: u64 = 1;
    while start.elapsed() < budget {
        for _ in 0..batch {
            f();
        }
        n += batch;
        batch = (batch * 2).min(4096);
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| format!("{}/benches/data/cases.json", env!("CARGO_MANIFEST_DIR")));
    let secs: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let budget = Duration::from_secs_f64(secs);
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let opts = CompileOptions {
        mode: Mode::Pack,
        side: Side::Output,
    };
    // KINDGI_BENCH_ITERS=N validates each case exactly N times and prints nothing else (for
    // instruction counts under callgrind).
    let iters: Option<u64> = std::env::var("KINDGI_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok());
    for c in &cases {
        let v = compile(&c["schema"], opts).unwrap();
        let instance = &c["instance"];
        if let Some(n) = iters {
            for _ in 0..n {
                let _ = black_box(v.validate(black_box(instance)));
            }
            continue;
        }
        let res = v.validate(instance);
        let issues = res.as_ref().err().map_or(0, kindgi_schema::Issues::len);
        // KINDGI_BENCH_SKIP_COMPILE=1 times validation only (for profiling).
        let compile_rate = if std::env::var_os("KINDGI_BENCH_SKIP_COMPILE").is_some() {
            0.0
        } else {
            rate(budget, || {
                black_box(compile(black_box(&c["schema"]), opts).unwrap());
            })
        };
        let validate_rate = rate(budget, || {
            let _ = black_box(v.validate(black_box(instance)));
        });
        println!(
            "{}",
            json!({"name": c["name"], "compile_per_s": compile_rate, "validate_per_s": validate_rate, "valid": res.is_ok(), "issues": issues})
        );
    }
}
