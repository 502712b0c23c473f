//! The `/v1` target's fixture: the whole API router (tools, runs, flows) over a real runtime
//! on a migrated SQLite file in a temporary folder, with one tenant's key; requests go in
//! through `tower::ServiceExt::oneshot` (kindgi_api::testing), once per input.

use crate::runtime;
use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_spec::tool::EffectKind;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::Tool;
use serde_json::{Value, json};
use std::sync::OnceLock;

/// The API and the database it writes to (kept alive with it).
pub struct Api {
    pub client: TestClient,
    _db: TestDatabase,
}

fn tool(id: &str, read_only: bool) -> Option<Tool> {
    let mut b = Tool::define(id)
        .version("1.0.0")
        .description("fuzz tool")
        .input(json!({"type": "object", "properties": {"orderId": {"type": "string", "maxLength": 32}}}))
        .output(json!({"type": "object"}));
    b = if read_only {
        b.mutating(false)
    } else {
        b.effect(EffectKind::Writes, "orders")
    };
    b.handler(
        |input: Value, _ctx| async move { Ok(json!({"orderId": input["orderId"], "ok": true})) },
    )
    .build()
    .ok()
}

const FLOWS: [&str; 2] = [
    r#"{"id": "fuzz.check-order", "version": "1.0.0", "name": "Check an order",
        "nodes": [{"id": "lookup", "kind": "tool", "ref": "fuzz.lookup-order"}],
        "edges": [{"id": "e1", "from": "$start", "to": "lookup"}, {"id": "e2", "from": "lookup", "to": "$end"}],
        "metadata": {"inputSchema": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]}}}"#,
    r#"{"id": "fuzz.note-order", "version": "1.0.0",
        "nodes": [{"id": "lookup", "kind": "tool", "ref": "fuzz.lookup-order"}, {"id": "note", "kind": "tool", "ref": "fuzz.add-note"}],
        "edges": [{"id": "e1", "from": "$start", "to": "lookup"}, {"id": "e3", "from": "note", "to": "$end"},
                  {"id": "e2", "from": "lookup", "to": "note", "when": {"op": "eq", "left": {"path": "runInput.orderId"}, "right": {"literal": "o1"}}}]}"#,
];

/// The process's API (built on first use).
pub fn api() -> &'static Api {
    static API: OnceLock<Api> = OnceLock::new();
    API.get_or_init(|| runtime().block_on(build()))
}

async fn build() -> Api {
    let db = match TestDatabase::sqlite().await {
        Ok(db) => db,
        Err(e) => panic!("cannot open the fuzz database: {e}"),
    };
    let rt = Runtime::over(db.db.ports()).build();
    for (id, read_only) in [("fuzz.lookup-order", true), ("fuzz.add-note", false)] {
        match tool(id, read_only) {
            Some(t) => rt.tools().insert_tool(t),
            None => panic!("the fuzz tool {id} does not build"),
        }
    }
    for flow in FLOWS {
        if let Err(e) = rt.flows().insert_json(flow) {
            panic!("the fuzz flow does not load: {e}");
        }
    }
    let state = AppState::new(db.db.clone());
    let key = match state.tokens.create("acme", None).await {
        Ok(k) => k.key,
        Err(e) => panic!("cannot mint the fuzz key: {e}"),
    };
    let app = router(state.with_runtime(rt));
    Api {
        client: TestClient::new(app, Some(key)),
        _db: db,
    }
}

/// Percent-encodes a path segment or query text (everything but unreserved characters).
pub fn encode(raw: &[u8], keep: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    for &b in raw {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep.contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
