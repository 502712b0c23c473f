//! Load generator for `GET /v1/tools/{id}/versions/{v}`: serves the API on a loopback port
//! over a fresh database (SQLite file or a PostgreSQL schema), registers one tool, then runs
//! `--concurrency` keep-alive clients until `--requests` are done or `--seconds` pass, and
//! prints requests/s and latency percentiles. Run it with `scripts/bench-registry`.
//!
//! `cargo run --release -p kindgi-api --example bench_get -- --store sqlite|postgres
//!  [--requests 50000] [--concurrency 16] [--seconds 20] [--rounds 1]`
//!
//! With `--rounds N` the bare endpoint and the route take turns N times and the median of
//! the N ratios is printed too: on a shared machine the load drifts between two long runs,
//! and alternating short ones compares like with like.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kindgi_api::{AppState, router, serve};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use serde_json::json;

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_owned())
}

#[tokio::main]
async fn main() {
    let store = arg("--store", "sqlite");
    let requests: usize = arg("--requests", "50000").parse().unwrap();
    let concurrency: usize = arg("--concurrency", "16").parse().unwrap();
    let seconds: u64 = arg("--seconds", "20").parse().unwrap();
    let rounds: usize = arg("--rounds", "1").parse().unwrap();
    let kind = match store.as_str() {
        "sqlite" => DatabaseKind::Sqlite,
        "postgres" => DatabaseKind::Postgres,
        other => panic!("--store must be sqlite or postgres, not {other}"),
    };
    let t = TestDatabase::new(kind).await.unwrap();
    let state = AppState::new(t.db.clone());
    let key = state.tokens.create("bench", None).await.unwrap().key;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let stop = kindgi_serve::CancellationToken::new();
    let cancel = stop.clone();
    tokio::spawn(async move {
        let _ = stop_rx.await;
        cancel.cancel();
    });
    let server = tokio::spawn(async move {
        serve(
            listener,
            router(state),
            kindgi_serve::Limits::default(),
            stop,
        )
        .await;
        Ok::<(), std::io::Error>(())
    });

    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .build()
        .unwrap();
    // A realistic manifest, and 50 versions so the row lookup is not on a one-row table.
    for minor in 0..50 {
        let body = json!({
            "projectId": kindgi_api::projects::default_project_id("bench"), "id": "acme.lookup-order", "description": "Look an order up by id",
            "version": format!("1.{minor}.0"),
            "input": {"type": "object", "properties": {"orderId": {"type": "string", "minLength": 1}}, "required": ["orderId"], "additionalProperties": false},
            "output": {"type": "object", "properties": {"status": {"enum": ["open", "shipped", "closed"]}, "total": {"type": "number"}}},
            "effects": [{"kind": "reads", "resource": "orders"}], "mutating": false
        });
        let r = http
            .post(format!("{url}/v1/tools"))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    }
    let target = Arc::new(format!("{url}/v1/tools/acme.lookup-order/versions/1.25.0"));
    // Warm up connections and caches.
    for _ in 0..200 {
        let r = http
            .get(target.as_str())
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
    }

    // The same body from a bare hyper endpoint (no routing, auth, store or middleware), in
    // the same run, as the yardstick.
    let body = http
        .get(target.as_str())
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let bare = Arc::new(bare_endpoint(body).await);
    let load = Load {
        http: http.clone(),
        key: key.clone(),
        requests,
        concurrency,
        seconds,
    };
    load.run(&bare, "bare hyper", &store).await;
    let mut ratios = Vec::new();
    for _ in 0..rounds.max(1) {
        let bare_rps = load.run(&bare, "bare hyper", &store).await;
        let ours = load
            .run(&target, "GET /v1/tools/{id}/versions/{v}", &store)
            .await;
        println!(
            "store={store} ratio={:.2} (ours / bare hyper, {concurrency} connections)",
            ours / bare_rps
        );
        ratios.push(ours / bare_rps);
    }
    if ratios.len() > 1 {
        ratios.sort_by(f64::total_cmp);
        println!(
            "store={store} median ratio={:.2} over {} rounds (min {:.2}, max {:.2})",
            ratios[ratios.len() / 2],
            ratios.len(),
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
    stop_tx.send(()).unwrap();
    server.await.unwrap().unwrap();
    t.cleanup().await.unwrap();
}

struct Load {
    http: reqwest::Client,
    key: String,
    requests: usize,
    concurrency: usize,
    seconds: u64,
}

impl Load {
    /// Runs the load against `target`, prints the figures, returns requests/s.
    async fn run(&self, target: &Arc<String>, what: &str, store: &str) -> f64 {
        let issued = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + Duration::from_secs(self.seconds);
        let started = Instant::now();
        let mut workers = Vec::new();
        for _ in 0..self.concurrency {
            let (http, key, target, issued) = (
                self.http.clone(),
                self.key.clone(),
                target.clone(),
                issued.clone(),
            );
            let requests = self.requests;
            workers.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0usize;
                while issued.fetch_add(1, Ordering::Relaxed) < requests && Instant::now() < deadline
                {
                    let t0 = Instant::now();
                    match http.get(target.as_str()).bearer_auth(&key).send().await {
                        Ok(r) if r.status() == 200 => {
                            r.bytes().await.unwrap();
                        }
                        _ => errors += 1,
                    }
                    latencies.push(t0.elapsed().as_micros() as u64);
                }
                (latencies, errors)
            }));
        }
        let mut all = Vec::new();
        let mut errors = 0;
        for w in workers {
            let (l, e) = w.await.unwrap();
            all.extend(l);
            errors += e;
        }
        let elapsed = started.elapsed();
        all.sort_unstable();
        let pct = |p: f64| {
            all[((all.len() as f64 * p).ceil() as usize)
                .saturating_sub(1)
                .min(all.len() - 1)] as f64
                / 1000.0
        };
        let rps = all.len() as f64 / elapsed.as_secs_f64();
        println!(
            "{what}: store={store} requests={} errors={errors} concurrency={} elapsed={:.2}s rps={rps:.0} p50={:.3}ms p90={:.3}ms p99={:.3}ms max={:.3}ms",
            all.len(),
            self.concurrency,
            elapsed.as_secs_f64(),
            pct(0.50),
            pct(0.90),
            pct(0.99),
            pct(1.0),
        );
        rps
    }
}

/// A bare hyper HTTP/1 endpoint answering every request with `body`; its URL.
async fn bare_endpoint(body: bytes::Bytes) -> String {
    use hyper::service::service_fn;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let body = body.clone();
            tokio::spawn(async move {
                let service = service_fn(move |_req| {
                    let body = body.clone();
                    async move {
                        let mut r = hyper::Response::new(http_body_util::Full::new(body));
                        r.headers_mut().insert(
                            hyper::header::CONTENT_TYPE,
                            hyper::header::HeaderValue::from_static("application/json"),
                        );
                        Ok::<_, std::convert::Infallible>(r)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    url
}
