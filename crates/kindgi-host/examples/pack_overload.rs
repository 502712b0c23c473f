//! Benchmark (issue 19, finding 10): many runs in flight against one official Python pack
//! service (`kindgi==0.1.10`, its default cap of 32 calls in flight, past which it answers
//! `503 {"error":"overloaded"}` + `Retry-After: 1`). Each run is one step of a mutating tool
//! that sleeps 100 ms; the service is supervised as under `kindgi dev`, the runs go through
//! the real runtime over SQLite. Prints how many runs completed and failed, the wall time,
//! and the distinct failure messages. Every run should complete: a 503 provably did not run,
//! so the client waits and sends it again within the call's deadline.
//!
//! ```sh
//! source .cache/reference.env
//! cargo run --release -p kindgi-host --example pack_overload -- [RUNS]   # default 200
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use kindgi_dev::detect::PackKind;
use kindgi_dev::prepare::prepare;
use kindgi_dev::supervisor::{ServiceSlot, Supervisor, SupervisorConfig};
use kindgi_pack_client::dispatch::{PackServiceCaller, manifest_of};
use kindgi_runtime::{RunOptions, RunStatus};
use serde_json::json;

const PYPROJECT: &str = r#"[project]
name = "bench-pack"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["kindgi==0.1.10"]

[tool.kindgi.pack]
id = "bench"
version = "0.1.0"
"#;

const TOOL: &str = r#"
"""bench.slow: a mutating call that takes 100 ms."""
import time
from pydantic import BaseModel
from kindgi import tool

class Nothing(BaseModel):
    pass

class Done(BaseModel):
    done: bool

@tool(id="bench.slow", version="0.1.0", mutating=True)
def slow(_: Nothing) -> Done:
    """Sleeps 100 ms."""
    time.sleep(0.1)
    return Done(done=True)
"#;

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("RUNS is a number"))
        .unwrap_or(200);
    let python = PathBuf::from(
        std::env::var_os("KINDGI_REFERENCE_PYTHON")
            .expect("KINDGI_REFERENCE_PYTHON (source .cache/reference.env)"),
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("pyproject.toml"), PYPROJECT).unwrap();
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    std::fs::write(dir.join("tools/slow.py"), TOOL).unwrap();
    let prepared = prepare(dir, &PackKind::Python { python }, false)
        .await
        .unwrap();
    let manifest = manifest_of(&prepared.index.tools[0]).unwrap();

    let db = kindgi_store::Database::connect(&dir.join("bench.db").display().to_string())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let rt = kindgi_runtime::Runtime::over(db.ports()).build();
    let slot = ServiceSlot::new();
    let caller = PackServiceCaller::new(slot.clone());
    let supervisor = Supervisor::start_with(prepared, dir, slot, SupervisorConfig::default())
        .await
        .unwrap();
    rt.tools().insert_pack_tool(manifest, "bench", caller);
    let flow = json!({
        "id": "bench.slow-flow", "version": "1.0.0",
        "nodes": [{"id": "slow", "kind": "tool", "ref": "bench.slow"}],
        "edges": [{"id": "e1", "from": "$start", "to": "slow"}, {"id": "e2", "from": "slow", "to": "$end"}]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();

    let started = Instant::now();
    let mut tasks = Vec::with_capacity(runs);
    for _ in 0..runs {
        let rt = rt.clone();
        tasks.push(tokio::spawn(async move {
            let options = RunOptions {
                wait: true,
                ..Default::default()
            };
            rt.start_run("bench.slow-flow", None, json!({}), options)
                .await
        }));
    }
    let (mut completed, mut failed) = (0usize, 0usize);
    let mut why: BTreeMap<String, usize> = BTreeMap::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(run) if run.status == RunStatus::Completed => completed += 1,
            Ok(run) => {
                failed += 1;
                let message = run.failure_message.unwrap_or_default();
                let message = message.split(" at http").next().unwrap_or("").to_owned();
                *why.entry(message).or_default() += 1;
            }
            Err(e) => {
                failed += 1;
                *why.entry(e.to_string()).or_default() += 1;
            }
        }
    }
    let wall = started.elapsed();
    println!(
        "{{\"runs\":{runs},\"completed\":{completed},\"failed\":{failed},\"wallMs\":{}}}",
        wall.as_millis()
    );
    println!(
        "| {runs} runs in flight, one official Python service (cap 32), 100 ms mutating tool | {completed} completed | {failed} failed | {:.2} s |",
        wall.as_secs_f64()
    );
    for (message, n) in why {
        println!("  {n}× {message}");
    }
    supervisor.stop().await;
    db.close().await;
}
