//! The persistent registry passes the same conformance suite as the in-memory one, on
//! SQLite and on PostgreSQL, and survives a restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tools::StoreRegistry;
use kindgi_tools::registry::conformance::{self, manifest};
use kindgi_tools::registry::{RegisterOptions, ToolRegistry};

async fn suite(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    conformance::run(&StoreRegistry::new(t.db.clone())).await;
    t.cleanup().await.unwrap();
}

async fn survives_restart(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let m = manifest("acme.persist", "1.2.3");
    StoreRegistry::new(t.db.clone())
        .register("t", &m, RegisterOptions::default())
        .await
        .unwrap();
    t.db.close().await;
    let reopened = t.reopen().await.unwrap();
    let got = StoreRegistry::new(reopened.clone())
        .get_version("t", "acme.persist", "1.2.3")
        .await
        .unwrap();
    assert_eq!(got.manifest().unwrap(), m);
    reopened.close().await;
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_registry_conformance() {
    suite(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_registry_conformance() {
    suite(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn sqlite_registry_survives_restart() {
    survives_restart(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_registry_survives_restart() {
    survives_restart(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn sqlite_concurrent_registrations_are_serialized() {
    concurrent_registrations(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_concurrent_registrations_are_serialized() {
    concurrent_registrations(DatabaseKind::Postgres).await;
}

async fn concurrent_registrations(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let r = StoreRegistry::new(t.db.clone());
    let mut tasks = Vec::new();
    for i in 0..32 {
        let r = r.clone();
        tasks.push(tokio::spawn(async move {
            // Half of them race on the same version.
            let v = if i % 2 == 0 {
                "1.0.0".to_owned()
            } else {
                format!("1.{i}.0")
            };
            r.register("t", &manifest("acme.race", &v), RegisterOptions::default())
                .await
        }));
    }
    let mut ok = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => ok += 1,
            Err(e) => assert_eq!(e.code(), "duplicate-tool-version"),
        }
    }
    assert_eq!(ok, 17, "16 distinct versions plus exactly one 1.0.0");
    assert_eq!(r.versions("t", "acme.race", false).await.unwrap().len(), 17);
    // Racing on a new id from two projects: exactly one project wins the id.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let r = r.clone();
        tasks.push(tokio::spawn(async move {
            let options = RegisterOptions {
                project_id: Some(format!("p{}", i % 2)),
                retired: false,
            };
            r.register(
                "t",
                &manifest("acme.contested", &format!("1.{i}.0")),
                options,
            )
            .await
        }));
    }
    let mut projects = std::collections::HashSet::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(rec) => {
                projects.insert(rec.project_id);
            }
            Err(e) => assert_eq!(e.code(), "tool-project-mismatch"),
        }
    }
    assert_eq!(projects.len(), 1, "{projects:?}");
    t.cleanup().await.unwrap();
}
