//! The project directory (`ProjectStore`) on SQLite and PostgreSQL: put, get, rename, paging
//! by id, slug uniqueness per tenant (and across tenants for tenant settings), and tenant
//! isolation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kindgi_core::ports::{DirectoryWrite, ProjectDirectory, ProjectRecord, TenantSettings};
use kindgi_store::DatabaseKind;
use kindgi_store::projects::ProjectStore;
use kindgi_store::testing::TestDatabase;

fn project(tenant: &str, id: &str, slug: &str) -> ProjectRecord {
    ProjectRecord {
        tenant: tenant.into(),
        id: id.into(),
        name: format!("Project {slug}"),
        slug: slug.into(),
        description: None,
        created_at: 1,
        updated_at: 1,
    }
}

async fn directory(kind: DatabaseKind) {
    let t = TestDatabase::new(kind).await.unwrap();
    let store = ProjectStore::new(t.db.clone());
    let a = project("acme", "00000000-0000-4000-8000-00000000000a", "support");
    assert_eq!(
        store.put_project(&a).await.unwrap(),
        DirectoryWrite::Written
    );
    assert_eq!(store.project("acme", &a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(
        store.project("other", &a.id).await.unwrap(),
        None,
        "tenant-scoped"
    );

    // Same slug, same tenant: refused; another tenant may have it.
    let b = project("acme", "00000000-0000-4000-8000-00000000000b", "support");
    assert_eq!(
        store.put_project(&b).await.unwrap(),
        DirectoryWrite::SlugTaken
    );
    let theirs = project("other", "00000000-0000-4000-8000-00000000000c", "support");
    assert_eq!(
        store.put_project(&theirs).await.unwrap(),
        DirectoryWrite::Written
    );

    // A rename replaces the row, keeping its creation time.
    let b = project("acme", "00000000-0000-4000-8000-00000000000b", "billing");
    store.put_project(&b).await.unwrap();
    let mut renamed = a.clone();
    renamed.name = "Support bot".into();
    renamed.description = Some("answers".into());
    renamed.created_at = 99;
    renamed.updated_at = 5;
    store.put_project(&renamed).await.unwrap();
    let got = store.project("acme", &a.id).await.unwrap().unwrap();
    assert_eq!(
        (
            got.name.as_str(),
            got.description.as_deref(),
            got.created_at,
            got.updated_at
        ),
        ("Support bot", Some("answers"), 1, 5)
    );

    // Paging by id.
    let first = store.projects("acme", None, 1).await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].id, a.id);
    let rest = store.projects("acme", Some(&a.id), 10).await.unwrap();
    assert_eq!(
        rest.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
        [b.id.as_str()]
    );

    // Tenant settings: absent until set; slugs unique across tenants.
    assert_eq!(store.tenant_settings("acme").await.unwrap(), None);
    let s = TenantSettings {
        tenant: "acme".into(),
        name: "Acme Inc".into(),
        slug: "acme-inc".into(),
        created_at: 1,
        updated_at: 2,
    };
    assert_eq!(
        store.put_tenant_settings(&s).await.unwrap(),
        DirectoryWrite::Written
    );
    assert_eq!(
        store.tenant_settings("acme").await.unwrap(),
        Some(s.clone())
    );
    let clash = TenantSettings {
        tenant: "other".into(),
        ..s.clone()
    };
    assert_eq!(
        store.put_tenant_settings(&clash).await.unwrap(),
        DirectoryWrite::SlugTaken
    );
    let again = TenantSettings {
        name: "Acme".into(),
        updated_at: 3,
        ..s
    };
    assert_eq!(
        store.put_tenant_settings(&again).await.unwrap(),
        DirectoryWrite::Written
    );
    assert_eq!(
        store.tenant_settings("acme").await.unwrap().unwrap().name,
        "Acme"
    );

    // It survives a reopen (stored, not cached).
    let reopened = ProjectStore::new(t.reopen().await.unwrap());
    assert_eq!(reopened.project("acme", &b.id).await.unwrap(), Some(b));
    t.cleanup().await.unwrap();
}

#[tokio::test]
async fn the_project_directory_on_sqlite() {
    directory(DatabaseKind::Sqlite).await;
}

#[tokio::test]
async fn the_project_directory_on_postgres() {
    directory(DatabaseKind::Postgres).await;
}
