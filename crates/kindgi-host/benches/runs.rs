//! Runs per second of a 3-step flow of in-process read-only tools, on the in-memory store,
//! SQLite (a file in a temp dir) and PostgreSQL (`KINDGI_TEST_DATABASE_URL`, a fresh schema).
//! Here, not in kindgi-runtime, because the database runtimes are the host's
//! (`Runtime::over(db.ports())`); the runtime is measured as before.
//!
//! `cargo bench -p kindgi-host --bench runs` — prints one line per store and mode:
//! sequential (start with `wait`, one after another: latency) and concurrent (32 runs in
//! flight: throughput). `KINDGI_BENCH_RUNS` sets the number of runs (default 500).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use kindgi_runtime::{RunOptions, RunStatus, Runtime, RuntimeBuilder};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{BoxFuture, HandlerError, Tool, ToolContext};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

fn add_one(id: &str) -> Tool {
    let manifest = serde_json::from_value(json!({
        "id": id, "description": "adds one", "version": "1.0.0", "mutating": false,
        "input": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "output": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    }))
    .unwrap();
    let handler: kindgi_tools::Handler = Arc::new(|input: Value, _ctx: ToolContext| {
        let fut: BoxFuture<'static, Result<Value, HandlerError>> =
            Box::pin(async move { Ok(json!({"n": input["n"].as_i64().unwrap_or(0) + 1})) });
        fut
    });
    Tool::from_parts(manifest, handler)
}

fn setup(b: RuntimeBuilder) -> Runtime {
    let rt = b.build();
    for id in ["bench.a", "bench.b", "bench.c"] {
        rt.tools().insert_tool(add_one(id));
    }
    rt.flows()
        .insert_json(
            &json!({
                "id": "bench.three", "version": "1.0.0",
                "nodes": [
                    {"id": "a", "kind": "tool", "ref": "bench.a"},
                    {"id": "b", "kind": "tool", "ref": "bench.b"},
                    {"id": "c", "kind": "tool", "ref": "bench.c"}
                ],
                "edges": [
                    {"id": "e1", "from": "$start", "to": "a"}, {"id": "e2", "from": "a", "to": "b"},
                    {"id": "e3", "from": "b", "to": "c"}, {"id": "e4", "from": "c", "to": "$end"}
                ]
            })
            .to_string(),
        )
        .unwrap();
    rt
}

async fn one(rt: &Runtime) {
    let run = rt
        .start_run(
            "bench.three",
            None,
            json!({"n": 0}),
            RunOptions {
                wait: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.output, Some(json!({"n": 3})));
}

async fn measure(name: &str, rt: &Runtime, runs: usize) {
    for _ in 0..20 {
        one(rt).await;
    }
    let t = Instant::now();
    for _ in 0..runs {
        one(rt).await;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{name:<10} sequential  {runs:>6} runs  {:>9.1} runs/s  {:>8.3} ms/run",
        runs as f64 / secs,
        secs * 1000.0 / runs as f64
    );
    let t = Instant::now();
    futures::stream::iter(0..runs)
        .for_each_concurrent(32, |_| one(rt))
        .await;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{name:<10} concurrent  {runs:>6} runs  {:>9.1} runs/s  (32 in flight)",
        runs as f64 / secs
    );
}

fn main() {
    let runs: usize = std::env::var("KINDGI_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio.block_on(async {
        measure("memory", &setup(Runtime::in_memory()), runs).await;
        let db = TestDatabase::new(DatabaseKind::Sqlite).await.unwrap();
        measure("sqlite", &setup(Runtime::over(db.db.ports())), runs).await;
        db.cleanup().await.unwrap();
        match TestDatabase::new(DatabaseKind::Postgres).await {
            Ok(db) => {
                measure("postgres", &setup(Runtime::over(db.db.ports())), runs).await;
                db.cleanup().await.unwrap();
            }
            Err(e) => println!("postgres   skipped: {e}"),
        }
    });
}
