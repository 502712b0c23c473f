//! Load generator for pack services (`scripts/bench-pack`; a benchmark, not a test).
//!
//! ```sh
//! cargo run --release -p kindgi-pack --example pack_load -- \
//!     [--label NAME] [--requests 20000] [--seconds 10] [--connections 1,16] \
//!     -- COMMAND ARGS... --index INDEX
//! ```
//!
//! Starts the service (`PORT=0`, a random token, `KINDGI_LOG_LEVEL=warn` so call records do
//! not dominate the cost), times exec → the `listening` line, then for each connection count
//! sends the same `conformance.echo` invoke from that many keep-alive HTTP/1.1 connections
//! (loopback only) until `--requests` answered or `--seconds` passed, after a warm-up. Prints
//! requests/s, p50 and p99 latency per count, the service's peak RSS (VmHWM) and its boot time
//! as one JSON line per measurement and a Markdown table row.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;

struct Args {
    label: String,
    requests: usize,
    seconds: u64,
    connections: Vec<usize>,
    command: Vec<String>,
}

fn parse_args() -> Args {
    let mut args = Args {
        label: "service".into(),
        requests: 20_000,
        seconds: 10,
        connections: vec![1, 16],
        command: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--label" => args.label = it.next().expect("--label needs a value"),
            "--requests" => {
                args.requests = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--requests needs a number")
            }
            "--seconds" => {
                args.seconds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--seconds needs a number")
            }
            "--connections" => {
                args.connections = it
                    .next()
                    .expect("--connections needs a list")
                    .split(',')
                    .map(|c| c.trim().parse().expect("a connection count"))
                    .collect()
            }
            "--" => {
                args.command = it.collect();
                break;
            }
            other => panic!("unknown argument {other}"),
        }
    }
    assert!(
        !args.command.is_empty(),
        "pass the service command after --"
    );
    args
}

const BODY: &str = r#"{"v":2,"kind":"invoke","tool":{"id":"conformance.echo","version":"1.0.0"},"input":{"message":"hello, pack"},"ctx":{"tenantId":"t-bench","runId":"run-bench"}}"#;
const EXPECT: &str = r#""output":{"message":"hello, pack"}"#;

struct Worker {
    latencies: Vec<u32>,
    errors: usize,
}

async fn worker(
    port: u16,
    token: String,
    budget: std::sync::Arc<std::sync::atomic::AtomicIsize>,
    until: Instant,
) -> Worker {
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let body = Bytes::from_static(BODY.as_bytes());
    let mut out = Worker {
        latencies: Vec::new(),
        errors: 0,
    };
    while Instant::now() < until && budget.fetch_sub(1, std::sync::atomic::Ordering::Relaxed) > 0 {
        let req = Request::post("/v1/invoke")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("kindgi-pack-token", &token)
            .body(Full::new(body.clone()))
            .unwrap();
        let started = Instant::now();
        if sender.ready().await.is_err() {
            out.errors += 1;
            break;
        }
        match sender.send_request(req).await {
            Ok(res) => {
                let status = res.status();
                let bytes = res.into_body().collect().await.map(|b| b.to_bytes());
                let took = started.elapsed();
                match bytes {
                    Ok(b) if status == 200 && memchr(&b, EXPECT.as_bytes()) => {
                        out.latencies.push(took.as_micros() as u32)
                    }
                    _ => out.errors += 1,
                }
            }
            Err(_) => {
                out.errors += 1;
                break;
            }
        }
    }
    out
}

fn memchr(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    let token = {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
    };
    let mut cmd = tokio::process::Command::new(&args.command[0]);
    cmd.args(&args.command[1..])
        .env("PORT", "0")
        .env("KINDGI_PACK_SERVICE_TOKEN", &token)
        .env("KINDGI_LOG_FORMAT", "json")
        .env("KINDGI_LOG_LEVEL", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let exec = Instant::now();
    let mut child = cmd.spawn().expect("start the service");
    let pid = child.id().expect("a pid");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut port = None;
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
            && (v["event"] == "listening" || v["kind"] == "listening")
        {
            port = v["port"].as_u64();
            break;
        }
    }
    let boot = exec.elapsed();
    let port = port.expect("the service never wrote listening") as u16;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    // Warm-up: caches, JIT, lazy imports.
    let warm = std::sync::Arc::new(std::sync::atomic::AtomicIsize::new(500));
    let w = worker(
        port,
        token.clone(),
        warm,
        Instant::now() + Duration::from_secs(10),
    )
    .await;
    assert!(
        w.errors == 0,
        "warm-up calls failed: is conformance.echo served?"
    );

    let mut rows = Vec::new();
    for &conns in &args.connections {
        let budget =
            std::sync::Arc::new(std::sync::atomic::AtomicIsize::new(args.requests as isize));
        let started = Instant::now();
        let until = started + Duration::from_secs(args.seconds);
        let tasks: Vec<_> = (0..conns)
            .map(|_| tokio::spawn(worker(port, token.clone(), budget.clone(), until)))
            .collect();
        let mut latencies = Vec::new();
        let mut errors = 0;
        for t in tasks {
            let w = t.await.unwrap();
            latencies.extend(w.latencies);
            errors += w.errors;
        }
        let elapsed = started.elapsed();
        latencies.sort_unstable();
        let rps = latencies.len() as f64 / elapsed.as_secs_f64();
        let (p50, p99) = (percentile(&latencies, 0.50), percentile(&latencies, 0.99));
        println!(
            "{{\"label\":\"{}\",\"connections\":{conns},\"requests\":{},\"errors\":{errors},\"seconds\":{:.2},\"rps\":{rps:.0},\"p50_us\":{p50},\"p99_us\":{p99}}}",
            args.label,
            latencies.len(),
            elapsed.as_secs_f64()
        );
        rows.push((conns, rps, p50, p99));
    }
    let rss = peak_rss_kib(pid);
    println!(
        "{{\"label\":\"{}\",\"peak_rss_kib\":{},\"boot_ms\":{:.1}}}",
        args.label,
        rss.map_or("null".to_owned(), |r| r.to_string()),
        boot.as_secs_f64() * 1000.0
    );
    for (conns, rps, p50, p99) in rows {
        println!(
            "| {} | {conns} | {rps:.0} | {:.2} | {:.2} | {} | {:.1} |",
            args.label,
            f64::from(p50) / 1000.0,
            f64::from(p99) / 1000.0,
            rss.map_or("?".to_owned(), |r| format!("{:.1}", r as f64 / 1024.0)),
            boot.as_secs_f64() * 1000.0
        );
    }
    let _ = tokio::process::Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
        .await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
}
