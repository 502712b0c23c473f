//! The unattended rule for a tool written with the official Python SDK (`kindgi==0.1.10`):
//! `@tool(..., needs_approval_when_unattended=True)`, indexed by the SDK's indexer, served by
//! the SDK's pack service under the real [`Supervisor`], on a SQLite database. An agent (the
//! dev stand-in model, which calls its first tool) in a scheduled run waits for a reviewer
//! and, approved, the Python handler runs once; a flow's tool step in a scheduled run is
//! refused `unattended-approval-required`; a person's run calls it straight away.
//!
//! Needs `KINDGI_REFERENCE_PYTHON` (skipped without it, failed when
//! `KINDGI_REQUIRE_REFERENCE=1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::StartedBy;
use kindgi_dev::detect::PackKind;
use kindgi_dev::prepare::prepare;
use kindgi_dev::supervisor::{ServiceSlot, Supervisor, SupervisorConfig};
use kindgi_pack_client::dispatch::{PackServiceCaller, manifest_of};
use kindgi_runtime::model::dev_echo::DevEcho;
use kindgi_runtime::{
    AgentSpec, ApprovalQuery, ApprovalStatus, DecisionInput, DecisionKind, ReviewerRole, RunMeta,
    RunOptions, RunRecord, RunStatus, Runtime,
};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PYPROJECT: &str = r#"[project]
name = "send-pack"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["kindgi==0.1.10"]

[tool.kindgi.pack]
id = "my-pack"
version = "0.1.0"
"#;

const TOOL: &str = r#"
"""my-pack.send: sends; each call appends a line to calls.txt beside the pack's tools/."""
import os
from pydantic import BaseModel
from kindgi import ToolContext, tool

class Ask(BaseModel):
    message: str

class Sent(BaseModel):
    sent: bool

@tool(id="my-pack.send", version="0.1.0", needs_approval_when_unattended=True)
def send(ask: Ask, ctx: ToolContext) -> Sent:
    """Sends a message."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "calls.txt"), "a") as f:
        f.write("my-pack.send\n")
    return Sent(sent=True)
"#;

fn reference_python() -> Option<PathBuf> {
    kindgi_spec::testing::reference_or_skip(
        "unattended_python",
        std::env::var_os("KINDGI_REFERENCE_PYTHON")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from),
        "KINDGI_REFERENCE_PYTHON is not set (source .cache/reference.env)",
    )
}

fn calls(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn options(started_by: StartedBy) -> RunOptions {
    RunOptions {
        wait: true,
        meta: RunMeta {
            started_by: Some(started_by),
            ..RunMeta::default()
        },
        ..RunOptions::default()
    }
}

async fn turn(rt: &Runtime, started_by: StartedBy) -> RunRecord {
    rt.start_agent_turn(
        "my-pack.sender",
        None,
        json!({"userMessage": "send it"}),
        options(started_by),
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_tool_needing_approval_when_unattended_waits_or_is_refused() {
    let Some(python) = reference_python() else {
        return;
    };
    let pack = tempfile::tempdir().unwrap();
    let dir = pack.path();
    std::fs::write(dir.join("pyproject.toml"), PYPROJECT).unwrap();
    std::fs::create_dir_all(dir.join("tools")).unwrap();
    std::fs::write(dir.join("tools").join("send.py"), TOOL).unwrap();
    let calls_file = dir.join("calls.txt");
    let prepared = prepare(dir, &PackKind::Python { python }, false)
        .await
        .unwrap();
    let entry = prepared
        .index
        .tools
        .iter()
        .find(|t| t.id == "my-pack.send")
        .expect("the SDK indexed the tool")
        .clone();
    let manifest = manifest_of(&entry).unwrap();
    assert!(
        manifest.needs_approval_when_unattended(),
        "the SDK wrote needsApprovalWhenUnattended: {manifest:?}"
    );

    let db_file = tempfile::tempdir().unwrap();
    let db = kindgi_store::Database::connect(&db_file.path().join("t.db").display().to_string())
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let rt = Runtime::over(db.ports()).model(Arc::new(DevEcho)).build();
    let slot = ServiceSlot::new();
    let caller = PackServiceCaller::new(slot.clone());
    let supervisor = Supervisor::start_with(prepared, dir, slot, SupervisorConfig::default())
        .await
        .unwrap();
    rt.tools().insert_pack_tool(manifest, "my-pack", caller);
    rt.agents()
        .insert(AgentSpec::new("my-pack.sender").with_tools(["my-pack.send"]));
    rt.flows()
        .insert_json(
            &json!({"id": "my-pack.send-flow", "version": "0.1.0",
                "nodes": [{"id": "send", "kind": "tool", "ref": "my-pack.send"}],
                "edges": [{"id": "e1", "from": "$start", "to": "send"}, {"id": "e2", "from": "send", "to": "$end"}]})
            .to_string(),
        )
        .unwrap();

    // A scheduled run's agent waits for a reviewer, though the agent has no approval rules.
    let run = turn(&rt, StartedBy::Schedule).await;
    assert_eq!(
        run.status,
        RunStatus::Suspended,
        "{:?}",
        run.failure_message
    );
    let open = rt
        .list_approvals(&ApprovalQuery {
            tenant_id: run.tenant_id.clone(),
            statuses: vec![ApprovalStatus::Pending],
            run_id: Some(run.id.clone()),
            limit: 5,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(open.len(), 1, "{open:?}");
    let a = &open[0];
    assert_eq!(
        a.title.as_deref(),
        Some("HITL review: my-pack.send (unattended run: needsApprovalWhenUnattended)")
    );
    assert_eq!(calls(&calls_file), 0, "the Python handler did not run");
    let done = rt
        .complete_approval(
            &a.tenant_id,
            &a.id,
            DecisionInput {
                decision: DecisionKind::Approve,
                rationale: None,
                decided_by: "user:rita".into(),
                reviewer_id: "rita".into(),
                reviewer_role: ReviewerRole::Admin,
            },
        )
        .await
        .unwrap();
    assert_eq!(done.run_status, Some(RunStatus::Completed));
    assert_eq!(calls(&calls_file), 1, "approved, it ran once");

    // A scheduled flow's tool step is refused; a person's runs call it.
    let refused = rt
        .start_run(
            "my-pack.send-flow",
            None,
            json!({"message": "hi"}),
            options(StartedBy::Schedule),
        )
        .await
        .unwrap();
    assert_eq!(refused.status, RunStatus::Failed);
    assert!(
        refused
            .failure_message
            .as_deref()
            .unwrap()
            .starts_with("unattended-approval-required: tool \"my-pack.send\" needs a person's yes in a run no person started (needsApprovalWhenUnattended); this run was started by schedule"),
        "{:?}",
        refused.failure_message
    );
    assert_eq!(calls(&calls_file), 1);
    let by_person = rt
        .start_run(
            "my-pack.send-flow",
            None,
            json!({"message": "hi"}),
            options(StartedBy::Person),
        )
        .await
        .unwrap();
    assert_eq!(
        by_person.status,
        RunStatus::Completed,
        "{:?}",
        by_person.failure_message
    );
    let run = turn(&rt, StartedBy::Person).await;
    assert_eq!(
        run.status,
        RunStatus::Completed,
        "{:?}",
        run.failure_message
    );
    assert_eq!(calls(&calls_file), 3);
    supervisor.stop().await;
    db.close().await;
}
