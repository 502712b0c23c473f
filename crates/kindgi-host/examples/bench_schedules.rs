//! Benchmark: fire latency of the schedule loop — from an occurrence (`scheduledFor`) to its
//! run created (the run's `createdAt`) — with N active schedules (default 1,000) that all
//! fire at the same instants (`*/5 * * * * *`, the worst case: every schedule due at once),
//! over the real store (SQLite, and PostgreSQL when `KINDGI_TEST_DATABASE_URL`'s server is
//! up) and the real runtime (each run one read-only tool step). Prints p50, p99 and max over
//! every fire of ROUNDS occurrences (default 4). Goal: p99 < 1 s.
//!
//! ```sh
//! cargo run --release -p kindgi-host --example bench_schedules -- [SCHEDULES] [ROUNDS]
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use kindgi_core::ports::{AnyOwner, RunQuery, ScheduleStore};
use kindgi_core::schedule::{CatchUp, Overlap, ScheduleRecord, ScheduleTarget};
use kindgi_core::trigger::{FireOutcome, OwnerKind, TriggerOwner, TriggerStatus};
use kindgi_runtime::triggers::Schedules;
use kindgi_serve::CancellationToken;
use kindgi_store::Database;
use serde_json::{Value, json};

const CRON: &str = "*/5 * * * * *";

fn schedule(now: i64, first: i64) -> ScheduleRecord {
    ScheduleRecord {
        id: uuid::Uuid::new_v4().to_string(),
        tenant: "default".into(),
        project_id: "p".into(),
        target: ScheduleTarget::Flow {
            flow_id: "bench.flow".into(),
            flow_version: "1.0.0".into(),
        },
        owner: TriggerOwner {
            kind: OwnerKind::User,
            id: "bench".into(),
            display_name: None,
        },
        owner_key_id: None,
        cron_expression: CRON.into(),
        timezone: None,
        input: None,
        catch_up: CatchUp::Skip,
        overlap: Overlap::Allow,
        starting_deadline_seconds: 600,
        label: None,
        status: TriggerStatus::Active,
        status_reason: None,
        next_fire_at: Some(first),
        last_fired_at: None,
        failures_in_row: 0,
        tools_allowed_unattended: vec![],
        created_at: now,
        updated_at: now,
    }
}

fn runtime(db: &Database) -> kindgi_runtime::Runtime {
    let rt = kindgi_runtime::Runtime::over(db.ports()).build();
    let echo = kindgi_tools::Tool::define("bench.echo")
        .version("1.0.0")
        .description("echoes")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|input: Value, _ctx| async move { Ok::<Value, kindgi_tools::HandlerError>(input) })
        .build()
        .unwrap();
    rt.tools().insert_tool(echo);
    let flow = json!({"id": "bench.flow", "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "bench.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]});
    rt.flows().insert_json(&flow.to_string()).unwrap();
    rt
}

fn percentile(sorted: &[i64], p: f64) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn measure(label: &str, db: Database, n: usize, rounds: usize) {
    let rt = runtime(&db);
    let store: Arc<dyn ScheduleStore> = db.ports().schedules;
    let now = kindgi_core::now_millis();
    // The first occurrence at least 3 s away, on the cron's 5 s grid.
    let first = ((now + 3_000) / 5_000 + 1) * 5_000;
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let s = schedule(now, first);
        ids.push(s.id.clone());
        store.create(&s).await.unwrap();
    }
    let schedules =
        Schedules::new(store.clone(), rt.clone(), Arc::new(AnyOwner)).allow_sub_minute(true);
    let stop = CancellationToken::new();
    let task = schedules.spawn_loop(stop.clone());
    let last = first + 5_000 * (rounds as i64 - 1);
    let wait = (last - kindgi_core::now_millis() + 4_000).max(0);
    tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    stop.cancel();
    task.await.unwrap();
    let mut latencies = Vec::new();
    let mut other = 0usize;
    for id in &ids {
        let runs = db
            .ports()
            .runs
            .list_runs(&RunQuery {
                trigger_id: Some(id.clone()),
                ..Default::default()
            })
            .await
            .unwrap();
        for r in runs {
            let Some(t) = r
                .meta
                .trigger
                .as_ref()
                .and_then(|t| t.scheduled_for.clone())
            else {
                continue;
            };
            let created = kindgi_core::parse_millis(&r.created_at);
            latencies.push(created - kindgi_core::parse_millis(&t));
        }
        for f in store.fires(id, None, 100).await.unwrap() {
            if f.outcome != FireOutcome::Started {
                other += 1;
            }
        }
    }
    latencies.sort_unstable();
    println!(
        "{label}: {n} schedules × {rounds} occurrences: {} runs fired ({} fires not started); \
         fire latency p50 {} ms, p99 {} ms, max {} ms",
        latencies.len(),
        other,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(0),
    );
    let _ = rt.shutdown(Duration::from_secs(5)).await;
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(4);
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::connect(&tmp.path().join("bench.db").display().to_string())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    measure("sqlite", db.clone(), n, rounds).await;
    db.close().await;
    let url = kindgi_store::testing::postgres_test_url();
    match kindgi_store::testing::TestDatabase::postgres().await {
        Ok(t) => {
            measure("postgres", t.db.clone(), n, rounds).await;
            t.cleanup().await.unwrap();
        }
        Err(e) => println!("postgres: skipped ({url} unavailable: {e})"),
    }
}
