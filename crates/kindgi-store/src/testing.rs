//! Throw-away databases for tests (this crate's and other crates').
//!
//! [`TestDatabase::sqlite`] makes a fresh file in a temporary directory;
//! [`TestDatabase::postgres`] connects to `KINDGI_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) with a fresh schema `test_<random>` on the
//! `search_path`, so parallel tests never see each other's rows. Call
//! [`TestDatabase::cleanup`] at the end to drop the schema (or the directory).

use crate::{ConnectOptions, Database, DatabaseKind, StoreError};

/// Default PostgreSQL URL for tests.
pub const DEFAULT_TEST_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// The PostgreSQL URL tests use.
pub fn postgres_test_url() -> String {
    std::env::var("KINDGI_TEST_DATABASE_URL")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_TEST_DATABASE_URL.to_owned())
}

/// A migrated database that exists for one test.
#[derive(Debug)]
pub struct TestDatabase {
    pub db: Database,
    /// For SQLite: the file path (reopen it to test persistence).
    pub url: String,
    schema: Option<String>,
    dir: Option<tempfile::TempDir>,
}

impl TestDatabase {
    /// A fresh, migrated database of the given kind.
    pub async fn new(kind: DatabaseKind) -> Result<TestDatabase, StoreError> {
        match kind {
            DatabaseKind::Sqlite => TestDatabase::sqlite().await,
            DatabaseKind::Postgres => TestDatabase::postgres().await,
        }
    }

    /// A fresh SQLite file in a temporary directory, migrated.
    pub async fn sqlite() -> Result<TestDatabase, StoreError> {
        let dir = tempfile::tempdir().map_err(|e| StoreError::InvalidUrl {
            url: "<tempdir>".into(),
            reason: e.to_string(),
        })?;
        let path = dir.path().join("kindgi-test.db");
        let url = path.to_string_lossy().into_owned();
        let db = Database::connect(&url).await?;
        db.migrate().await?;
        Ok(TestDatabase {
            db,
            url,
            schema: None,
            dir: Some(dir),
        })
    }

    /// A fresh schema on the test PostgreSQL server, migrated.
    pub async fn postgres() -> Result<TestDatabase, StoreError> {
        let url = postgres_test_url();
        let schema = format!("test_{}", uuid::Uuid::new_v4().simple());
        let options = ConnectOptions {
            postgres_schema: Some(schema.clone()),
            max_connections: Some(5),
        };
        let db = Database::connect_with(&url, &options).await?;
        db.migrate().await?;
        Ok(TestDatabase {
            db,
            url,
            schema: Some(schema),
            dir: None,
        })
    }

    /// Connect again to the same database (a new handle, as after a restart).
    pub async fn reopen(&self) -> Result<Database, StoreError> {
        let options = ConnectOptions {
            postgres_schema: self.schema.clone(),
            max_connections: Some(5),
        };
        let db = Database::connect_with(&self.url, &options).await?;
        db.migrate().await?;
        Ok(db)
    }

    /// The PostgreSQL schema name, if any.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// Close the pools and drop the schema (PostgreSQL) or the directory (SQLite).
    pub async fn cleanup(mut self) -> Result<(), StoreError> {
        self.db.close().await;
        if let Some(schema) = self.schema.take() {
            drop_schema(&self.url, &schema).await?;
        }
        drop(self.dir.take());
        Ok(())
    }
}

/// Drop a test schema over a fresh connection (the test may have closed its pool already).
async fn drop_schema(url: &str, schema: &str) -> Result<(), StoreError> {
    use sqlx::Connection as _;
    let mut conn =
        sqlx::PgConnection::connect(url)
            .await
            .map_err(|source| StoreError::Connect {
                target: crate::db::redact(url),
                source,
            })?;
    sqlx::query(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
        .execute(&mut conn)
        .await
        .map_err(StoreError::query("testing.drop_schema"))?;
    let _ = conn.close().await;
    Ok(())
}

impl Drop for TestDatabase {
    /// A safety net for tests that never call [`TestDatabase::cleanup`] (or panic first):
    /// drop the PostgreSQL schema from a helper thread with its own runtime, so the shared
    /// test database does not fill up with abandoned schemas.
    fn drop(&mut self) {
        let Some(schema) = self.schema.take() else {
            return;
        };
        let url = self.url.clone();
        let handle = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                let _ = rt.block_on(drop_schema(&url, &schema));
            }
        });
        let _ = handle.join();
    }
}
