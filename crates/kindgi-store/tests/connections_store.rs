//! Connections (`ConnectionsStore`) on SQLite and PostgreSQL: one row per `(tenant, app,
//! holder)` (adding again keeps the id, replaces the tokens and un-revokes), tokens sealed
//! (the raw table holds neither token; a row's sealed token copied to another row does not
//! open), a refresh's tokens stored (an unrotated refresh token kept), revoking erases the
//! tokens, pages and visibility filters, tenant isolation, and no key: no add.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::connection::{
    ConnectionHolder, ConnectionQuery, ConnectionTokens, NewConnection, RefreshClient,
};
use kindgi_core::ports::ConnectionStore;
use kindgi_store::DatabaseKind;
use kindgi_store::connections::ConnectionsStore;
use kindgi_store::seal::SealKey;
use kindgi_store::testing::TestDatabase;

const ACCESS: &str = "ya29.access-token-one";
const REFRESH: &str = "1//refresh-token-one";

fn new(tenant: &str, app: &str, holder: ConnectionHolder, now: i64) -> NewConnection {
    NewConnection {
        tenant: tenant.into(),
        app: app.into(),
        holder,
        permissions: vec![
            "gmail.send".into(),
            "gmail.read".into(),
            "gmail.send".into(),
        ],
        tokens: ConnectionTokens {
            access_token: ACCESS.into(),
            refresh_token: Some(REFRESH.into()),
            expires_at: Some(now + 3_600_000),
        },
        refresh: Some(RefreshClient {
            token_url: "https://oauth.example.com/token".into(),
            client_id: "client-1".into(),
            client_secret_name: Some("GOOGLE_CLIENT_SECRET".into()),
        }),
        created_by: Some("user:u1".into()),
        now,
    }
}

fn person(u: &str) -> ConnectionHolder {
    ConnectionHolder::Person(u.into())
}

async fn raw_tokens(t: &TestDatabase) -> Vec<String> {
    kindgi_store::on_pool!(t.db, read, |pool| {
        sqlx::query_as::<_, (Option<String>, Option<String>)>(
            "SELECT access_sealed, refresh_sealed FROM connections ORDER BY created_at, id",
        )
        .fetch_all(pool)
        .await
    })
    .unwrap()
    .into_iter()
    .flat_map(|(a, r)| [a, r])
    .flatten()
    .collect()
}

