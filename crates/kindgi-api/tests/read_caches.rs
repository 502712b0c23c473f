//! The read caches of the hot routes never serve stale answers, whichever process made the
//! change: two API states over one SQLite file (as two `kindgi server` processes would be)
//! — a key revoked through one is refused by the other on its next request, and a version
//! unregistered through one reads as unregistered from the other at once — while an
//! unchanged answer is served from the cache (the same bytes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_api::testing::TestClient;
use kindgi_api::{AppState, router};
use kindgi_store::DatabaseKind;
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
