//! API keys with principals and service accounts on both backends: minting for a person or
//! a service account, listing newest first, revoking by token id, an unregistered account's
//! keys refused, and an `api_keys` table from before principals upgraded in place.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_store::service_accounts::{
    AccountFilter, Grant, NewAccount, ServiceAccountError, ServiceAccountStore,
};
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyRole, KeyStatus, NewToken, Principal, TokenFilter, TokenStore};
use kindgi_store::{Database, DatabaseKind};

fn new_token(principal: Option<Principal>, role: KeyRole) -> NewToken {
    NewToken {
        tenant: "acme".into(),
        principal,
        role,
        capabilities: vec!["env:write".into()],
        label: Some("ci".into()),
        project_id: None,
        created_by: Some("user:admin".into()),
        expires_at: None,
    }
}

async fn principals(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let tokens = TokenStore::new(t.db.clone());
    let accounts = ServiceAccountStore::new(t.db.clone());

    let person = tokens
        .mint(&new_token(Some(Principal::user("u1")), KeyRole::Member))
        .await
        .unwrap();
    let status = tokens.authenticate(&person.key).await.unwrap();
    assert_eq!(status.started_by(), Some("person"));
    let KeyStatus::Valid { key, .. } = status else {
        panic!("not valid")
    };
    assert!(!key.tenant_admin, "a member key is no admin");
    assert_eq!(key.record.capabilities, vec!["env:write".to_owned()]);
    assert_eq!(key.record.label.as_deref(), Some("ci"));

    let sa = accounts
        .create(&NewAccount {
            tenant: "acme".into(),
            name: "acme-ci".into(),
            description: None,
            grants: vec![Grant::TenantMember],
            created_by: None,
        })
        .await
        .unwrap();
    assert!(matches!(
        accounts
            .create(&NewAccount {
                tenant: "acme".into(),
                name: "acme-ci".into(),
                description: None,
                grants: vec![],
                created_by: None,
            })
            .await,
        Err(ServiceAccountError::NameTaken { .. })
    ));
    let sa_key = tokens
        .mint(&new_token(
            Some(Principal::service_account(&sa.id)),
            KeyRole::Admin,
        ))
        .await
        .unwrap();
    let status = tokens.authenticate(&sa_key.key).await.unwrap();
    assert_eq!(status.started_by(), Some("key"));
    let KeyStatus::Valid { key, .. } = status else {
        panic!("not valid")
    };
    assert!(!key.tenant_admin, "admin key of a member account");
    let granted = accounts
        .grant("acme", &sa.id, &Grant::TenantAdmin)
        .await
        .unwrap();
    assert_eq!(
        granted.grants,
        vec![Grant::TenantMember, Grant::TenantAdmin]
    );
    let KeyStatus::Valid { key, .. } = tokens.authenticate(&sa_key.key).await.unwrap() else {
        panic!("not valid")
    };
    assert!(key.tenant_admin, "admin key of an admin account");
    let ungranted = accounts
        .ungrant("acme", &sa.id, &Grant::TenantMember)
        .await
        .unwrap();
    assert_eq!(ungranted.grants, vec![Grant::TenantAdmin]);

    // Newest first, filters by principal, pages by (created_at, id).
    let all = tokens
        .list(
            "acme",
            &TokenFilter {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all.len(), 2);
    assert!(all[0].created_at >= all[1].created_at);
    let first = tokens
        .list(
            "acme",
            &TokenFilter {
                limit: 1,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let rest = tokens
        .list(
            "acme",
            &TokenFilter {
                limit: 10,
                before: Some((first[0].created_at, first[0].token_id.clone())),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(rest.len(), 1);
    assert_ne!(rest[0].token_id, first[0].token_id);
    let mine = tokens
        .list(
            "acme",
            &TokenFilter {
                limit: 10,
                principal: Some(Principal::user("u1")),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].token_id, person.record.token_id);
    assert!(
        tokens
            .list(
                "other",
                &TokenFilter {
                    limit: 10,
                    ..Default::default()
                }
            )
            .await
            .unwrap()
            .is_empty()
    );

    // Unregistering the account stops its keys.
    let gone = accounts.unregister("acme", &sa.id).await.unwrap();
    assert!(gone.unregistered_at.is_some() && gone.grants.is_empty());
    assert_eq!(
        tokens.authenticate(&sa_key.key).await.unwrap(),
        KeyStatus::Revoked
    );
    assert!(matches!(
        accounts.grant("acme", &sa.id, &Grant::TenantAdmin).await,
        Err(ServiceAccountError::Unregistered { .. })
    ));
    let listed = accounts
        .list(
            "acme",
            &AccountFilter {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(listed.is_empty());
    let listed = accounts
        .list(
            "acme",
            &AccountFilter {
                limit: 10,
                include_unregistered: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);

    // Revoke by token id, in the tenant only.
    assert!(
        tokens
            .revoke_token("other", &person.record.token_id)
            .await
            .unwrap()
            .is_none()
    );
    let revoked = tokens
        .revoke_token("acme", &person.record.token_id)
        .await
        .unwrap()
        .unwrap();
    assert!(revoked.revoked_at.is_some());
    assert_eq!(
        tokens.authenticate(&person.key).await.unwrap(),
        KeyStatus::Revoked
    );
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_principals() {
    principals(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn postgres_principals() {
    principals(DatabaseKind::Postgres).await;
}

#[tokio::test]
async fn an_old_api_keys_table_is_upgraded_and_its_keys_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let url = path.to_string_lossy().into_owned();
    let key = kindgi_store::tokens::generate_key();
    let hash = kindgi_store::tokens::hash_key(&key);
    {
        let db = Database::connect(&url).await.unwrap();
        let kindgi_store::Backend::Sqlite(p) = db.backend() else {
            panic!("sqlite")
        };
        sqlx::query("CREATE TABLE api_keys (key_hash TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, tenant TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER, revoked_at INTEGER)")
            .execute(&p.writer).await.unwrap();
        sqlx::query("INSERT INTO api_keys VALUES ($1, $2, 'acme', 1, NULL, NULL)")
            .bind(&hash)
            .bind(&hash[..16])
            .execute(&p.writer)
            .await
            .unwrap();
        db.close().await;
    }
    let db = Database::connect(&url).await.unwrap();
    db.migrate().await.unwrap();
    db.migrate().await.unwrap();
    let KeyStatus::Valid {
        principal,
        key: valid,
        ..
    } = TokenStore::new(db.clone())
        .authenticate(&key)
        .await
        .unwrap()
    else {
        panic!("the old key no longer works")
    };
    assert_eq!(principal, None);
    assert!(valid.tenant_admin);
    assert_eq!(valid.record.token_id.len(), 36);
    assert_eq!(
        valid.record.actor(),
        format!("service_account:{}", valid.record.token_id)
    );
    db.close().await;
}

/// The same upgrade on PostgreSQL: a table stripped back to the first release's columns
/// gains them again (`ADD COLUMN IF NOT EXISTS`), its key still works and gets a token id.
#[tokio::test]
async fn postgres_old_api_keys_table_is_upgraded() {
    let t = TestDatabase::new(DatabaseKind::Postgres).await.unwrap();
    let key = kindgi_store::tokens::generate_key();
    let hash = kindgi_store::tokens::hash_key(&key);
    {
        let kindgi_store::Backend::Postgres(p) = t.db.backend() else {
            panic!("postgres")
        };
        sqlx::query("DROP INDEX IF EXISTS api_keys_token_id")
            .execute(p)
            .await
            .unwrap();
        for c in [
            "token_id",
            "principal_kind",
            "principal_id",
            "role",
            "capabilities",
            "label",
            "project_id",
            "created_by",
            "last_used_at",
        ] {
            sqlx::query(&format!("ALTER TABLE api_keys DROP COLUMN {c}"))
                .execute(p)
                .await
                .unwrap();
        }
        sqlx::query("INSERT INTO api_keys VALUES ($1, $2, 'acme', 1, NULL, NULL)")
            .bind(&hash)
            .bind(&hash[..16])
            .execute(p)
            .await
            .unwrap();
    }
    t.db.migrate().await.unwrap();
    let KeyStatus::Valid {
        principal,
        key: valid,
        ..
    } = TokenStore::new(t.db.clone())
        .authenticate(&key)
        .await
        .unwrap()
    else {
        panic!("the old key no longer works")
    };
    assert_eq!(principal, None);
    assert!(valid.tenant_admin);
    assert_eq!(valid.record.token_id.len(), 36);
    t.cleanup().await.unwrap();
}
