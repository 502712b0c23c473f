//! Tenants' and projects' states (`TenantStateStore`) on SQLite and PostgreSQL: active by
//! default, suspend keeps the first time and reason, restore clears them, close is one-way and
//! wins, a project's suspension is its own (per tenant, without case), and `standing` answers
//! the first thing that stops work.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::ports::{Standing, Suspension, TenantState, TenantStates};
use kindgi_store::DatabaseKind;
use kindgi_store::tenant_states::TenantStateStore;
use kindgi_store::testing::TestDatabase;

const P: &str = "00000000-0000-4000-8000-00000000000a";

fn suspension(at: i64, reason: &str) -> Suspension {
    Suspension {
        at,
        reason: Some(reason.into()),
    }
}

async fn states(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = TenantStateStore::new(t.db.clone());
    assert_eq!(
        store.tenant_standing("acme").await.unwrap().state(),
        TenantState::Active
    );
    assert_eq!(
        store.standing("acme", Some(P)).await.unwrap(),
        Standing::Active
    );

    // The project first: only that project, only that tenant.
    let s = store
        .set_project_suspended("acme", P, Some(&suspension(5, "abuse")))
        .await
        .unwrap();
    assert_eq!(s, Some(suspension(5, "abuse")));
    let again = store
        .set_project_suspended("acme", &P.to_uppercase(), Some(&suspension(9, "later")))
        .await
        .unwrap();
    assert_eq!(
        again,
        Some(suspension(5, "abuse")),
        "a second keeps the first"
    );
    assert_eq!(
        store.standing("acme", Some(P)).await.unwrap(),
        Standing::ProjectSuspended
    );
    assert_eq!(
        store.standing("acme", None).await.unwrap(),
        Standing::Active
    );
    assert_eq!(
        store.standing("other", Some(P)).await.unwrap(),
        Standing::Active
    );

    // The tenant: suspended wins over the project's, a second keeps the first.
    let st = store
        .set_tenant_suspended("acme", Some(&suspension(10, "unpaid")))
        .await
        .unwrap();
    assert_eq!(st.state(), TenantState::Suspended);
    let st = store
        .set_tenant_suspended("acme", Some(&suspension(20, "again")))
        .await
        .unwrap();
    assert_eq!(st.suspended, Some(suspension(10, "unpaid")));
    assert_eq!(
        store.standing("acme", Some(P)).await.unwrap(),
        Standing::TenantSuspended
    );

    // Restoring clears both; the project stays suspended until restored itself.
    let st = store.set_tenant_suspended("acme", None).await.unwrap();
    assert_eq!(st.state(), TenantState::Active);
    assert_eq!(st.suspended, None);
    assert_eq!(
        store.standing("acme", Some(P)).await.unwrap(),
        Standing::ProjectSuspended
    );
    assert_eq!(
        store.set_project_suspended("acme", P, None).await.unwrap(),
        None
    );
    assert_eq!(
        store.standing("acme", Some(P)).await.unwrap(),
        Standing::Active
    );

    // Closing wins over suspended and stays; a second close keeps the first time.
    store
        .set_tenant_suspended("acme", Some(&suspension(30, "x")))
        .await
        .unwrap();
    let st = store.close_tenant("acme", 40).await.unwrap();
    assert_eq!(st.state(), TenantState::Closing);
    assert_eq!(
        store.close_tenant("acme", 50).await.unwrap().closing_at,
        Some(40)
    );
    let st = store.set_tenant_suspended("acme", None).await.unwrap();
    assert_eq!(st.state(), TenantState::Closing, "restoring doesn't reopen");
    assert_eq!(
        store.standing("acme", None).await.unwrap(),
        Standing::TenantClosing
    );

    // Stored, not cached.
    let reopened = TenantStateStore::new(t.reopen().await.unwrap());
    assert_eq!(
        reopened.tenant_standing("acme").await.unwrap().closing_at,
        Some(40)
    );
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn tenant_states_on_sqlite() {
    states(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn tenant_states_on_postgres() {
    states(DatabaseKind::Postgres).await;
}
