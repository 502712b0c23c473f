//! Measures MCP tool-call latency and throughput through `McpClient`.
//!
//! `cargo run --release -p kindgi-mcp --example mcp_latency -- ENDPOINT TOOL INPUT_JSON [CALLS] [CONCURRENCY]`
//! prints connect time, sequential per-call latency (p50/p90/p99) and concurrent calls/s.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_mcp::{ConnectOptions, McpClient};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: mcp_latency ENDPOINT TOOL INPUT_JSON [CALLS=2000] [CONCURRENCY=16]");
        std::process::exit(2);
    }
    let (endpoint, tool) = (&args[0], args[1].clone());
    let input: serde_json::Value = serde_json::from_str(&args[2]).expect("INPUT_JSON is not JSON");
    let calls: usize = args.get(3).map(|n| n.parse().unwrap()).unwrap_or(2000);
    let concurrency: usize = args.get(4).map(|n| n.parse().unwrap()).unwrap_or(16);
    let timeout = Duration::from_secs(30);

    let started = Instant::now();
    let client = Arc::new(
        McpClient::connect(endpoint, ConnectOptions::default())
            .await
            .unwrap(),
    );
    println!(
        "connect + initialize: {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );

    for _ in 0..50 {
        client
            .call_tool(&tool, input.clone(), timeout)
            .await
            .unwrap();
    }
    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        let t = Instant::now();
        let out = client
            .call_tool(&tool, input.clone(), timeout)
            .await
            .unwrap();
        assert!(!out.is_error, "{}", out.error_text());
        latencies.push(t.elapsed());
    }
    let total = started.elapsed();
    latencies.sort();
    let pct = |p: f64| {
        latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)].as_secs_f64()
            * 1e6
    };
    println!(
        "sequential: {calls} calls in {:.2} s = {:.0} calls/s; p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs",
        total.as_secs_f64(),
        calls as f64 / total.as_secs_f64(),
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );

    let started = Instant::now();
    let per_worker = calls / concurrency.max(1);
    let mut workers = Vec::new();
    for _ in 0..concurrency.max(1) {
        let client = client.clone();
        let (tool, input) = (tool.clone(), input.clone());
        workers.push(tokio::spawn(async move {
            for _ in 0..per_worker {
                client
                    .call_tool(&tool, input.clone(), timeout)
                    .await
                    .unwrap();
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    let done = per_worker * concurrency.max(1);
    let total = started.elapsed();
    println!(
        "concurrent ({concurrency} in flight): {done} calls in {:.2} s = {:.0} calls/s",
        total.as_secs_f64(),
        done as f64 / total.as_secs_f64()
    );
}
