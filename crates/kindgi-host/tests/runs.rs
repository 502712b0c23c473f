//! Runs end to end on every store (memory, SQLite, PostgreSQL): a three-step flow and its
//! journal, and a dry run stopping at the first effectful tool. The other run tests (edge
//! policies, loops, fanout, sub-flows, bad input, cancellation) are kindgi-runtime's, on the
//! memory store; this half is here because the database runtimes are the host's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../kindgi-runtime/tests/support/runs.rs"]
mod fixture;
mod support;

use fixture::{chain, dry, kinds, wait};
use kindgi_runtime::RunStatus;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{ALL, Backend, builder, cleanup, counting_tool, read_only};

async fn three_steps(backend: Backend) {
    let (b, db) = builder(backend).await;
    let rt = b.build();
    let calls = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "t.add",
        read_only(),
        calls.clone(),
        |v| json!({"n": v["n"].as_i64().unwrap_or(0) + 1}),
    ));
    rt.flows()
        .insert_json(&chain("t.three", &["t.add", "t.add", "t.add"]).to_string())
        .unwrap();
    let run = rt
        .start_run("t.three", None, json!({"n": 1}), wait())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(run.output, Some(json!({"n": 4})));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    let wire = serde_json::to_value(&run).unwrap();
    for field in [
        "id",
        "status",
        "dryRun",
        "output",
        "flowId",
        "flowVersion",
        "createdAt",
        "updatedAt",
        "completedAt",
    ] {
        assert!(wire.get(field).is_some(), "{field} missing in {wire}");
    }
    assert_eq!(wire["status"], "completed");
    assert_eq!(wire["dryRun"], false);
    assert!(wire.get("failureMessage").is_none());
    let j = rt.journal(&run.id, None, None).await.unwrap();
    assert_eq!(
        kinds(&j),
        [
            "run.started",
            "edge.evaluated",
            "step.started n1",
            "step.completed n1",
            "edge.evaluated",
            "step.started n2",
            "step.completed n2",
            "edge.evaluated",
            "step.started n3",
            "step.completed n3",
            "edge.evaluated",
            "run.completed",
        ]
    );
    assert_eq!(
        j.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        (1..=12).collect::<Vec<u64>>()
    );
    assert_eq!(j[0].payload, Some(json!({"input": {"n": 1}})));
    assert_eq!(
        j[1].payload,
        Some(json!({"edgeId": "e1", "decision": "taken"}))
    );
    assert_eq!(j[5].payload, Some(json!({"input": {"n": 2}})));
    assert_eq!(j[11].payload, Some(json!({"output": {"n": 4}})));
    // Paging.
    let tail = rt.journal(&run.id, Some(10), Some(1)).await.unwrap();
    assert_eq!(tail.len(), 1);
    assert_eq!(tail[0].sequence, 11);
    // The stored record reads back the same.
    assert_eq!(rt.get_run(&run.id).await.unwrap(), run);
    cleanup(db).await;
}

#[tokio::test]
async fn a_three_step_flow_completes_with_its_journal_on_every_store() {
    for b in ALL {
        three_steps(b).await;
    }
}

const REFUSAL: &str = "dry-run-effectful-tool: tool \"acme.email-customer\" is not declared read-only (mutating: false), so it does not run in a dry run";

async fn dry_run_refusal(backend: Backend) {
    let (b, db) = builder(backend).await;
    let rt = b.build();
    let gets = Arc::new(AtomicUsize::new(0));
    let emails = Arc::new(AtomicUsize::new(0));
    rt.tools().insert_tool(counting_tool(
        "acme.get-order",
        json!({"mutating": false, "effects": []}),
        gets.clone(),
        |v| json!({"orderId": v["orderId"], "email": "a@b.c"}),
    ));
    rt.tools().insert_tool(counting_tool(
        "acme.email-customer",
        json!({}),
        emails.clone(),
        |_| json!({"sent": true}),
    ));
    let flow = json!({
        "id": "acme.notify", "version": "1.0.0",
        "nodes": [
            {"id": "get", "kind": "tool", "ref": "acme.get-order"},
            {"id": "email", "kind": "tool", "ref": "acme.email-customer", "inputMapping": {"to": {"path": "nodeOutputs.get.email"}}}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "get"},
            {"id": "e2", "from": "get", "to": "email"},
            {"id": "e3", "from": "email", "to": "$end"}
        ]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let run = rt
        .start_run("acme.notify", None, json!({"orderId": "o1"}), dry())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert!(run.dry_run);
    assert_eq!(run.failure_message.as_deref(), Some(REFUSAL));
    assert_eq!(
        gets.load(Ordering::SeqCst),
        1,
        "everything before the refusal really ran"
    );
    assert_eq!(
        emails.load(Ordering::SeqCst),
        0,
        "the effectful tool is never called"
    );
    let j = rt.journal(&run.id, None, None).await.unwrap();
    assert_eq!(
        kinds(&j),
        [
            "run.started",
            "edge.evaluated",
            "step.started get",
            "step.completed get",
            "edge.evaluated",
            "step.started email",
            "step.failed email",
            "run.failed",
        ]
    );
    assert_eq!(j[5].payload, Some(json!({"input": {"to": "a@b.c"}})));
    assert_eq!(j[6].payload, Some(json!({"message": REFUSAL})));
    let wire = serde_json::to_value(rt.get_run(&run.id).await.unwrap()).unwrap();
    assert_eq!(wire["status"], "failed");
    assert_eq!(wire["dryRun"], true);
    assert_eq!(wire["failureMessage"], REFUSAL);

    // A live run of the same flow runs both.
    let live = rt
        .start_run("acme.notify", None, json!({"orderId": "o1"}), wait())
        .await
        .unwrap();
    assert_eq!(live.status, RunStatus::Completed);
    assert!(!live.dry_run);
    assert_eq!(emails.load(Ordering::SeqCst), 1);
    cleanup(db).await;
}

#[tokio::test]
async fn a_dry_run_stops_at_the_first_effectful_tool_on_every_store() {
    for b in ALL {
        dry_run_refusal(b).await;
    }
}
