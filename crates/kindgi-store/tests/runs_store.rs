//! `kindgi_store::runs` on SQLite and PostgreSQL, through core's `RunStore` port: a table
//! from before the newer columns is migrated in place (old rows kept, new columns empty) and
//! migrating again is harmless; every field of a record round-trips; list filters (the
//! agent's and trigger's filterable copies included) and the `(created_at, id)` cursor; the
//! journal's reads, and the port's typed errors (a duplicate sequence, an update of no run,
//! a known id, a row core cannot read).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::ports::{ReplayFilter, RunQuery, RunStore};
use kindgi_core::run::{
    JournalEntry, JournalKind, RunAgent, RunMeta, RunRecord, RunStatus, Segment,
};
use kindgi_core::{StorageError, format_millis};
use kindgi_store::DatabaseKind;
use kindgi_store::runs::RunsStore;
use kindgi_store::testing::TestDatabase;
use serde_json::json;

const OLD_TABLE: &str = "CREATE TABLE runs (
    id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, flow_id TEXT NOT NULL, flow_version TEXT NOT NULL,
    status TEXT NOT NULL, dry_run BOOLEAN NOT NULL DEFAULT FALSE, input TEXT NOT NULL, output TEXT,
    failure_message TEXT, parent_run_id TEXT, parent_node_id TEXT, options TEXT,
    created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, completed_at BIGINT)";

fn run(id: &str, created_at: i64) -> RunRecord {
    RunRecord {
        id: id.into(),
        tenant_id: "acme".into(),
        flow_id: "f".into(),
        flow_version: "1.0.0".into(),
        status: RunStatus::Completed,
        input: json!({"a": 1}),
        output: None,
        failure_message: None,
        dry_run: false,
        created_at: format_millis(created_at),
        updated_at: format_millis(created_at),
        completed_at: None,
        parent_run_id: None,
        parent_node_id: None,
        meta: RunMeta::default(),
    }
}

fn agent(id: &str) -> RunAgent {
    RunAgent {
        id: id.into(),
        version: "1.0.0".into(),
        conversation_id: Some("c1".into()),
        via: Some("latest".into()),
    }
}

fn entry(sequence: u64, kind: JournalKind) -> JournalEntry {
    JournalEntry {
        sequence,
        kind,
        node_id: Some("n".into()),
        scope: (sequence == 2).then(|| "loop#0".into()),
        payload: Some(json!({"n": sequence})),
        timestamp: format_millis(1_767_322_245_000 + i64::try_from(sequence).unwrap()),
    }
}

async fn exec(db: &kindgi_store::Database, sql: &str) {
    kindgi_store::on_pool!(db, write, |pool| sqlx::query(sql)
        .execute(pool)
        .await
        .map(|_| ()))
    .unwrap();
}

async fn old_tables_are_migrated(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    exec(&t.db, "DROP TABLE runs").await;
    exec(&t.db, OLD_TABLE).await;
    exec(
        &t.db,
        "INSERT INTO runs (id, tenant_id, flow_id, flow_version, status, dry_run, input, created_at, updated_at) VALUES ('old', 'acme', 'f', '1.0.0', 'completed', FALSE, '{}', 1, 1)",
    )
    .await;
    t.db.migrate().await.unwrap();
    t.db.migrate().await.unwrap();
    let store = RunsStore::new(t.db.clone());
    let old = store.get_run("old").await.unwrap().unwrap();
    assert_eq!(old.meta, RunMeta::default());
    assert_eq!(old.created_at, format_millis(1));
    let mut new = run("new", 2);
    new.meta = RunMeta {
        project_id: Some("p".into()),
        segments: vec![Segment {
            key: "company".into(),
            value: "acme".into(),
        }],
        trace_id: Some("0af7651916cd43dd8448eb211c80319c".into()),
        started_by: Some(kindgi_core::StartedBy::Person),
        started_by_actor: Some("user:u1".into()),
        agent: Some(agent("a")),
        trigger: Some(kindgi_core::RunTrigger {
            trigger_id: "t".into(),
            kind: kindgi_core::TriggerKind::Schedule,
            fire_id: "x".into(),
            scheduled_for: Some(format_millis(2)),
        }),
        unattended: kindgi_core::Unattended {
            tools_allowed: vec!["acme.send".into()],
            mailbox: Some(kindgi_core::Mailbox {
                address: "orders@acme.test".into(),
                app: "google".into(),
                whose: kindgi_spec::tool::ConnectionOwner::Company,
            }),
        },
        replay_of: Some("old".into()),
        eval_run_id: Some("e".into()),
    };
    new.dry_run = true;
    new.output = Some(json!({"out": [1, 2]}));
    new.failure_message = Some("partly".into());
    new.completed_at = Some(format_millis(3));
    new.parent_run_id = Some("old".into());
    new.parent_node_id = Some("node".into());
    store.insert_run(&new).await.unwrap();
    assert_eq!(store.get_run("new").await.unwrap().unwrap(), new);
    t.cleanup().await.unwrap();
}

