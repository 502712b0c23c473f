//! Registered model providers (`ProviderStore`) on SQLite and PostgreSQL: register, get,
//! paging by id, a second registration of an active id refused, unregister as a tombstone
//! (reads miss it, the id is free again), the secret kept by name only, and tenant
//! isolation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::ports::{ProviderRegistration, ProviderRegistry, ProviderWrite, SecretRef};
use kindgi_store::DatabaseKind;
use kindgi_store::providers::ProviderStore;
use kindgi_store::testing::TestDatabase;
use serde_json::json;

fn registration(tenant: &str, id: &str, model: &str) -> ProviderRegistration {
    ProviderRegistration {
        tenant: tenant.into(),
        id: id.into(),
        adapter_id: "@kindgi/adapter-model-openai-compat".into(),
        metadata: json!({"id": id, "region": "unspecified", "models": [
            {"name": model, "contextWindow": 8000, "features": ["tool-use"],
             "cost": {"promptUsdPer1kTokens": 0.1, "completionUsdPer1kTokens": 0.2}}]}),
        secret_ref: Some(SecretRef {
            env_name: "local".into(),
            name: "OPENAI_KEY".into(),
        }),
        adapter_config: json!({"baseUrl": "http://127.0.0.1:9/v1", "timeoutMs": 500})
            .as_object()
            .cloned()
            .unwrap(),
        send_traceparent: true,
        created_at: 7,
        unregistered_at: None,
    }
}

async fn registry(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = ProviderStore::new(t.db.clone());
    let a = registration("acme", "a-openai", "gpt-x");
    let b = registration("acme", "b-local", "llama");
    assert_eq!(store.register(&a).await.unwrap(), ProviderWrite::Registered);
    assert_eq!(store.register(&b).await.unwrap(), ProviderWrite::Registered);
    assert_eq!(
        store.register(&a).await.unwrap(),
        ProviderWrite::AlreadyRegistered,
        "an active id is registered once"
    );
    assert_eq!(
        store.provider("acme", "a-openai").await.unwrap(),
        Some(a.clone())
    );
    assert_eq!(
        store.provider("other", "a-openai").await.unwrap(),
        None,
        "tenant-scoped"
    );

    // Paging by id.
    let first = store.providers("acme", None, 1).await.unwrap();
    assert_eq!(
        first.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        ["a-openai"]
    );
    let rest = store.providers("acme", Some("a-openai"), 10).await.unwrap();
    assert_eq!(
        rest.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        ["b-local"]
    );
    assert!(store.providers("other", None, 10).await.unwrap().is_empty());

    // Unregister: a tombstone; reads miss it; the id registers again (with new contents).
    assert!(store.unregister("acme", "a-openai", 9).await.unwrap());
    assert!(!store.unregister("acme", "a-openai", 10).await.unwrap());
    assert_eq!(store.provider("acme", "a-openai").await.unwrap(), None);
    assert_eq!(store.providers("acme", None, 10).await.unwrap().len(), 1);
    let mut again = registration("acme", "a-openai", "gpt-y");
    again.secret_ref = None;
    again.send_traceparent = false;
    again.created_at = 11;
    assert_eq!(
        store.register(&again).await.unwrap(),
        ProviderWrite::Registered
    );
    assert_eq!(
        store.provider("acme", "a-openai").await.unwrap(),
        Some(again.clone())
    );

    // Stored, not cached; the key is never there, only the secret's name.
    let reopened = ProviderStore::new(t.reopen().await.unwrap());
    assert_eq!(reopened.provider("acme", "b-local").await.unwrap(), Some(b));
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn the_provider_registry_on_sqlite() {
    registry(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn the_provider_registry_on_postgres() {
    registry(DatabaseKind::Postgres).await;
}
