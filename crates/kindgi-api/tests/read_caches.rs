//! The read caches of the hot routes never serve stale answers, whichever process made the
//! change: two API states over one SQLite file (as two `kindgi server` processes would be)
//! — a key revoked through one is refused by the other on its next request, and a version
//! unregistered through one reads as unregistered from the other at once — while an
//! unchanged answer is served from the cache (the same bytes). On PostgreSQL, two API
//! states over one schema: the change's notification reaches the other state, which then
//! refuses the key and serves the tombstone (and, before it, served its cached copy even of
//! a row changed behind the triggers' back, so the cache is really in use).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
use kindgi_store::epoch::EpochKind;
use support::*;

#[tokio::test]
async fn caches_follow_changes_made_by_another_process() {
    let e = env(DatabaseKind::Sqlite).await;
    // A second, independent state on the same file: its own pools, caches and epoch files.
    let other_db = e.db.reopen().await.unwrap();
    let other = AppState::new(other_db);
    let b = TestClient::new(router(other.clone()), Some(e.acme_key.clone()));

    let r = e
        .acme
        .post_json("/v1/tools", &body("acme.lookup", "1.0.0"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.json());
    let uri = "/v1/tools/acme.lookup/versions/1.0.0";
    let first = b.get(uri).await;
    assert_eq!(first.status, 200);
    assert!(
        first.json().get("unregisteredAt").is_none(),
        "{:?}",
        first.json()
    );
    let again = b.get(uri).await;
    assert_eq!(again.body, first.body);

    // Unregistered through the first state: the second's cached body is stale at once.
    let r = e.acme.post(&format!("{uri}/unregister")).await;
    assert_eq!(r.status, 200, "{:?}", r.json());
    let after = b.get(uri).await;
    assert_eq!(after.status, 200);
    assert!(
        after.json()["unregisteredAt"].is_string(),
        "served a stale body: {:?}",
        after.json()
    );
    let r = e.acme.post(&format!("{uri}/reinstate")).await;
    assert_eq!(r.status, 200);
    assert!(b.get(uri).await.json().get("unregisteredAt").is_none());

    // The key, cached as valid by the second state, revoked through the first.
    assert_eq!(b.get("/v1/tools").await.status, 200);
    e.state.tokens.revoke(&e.acme_key_id).await.unwrap();
    let refused = b.get("/v1/tools").await;
    assert_eq!(refused.status, 401);
    assert_eq!(refused.error_code().as_deref(), Some("auth-revoked"));
}

/// Changes a version's tombstone without firing the change triggers (as if the
/// notification were lost): only a cache that is in use keeps answering the old body.
async fn set_tombstone_silently(db: &kindgi_store::Database, at: Option<i64>) {
    let pool = db.postgres().unwrap();
    let mut tx = pool.begin().await.unwrap();
    sqlx::query("SET LOCAL session_replication_role = replica")
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query("UPDATE tool_versions SET unregistered_at = $1 WHERE tool_id = 'acme.lookup'")
        .bind(at)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// Waits (bounded, as a hang guard) until `db` has seen `kind` move from `before`.
async fn seen(db: &kindgi_store::Database, kind: EpochKind, before: Option<u64>) {
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        db.epochs().moved_past(kind, before),
    )
    .await
    .expect("the change notification never arrived");
}

#[tokio::test]
async fn caches_follow_changes_made_by_another_host_on_postgres() {
    let e = env(DatabaseKind::Postgres).await;
    let other_db = e.db.reopen().await.unwrap();
    let other = AppState::new(other_db.clone());
    let b = TestClient::new(router(other.clone()), Some(e.acme_key.clone()));
    // The second host is listening: its reads are cached from now on.
    seen(&other_db, EpochKind::Registry, None).await;
    seen(&other_db, EpochKind::Keys, None).await;

    let r = e
        .acme
        .post_json("/v1/tools", &body("acme.lookup", "1.0.0"))
        .await;
    assert_eq!(r.status, 201, "{:?}", r.json());
    let uri = "/v1/tools/acme.lookup/versions/1.0.0";
    let first = b.get(uri).await;
    assert_eq!(first.status, 200);
    assert!(first.json().get("unregisteredAt").is_none());

    // Behind the triggers' back the row changes, and the cached body is still served.
    set_tombstone_silently(&e.db.db, Some(1_700_000_000_000)).await;
    assert_eq!(b.get(uri).await.body, first.body, "the body was not cached");
    set_tombstone_silently(&e.db.db, None).await;

    // Unregistered through the first host: the second serves the tombstone once notified.
    let before = other_db.epochs().current(EpochKind::Registry);
    assert!(before.is_some());
    let r = e.acme.post(&format!("{uri}/unregister")).await;
    assert_eq!(r.status, 200, "{:?}", r.json());
    seen(&other_db, EpochKind::Registry, before).await;
    let after = b.get(uri).await;
    assert!(
        after.json()["unregisteredAt"].is_string(),
        "served a stale body: {:?}",
        after.json()
    );
    let before = other_db.epochs().current(EpochKind::Registry);
    let r = e.acme.post(&format!("{uri}/reinstate")).await;
    assert_eq!(r.status, 200);
    seen(&other_db, EpochKind::Registry, before).await;
    assert!(b.get(uri).await.json().get("unregisteredAt").is_none());

    // The key, cached as valid by the second host, revoked through the first.
    assert_eq!(b.get("/v1/tools").await.status, 200);
    let before = other_db.epochs().current(EpochKind::Keys);
    e.state.tokens.revoke(&e.acme_key_id).await.unwrap();
    seen(&other_db, EpochKind::Keys, before).await;
    let refused = b.get("/v1/tools").await;
    assert_eq!(refused.status, 401);
    assert_eq!(refused.error_code().as_deref(), Some("auth-revoked"));
    drop((b, other));
    other_db.close().await;
    e.db.cleanup().await.unwrap();
}
