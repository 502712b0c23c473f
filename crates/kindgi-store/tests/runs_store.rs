//! `kindgi_store::runs` on SQLite and PostgreSQL: a table from before the newer columns is
//! migrated in place (old rows kept, new columns empty) and migrating again is harmless;
//! every column round-trips; list filters and the `(created_at, id)` cursor.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_store::DatabaseKind;
use kindgi_store::runs::{ReplayFilter, RunFilter, RunsStore, StoredRun};
use kindgi_store::testing::TestDatabase;
use serde_json::json;

const OLD_TABLE: &str = "CREATE TABLE runs (
    id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, flow_id TEXT NOT NULL, flow_version TEXT NOT NULL,
    status TEXT NOT NULL, dry_run BOOLEAN NOT NULL DEFAULT FALSE, input TEXT NOT NULL, output TEXT,
    failure_message TEXT, parent_run_id TEXT, parent_node_id TEXT, options TEXT,
    created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, completed_at BIGINT)";

fn run(id: &str, created_at: i64) -> StoredRun {
    StoredRun {
        id: id.into(),
        tenant_id: "acme".into(),
        flow_id: "f".into(),
        flow_version: "1.0.0".into(),
        status: "completed".into(),
        input: json!({"a": 1}),
        created_at,
        updated_at: created_at,
        ..StoredRun::default()
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
    assert_eq!(old.project_id, None);
    assert_eq!(old.started_by, None);
    let mut new = run("new", 2);
    new.project_id = Some("p".into());
    new.segments = Some(json!([{"key": "company", "value": "acme"}]));
    new.trace_id = Some("0af7651916cd43dd8448eb211c80319c".into());
    new.started_by = Some("person".into());
    new.agent = Some(json!({"id": "a", "version": "1.0.0"}));
    new.agent_id = Some("a".into());
    new.agent_version = Some("1.0.0".into());
    new.trigger = Some(json!({"triggerId": "t", "kind": "schedule", "fireId": "x"}));
    new.trigger_id = Some("t".into());
    new.replay_of = Some("old".into());
    new.eval_run_id = Some("e".into());
    new.dry_run = true;
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
            r.status = "failed".into();
            r.agent_id = Some("ag".into());
            r.trigger_id = Some("t1".into());
        }
        if id == "d" {
            r.replay_of = Some("a".into());
            r.parent_run_id = Some("a".into());
        }
        store.insert_run(&r).await.unwrap();
    }
    let ids = |v: Vec<StoredRun>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = RunFilter::default();
    assert_eq!(
        ids(store.list_runs(&all).await.unwrap()),
        ["d", "c", "b", "a"]
    );
    let page = RunFilter {
        after: Some((20, "c".into())),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&page).await.unwrap()), ["b", "a"]);
    let f = RunFilter {
        replays: ReplayFilter::Exclude,
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["c", "b", "a"]);
    let f = RunFilter {
        replays: ReplayFilter::Only,
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["d"]);
    let f = RunFilter {
        statuses: vec!["failed".into(), "cancelled".into()],
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["b"]);
    let f = RunFilter {
        agent_id: Some("ag".into()),
        trigger_id: Some("t1".into()),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["b"]);
    let f = RunFilter {
        created_after: Some(10),
        created_before: Some(30),
        limit: Some(1),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["c"]);
    let f = RunFilter {
        top_level_only: true,
        tenant_id: Some("acme".into()),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["c", "b", "a"]);
    let f = RunFilter {
        parent_run_id: Some("a".into()),
        ..all.clone()
    };
    assert_eq!(ids(store.list_runs(&f).await.unwrap()), ["d"]);
    let f = RunFilter {
        tenant_id: Some("other".into()),
        ..all
    };
    assert!(store.list_runs(&f).await.unwrap().is_empty());
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
