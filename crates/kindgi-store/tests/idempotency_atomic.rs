//! An idempotent answer commits in the same transaction as the write it guards: a register
//! that commits records the answer, one that fails records neither, and a key already
//! recorded makes the write a no-op (replay that answer instead). SQLite and PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_store::DatabaseKind;
use kindgi_store::idempotency::{AnswerToRecord, IdempotencyStore};
use kindgi_store::testing::TestDatabase;
use kindgi_store::tools::StoreRegistry;
use kindgi_tools::registry::conformance::manifest;
use kindgi_tools::registry::{RegisterOptions, RegistryError, ToolRegistry};

fn answer(key: &str, hash: &str, body: &str) -> AnswerToRecord {
    AnswerToRecord {
        tenant: "t".into(),
        key: key.into(),
        request_hash: hash.into(),
        status: 201,
        body: body.into(),
    }
}

async fn write_and_answer_commit_together(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let registry = StoreRegistry::new(t.db.clone());
    let keys = IdempotencyStore::new(t.db.clone());
    let m = manifest("acme.atomic", "1.0.0");

    // Commits: the version and the answer are both there.
    let first = answer("k1", "h1", r#"{"toolId":"acme.atomic","version":"1.0.0"}"#);
    let record = registry
        .register_answered("t", &m, RegisterOptions::default(), &first)
        .await
        .unwrap();
    assert!(record.is_some());
    registry
        .get_version("t", "acme.atomic", "1.0.0")
        .await
        .unwrap();
    let stored = keys
        .lookup("t", "k1")
        .await
        .unwrap()
        .expect("answer stored");
    assert_eq!(
        (stored.status, stored.body.as_str()),
        (201, first.body.as_str())
    );
    assert_eq!(stored.request_hash, "h1");

    // Fails (the version exists): no answer is left behind for the new key.
    let dup = answer("k2", "h2", "{}");
    let e = registry
        .register_answered("t", &m, RegisterOptions::default(), &dup)
        .await
        .unwrap_err();
    assert!(matches!(e, RegistryError::DuplicateVersion { .. }), "{e:?}");
    assert_eq!(keys.lookup("t", "k2").await.unwrap(), None);

    // A key already recorded: nothing is written, the caller replays.
    let m2 = manifest("acme.atomic", "2.0.0");
    let again = answer("k1", "h1", "{}");
    let none = registry
        .register_answered("t", &m2, RegisterOptions::default(), &again)
        .await
        .unwrap();
    assert!(none.is_none());
    assert!(
        registry
            .get_version("t", "acme.atomic", "2.0.0")
            .await
            .is_err(),
        "a write whose key was taken must roll back"
    );
    let stored = keys.lookup("t", "k1").await.unwrap().unwrap();
    assert_eq!(stored.body, first.body, "the first answer is kept");

    // Answers survive a restart.
    t.db.close().await;
    let reopened = t.reopen().await.unwrap();
    let stored = IdempotencyStore::new(reopened.clone())
        .lookup("t", "k1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.body, first.body);
    reopened.close().await;
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_write_and_answer_commit_together() {
    write_and_answer_commit_together(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_write_and_answer_commit_together() {
    write_and_answer_commit_together(DatabaseKind::Postgres).await;
}
