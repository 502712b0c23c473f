//! A connection reaching a tool written with the official Python SDK (`kindgi==0.1.10`),
//! indexed by the SDK's indexer and served by the SDK's pack service under the real
//! [`Supervisor`], called by a flow's tool step on a SQLite database (tokens sealed): the
//! call's `ctx` carries the run's person's access token, which SDK 0.1.10 (no
//! `ctx.connections`) reads as the secret `connection:<name>`; the tool's echo of it is masked
//! in the run's output, and the journal holds no token.
//!
//! Needs `KINDGI_REFERENCE_PYTHON` (skipped without it, failed when
//! `KINDGI_REQUIRE_REFERENCE=1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::connection::{ConnectionHolder, ConnectionTokens, NewConnection};
use kindgi_core::ports::ConnectionStore;
use kindgi_core::run::RunMeta;
use kindgi_dev::detect::PackKind;
use kindgi_dev::prepare::prepare;
use kindgi_dev::supervisor::{ServiceSlot, Supervisor, SupervisorConfig};
use kindgi_pack_client::dispatch::{PackServiceCaller, manifest_of};
use kindgi_runtime::{RunOptions, RunStatus};
use kindgi_store::connections::ConnectionsStore;
use kindgi_store::seal::SealKey;
use serde_json::json;
use std::path::PathBuf;

const PYPROJECT: &str = r#"[project]
name = "mail-pack"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["kindgi==0.1.10"]

[tool.kindgi.pack]
id = "mail"
version = "0.1.0"
"#;

const TOKEN: &str = "ya29.python-access-token";

const TOOL: &str = r#"
"""mail.send: sends with the run's person's Google connection."""
from pydantic import BaseModel
from kindgi import tool, ToolContext

class Mail(BaseModel):
    to: str

@tool(id="mail.send", version="0.1.0",
      needs_spec={"connections": {"mail": {"app": "google", "permissions": ["gmail.send"], "as": "person"}}})
def send(mail: Mail, ctx: ToolContext) -> dict:
    """Sends a mail."""
    token = ctx.secrets.get("connection:mail")
    return {"to": mail.to, "connected": token == "ya29.python-access-token", "echo": token}
"#;

fn reference_python() -> Option<PathBuf> {
    kindgi_spec::testing::reference_or_skip(
        "connections_python",
        std::env::var_os("KINDGI_REFERENCE_PYTHON")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from),
        "KINDGI_REFERENCE_PYTHON is not set (source .cache/reference.env)",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_tool_receives_the_persons_connection() {
    let Some(python) = reference_python() else {
        return;
    };
    let pack = tempfile::tempdir().unwrap();
    let dir = pack.path();
    std::fs::write(dir.join("pyproject.toml"), PYPROJECT).unwrap();
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    std::fs::write(dir.join("tools").join("send.py"), TOOL).unwrap();
    let prepared = prepare(dir, &PackKind::Python { python }, false)
        .await
        .unwrap();
    let entry = prepared
        .index
        .tools
        .iter()
        .find(|t| t.id == "mail.send")
        .expect("the SDK indexed the tool");
    let manifest = manifest_of(entry).unwrap();
    assert!(
        !kindgi_runtime::connections::declared(&manifest).is_empty(),
        "the index keeps needsSpec.connections: {manifest:?}"
    );

    let db_file = tempfile::tempdir().unwrap();
    let db = kindgi_store::Database::connect(&db_file.path().join("t.db").display().to_string())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let (key, _) = SealKey::generate();
    let rt = kindgi_runtime::Runtime::over(db.ports_sealed(Some(key.clone()))).build();
    let slot = ServiceSlot::new();
    let caller = PackServiceCaller::new(slot.clone());
    let supervisor = Supervisor::start_with(prepared, dir, slot, SupervisorConfig::default())
        .await
        .unwrap();
    rt.tools().insert_pack_tool(manifest, "mail", caller);
    rt.flows()
        .insert_json(
            &json!({"id": "mail.flow", "version": "1.0.0",
                "nodes": [{"id": "send", "kind": "tool", "ref": "mail.send", "inputMapping": {"to": {"path": "runInput.to"}}}],
                "edges": [{"id": "e1", "from": "$start", "to": "send"}, {"id": "e2", "from": "send", "to": "$end"}]})
            .to_string(),
        )
        .unwrap();
    ConnectionsStore::new(db.clone(), Some(key))
        .add(&NewConnection {
            tenant: kindgi_runtime::runtime::DEFAULT_TENANT.into(),
            app: "google".into(),
            holder: ConnectionHolder::Person("u1".into()),
            permissions: vec!["gmail.send".into()],
            tokens: ConnectionTokens {
                access_token: TOKEN.into(),
                refresh_token: None,
                expires_at: None,
            },
            refresh: None,
            created_by: Some("user:u1".into()),
            now: kindgi_core::now_millis(),
        })
        .await
        .unwrap();
    let run = rt
        .start_run(
            "mail.flow",
            None,
            json!({"to": "ada@example.com"}),
            RunOptions {
                wait: true,
                meta: RunMeta {
                    started_by: Some(kindgi_core::StartedBy::Person),
                    started_by_actor: Some("user:u1".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(
        run.output,
        Some(json!({"to": "ada@example.com", "connected": true, "echo": "***"}))
    );
    let journal = rt.journal(&run.id, None, None).await.unwrap();
    assert!(!serde_json::to_string(&journal).unwrap().contains(TOKEN));
    supervisor.stop().await;
    db.close().await;
}
