#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Criterion benchmarks: compiling a tool schema, validating a small and a large instance
//! (valid and invalid). `cargo bench -p kindgi-schema`.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use kindgi_schema::{CompileOptions, Mode, Side, compile};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = format!("{}/benches/data/cases.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn bench(c: &mut Criterion) {
    let opts = CompileOptions {
        mode: Mode::Pack,
        side: Side::Output,
    };
    let cases = cases();
    let find = |name: &str| cases.iter().find(|c| c["name"] == name).unwrap();
    let small = find("small-valid");
    let large = find("large-valid");
    c.bench_function("compile/tool-schema", |b| {
        b.iter(|| compile(black_box(&small["schema"]), opts).unwrap())
    });
    c.bench_function("compile/record-schema", |b| {
        b.iter(|| compile(black_box(&large["schema"]), opts).unwrap())
    });
    for name in [
        "small-valid",
        "small-invalid",
        "large-valid",
        "large-invalid",
    ] {
        let case = find(name);
        let v = compile(&case["schema"], opts).unwrap();
        c.bench_function(&format!("validate/{name}"), |b| {
            b.iter(|| v.validate(black_box(&case["instance"])))
        });
    }
    let v = compile(&small["schema"], opts).unwrap();
    c.bench_function("is_valid/small-valid", |b| {
        b.iter(|| v.is_valid(black_box(&small["instance"])))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
