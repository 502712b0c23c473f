//! The env and secret tables on SQLite and PostgreSQL: revisions and conflicts, paging,
//! sealed values (the stored text holds no plaintext; a wrong key or a moved row does not
//! open), revocation, and resolve precedence (a project value beats the tenant's: case 77 at
//! the store level), and the store as core's `CallValues` port (a call's values in the served
//! env, the Default project's before the tenant's).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::ids::default_project_id;
use kindgi_core::ports::CallValues;
use kindgi_store::DatabaseKind;
use kindgi_store::seal::{SealError, SealKey, SecretValue};
use kindgi_store::testing::TestDatabase;
use kindgi_store::values::{
    EnvWrite, ListQuery, SecretWrite, ValueKey, ValueScope, ValuesError, ValuesStore, WriteMode,
};

fn key(tenant: &str, scope: ValueScope, name: &str) -> ValueKey {
    ValueKey {
        tenant: tenant.into(),
        scope,
        env_name: "local".into(),
        name: name.into(),
    }
}

fn env_write(value: &str, if_revision: Option<i64>) -> EnvWrite {
    EnvWrite {
        value: value.into(),
        tags: None,
        if_revision,
    }
}

fn secret_write(value: &str, mode: WriteMode) -> SecretWrite {
    SecretWrite {
        value: SecretValue::new(value.into()),
        mode,
        tags: None,
        rotation_due_at: None,
        if_version: None,
    }
}

fn list<'a>(scope: &'a ValueScope, after: Option<&'a str>, limit: usize) -> ListQuery<'a> {
    ListQuery {
        tenant: "acme",
        scope,
        env_name: "local",
        name_prefix: None,
        after,
        limit,
        include_revoked: false,
    }
}

async fn env_revisions_conflicts_and_delete(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = ValuesStore::new(t.db.clone());
    let k = key("acme", ValueScope::Tenant, "BASE_URL");
    let first = store.env_set(&k, &env_write("a", None)).await.unwrap();
    assert_eq!(first.revision, 1);
    let second = store.env_set(&k, &env_write("b", Some(1))).await.unwrap();
    assert_eq!((second.revision, second.value.as_str()), (2, "b"));
    assert_eq!(second.created_at, first.created_at);
    let stale = store.env_set(&k, &env_write("c", Some(1))).await;
    assert!(matches!(
        stale,
        Err(ValuesError::EnvConflict { current: 2 })
    ));
    let created_stale = store
        .env_set(
            &key("acme", ValueScope::Tenant, "NEW"),
            &env_write("x", Some(3)),
        )
        .await;
    assert!(matches!(
        created_stale,
        Err(ValuesError::EnvConflict { current: 0 })
    ));
    // Tenants do not see each other's values.
    let other = key("other", ValueScope::Tenant, "BASE_URL");
    assert!(store.env_get(&other).await.unwrap().is_none());
    assert_eq!(store.env_get(&k).await.unwrap().unwrap().value, "b");
    assert!(store.env_delete(&k).await.unwrap());
    assert!(!store.env_delete(&k).await.unwrap());
    assert!(store.env_get(&k).await.unwrap().is_none());
    t.cleanup().await.unwrap();
}

async fn env_pages_in_name_order_with_prefix(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = ValuesStore::new(t.db.clone());
    for name in ["b", "a", "Z", "app.x", "app.y", "c"] {
        let k = key("acme", ValueScope::Tenant, name);
        store.env_set(&k, &env_write(name, None)).await.unwrap();
    }
    let tenant = ValueScope::Tenant;
    let (page1, more) = store.env_list(&list(&tenant, None, 2)).await.unwrap();
    let names: Vec<_> = page1.iter().map(|r| r.key.name.as_str()).collect();
    assert_eq!((names, more), (vec!["Z", "a"], true));
    let (page2, more) = store.env_list(&list(&tenant, Some("a"), 10)).await.unwrap();
    let names: Vec<_> = page2.iter().map(|r| r.key.name.as_str()).collect();
    assert_eq!((names, more), (vec!["app.x", "app.y", "b", "c"], false));
    let mut q = list(&tenant, None, 10);
    q.name_prefix = Some("app.");
    let (pref, _) = store.env_list(&q).await.unwrap();
    assert_eq!(pref.len(), 2);
    // Another scope is another list.
    let project = ValueScope::Project("p1".into());
    assert!(
        store
            .env_list(&list(&project, None, 10))
            .await
            .unwrap()
            .0
            .is_empty()
    );
    t.cleanup().await.unwrap();
}

