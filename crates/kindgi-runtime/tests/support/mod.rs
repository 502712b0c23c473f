//! Shared test helpers: tools built from manifests. The runtime's own tests run on the
//! memory stores; the ones that need SQLite or PostgreSQL are kindgi-host's (the host
//! composes the database stores), which includes this module too, so the helpers have one
//! copy. A fixture one test file shares with its database half in kindgi-host is a file
//! beside this one (`support/<file>.rs`), included by the two files that use it.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use kindgi_spec::ToolManifest;
use kindgi_tools::{BoxFuture, HandlerError, Tool, ToolContext};
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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
