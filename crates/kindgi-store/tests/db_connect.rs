//! The Database handle on both backends: connect, migrate twice, kind, tokens.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyStatus, TokenError, TokenStore};
use kindgi_store::{Database, DatabaseKind, StoreError};

async fn tokens_round_trip(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    assert_eq!(t.db.kind(), kind);
    // Migrating again is a no-op.
    t.db.migrate().await.unwrap();
    let store = TokenStore::new(t.db.clone());
    let created = store.create("acme", None).await.unwrap();
    assert!(created.key.starts_with("kgi_"));
    assert_eq!(created.key.len(), 4 + 43);
    match store.authenticate(&created.key).await.unwrap() {
        KeyStatus::Valid {
            tenant,
            key_id,
            principal,
            key,
        } => {
            assert_eq!(
                (tenant.as_str(), key_id.as_str()),
                ("acme", created.key_id.as_str())
            );
            assert_eq!(
                principal,
                Some(kindgi_store::tokens::Principal::user(
                    kindgi_store::tokens::operator_user_id("acme")
                ))
            );
            assert!(key.tenant_admin);
            assert_eq!(key.record.token_id, created.token_id);
            assert_eq!(key.record.started_by(), "person");
        }
        other => panic!("not valid: {other:?}"),
    }
    assert_eq!(
        store.authenticate("kgi_nope").await.unwrap(),
        KeyStatus::Unknown
    );
    assert_eq!(
        store.authenticate("' OR 1=1 --").await.unwrap(),
        KeyStatus::Unknown
    );
    let other = store.create("acme", Some(1)).await.unwrap();
    assert_eq!(
        store.authenticate(&other.key).await.unwrap(),
        KeyStatus::Expired
    );
    store.revoke(&created.key_id).await.unwrap();
    store.revoke(&created.key_id).await.unwrap();
    assert_eq!(
        store.authenticate(&created.key).await.unwrap(),
        KeyStatus::Revoked
    );
    assert!(matches!(
        store.revoke("nope").await,
        Err(TokenError::UnknownKey { .. })
    ));
    assert!(matches!(
        store.create("bad tenant", None).await,
        Err(TokenError::InvalidTenant { .. })
    ));
    assert!(matches!(
        store.create("", None).await,
        Err(TokenError::InvalidTenant { .. })
    ));
    // A second handle (a restart) sees the same rows.
    let again = t.reopen().await.unwrap();
    let key = store.create("beta", None).await.unwrap();
    assert!(matches!(
        TokenStore::new(again.clone()).authenticate(&key.key).await.unwrap(),
        KeyStatus::Valid { tenant, .. } if tenant == "beta"
    ));
    again.close().await;
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_tokens_round_trip() {
    tokens_round_trip(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_tokens_round_trip() {
    tokens_round_trip(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn sqlite_file_is_created_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let db = Database::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    db.migrate().await.unwrap();
    assert!(path.exists());
    let pools = db.sqlite().unwrap();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&pools.reader)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(&pools.writer)
        .await
        .unwrap();
    assert_eq!(fk, 1);
    // Readers refuse writes.
    let err = sqlx::query("INSERT INTO api_keys VALUES ('h','i','t',0,NULL,NULL)")
        .execute(&pools.reader)
        .await;
    assert!(err.is_err());
    db.close().await;
}

#[tokio::test]
async fn in_memory_sqlite_works() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    db.migrate().await.unwrap();
    let store = TokenStore::new(db);
    let k = store.create("t", None).await.unwrap();
    assert!(matches!(
        store.authenticate(&k.key).await.unwrap(),
        KeyStatus::Valid { .. }
    ));
}

#[tokio::test]
async fn bad_urls_are_clear_errors() {
    let err = Database::connect("mysql://x@y/z").await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidUrl { .. }));
    assert!(err.to_string().contains("not supported"), "{err}");
    let err = Database::connect("/nonexistent-dir-kindgi/x/y.db")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Connect { .. }), "{err}");
    let err = Database::connect("postgres://postgres@127.0.0.1:1/test")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Connect { .. }), "{err}");
}

#[tokio::test]
async fn abandoned_test_schemas_are_dropped() {
    let t = TestDatabase::postgres().await.unwrap();
    let schema = t.schema().unwrap().to_owned();
    let probe = Database::connect(&kindgi_store::testing::postgres_test_url())
        .await
        .unwrap();
    let count = |probe: Database, schema: String| async move {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_namespace WHERE nspname = $1")
            .bind(schema)
            .fetch_one(probe.postgres().unwrap())
            .await
            .unwrap();
        n
    };
    assert_eq!(count(probe.clone(), schema.clone()).await, 1);
    drop(t); // no cleanup(): Drop removes it
    assert_eq!(count(probe.clone(), schema).await, 0);
    probe.close().await;
}