async fn add_resolve_refresh_revoke(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (key, _) = SealKey::generate();
    let store = ConnectionsStore::new(t.db.clone(), Some(key.clone()));
    let a = store
        .add(&new("acme", "google", person("u1"), 10))
        .await
        .unwrap();
    assert_eq!(a.permissions, vec!["gmail.read", "gmail.send"]);
    assert!(a.refreshable);
    assert_eq!(a.created_at, 10);
    // The raw table holds sealed text only.
    let raw = raw_tokens(&t).await;
    assert_eq!(raw.len(), 2);
    for s in &raw {
        assert!(s.starts_with("v1:"), "{s}");
        assert!(
            !s.contains("access-token") && !s.contains("refresh-token"),
            "{s}"
        );
    }
    let (record, tokens) = store
        .resolve("acme", "google", &person("u1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.id, a.id);
    let tokens = tokens.unwrap();
    assert_eq!(tokens.access_token, ACCESS);
    assert_eq!(tokens.refresh_token.as_deref(), Some(REFRESH));
    assert!(!format!("{tokens:?}").contains(ACCESS));
    // Other holders, apps and tenants have none.
    assert!(
        store
            .resolve("acme", "google", &person("u2"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .resolve("acme", "google", &ConnectionHolder::Company)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .resolve("acme", "github", &person("u1"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .resolve("other", "google", &person("u1"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(store.connection("other", &a.id).await.unwrap().is_none());

    // A refresh that does not rotate the refresh token keeps it.
    let refreshed = ConnectionTokens {
        access_token: "ya29.access-token-two".into(),
        refresh_token: None,
        expires_at: Some(99_000),
    };
    assert!(
        store
            .update_tokens("acme", &a.id, &refreshed, 50)
            .await
            .unwrap()
    );
    let (record, tokens) = store
        .resolve("acme", "google", &person("u1"))
        .await
        .unwrap()
        .unwrap();
    let tokens = tokens.unwrap();
    assert_eq!(tokens.access_token, "ya29.access-token-two");
    assert_eq!(tokens.refresh_token.as_deref(), Some(REFRESH));
    assert_eq!(record.expires_at, Some(99_000));
    assert_eq!(record.updated_at, 50);

    // Revoking erases the tokens; resolve says revoked; a refresh no longer lands.
    let revoked = store.revoke("acme", &a.id, 60).await.unwrap().unwrap();
    assert_eq!(revoked.revoked_at, Some(60));
    assert!(raw_tokens(&t).await.is_empty());
    let (record, tokens) = store
        .resolve("acme", "google", &person("u1"))
        .await
        .unwrap()
        .unwrap();
    assert!(record.revoked_at.is_some() && tokens.is_none());
    assert!(
        !store
            .update_tokens("acme", &a.id, &refreshed, 70)
            .await
            .unwrap()
    );
    // Revoking again keeps the first time.
    assert_eq!(
        store
            .revoke("acme", &a.id, 80)
            .await
            .unwrap()
            .unwrap()
            .revoked_at,
        Some(60)
    );
    assert!(
        store
            .revoke("acme", "no-such-id", 80)
            .await
            .unwrap()
            .is_none()
    );

    // Adding again: same id, active, new tokens.
    let mut again = new("acme", "google", person("u1"), 90);
    again.tokens.access_token = "ya29.access-token-three".into();
    again.permissions = vec!["gmail.read".into()];
    let b = store.add(&again).await.unwrap();
    assert_eq!(b.id, a.id);
    assert_eq!(b.revoked_at, None);
    assert_eq!(b.permissions, vec!["gmail.read"]);
    assert_eq!(b.created_at, 10);
    let (_, tokens) = store
        .resolve("acme", "google", &person("u1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tokens.unwrap().access_token, "ya29.access-token-three");

    // Another key does not open them.
    let (other, _) = SealKey::generate();
    let wrong = ConnectionsStore::new(t.db.clone(), Some(other));
    assert!(
        wrong
            .resolve("acme", "google", &person("u1"))
            .await
            .is_err()
    );
    t.cleanup().await.unwrap();
}

async fn a_moved_token_does_not_open(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (key, _) = SealKey::generate();
    let store = ConnectionsStore::new(t.db.clone(), Some(key));
    store
        .add(&new("acme", "google", person("u1"), 10))
        .await
        .unwrap();
    let mut other = new("acme", "google", person("u2"), 20);
    other.tokens.access_token = "someone-elses-token".into();
    store.add(&other).await.unwrap();
    // u1's sealed access token copied onto u2's row.
    kindgi_store::on_pool!(t.db, write, |pool| {
        sqlx::query(
            "UPDATE connections SET access_sealed = (SELECT access_sealed FROM connections WHERE holder_id = $1) WHERE holder_id = $2",
        )
        .bind("u1")
        .bind("u2")
        .execute(pool)
        .await
        .map(|r| r.rows_affected())
    })
    .unwrap();
    let e = store
        .resolve("acme", "google", &person("u2"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("cannot be decrypted"), "{e}");
    t.cleanup().await.unwrap();
}

async fn pages_and_visibility(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (key, _) = SealKey::generate();
    let store = ConnectionsStore::new(t.db.clone(), Some(key));
    store
        .add(&new("acme", "google", person("u1"), 10))
        .await
        .unwrap();
    store
        .add(&new("acme", "github", person("u2"), 20))
        .await
        .unwrap();
    store
        .add(&new("acme", "slack", ConnectionHolder::Company, 30))
        .await
        .unwrap();
    store
        .add(&new("other", "slack", ConnectionHolder::Company, 40))
        .await
        .unwrap();
    let q = |holder: Option<ConnectionHolder>, with_company: bool| ConnectionQuery {
        tenant: "acme".into(),
        app: None,
        holder,
        with_company,
        after: None,
        limit: 10,
    };
    let apps = |rows: Vec<kindgi_core::connection::ConnectionRecord>| {
        rows.into_iter().map(|r| r.app).collect::<Vec<_>>()
    };
    assert_eq!(
        apps(store.connections(&q(None, false)).await.unwrap()),
        ["google", "github", "slack"]
    );
    assert_eq!(
        apps(
            store
                .connections(&q(Some(person("u1")), true))
                .await
                .unwrap()
        ),
        ["google", "slack"]
    );
    assert_eq!(
        apps(
            store
                .connections(&q(Some(person("u1")), false))
                .await
                .unwrap()
        ),
        ["google"]
    );
    assert_eq!(
        apps(
            store
                .connections(&q(Some(ConnectionHolder::Company), false))
                .await
                .unwrap()
        ),
        ["slack"]
    );
    let mut first = q(None, false);
    first.limit = 2;
    let page = store.connections(&first).await.unwrap();
    assert_eq!(page.len(), 2);
    let last = page.last().unwrap();
    let mut next = q(None, false);
    next.after = Some((last.created_at, last.id.clone()));
    assert_eq!(apps(store.connections(&next).await.unwrap()), ["slack"]);
    let mut by_app = q(None, false);
    by_app.app = Some("github".into());
    assert_eq!(apps(store.connections(&by_app).await.unwrap()), ["github"]);
    t.cleanup().await.unwrap();
}

async fn no_key_no_add(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = ConnectionsStore::new(t.db.clone(), None);
    let e = store
        .add(&new("acme", "google", person("u1"), 10))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("KINDGI_SECRETS_KEY"), "{e}");
    assert!(
        store
            .connections(&ConnectionQuery {
                tenant: "acme".into(),
                limit: 5,
                ..Default::default()
            })
            .await
            .unwrap()
            .is_empty()
    );
    t.cleanup().await.unwrap();
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite { $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Sqlite).await })* }
        mod postgres { $(#[tokio::test] async fn $name() { super::$name(kindgi_store::DatabaseKind::Postgres).await })* }
    };
}

both!(
    add_resolve_refresh_revoke,
    a_moved_token_does_not_open,
    pages_and_visibility,
    no_key_no_add,
);
