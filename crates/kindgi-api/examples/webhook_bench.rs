//! Webhook deliveries → runs started, under load, and what that load does to `POST /v1/runs`
//! (docs/benchmarks/webhooks.md). A real server on loopback over SQLite (or PostgreSQL with
//! `KINDGI_BENCH_DATABASE=postgres`), a one-step flow of an in-process tool, a trigger
//! signed with hex HMAC-SHA256 and a delivery id header (so each delivery is deduped).
//!
//! 1. `POST /v1/runs` alone at 20/s for the phase's seconds: p50/p99 answer latency.
//! 2. Deliveries at 100/s and `POST /v1/runs` at 20/s together: each delivery's answer
//!    latency, its delivery → run-created latency (the run's `createdAt` against the moment
//!    the delivery was sent, same clock) and `POST /v1/runs`' latency again.
//!
//! `cargo run --release -p kindgi-api --example webhook_bench` (`KINDGI_BENCH_SECONDS`, default
//! 20). Every loop is bounded by its count; it stops by itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use kindgi_api::routes::hooks_state::WebhookSettings;
use kindgi_api::routes::values::ValuesConfig;
use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_store::DatabaseKind;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use serde_json::{Value, json};
use tokio::sync::Mutex;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn summary(name: &str, mut xs: Vec<f64>) {
    xs.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{name:<44} n={:<6} p50={:>8.2} ms  p99={:>8.2} ms  max={:>8.2} ms",
        xs.len(),
        percentile(&xs, 0.5),
        percentile(&xs, 0.99),
        xs.last().copied().unwrap_or(f64::NAN)
    );
}

fn now_ms() -> i64 {
    kindgi_runtime::record::now_millis()
}

struct Bench {
    http: reqwest::Client,
    url: String,
    key: String,
}

