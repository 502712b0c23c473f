//! Restart safety: a runtime killed mid-run (its tokio runtime shut down under it) and a new
//! one started on the same database finish the run from its journal, and no step journaled
//! as completed runs twice — on SQLite and on PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_runtime::{JournalKind, RunOptions, RunStatus, Runtime};
use kindgi_store::testing::TestDatabase;
use kindgi_store::{Database, DatabaseKind};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{counting_tool, tool};

#[derive(Clone, Default)]
struct Counters {
    setup: Arc<AtomicUsize>,
    per_item: Arc<Mutex<HashMap<i64, usize>>>,
    finish: Arc<AtomicUsize>,
    /// While set, the body blocks on item 2 (the "crash" happens then).
    block: Arc<AtomicBool>,
}

fn durable_runtime(db: Database, c: &Counters) -> Runtime {
    let rt = Runtime::over(db.ports()).build();
    rt.tools().insert_tool(counting_tool(
        "t.setup",
        json!({"mutating": false}),
        c.setup.clone(),
        |_| json!({"items": [1, 2, 3]}),
    ));
    let (per_item, block) = (c.per_item.clone(), c.block.clone());
    rt.tools().insert_tool(tool(
        "t.item",
        // Mutating (the default): its completion is stored before the next step starts.
        json!({"input": {}}),
        move |v: Value| {
            let (per_item, block) = (per_item.clone(), block.clone());
            async move {
                let n = v.as_i64().unwrap_or(-1);
                *per_item.lock().unwrap().entry(n).or_default() += 1;
                if n == 2 && block.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_secs(600)).await;
                }
                Ok(json!({"v": n * 10}))
            }
        },
    ));
    rt.tools().insert_tool(counting_tool("t.finish", json!({"mutating": false}), c.finish.clone(), |v| json!({"total": v["outputs"].as_array().map(|a| a.iter().map(|o| o["v"].as_i64().unwrap_or(0)).sum::<i64>())})));
    let flow = json!({
        "id": "t.durable", "version": "1.0.0",
        "nodes": [
            {"id": "setup", "kind": "tool", "ref": "t.setup"},
            {"id": "each", "kind": "loop", "loopKind": "foreach", "iterateOver": {"path": "nodeOutputs.setup.items"},
             "maxIterations": 10, "collectAllIterations": true, "outputSchema": {"type": "object"},
             "body": {"nodes": [{"id": "item", "kind": "tool", "ref": "t.item"}],
                      "edges": [{"id": "b1", "from": "$loop-start", "to": "item"}, {"id": "b2", "from": "item", "to": "$loop-end"}]}},
            {"id": "finish", "kind": "tool", "ref": "t.finish"}
        ],
        "edges": [
            {"id": "e1", "from": "$start", "to": "setup"},
            {"id": "e2", "from": "setup", "to": "each"},
            {"id": "e3", "from": "each", "to": "finish"},
            {"id": "e4", "from": "finish", "to": "$end"}
        ]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    rt
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn kill_and_recover(kind: DatabaseKind) {
    let c = Counters::default();
    c.block.store(true, Ordering::SeqCst);
    let first = tokio_rt();
    let (tdb, run_id) = first.block_on(async {
        let tdb = TestDatabase::new(kind).await.expect("test database");
        let rt = durable_runtime(tdb.db.clone(), &c);
        let run = rt
            .start_run("t.durable", None, json!({}), RunOptions::default())
            .await
            .unwrap();
        // Wait until the body is stuck in item 2 (items 1 done, 2 started).
        for _ in 0..500 {
            if c.per_item.lock().unwrap().get(&2).copied().unwrap_or(0) > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            c.per_item.lock().unwrap().get(&2).copied(),
            Some(1),
            "the run reached item 2"
        );
        // Let the journal write of item 2's step.started land.
        tokio::time::sleep(Duration::from_millis(50)).await;
        (tdb, run.id)
    });
    // The crash: every task of the first runtime stops where it is.
    first.shutdown_background();

    let second = tokio_rt();
    second.block_on(async {
        c.block.store(false, Ordering::SeqCst);
        let db = tdb.reopen().await.unwrap();
        let rt = durable_runtime(db.clone(), &c);
        let before = rt.get_run(&run_id).await.unwrap();
        assert_eq!(
            before.status,
            RunStatus::Running,
            "the killed run was left running"
        );
        let resumed = rt.recover().await.unwrap();
        assert_eq!(resumed, vec![run_id.clone()]);
        let run = tokio::time::timeout(Duration::from_secs(30), rt.wait_for_run(&run_id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            run.status,
            RunStatus::Completed,
            "{:?}",
            run.failure_message
        );
        assert_eq!(run.output, Some(json!({"total": 60})));
        assert_eq!(
            c.setup.load(Ordering::SeqCst),
            1,
            "setup completed before the crash: not run again"
        );
        let per_item = c.per_item.lock().unwrap().clone();
        assert_eq!(
            per_item.get(&1),
            Some(&1),
            "item 1 completed before the crash: not run again"
        );
        assert_eq!(
            per_item.get(&2),
            Some(&2),
            "item 2 was in flight: it runs again"
        );
        assert_eq!(per_item.get(&3), Some(&1));
        assert_eq!(c.finish.load(Ordering::SeqCst), 1);
        let j = rt.journal(&run_id, None, None).await.unwrap();
        let completed = |node: &str| {
            j.iter()
                .filter(|e| {
                    e.kind == JournalKind::StepCompleted && e.node_id.as_deref() == Some(node)
                })
                .count()
        };
        assert_eq!(completed("setup"), 1);
        assert_eq!(completed("item"), 3);
        assert_eq!(completed("each"), 1);
        assert_eq!(
            j.iter()
                .filter(|e| e.kind == JournalKind::RunStarted)
                .count(),
            1
        );
        let seqs: Vec<u64> = j.iter().map(|e| e.sequence).collect();
        assert_eq!(
            seqs,
            (1..=seqs.len() as u64).collect::<Vec<_>>(),
            "one gapless journal"
        );
        // Nothing left to recover.
        assert!(rt.recover().await.unwrap().is_empty());
        if let Some(schema) = tdb.schema() {
            sqlx::query(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
                .execute(db.postgres().unwrap())
                .await
                .unwrap();
        }
        db.close().await;
    });
    drop(tdb);
}

#[test]
fn a_killed_run_finishes_after_restart_on_sqlite() {
    kill_and_recover(DatabaseKind::Sqlite);
}

#[test]
fn a_killed_run_finishes_after_restart_on_postgres() {
    kill_and_recover(DatabaseKind::Postgres);
}
