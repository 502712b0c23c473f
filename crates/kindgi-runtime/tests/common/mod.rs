//! Shared test helpers: tools built from manifests, runtimes over each store backend.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use kindgi_runtime::{Runtime, RuntimeBuilder};
use kindgi_spec::ToolManifest;
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{BoxFuture, HandlerError, Tool, ToolContext};
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which store a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Sqlite,
    Postgres,
}

pub const ALL: [Backend; 3] = [Backend::Memory, Backend::Sqlite, Backend::Postgres];

/// A runtime builder over `backend`, and the database to clean up.
pub async fn builder(backend: Backend) -> (RuntimeBuilder, Option<TestDatabase>) {
    match backend {
        Backend::Memory => (Runtime::in_memory(), None),
        Backend::Sqlite | Backend::Postgres => {
            let kind = if backend == Backend::Sqlite {
                DatabaseKind::Sqlite
            } else {
                DatabaseKind::Postgres
            };
            let db = TestDatabase::new(kind)
                .await
                .expect("test database (PostgreSQL at KINDGI_TEST_DATABASE_URL)");
            (Runtime::with_database(db.db.clone()), Some(db))
        }
    }
}

pub async fn cleanup(db: Option<TestDatabase>) {
    if let Some(db) = db {
        db.cleanup().await.unwrap();
    }
}

/// A manifest: `extra` is merged over a minimal one (open input/output schemas).
pub fn manifest(id: &str, extra: Value) -> ToolManifest {
    let mut m = json!({
        "id": id,
        "description": format!("test tool {id}"),
        "version": "1.0.0",
        "input": {"type": "object"},
        "output": {},
    });
    if let (Value::Object(base), Value::Object(extra)) = (&mut m, extra) {
        base.extend(extra);
    }
    serde_json::from_value(m).unwrap()
}

/// A tool whose handler is `f(input)`.
pub fn tool<F, Fut>(id: &str, extra: Value, f: F) -> Tool
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    let f = Arc::new(f);
    let handler: kindgi_tools::Handler = Arc::new(move |input: Value, _ctx: ToolContext| {
        let f = f.clone();
        let fut: BoxFuture<'static, Result<Value, HandlerError>> =
            Box::pin(async move { f(input).await });
        fut
    });
    Tool::from_parts(manifest(id, extra), handler)
}

/// A read-only tool returning `output(input)` and counting its calls.
pub fn counting_tool(
    id: &str,
    extra: Value,
    counter: Arc<AtomicUsize>,
    output: impl Fn(Value) -> Value + Send + Sync + 'static,
) -> Tool {
    let output = Arc::new(output);
    tool(id, extra, move |input| {
        let counter = counter.clone();
        let output = output.clone();
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(output(input))
        }
    })
}

pub fn read_only() -> Value {
    json!({"mutating": false})
}
