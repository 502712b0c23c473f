//! Holds slow sockets against a server on loopback and prints how long until the server
//! closes them, and the `/health` latency on fresh connections meanwhile (a measurement for
//! `docs/serve.md`, not a test).
//!
//! ```sh
//! cargo run -p kindgi-serve --example hold_sockets -- ADDR N MODE [--sigterm PID]
//! ```
//!
//! MODE: `silent` (connect, send nothing), `head` (a request head trickled one header a
//! second), `idle` (one request answered, then nothing), `body` (a head and 10 of 100 body
//! bytes). With `--sigterm PID`, once the sockets are held it sends SIGTERM to PID and
//! prints how long the process took to exit. Bounded: stops after 120 s whatever happens.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const LIMIT: Duration = Duration::from_secs(120);

#[derive(Clone, Copy)]
enum Mode {
    Silent,
    Head,
    Idle,
    Body,
}

/// One slow socket: how long until the server closed it, and the first bytes it answered.
async fn hold(addr: String, mode: Mode) -> (Option<Duration>, String) {
    let Ok(mut s) = TcpStream::connect(&addr).await else {
        return (Some(Duration::ZERO), "connect refused".into());
    };
    let started = Instant::now();
    let opening: &[u8] = match mode {
        Mode::Silent => b"",
        Mode::Head => b"GET /health HTTP/1.1\r\nHost: x\r\n",
        Mode::Idle => b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        Mode::Body => {
            b"POST /v1/tools HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"
        }
    };
    let _ = s.write_all(opening).await;
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    while started.elapsed() < LIMIT {
        match tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (Some(started.elapsed()), first_line(&got)),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => {
                if matches!(mode, Mode::Head) && s.write_all(b"X-Slow: 1\r\n").await.is_err() {
                    return (Some(started.elapsed()), first_line(&got));
                }
            }
        }
    }
    (None, first_line(&got))
}

fn first_line(got: &[u8]) -> String {
    String::from_utf8_lossy(got)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

/// `GET /health` on a fresh connection: the latency, or `None` if it failed.
async fn health(addr: &str) -> Option<Duration> {
    let started = Instant::now();
    let mut s = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
        .await
        .ok()?
        .ok()?;
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut got))
        .await
        .ok()?
        .ok()?;
    first_line(&got)
        .starts_with("HTTP/1.1 200")
        .then(|| started.elapsed())
}

fn pid_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| !st.contains(") Z "))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = args.first().expect("ADDR").clone();
    let n: usize = args.get(1).and_then(|v| v.parse().ok()).expect("N");
    let mode = match args.get(2).map(String::as_str) {
        Some("silent") => Mode::Silent,
        Some("head") => Mode::Head,
        Some("idle") => Mode::Idle,
        Some("body") => Mode::Body,
        other => panic!("MODE is silent, head, idle or body, not {other:?}"),
    };
    let sigterm: Option<u32> = args
        .iter()
        .position(|a| a == "--sigterm")
        .and_then(|i| args.get(i + 1))
        .and_then(|p| p.parse().ok());
    let started = Instant::now();
    let held: Vec<_> = (0..n)
        .map(|_| tokio::spawn(hold(addr.clone(), mode)))
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    if let Some(pid) = sigterm {
        let at = Instant::now();
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
        while pid_alive(pid) && at.elapsed() < LIMIT {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        println!(
            "sigterm: process {pid} exited {} ms after SIGTERM with {n} {} sockets open",
            at.elapsed().as_millis(),
            args[2]
        );
        return;
    }
    // /health on fresh connections while the sockets are held.
    let mut latencies = Vec::new();
    let mut failures = 0;
    for _ in 0..10 {
        match health(&addr).await {
            Some(d) => latencies.push(d),
            None => failures += 1,
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    latencies.sort();
    let mut closed = Vec::new();
    let mut open = 0;
    let mut answers = std::collections::BTreeMap::<String, usize>::new();
    for h in held {
        let (c, answer) = h.await.unwrap();
        match c {
            Some(d) => closed.push(d),
            None => open += 1,
        }
        *answers.entry(answer).or_default() += 1;
    }
    closed.sort();
    let ms = |d: Option<&Duration>| d.map_or(-1, |d| d.as_millis() as i64);
    println!(
        "{n} {} sockets: {} closed by the server (first after {} ms, last after {} ms), {open} still open after {} s; answers {answers:?}",
        args[2],
        closed.len(),
        ms(closed.first()),
        ms(closed.last()),
        LIMIT.as_secs()
    );
    println!(
        "/health on fresh connections meanwhile: {} ok, {failures} failed; latency median {} ms, max {} ms (run took {} s)",
        latencies.len(),
        ms(latencies.get(latencies.len() / 2)),
        ms(latencies.last()),
        started.elapsed().as_secs()
    );
}