async fn lists_filter_and_page(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = RunsStore::new(t.db.clone());
    // Two runs share a createdAt: the id breaks the tie.
    for (id, at) in [("a", 10), ("b", 20), ("c", 20), ("d", 30)] {
        let mut r = run(id, at);
        if id == "b" {
            r.status = RunStatus::Failed;
            r.meta.agent = Some(agent("ag"));
            r.meta.trigger = Some(kindgi_core::RunTrigger {
                trigger_id: "t1".into(),
                kind: kindgi_core::TriggerKind::Webhook,
                fire_id: "f-t1".into(),
                scheduled_for: None,
            });
        }
        if id == "c" {
            // Another trigger, and an agent of another id: the filters tell them apart.
            r.meta.agent = Some(agent("other"));
            r.meta.trigger = Some(kindgi_core::RunTrigger {
                trigger_id: "t2".into(),
                kind: kindgi_core::TriggerKind::Webhook,
                fire_id: "f-t2".into(),
                scheduled_for: None,
            });
        }
        if id == "d" {
            r.meta.replay_of = Some("a".into());
            r.parent_run_id = Some("a".into());
        }
        store.insert_run(&r).await.unwrap();
    }
    let ids = |v: Vec<RunRecord>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = RunQuery::default();
    assert_eq!(
        ids(store.list_runs(&all).await.unwrap()),
        ["d", "c", "b", "a"]
    );
    let page = RunQuery {
        after: Some((20, "c".into())),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&page).await.unwrap()), ["b", "a"]);
    let f = RunQuery {
        replays: ReplayFilter::Exclude,
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["c", "b", "a"]);
    let f = RunQuery {
        replays: ReplayFilter::Only,
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["d"]);
    let f = RunQuery {
        statuses: vec![RunStatus::Failed, RunStatus::Cancelled],
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["b"]);
    let f = RunQuery {
        agent_id: Some("ag".into()),
        agent_version: Some("1.0.0".into()),
        trigger_id: Some("t1".into()),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["b"]);
    let f = RunQuery {
        trigger_id: Some("t2".into()),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["c"]);
    let f = RunQuery {
        created_after: Some(10),
        created_before: Some(30),
        limit: Some(1),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["c"]);
    let f = RunQuery {
        top_level_only: true,
        tenant_id: Some("acme".into()),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["c", "b", "a"]);
    let f = RunQuery {
        parent_run_id: Some("a".into()),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["d"]);
    let f = RunQuery {
        tenant_id: Some("other".into()),
        ..all
    };
    assert!(store.list_runs(&f).await.unwrap().is_empty());
    t.cleanup().await.unwrap();
}

async fn journals_and_typed_errors(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = RunsStore::new(t.db.clone());
    let mut r = run("r1", 5);
    r.status = RunStatus::Running;
    store.insert_run(&r).await.unwrap();
    let known = store.insert_run(&r).await.unwrap_err();
    assert!(
        matches!(
            known,
            StorageError::Conflict {
                op: "runs.insert_run",
                ..
            }
        ),
        "{known}"
    );

    let entries = [
        entry(1, JournalKind::RunStarted),
        entry(2, JournalKind::StepStarted),
        entry(3, JournalKind::StepCompleted),
    ];
    store.append(&r.id, &entries[..1]).await.unwrap();
    // Two entries and the run's new state in one commit.
    r.status = RunStatus::Completed;
    r.output = Some(json!({"done": true}));
    r.updated_at = format_millis(9);
    r.completed_at = Some(format_millis(9));
    store
        .append_and_update(&r.id, &entries[1..], Some(&r))
        .await
        .unwrap();
    assert_eq!(store.get_run("r1").await.unwrap().unwrap(), r);
    assert_eq!(store.journal("r1", None, None).await.unwrap(), entries);
    assert_eq!(
        store.journal("r1", Some(1), Some(1)).await.unwrap(),
        entries[1..2]
    );
    assert!(store.journal("r1", Some(3), None).await.unwrap().is_empty());
    assert!(store.journal("nope", None, None).await.unwrap().is_empty());

    // A sequence already there: nothing of the commit lands, the run's row included.
    let mut stale = r.clone();
    stale.status = RunStatus::Failed;
    let dup = store
        .append_and_update(
            &r.id,
            &[
                entry(4, JournalKind::StepStarted),
                entry(3, JournalKind::RunFailed),
            ],
            Some(&stale),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&dup, StorageError::DuplicateSequence { run_id, .. } if run_id == "r1"),
        "{dup}"
    );
    assert_eq!(store.journal("r1", None, None).await.unwrap(), entries);
    assert_eq!(store.get_run("r1").await.unwrap().unwrap(), r);

    let missing = store.update_run(&run("nope", 1)).await.unwrap_err();
    assert!(
        matches!(&missing, StorageError::NotFound { op: "runs.update_run", what } if what == "run nope"),
        "{missing}"
    );
    assert!(store.get_run("nope").await.unwrap().is_none());

    // Rows core cannot read are corrupt, naming the row.
    exec(&t.db, "UPDATE runs SET status = 'weird' WHERE id = 'r1'").await;
    let bad = store.get_run("r1").await.unwrap_err();
    assert_eq!(
        bad.to_string(),
        "stored data for run r1 is corrupt: unknown status \"weird\""
    );
    let bad = store.list_runs(&RunQuery::default()).await.unwrap_err();
    assert!(matches!(bad, StorageError::Corrupt { .. }), "{bad}");
    exec(
        &t.db,
        "UPDATE run_journal SET kind = 'odd' WHERE sequence = 2",
    )
    .await;
    let bad = store.journal("r1", None, None).await.unwrap_err();
    assert_eq!(
        bad.to_string(),
        "stored data for journal entry r1#2 is corrupt: unknown kind \"odd\""
    );
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_old_tables_are_migrated() {
    old_tables_are_migrated(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_old_tables_are_migrated() {
    old_tables_are_migrated(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn sqlite_lists_filter_and_page() {
    lists_filter_and_page(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_lists_filter_and_page() {
    lists_filter_and_page(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn sqlite_journals_and_typed_errors() {
    journals_and_typed_errors(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_journals_and_typed_errors() {
    journals_and_typed_errors(DatabaseKind::Postgres).await;
}
