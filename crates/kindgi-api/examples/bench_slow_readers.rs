//! Slow readers against the API served on loopback over a SQLite file (a measurement for
//! `docs/serve.md` and `docs/budgets.md`, not a test). Two modes:
//!
//! * `catchup`: one run with `--entries` journal entries; one SSE client reads its stream
//!   from the start to the terminal event and prints entries/s.
//! * `stalled`: `--clients` connections ask for the journal (`--what journal`), the stream
//!   (`stream`) or `GET /v1/runs?include=output&limit=100` (`list`, over 100 runs whose
//!   outputs are `--payload` bytes) and never read; the process's RSS (`VmRSS`, from
//!   /proc/self/status) is printed before, while they are held, after the write timeout
//!   (default 30 s) and after they are closed.
//!
//! `cargo run --release -p kindgi-api --example bench_slow_readers -- catchup --entries 150000`
//! `cargo run --release -p kindgi-api --example bench_slow_readers -- stalled --what journal
//!  --clients 50 --entries 20000 --payload 1000`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use kindgi_api::{AppState, router, serve};
use kindgi_runtime::{JournalEntry, JournalKind, RunMeta, RunRecord, RunStatus, RunStore, Runtime};
use kindgi_store::testing::TestDatabase;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_owned())
}

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn stamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(1_780_000_000_000 + ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn record(tenant: &str, n: i64, status: RunStatus, output: Option<serde_json::Value>) -> RunRecord {
    RunRecord {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: tenant.into(),
        flow_id: "acme.big".into(),
        flow_version: "1.0.0".into(),
        status,
        input: json!({}),
        output,
        failure_message: None,
        dry_run: false,
        created_at: stamp(n),
        updated_at: stamp(n),
        completed_at: None,
        parent_run_id: None,
        parent_node_id: None,
        meta: RunMeta::default(),
    }
}

async fn fill(store: &dyn RunStore, run_id: &str, n: u64, payload: usize) {
    let pad = "x".repeat(payload);
    let mut seq = 1;
    while seq <= n {
        let batch: Vec<JournalEntry> = (seq..=n.min(seq + 999))
            .map(|s| JournalEntry {
                sequence: s,
                kind: JournalKind::StepStarted,
                node_id: Some(format!("n{s}")),
                scope: None,
                payload: Some(json!({"pad": pad})),
                timestamp: stamp(s as i64),
            })
            .collect();
        seq += batch.len() as u64;
        store.append(run_id, &batch).await.unwrap();
    }
    let done = JournalEntry {
        sequence: n + 1,
        kind: JournalKind::RunCompleted,
        node_id: None,
        scope: None,
        payload: None,
        timestamp: stamp(n as i64 + 1),
    };
    store.append(run_id, &[done]).await.unwrap();
}

#[tokio::main]
async fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "catchup".into());
    let entries: u64 = arg("--entries", "150000").parse().unwrap();
    let payload: usize = arg("--payload", "100").parse().unwrap();
    let clients: usize = arg("--clients", "50").parse().unwrap();
    let what = arg("--what", "journal");
    let tenants: usize = arg("--tenants", "1").parse().unwrap();
    let db = TestDatabase::sqlite().await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    let state = AppState::new(db.db.clone());
    // One key and one run per tenant; client `i` reads as tenant `i % tenants` (the stream
    // caps are per key and per tenant).
    let mut requests = Vec::new();
    for t in 0..tenants.max(1) {
        let tenant = if tenants <= 1 {
            "acme".to_owned()
        } else {
            format!("acme-{t}")
        };
        let key = state.tokens.create(&tenant, None).await.unwrap().key;
        let run = record(&tenant, 1000, RunStatus::Completed, None);
        rt.store().insert_run(&run).await.unwrap();
        if what == "list" {
            let out = json!({"pad": "y".repeat(payload)});
            for n in 0..100 {
                let r = record(&tenant, n, RunStatus::Completed, Some(out.clone()));
                rt.store().insert_run(&r).await.unwrap();
            }
        } else {
            fill(rt.store().as_ref(), &run.id, entries, payload).await;
        }
        let path = match what.as_str() {
            "stream" => format!("/v1/runs/{}/stream", run.id),
            "list" => "/v1/runs?include=output&limit=100".to_owned(),
            _ => format!("/v1/runs/{}/journal", run.id),
        };
        requests.push(format!(
            "GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
        ));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router(state.with_runtime(rt.clone()));
    let stop = kindgi_serve::CancellationToken::new();
    tokio::spawn(serve(listener, app, kindgi_serve::Limits::default(), stop));
    let request = requests[0].clone();
    if mode == "catchup" {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = request.replace("/journal", "/stream");
        let started = Instant::now();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        let secs = started.elapsed().as_secs_f64();
        let frames = String::from_utf8_lossy(&got).matches("\nevent: ").count();
        println!(
            "catch-up: {frames} frames of {entries} entries in {secs:.2} s = {:.0} entries/s",
            frames as f64 / secs
        );
        return;
    }
    println!(
        "{what}: {clients} stalled clients, RSS before: {:.1} MB",
        rss_mb()
    );
    let mut held = Vec::new();
    for i in 0..clients {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut s = socket.connect(addr).await.unwrap();
        s.write_all(requests[i % requests.len()].as_bytes())
            .await
            .unwrap();
        held.push(s);
    }
    let since = Instant::now();
    for at in [5u64, 15, 40] {
        tokio::time::sleep(Duration::from_secs(at).saturating_sub(since.elapsed())).await;
        println!("{what}: RSS held {at:>2} s: {:.1} MB", rss_mb());
        if at == 5 {
            // Each answer's status line is in its socket by now: peek it, without draining.
            let mut by_status = std::collections::BTreeMap::<String, usize>::new();
            for s in &held {
                let mut head = [0u8; 12];
                let n = s.try_read(&mut head).unwrap_or(0);
                let status = String::from_utf8_lossy(&head[..n])
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("none")
                    .to_owned();
                *by_status.entry(status).or_default() += 1;
            }
            println!("{what}: answers by status: {by_status:?}");
        }
    }
    drop(held);
    tokio::time::sleep(Duration::from_secs(3)).await;
    println!("{what}: RSS after closing: {:.1} MB", rss_mb());
}