async fn secrets_are_versioned_and_sealed(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (seal, _) = SealKey::generate();
    let store = ValuesStore::with_key(t.db.clone(), Some(seal));
    let k = key("acme", ValueScope::Tenant, "STRIPE_KEY");
    let (rec, v) = store
        .secret_set(
            &k,
            &secret_write("sk_live_plaintext_1", WriteMode::CreateNew),
        )
        .await
        .unwrap();
    assert_eq!((v, rec.current_version), (1, 1));
    let again = store
        .secret_set(&k, &secret_write("x", WriteMode::CreateNew))
        .await;
    assert!(matches!(
        again,
        Err(ValuesError::SecretExists { current: 1 })
    ));
    let (_, v2) = store
        .secret_set(
            &k,
            &secret_write("sk_live_plaintext_2", WriteMode::AddVersion),
        )
        .await
        .unwrap();
    assert_eq!(v2, 2);
    let mut stale = secret_write("y", WriteMode::AddVersion);
    stale.if_version = Some(1);
    assert!(matches!(
        store.secret_set(&k, &stale).await,
        Err(ValuesError::SecretVersionConflict { current: 2 })
    ));
    // The stored text holds no plaintext.
    let stored: Vec<String> = kindgi_store::on_pool!(t.db, read, |pool| {
        sqlx::query_scalar::<_, String>("SELECT sealed FROM secret_versions ORDER BY version")
            .fetch_all(pool)
            .await
    })
    .unwrap();
    assert_eq!(stored.len(), 2);
    for s in &stored {
        assert!(s.starts_with("v1:") && !s.contains("plaintext") && !s.contains("sk_live"));
    }
    let resolved = store
        .resolve_secrets("acme", "local", &["STRIPE_KEY", "NOPE"])
        .await
        .unwrap();
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved["STRIPE_KEY"].expose(), "sk_live_plaintext_2");
    assert!(!format!("{resolved:?}").contains("plaintext"));
    let (versions, more) = store.secret_versions(&k, 0, 1).await.unwrap();
    assert_eq!((versions[0].version, more), (1, true));
    assert!(store.secret_version(&k, 3).await.unwrap().is_none());
    t.cleanup().await.unwrap();
}

async fn a_wrong_key_or_a_moved_row_does_not_open(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (seal, _) = SealKey::generate();
    let store = ValuesStore::with_key(t.db.clone(), Some(seal));
    for name in ["A", "B"] {
        let k = key("acme", ValueScope::Tenant, name);
        store
            .secret_set(&k, &secret_write(name, WriteMode::CreateNew))
            .await
            .unwrap();
    }
    let (other, _) = SealKey::generate();
    let wrong = ValuesStore::with_key(t.db.clone(), Some(other));
    let e = wrong
        .resolve_secrets("acme", "local", &["A"])
        .await
        .err()
        .unwrap();
    assert!(
        matches!(e, ValuesError::Seal(SealError::Undecryptable)),
        "{e}"
    );
    assert!(e.to_string().contains("not the one it was sealed with"));
    let none = ValuesStore::new(t.db.clone());
    assert!(matches!(
        none.resolve_secrets("acme", "local", &["A"]).await,
        Err(ValuesError::NoKey)
    ));
    // Copy A's ciphertext onto B's row: B no longer opens.
    kindgi_store::on_pool!(t.db, write, |pool| {
        sqlx::query("UPDATE secret_versions SET sealed = (SELECT sealed FROM secret_versions WHERE name = $1) WHERE name = $2")
            .bind("A")
            .bind("B")
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
    })
    .unwrap();
    let moved = store.resolve_secrets("acme", "local", &["B"]).await;
    assert!(matches!(
        moved,
        Err(ValuesError::Seal(SealError::Undecryptable))
    ));
    assert_eq!(
        store
            .resolve_secrets("acme", "local", &["A"])
            .await
            .unwrap()["A"]
            .expose(),
        "A"
    );
    t.cleanup().await.unwrap();
}

