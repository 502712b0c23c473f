//! Range resolution over 10,000 versions of one tool: npm `maxSatisfying` on its own, the
//! in-memory registry, and the SQLite registry (load versions, parse, pick, fetch the row).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use kindgi_store::testing::TestDatabase;
use kindgi_store::tools::StoreRegistry;
use kindgi_tools::registry::conformance::manifest;
use kindgi_tools::registry::{MemoryRegistry, RegisterOptions, ToolRegistry};
use kindgi_tools::semver::{Range, max_satisfying};

/// 10,000 versions: 10 majors × 100 minors × 10 patches.
fn versions() -> Vec<String> {
    let mut v = Vec::with_capacity(10_000);
    for major in 0..10 {
        for minor in 0..100 {
            for patch in 0..10 {
                v.push(format!("{major}.{minor}.{patch}"));
            }
        }
    }
    v
}

const RANGES: [&str; 4] = ["^3.40.0", "~7.99.0", ">=2.0.0 <2.50.0 || 9.x", "0.0.5"];

fn bench(c: &mut Criterion) {
    let versions = versions();
    let parsed: Vec<Range> = RANGES.iter().map(|r| Range::parse(r).unwrap()).collect();
    c.bench_function("semver/max_satisfying 10k versions x 4 ranges", |b| {
        b.iter(|| {
            for r in &parsed {
                std::hint::black_box(max_satisfying(versions.iter().map(String::as_str), r));
            }
        })
    });
    c.bench_function("semver/parse 4 ranges", |b| {
        b.iter(|| {
            for r in RANGES {
                std::hint::black_box(Range::parse(r).unwrap());
            }
        })
    });

    let rt = tokio::runtime::Runtime::new().unwrap();
    let memory = MemoryRegistry::new();
    let t = rt.block_on(TestDatabase::sqlite()).unwrap();
    let store = StoreRegistry::new(t.db.clone());
    rt.block_on(async {
        for v in &versions {
            let m = manifest("acme.many", v);
            memory
                .register("t", &m, RegisterOptions::default())
                .await
                .unwrap();
            store
                .register("t", &m, RegisterOptions::default())
                .await
                .unwrap();
        }
    });
    c.bench_function(
        "registry/memory resolve over 10k versions x 4 ranges",
        |b| {
            b.iter(|| {
                rt.block_on(async {
                    for r in RANGES {
                        std::hint::black_box(
                            memory.resolve("t", "acme.many", Some(r)).await.unwrap(),
                        );
                    }
                })
            })
        },
    );
    c.bench_function(
        "registry/sqlite resolve over 10k versions x 4 ranges",
        |b| {
            b.iter(|| {
                rt.block_on(async {
                    for r in RANGES {
                        std::hint::black_box(
                            store.resolve("t", "acme.many", Some(r)).await.unwrap(),
                        );
                    }
                })
            })
        },
    );
    rt.block_on(t.cleanup()).unwrap();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