impl Bench {
    /// `POST /v1/runs` at `per_second` for `seconds`: each answer's latency (ms).
    async fn runs(self: Arc<Self>, per_second: u64, seconds: u64) -> Vec<f64> {
        let out = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / per_second));
        for _ in 0..per_second * seconds {
            tick.tick().await;
            let (b, out) = (self.clone(), out.clone());
            tasks.push(tokio::spawn(async move {
                let t = Instant::now();
                let r = b
                    .http
                    .post(format!("{}/v1/runs", b.url))
                    .bearer_auth(&b.key)
                    .json(&json!({"flow": "bench.order", "input": {"id": 1}, "options": {"wait": false}}))
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success(), "{}", r.status());
                out.lock().await.push(t.elapsed().as_secs_f64() * 1000.0);
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        Arc::try_unwrap(out).unwrap().into_inner()
    }

    /// Deliveries at `per_second` for `seconds`: answer latencies, and fire id → sent at (ms).
    async fn deliveries(
        self: Arc<Self>,
        path: String,
        secret: String,
        per_second: u64,
        seconds: u64,
    ) -> (Vec<f64>, Vec<(String, i64)>) {
        let out = Arc::new(Mutex::new((Vec::new(), Vec::new())));
        let mut tasks = Vec::new();
        let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / per_second));
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
        for n in 0..per_second * seconds {
            tick.tick().await;
            let body = format!("{{\"id\":{n},\"status\":\"processing\"}}");
            let sig = hex::encode(ring::hmac::sign(&key, body.as_bytes()).as_ref());
            let (b, out, path) = (self.clone(), out.clone(), path.clone());
            tasks.push(tokio::spawn(async move {
                let sent = now_ms();
                let t = Instant::now();
                let r = b
                    .http
                    .post(format!("{}{path}", b.url))
                    .header("X-Kindgi-Signature", sig)
                    .header("X-Delivery", format!("d-{n}"))
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status().as_u16(), 202);
                let v: Value = r.json().await.unwrap();
                let mut o = out.lock().await;
                o.0.push(t.elapsed().as_secs_f64() * 1000.0);
                o.1.push((v["fireId"].as_str().unwrap().to_owned(), sent));
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        Arc::try_unwrap(out).unwrap().into_inner()
    }

    /// The runs trigger `trigger_id` started: fire id → created at (ms), read once every
    /// delivery's run exists (bounded).
    async fn started(&self, trigger_id: &str, expected: usize) -> Vec<(String, i64)> {
        for _ in 0..600 {
            let mut all = Vec::new();
            let mut cursor: Option<String> = None;
            for _ in 0..1000 {
                let mut url = format!("{}/v1/runs?triggerId={trigger_id}&limit=100", self.url);
                if let Some(c) = &cursor {
                    url.push_str(&format!("&cursor={c}"));
                }
                let page: Value = self
                    .http
                    .get(url)
                    .bearer_auth(&self.key)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                for r in page["data"].as_array().unwrap() {
                    let at = chrono::DateTime::parse_from_rfc3339(r["createdAt"].as_str().unwrap())
                        .unwrap()
                        .timestamp_millis();
                    all.push((r["trigger"]["fireId"].as_str().unwrap().to_owned(), at));
                }
                cursor = page["nextCursor"].as_str().map(str::to_owned);
                if cursor.is_none() {
                    break;
                }
            }
            if all.len() >= expected {
                return all;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("not every delivery started its run");
    }
}

fn echo() -> Tool {
    Tool::define("bench.echo")
        .version("1.0.0")
        .description("echoes")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(
            |input: Value, _ctx| async move { Ok::<Value, HandlerError>(json!({"echo": input})) },
        )
        .build()
        .unwrap()
}

#[tokio::main]
async fn main() {
    let seconds: u64 = std::env::var("KINDGI_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
        .clamp(1, 600);
    let kind = match std::env::var("KINDGI_BENCH_DATABASE").as_deref() {
        Ok("postgres") => DatabaseKind::Postgres,
        _ => DatabaseKind::Sqlite,
    };
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    rt.tools().insert_tool(echo());
    let flow = json!({
        "id": "bench.order", "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "bench.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let state = AppState::new(db.db.clone())
        .with_runtime(rt)
        .with_values(ValuesConfig::new("local", Some(SealKey::generate().0)))
        .with_webhook_settings(WebhookSettings {
            public_url: None,
            tenant_receives_per_minute: 1_000_000,
        });
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = router(state);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let bench = Arc::new(Bench {
        http: reqwest::Client::new(),
        url,
        key,
    });
    let t: Value = bench
        .http
        .post(format!("{}/v1/webhooks", bench.url))
        .bearer_auth(&bench.key)
        .json(&json!({"flowId": "bench.order", "flowVersion": "1.0.0", "hmacSecretName": "BENCH",
                      "generateSecret": true, "deliveryIdHeader": "X-Delivery", "rateLimitPerMinute": 6000}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let trigger_id = t["triggerId"].as_str().unwrap().to_owned();
    let path = format!(
        "/v1/hooks/{}/{}",
        kindgi_api::projects::tenant_uuid("acme"),
        t["webhookId"].as_str().unwrap()
    );
    let secret = t["signingSecret"].as_str().unwrap().to_owned();
    println!("webhook bench: {kind:?}, {seconds} s a phase, 2 cores shared");

    let alone = bench.clone().runs(20, seconds.min(10)).await;
    summary("POST /v1/runs alone (20/s)", alone);

    // 6000 deliveries a minute is the trigger's ceiling: a longer phase would hit it.
    let phase = seconds.min(55);
    let (runs, (answers, sent)) = tokio::join!(
        bench.clone().runs(20, phase),
        bench.clone().deliveries(path, secret, 100, phase)
    );
    summary("POST /v1/runs with deliveries (20/s)", runs);
    summary("delivery answer (100/s)", answers);
    let created = bench.started(&trigger_id, sent.len()).await;
    let created: std::collections::HashMap<String, i64> = created.into_iter().collect();
    let lag: Vec<f64> = sent
        .iter()
        .filter_map(|(fire, at)| created.get(fire).map(|c| (c - at) as f64))
        .collect();
    summary("delivery sent → run created (100/s)", lag);
    db.cleanup().await.unwrap();
}