async fn revoked_secrets_stop_resolving(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (seal, _) = SealKey::generate();
    let store = ValuesStore::with_key(t.db.clone(), Some(seal));
    let k = key("acme", ValueScope::Tenant, "TOKEN");
    store
        .secret_set(&k, &secret_write("v1", WriteMode::CreateNew))
        .await
        .unwrap();
    assert_eq!(
        store
            .secret_revoke(&k, false, Some("leaked"))
            .await
            .unwrap(),
        Some(true)
    );
    assert_eq!(
        store.secret_revoke(&k, false, None).await.unwrap(),
        Some(false)
    );
    assert_eq!(
        store.secret_revoke(&k, true, None).await.unwrap(),
        Some(true)
    );
    let unknown = key("acme", ValueScope::Tenant, "NONE");
    assert_eq!(
        store.secret_revoke(&unknown, false, None).await.unwrap(),
        None
    );
    assert!(
        store
            .resolve_secrets("acme", "local", &["TOKEN"])
            .await
            .unwrap()
            .is_empty()
    );
    let rec = store.secret_get(&k).await.unwrap().unwrap();
    assert_eq!(rec.revoke_reason.as_deref(), Some("leaked"));
    let tenant = ValueScope::Tenant;
    assert!(
        store
            .secret_list(&list(&tenant, None, 10))
            .await
            .unwrap()
            .0
            .is_empty()
    );
    let mut all = list(&tenant, None, 10);
    all.include_revoked = true;
    assert_eq!(store.secret_list(&all).await.unwrap().0.len(), 1);
    // Written again after revocation: it lives again, numbering goes on.
    let (rec, v) = store
        .secret_set(&k, &secret_write("v2", WriteMode::CreateNew))
        .await
        .unwrap();
    assert_eq!((v, rec.revoked_at), (2, None));
    assert_eq!(
        store
            .resolve_secrets("acme", "local", &["TOKEN"])
            .await
            .unwrap()["TOKEN"]
            .expose(),
        "v2"
    );
    t.cleanup().await.unwrap();
}

