//! Findings 5 and 6 of issue 19 over real sockets (and in process where only bytes are
//! compared): streams capped per key and per tenant with room left for other tenants and
//! `/health`; a stalled journal reader closed by the write timeout instead of pinning the
//! whole answer; paged answers byte for byte what whole ones were; SSE catch-up reading
//! page after page without waiting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use kindgi_api::stream_caps::StreamLimits;
use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, router};
use kindgi_runtime::{
    JournalEntry, JournalKind, MemoryRunStore, RunMeta, RunQuery, RunRecord, RunStatus, RunStore,
    Runtime,
};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The bound that tells "closed" from "never closed".
const HANG: Duration = Duration::from_secs(10);

fn stamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(1_780_000_000_000 + ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A run of `tenant` as the store holds it (`running`: its stream stays open).
fn record(tenant: &str, n: i64, status: RunStatus, output: Option<Value>) -> RunRecord {
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

/// `n` step entries (sequences from 1) of about `payload` bytes each, then (with `end`)
/// `run.completed`.
async fn fill_journal(store: &dyn RunStore, run_id: &str, n: u64, payload: usize, end: bool) {
    let text = "x".repeat(payload);
    let mut seq = 1;
    while seq <= n {
        let batch: Vec<JournalEntry> = (seq..=n.min(seq + 999))
            .map(|s| JournalEntry {
                sequence: s,
                kind: JournalKind::StepStarted,
                node_id: Some(format!("n{s}")),
                scope: None,
                payload: Some(json!({"pad": text})),
                timestamp: stamp(s as i64),
            })
            .collect();
        seq += batch.len() as u64;
        store.append(run_id, &batch).await.unwrap();
    }
    if end {
        let done = JournalEntry {
            sequence: n + 1,
            kind: JournalKind::RunCompleted,
            node_id: None,
            scope: None,
            payload: None,
            timestamp: stamp(n as i64),
        };
        store.append(run_id, &[done]).await.unwrap();
    }
}

struct Served {
    url: String,
    addr: std::net::SocketAddr,
}

async fn serve(app: axum::Router, limits: kindgi_serve::Limits) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = kindgi_serve::CancellationToken::new();
    tokio::spawn(kindgi_api::serve(listener, app, limits, stop));
    Served {
        url: format!("http://{addr}"),
        addr,
    }
}

async fn open_stream(url: &str, key: &str, run_id: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(format!("{url}/v1/runs/{run_id}/stream"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn streams_past_a_keys_cap_get_429_while_other_tenants_and_health_are_served() {
    let db = TestDatabase::sqlite().await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    let state = AppState::new(db.db.clone()).stream_limits(StreamLimits {
        per_key: 2,
        per_tenant: 3,
        total: 8,
    });
    let acme_a = state.tokens.create("acme", None).await.unwrap().key;
    let acme_b = state.tokens.create("acme", None).await.unwrap().key;
    let other = state.tokens.create("other", None).await.unwrap().key;
    let acme_run = record("acme", 0, RunStatus::Running, None);
    let other_run = record("other", 1, RunStatus::Running, None);
    rt.store().insert_run(&acme_run).await.unwrap();
    rt.store().insert_run(&other_run).await.unwrap();
    let app = router(state.with_runtime(rt.clone()));
    let s = serve(app, kindgi_serve::Limits::default()).await;

    let mut held = Vec::new();
    for _ in 0..2 {
        let r = open_stream(&s.url, &acme_a, &acme_run.id).await;
        assert_eq!(r.status(), 200);
        held.push(r);
    }
    let refused = open_stream(&s.url, &acme_a, &acme_run.id).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "5");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate-limit-exceeded", "{body}");
    assert_eq!(
        body["error"]["details"]["limit"], "streams-per-key",
        "{body}"
    );
    assert_eq!(body["error"]["details"]["max"], 2, "{body}");
    assert!(body["error"]["requestId"].is_string(), "{body}");

    // The tenant's other key has room up to the tenant's cap, then is refused too.
    let b = open_stream(&s.url, &acme_b, &acme_run.id).await;
    assert_eq!(b.status(), 200);
    held.push(b);
    let refused = open_stream(&s.url, &acme_b, &acme_run.id).await;
    assert_eq!(refused.status(), 429);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(
        body["error"]["details"]["limit"], "streams-per-tenant",
        "{body}"
    );

    // Another tenant still streams, and /health answers.
    let o = open_stream(&s.url, &other, &other_run.id).await;
    assert_eq!(o.status(), 200);
    held.push(o);
    let health = reqwest::get(format!("{}/health", s.url)).await.unwrap();
    assert_eq!(health.status(), 200);

    // A stream given up gives its slot back.
    held.remove(0);
    let reopened = async {
        loop {
            let r = open_stream(&s.url, &acme_a, &acme_run.id).await;
            if r.status() == 200 {
                break r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let again = tokio::time::timeout(HANG, reopened)
        .await
        .expect("a closed stream never gave its slot back");
    held.push(again);
    let _ = s.addr;
}

#[tokio::test]
async fn a_stalled_journal_reader_is_closed_by_the_write_timeout() {
    let db = TestDatabase::sqlite().await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let run = record("acme", 0, RunStatus::Completed, None);
    rt.store().insert_run(&run).await.unwrap();
    // About 8 MB of journal: far more than the socket buffers hold.
    fill_journal(rt.store().as_ref(), &run.id, 4000, 2000, true).await;
    let budget = state.body_budget.clone();
    let app = router(state.with_runtime(rt.clone()));
    let s = serve(
        app,
        kindgi_serve::Limits {
            write_timeout: Duration::from_millis(300),
            ..kindgi_serve::Limits::default()
        },
    )
    .await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut conn = socket.connect(s.addr).await.unwrap();
    let req = format!(
        "GET /v1/runs/{}/journal HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n",
        run.id
    );
    conn.write_all(req.as_bytes()).await.unwrap();
    // Read nothing until the server has let go of every chunk it had buffered for this
    // client (its connection closed), as seen for a full second; a server that keeps the
    // connection keeps what it buffered, and this never ends.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let let_go = async {
        let mut zero_for = 0;
        while zero_for < 10 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            zero_for = if budget.in_use_bytes() == 0 {
                zero_for + 1
            } else {
                0
            };
        }
    };
    tokio::time::timeout(HANG, let_go)
        .await
        .expect("the server kept what it buffered for a stalled reader");
    let mut got = Vec::new();
    let read = tokio::time::timeout(HANG, async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    });
    read.await.expect("the stalled connection was never closed");
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.starts_with("HTTP/1.1 200 OK"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(
        !text.ends_with("\"hasMore\":false}\r\n0\r\n\r\n"),
        "the whole answer was delivered to a client that had stopped reading ({} bytes)",
        got.len()
    );
}

/// The bytes the whole-answer code wrote: `Json(page(data, next, {}))`.
fn whole(data: Vec<Value>, next: Option<String>) -> Vec<u8> {
    serde_json::to_vec(&kindgi_api::page::page(data, next, Map::new())).unwrap()
}

async fn paged_answers_are_byte_for_byte_whole_answers(kind: DatabaseKind) {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("acme", None).await.unwrap().key;
    let run = record("acme", 100, RunStatus::Completed, Some(json!({"n": 0})));
    rt.store().insert_run(&run).await.unwrap();
    fill_journal(rt.store().as_ref(), &run.id, 250, 10, true).await;
    for n in 0..23 {
        let r = record(
            "acme",
            n,
            RunStatus::Completed,
            Some(json!({"n": n, "é": "\"q\""})),
        );
        rt.store().insert_run(&r).await.unwrap();
    }
    let client = TestClient::new(router(state.with_runtime(rt.clone())), Some(key));
    let entries = rt.journal(&run.id, None, None).await.unwrap();
    let wire: Vec<Value> = entries
        .iter()
        .map(kindgi_api::run_wire::entry_json)
        .collect();

    let all = client.get(&format!("/v1/runs/{}/journal", run.id)).await;
    assert_eq!(all.status, 200);
    assert_eq!(all.header("content-type"), Some("application/json"));
    assert_eq!(all.body.as_ref(), whole(wire.clone(), None).as_slice());

    let seven = client
        .get(&format!("/v1/runs/{}/journal?limit=7&since=3", run.id))
        .await;
    let cursor = kindgi_api::page::encode_cursor(&json!({"sequence": 10}));
    assert_eq!(
        seven.body.as_ref(),
        whole(wire[3..10].to_vec(), Some(cursor.clone())).as_slice()
    );
    let tail = client
        .get(&format!(
            "/v1/runs/{}/journal?limit=100&cursor={cursor}",
            run.id
        ))
        .await;
    let next = kindgi_api::page::encode_cursor(&json!({"sequence": 110}));
    assert_eq!(
        tail.body.as_ref(),
        whole(wire[10..110].to_vec(), Some(next)).as_slice()
    );
    let end = client
        .get(&format!("/v1/runs/{}/journal?since=200&limit=100", run.id))
        .await;
    assert_eq!(
        end.body.as_ref(),
        whole(wire[200..].to_vec(), None).as_slice()
    );

    // Runs, newest first, read 10 at a time behind the answer.
    let q = RunQuery {
        tenant_id: Some("acme".into()),
        ..RunQuery::default()
    };
    let listed = rt.list_runs(&q).await.unwrap();
    assert_eq!(listed.len(), 24);
    let runs_wire = |with_output| -> Vec<Value> {
        listed
            .iter()
            .map(|r| kindgi_api::run_wire::run_json(r, with_output))
            .collect()
    };
    let first = client.get("/v1/runs?include=output&limit=15").await;
    let c15 = kindgi_api::runs_list::cursor_after(&listed[14].created_at, &listed[14].id);
    assert_eq!(
        first.body.as_ref(),
        whole(runs_wire(true)[..15].to_vec(), Some(c15.clone())).as_slice()
    );
    let rest = client
        .get(&format!("/v1/runs?include=output&limit=100&cursor={c15}"))
        .await;
    assert_eq!(
        rest.body.as_ref(),
        whole(runs_wire(true)[15..].to_vec(), None).as_slice()
    );
    let plain = client.get("/v1/runs").await;
    assert_eq!(
        plain.body.as_ref(),
        whole(runs_wire(false), None).as_slice()
    );
    let empty = client.get("/v1/runs?flowId=nothing").await;
    assert_eq!(empty.body.as_ref(), br#"{"data":[],"hasMore":false}"#);
}

#[tokio::test]
async fn sqlite_paged_answers_are_byte_for_byte_whole_answers() {
    paged_answers_are_byte_for_byte_whole_answers(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_paged_answers_are_byte_for_byte_whole_answers() {
    paged_answers_are_byte_for_byte_whole_answers(DatabaseKind::Postgres).await;
}

/// Catching up: while the page read last was full, the next one is read at once. Over an
/// in-memory store (no I/O), every chunk of a 25-page journal is then ready the moment it is
/// asked for (`now_or_never`); the old stream slept a poll interval before every page, so
/// the second chunk was not ready.
#[tokio::test]
async fn sse_catch_up_reads_full_pages_back_to_back() {
    use futures::FutureExt as _;
    use http_body_util::BodyExt as _;
    let store = Arc::new(MemoryRunStore::default());
    let rt = Runtime::builder(store.clone()).build();
    let run = record("default", 0, RunStatus::Completed, None);
    store.insert_run(&run).await.unwrap();
    let entries = 25 * u64::from(kindgi_api::sse::PAGE);
    fill_journal(store.as_ref(), &run.id, entries, 10, true).await;
    let caps = kindgi_api::stream_caps::StreamCaps::default();
    let slot = caps.open("default", "k").unwrap();
    let response = kindgi_api::sse::stream(
        rt,
        kindgi_api::sse::Flavour::Events,
        run.id.clone(),
        "default".into(),
        "req".into(),
        None,
        kindgi_api::sse::Allowance {
            slot,
            budget: kindgi_api::body_budget::BodyBudget::default(),
        },
    );
    let mut body = response.into_body();
    let mut text = String::new();
    let mut chunks = 0;
    loop {
        let frame = body
            .frame()
            .now_or_never()
            .unwrap_or_else(|| panic!("chunk {chunks} waited while the stream was behind"));
        let Some(frame) = frame else { break };
        let data = frame.unwrap().into_data().unwrap();
        text.push_str(std::str::from_utf8(&data).unwrap());
        chunks += 1;
    }
    assert_eq!(
        text.matches("event: run.step-started\n").count() as u64,
        entries
    );
    assert!(text.ends_with("event: run.completed\n") || text.contains("event: run.completed\n"));
    assert!(chunks >= 25, "{chunks} chunks");
}
