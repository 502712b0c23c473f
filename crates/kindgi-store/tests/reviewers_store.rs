//! The reviewer roster (`ReviewerStore`) on SQLite and PostgreSQL: one row per person and
//! tenant (registering again keeps the id and changes the role), `register_if_absent` leaves a
//! named person alone, soft unregistering, pages by `(createdAt, id)` with a role filter,
//! tenant isolation, and the operator's key putting its person on the roster as `admin`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::approval::ReviewerRole;
use kindgi_core::ports::{NewReviewer, ReviewerRoster, RosterQuery};
use kindgi_store::DatabaseKind;
use kindgi_store::reviewers::ReviewerStore;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::TokenStore;

fn new(tenant: &str, user: &str, role: ReviewerRole, now: i64) -> NewReviewer {
    NewReviewer {
        tenant: tenant.into(),
        user_id: user.into(),
        role,
        display_name: None,
        now,
    }
}

async fn roster(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = ReviewerStore::new(t.db.clone());
    let a = store
        .register(&new("acme", "u1", ReviewerRole::Standard, 10))
        .await
        .unwrap();
    assert_eq!(a.role, ReviewerRole::Standard);
    assert_eq!(a.created_at, 10);
    let mut named = new("acme", "u1", ReviewerRole::Senior, 20);
    named.display_name = Some("Una".into());
    let again = store.register(&named).await.unwrap();
    assert_eq!(again.id, a.id);
    assert_eq!(again.role, ReviewerRole::Senior);
    assert_eq!(again.created_at, 10);
    assert_eq!(again.display_name.as_deref(), Some("Una"));
    // Absent only: a named person keeps their role.
    let kept = store
        .register_if_absent(&new("acme", "u1", ReviewerRole::Admin, 30))
        .await
        .unwrap();
    assert_eq!(
        (kept.id.as_str(), kept.role),
        (a.id.as_str(), ReviewerRole::Senior)
    );
    let b = store
        .register_if_absent(&new("acme", "u2", ReviewerRole::Admin, 40))
        .await
        .unwrap();
    assert_eq!(b.role, ReviewerRole::Admin);
    store
        .register(&new("other", "u1", ReviewerRole::Admin, 50))
        .await
        .unwrap();

    assert_eq!(
        store.reviewer("acme", &a.id).await.unwrap(),
        Some(again.clone())
    );
    assert_eq!(store.reviewer("other", &a.id).await.unwrap(), None);
    assert_eq!(
        store
            .reviewer_for_user("acme", "u2")
            .await
            .unwrap()
            .map(|r| r.id),
        Some(b.id.clone())
    );
    let page = |role, after, limit| RosterQuery {
        tenant: "acme".into(),
        role,
        after,
        limit,
    };
    let all = store.reviewers(&page(None, None, 10)).await.unwrap();
    assert_eq!(
        all.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        vec![a.id.as_str(), b.id.as_str()]
    );
    let first = store.reviewers(&page(None, None, 1)).await.unwrap();
    let rest = store
        .reviewers(&page(
            None,
            Some((first[0].created_at, first[0].id.clone())),
            10,
        ))
        .await
        .unwrap();
    assert_eq!(rest.iter().map(|r| &r.id).collect::<Vec<_>>(), vec![&b.id]);
    let admins = store
        .reviewers(&page(Some(ReviewerRole::Admin), None, 10))
        .await
        .unwrap();
    assert_eq!(
        admins.iter().map(|r| &r.id).collect::<Vec<_>>(),
        vec![&b.id]
    );

    // Soft unregistering; a second time keeps the first instant; registering reactivates.
    let gone = store.unregister("acme", &a.id, 60).await.unwrap().unwrap();
    assert_eq!(gone.deactivated_at, Some(60));
    let again_gone = store.unregister("acme", &a.id, 70).await.unwrap().unwrap();
    assert_eq!(again_gone.deactivated_at, Some(60));
    assert_eq!(
        store
            .unregister("other", &a.id, 70)
            .await
            .unwrap()
            .map(|r| r.tenant),
        None
    );
    let still = store
        .register_if_absent(&new("acme", "u1", ReviewerRole::Admin, 80))
        .await
        .unwrap();
    assert_eq!(still.deactivated_at, Some(60));
    let back = store
        .register(&new("acme", "u1", ReviewerRole::Standard, 90))
        .await
        .unwrap();
    assert_eq!(
        (back.id.as_str(), back.deactivated_at),
        (a.id.as_str(), None)
    );

    // The operator's key for a person makes them an admin reviewer, once.
    TokenStore::new(t.db.clone())
        .create_for_user("acme", "ops", None)
        .await
        .unwrap();
    let ops = store
        .reviewer_for_user("acme", "ops")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ops.role, ReviewerRole::Admin);
    TokenStore::new(t.db.clone())
        .create_for_user("acme", "u1", None)
        .await
        .unwrap();
    let u1 = store
        .reviewer_for_user("acme", "u1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        u1.role,
        ReviewerRole::Standard,
        "a named person is left alone"
    );
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_roster() {
    roster(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_roster() {
    roster(DatabaseKind::Postgres).await;
}