async fn a_project_value_beats_the_tenants(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (seal, _) = SealKey::generate();
    let store = ValuesStore::with_key(t.db.clone(), Some(seal));
    let names = ["BASE_URL", "REGION"];
    assert!(
        store
            .resolve_env("acme", Some("p1"), "local", &names)
            .await
            .unwrap()
            .is_empty()
    );
    let tenant_url = key("acme", ValueScope::Tenant, "BASE_URL");
    store
        .env_set(&tenant_url, &env_write("https://tenant", None))
        .await
        .unwrap();
    let region = key("acme", ValueScope::Tenant, "REGION");
    store
        .env_set(&region, &env_write("eu", None))
        .await
        .unwrap();
    let got = store
        .resolve_env("acme", Some("p1"), "local", &names)
        .await
        .unwrap();
    assert_eq!(got["BASE_URL"], "https://tenant");
    let project_url = key("acme", ValueScope::Project("p1".into()), "BASE_URL");
    store
        .env_set(&project_url, &env_write("https://project", None))
        .await
        .unwrap();
    let got = store
        .resolve_env("acme", Some("p1"), "local", &names)
        .await
        .unwrap();
    assert_eq!(
        (got["BASE_URL"].as_str(), got["REGION"].as_str()),
        ("https://project", "eu")
    );
    // Another project, another env, another tenant: the project value is not theirs.
    let other = store
        .resolve_env("acme", Some("p2"), "local", &names)
        .await
        .unwrap();
    assert_eq!(other["BASE_URL"], "https://tenant");
    assert!(
        store
            .resolve_env("acme", Some("p1"), "prod", &names)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .resolve_env("zeta", Some("p1"), "local", &names)
            .await
            .unwrap()
            .is_empty()
    );
    // Secrets: the same precedence.
    let ts = key("acme", ValueScope::Tenant, "API_KEY");
    store
        .secret_set(&ts, &secret_write("tenant-secret", WriteMode::CreateNew))
        .await
        .unwrap();
    let ps = key("acme", ValueScope::Project("p1".into()), "API_KEY");
    store
        .secret_set(&ps, &secret_write("project-secret", WriteMode::CreateNew))
        .await
        .unwrap();
    let s = store
        .resolve_secrets_in("acme", Some("p1"), "local", &["API_KEY"])
        .await
        .unwrap();
    assert_eq!(s["API_KEY"].expose(), "project-secret");
    let s = store
        .resolve_secrets("acme", "local", &["API_KEY"])
        .await
        .unwrap();
    assert_eq!(s["API_KEY"].expose(), "tenant-secret");
    t.cleanup().await.unwrap();
}

async fn budgets_refuse_oversized_input(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (seal, _) = SealKey::generate();
    let store = ValuesStore::with_key(t.db.clone(), Some(seal));
    let k = key("acme", ValueScope::Tenant, "BIG");
    let big = "x".repeat(64 * 1024 + 1);
    assert!(matches!(
        store
            .secret_set(&k, &secret_write(&big, WriteMode::CreateNew))
            .await,
        Err(ValuesError::ValueTooLarge { max: 65536, .. })
    ));
    assert!(matches!(
        store.env_set(&k, &env_write(&big, None)).await,
        Err(ValuesError::ValueTooLarge { .. })
    ));
    let names: Vec<String> = (0..300).map(|i| format!("N{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    assert!(matches!(
        store.resolve_env("acme", None, "local", &refs).await,
        Err(ValuesError::TooManyNames { .. })
    ));
    t.cleanup().await.unwrap();
}

#[test]
fn dev_key_is_created_owner_only_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let first = kindgi_store::seal::dev_key(dir.path()).unwrap();
    let path = dir.path().join(".kindgi/secrets.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let ctx = kindgi_store::seal::SealContext {
        tenant: "t",
        scope_kind: "tenant",
        scope_id: "",
        env_name: "local",
        name: "N",
        version: 1,
    };
    let sealed = first.seal(&ctx, "v").unwrap();
    let second = kindgi_store::seal::dev_key(dir.path()).unwrap();
    assert_eq!(second.open(&ctx, &sealed).unwrap().expose(), "v");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = SealKey::from_file(&path).err().unwrap().to_string();
        assert!(e.contains("chmod 600"), "{e}");
    }
}

