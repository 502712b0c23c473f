//! The migration that makes "every capability" a recorded grant (issue 19, finding 1) and
//! revokes person keys someone else minted (finding 2), on both backends: keys stored before
//! `all_capabilities` existed are decided once — the operator's (no `created_by`, role
//! `admin`, no list) keep every capability, an API-minted admin key with an empty list holds
//! nothing — and a person's key minted by someone other than that person stops working.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{HeldCapabilities, KeyRole, KeyStatus, NewToken, Principal, TokenStore};
use kindgi_store::{Backend, DatabaseKind};

fn token(principal: Option<Principal>, role: KeyRole, created_by: Option<&str>) -> NewToken {
    NewToken {
        tenant: "acme".into(),
        principal,
        role,
        capabilities: vec![],
        label: None,
        project_id: None,
        created_by: created_by.map(str::to_owned),
        expires_at: None,
    }
}

async fn held(tokens: &TokenStore, key: &str) -> Option<HeldCapabilities> {
    match tokens.authenticate(key).await.unwrap() {
        KeyStatus::Valid { key, .. } => Some(key.held_capabilities()),
        _ => None,
    }
}

async fn stored_keys_are_decided_once(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let tokens = TokenStore::new(t.db.clone());
    let operator = tokens.create("acme", None).await.unwrap().key;
    let api_admin = tokens
        .mint(&token(
            Some(Principal::user("admin")),
            KeyRole::Admin,
            Some("user:admin"),
        ))
        .await
        .unwrap()
        .key;
    let before_principals = tokens
        .mint(&token(None, KeyRole::Admin, None))
        .await
        .unwrap()
        .key;
    let impersonation = tokens
        .mint(&token(
            Some(Principal::user("ceo")),
            KeyRole::Admin,
            Some("service_account:x"),
        ))
        .await
        .unwrap()
        .key;
    let own = tokens
        .mint(&token(
            Some(Principal::user("ops")),
            KeyRole::Member,
            Some("user:ops"),
        ))
        .await
        .unwrap()
        .key;
    // As the rows were before the column existed.
    let forget = "UPDATE api_keys SET all_capabilities = NULL";
    match t.db.backend() {
        Backend::Sqlite(p) => sqlx::query(forget).execute(&p.writer).await.map(drop),
        Backend::Postgres(p) => sqlx::query(forget).execute(p).await.map(drop),
    }
    .unwrap();
    t.db.migrate().await.unwrap();
    t.db.migrate().await.unwrap();
    let fresh = TokenStore::new(t.db.clone());
    assert_eq!(
        held(&fresh, &operator).await,
        Some(HeldCapabilities::Runtime)
    );
    assert_eq!(
        held(&fresh, &before_principals).await,
        Some(HeldCapabilities::Runtime)
    );
    assert_eq!(
        held(&fresh, &api_admin).await,
        Some(HeldCapabilities::Listed(vec![])),
        "an API-minted admin key with an empty list holds nothing"
    );
    assert_eq!(
        fresh.authenticate(&impersonation).await.unwrap(),
        KeyStatus::Revoked
    );
    assert!(
        held(&fresh, &own).await.is_some(),
        "a person's own key stays"
    );
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_stored_keys_are_decided_once() {
    stored_keys_are_decided_once(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_stored_keys_are_decided_once() {
    stored_keys_are_decided_once(DatabaseKind::Postgres).await;
}
