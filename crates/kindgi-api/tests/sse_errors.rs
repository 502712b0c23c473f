//! A run stream whose journal cannot be read (platform-api.md §3.6): the stream sends
//! `id: <runId>:error`, `event: error`, `data {code: "journal-error", message, requestId}` and
//! closes. The store is a real in-memory store whose journal reads are made to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, router};
use kindgi_runtime::{
    JournalEntry, MemoryRunStore, RunOptions, RunQuery, RunRecord, RunStore, RunStoreError, Runtime,
};
use kindgi_store::testing::TestDatabase;
use serde_json::{Value, json};

#[derive(Debug, Default)]
struct Flaky {
    inner: MemoryRunStore,
    broken: AtomicBool,
}

#[async_trait]
impl RunStore for Flaky {
    async fn insert_run(&self, run: &RunRecord) -> Result<(), RunStoreError> {
        self.inner.insert_run(run).await
    }
    async fn update_run(&self, run: &RunRecord) -> Result<(), RunStoreError> {
        self.inner.update_run(run).await
    }
    async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, RunStoreError> {
        self.inner.get_run(id).await
    }
    async fn list_runs(&self, q: &RunQuery) -> Result<Vec<RunRecord>, RunStoreError> {
        self.inner.list_runs(q).await
    }
    async fn append(&self, run_id: &str, entries: &[JournalEntry]) -> Result<(), RunStoreError> {
        self.inner.append(run_id, entries).await
    }
    async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, RunStoreError> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(RunStoreError::backend(
                "journal",
                std::io::Error::other("secret connection detail"),
            ));
        }
        self.inner.journal(run_id, after, limit).await
    }
}

#[tokio::test]
async fn a_journal_failure_ends_the_stream_with_an_error_frame() {
    let db = TestDatabase::sqlite().await.unwrap();
    let store = Arc::new(Flaky::default());
    let rt = Runtime::builder(store.clone()).build();
    let echo = kindgi_tools::Tool::define("t.echo")
        .version("1.0.0")
        .description("echo")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|input: Value, _ctx| async move { Ok::<Value, kindgi_tools::HandlerError>(input) })
        .build()
        .unwrap();
    rt.tools().insert_tool(echo);
    rt.flows()
        .insert_json(&json!({"id": "t.empty", "version": "1.0.0",
            "nodes": [{"id": "n", "kind": "tool", "ref": "t.echo"}],
            "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]}).to_string())
        .unwrap();
    let state = AppState::new(db.db.clone());
    let key = state.tokens.create("default", None).await.unwrap().key;
    let client = TestClient::new(router(state.with_runtime(rt.clone())), Some(key));
    let run = rt
        .start_run(
            "t.empty",
            None,
            json!({}),
            RunOptions {
                wait: true,
                ..RunOptions::default()
            },
        )
        .await
        .unwrap();
    store.broken.store(true, Ordering::SeqCst);
    let r = client
        .send(
            http::Method::GET,
            &format!("/v1/runs/{}/stream", run.id),
            None,
            &[("x-request-id", "req-sse")],
        )
        .await;
    assert_eq!(r.status, 200);
    let text = String::from_utf8_lossy(&r.body).into_owned();
    let lines: Vec<&str> = text.trim_end().lines().collect();
    assert_eq!(lines[0], format!("id: {}:error", run.id), "{text}");
    assert_eq!(lines[1], "event: error");
    let data: Value = serde_json::from_str(lines[2].strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(data["code"], "journal-error");
    assert_eq!(data["requestId"], "req-sse");
    assert!(
        !text.contains("secret"),
        "the cause stays in the log: {text}"
    );
    // The JSON journal route answers a 500 with the fixed message.
    let j = client.get(&format!("/v1/runs/{}/journal", run.id)).await;
    assert_eq!(j.status, 500);
    assert_eq!(j.json()["error"]["code"], "internal-server-error");
    assert_eq!(j.json()["error"]["message"], "Unhandled server error");
    db.cleanup().await.unwrap();
}