/// Through core's port: env values and secrets of the served env only, the tenant's Default
/// project's beating the tenant's; the on-demand resolver reads the env it is asked for.
async fn call_values_serve_the_default_project_first(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let (seal, _) = SealKey::generate();
    let store = ValuesStore::with_key(t.db.clone(), Some(seal)).serving("staging");
    let at = |scope: ValueScope, env: &str, name: &str| ValueKey {
        env_name: env.into(),
        ..key("acme", scope, name)
    };
    let project = ValueScope::Project(default_project_id("acme"));
    for (k, v) in [
        (at(ValueScope::Tenant, "staging", "URL"), "https://tenant"),
        (at(project.clone(), "staging", "URL"), "https://project"),
        (at(ValueScope::Tenant, "staging", "REGION"), "eu"),
        (at(ValueScope::Tenant, "local", "ONLY_LOCAL"), "x"),
    ] {
        store.env_set(&k, &env_write(v, None)).await.unwrap();
    }
    for (k, v) in [
        (at(ValueScope::Tenant, "staging", "TOKEN"), "tenant-token"),
        (at(project, "staging", "TOKEN"), "project-token"),
        (
            at(ValueScope::Tenant, "local", "LOCAL_TOKEN"),
            "local-token",
        ),
    ] {
        store
            .secret_set(&k, &secret_write(v, WriteMode::CreateNew))
            .await
            .unwrap();
    }
    let tool: kindgi_spec::ToolManifest = serde_json::from_value(serde_json::json!({
        "id": "acme.t", "version": "1.0.0", "description": "T",
        "input": {"type": "object"}, "output": {"type": "object"}}))
    .unwrap();
    let values: &dyn CallValues = &store;
    assert_eq!(values.served_env(), "staging");
    let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let env = values
        .env(
            "acme",
            None,
            &tool,
            &names(&["URL", "REGION", "ONLY_LOCAL"]),
        )
        .await
        .unwrap();
    assert_eq!(
        env.into_iter().collect::<Vec<_>>(),
        [
            ("REGION".to_owned(), "eu".to_owned()),
            ("URL".to_owned(), "https://project".to_owned())
        ]
    );
    assert!(
        values
            .env("other", None, &tool, &names(&["URL"]))
            .await
            .unwrap()
            .is_empty()
    );
    let secrets = values
        .secret_values("acme", None, &tool, &names(&["TOKEN", "LOCAL_TOKEN"]))
        .await
        .unwrap();
    assert_eq!(
        secrets.into_iter().collect::<Vec<_>>(),
        [("TOKEN".to_owned(), "project-token".to_owned())]
    );
    let resolver = values.secrets("acme", None, &tool).unwrap();
    assert_eq!(
        resolver.resolve("local", "LOCAL_TOKEN").await.unwrap(),
        "local-token"
    );
    assert_eq!(
        resolver.resolve("staging", "TOKEN").await.unwrap(),
        "project-token"
    );
    assert_eq!(
        resolver.resolve("staging", "NOPE").await.unwrap_err(),
        "secret \"NOPE\" is not set in env \"staging\" for this tenant; set it with `kindgi secrets set`"
    );
    // A run of another project reads that project's values first, then the tenant's (never
    // the Default project's).
    let other = "0b9f7c1e-3d2a-4f5b-8c6d-7e8f9a0b1c2d";
    store
        .env_set(
            &at(ValueScope::Project(other.into()), "staging", "REGION"),
            &env_write("us", None),
        )
        .await
        .unwrap();
    let env = values
        .env("acme", Some(other), &tool, &names(&["URL", "REGION"]))
        .await
        .unwrap();
    assert_eq!(
        env.into_iter().collect::<Vec<_>>(),
        [
            ("REGION".to_owned(), "us".to_owned()),
            ("URL".to_owned(), "https://tenant".to_owned())
        ]
    );
    let resolver = values.secrets("acme", Some(other), &tool).unwrap();
    assert_eq!(
        resolver.resolve("staging", "TOKEN").await.unwrap(),
        "tenant-token"
    );
    // Without a key a secret read fails the call (typed, never a value).
    let keyless: &dyn CallValues = &ValuesStore::new(t.db.clone());
    assert_eq!(keyless.served_env(), "local");
    assert!(
        keyless
            .secret_values("acme", None, &tool, &names(&["LOCAL_TOKEN"]))
            .await
            .is_err()
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
    env_revisions_conflicts_and_delete,
    env_pages_in_name_order_with_prefix,
    secrets_are_versioned_and_sealed,
    a_wrong_key_or_a_moved_row_does_not_open,
    revoked_secrets_stop_resolving,
    a_project_value_beats_the_tenants,
    budgets_refuse_oversized_input,
    call_values_serve_the_default_project_first,
);
