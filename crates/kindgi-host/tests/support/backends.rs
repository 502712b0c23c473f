//! Runtimes over each store backend (memory, SQLite, PostgreSQL at
//! `KINDGI_TEST_DATABASE_URL`), for the runtime tests that run on every store: the database
//! ones are built as the host builds its runtime (`Runtime::over(db.ports())`).
#![allow(clippy::expect_used)]

use kindgi_runtime::{Runtime, RuntimeBuilder};
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;

/// Which store a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Sqlite,
    Postgres,
}

pub const ALL: [Backend; 3] = [Backend::Memory, Backend::Sqlite, Backend::Postgres];

/// A runtime builder over `backend`, and the database to clean up.
pub async fn builder(backend: Backend) -> (RuntimeBuilder, Option<TestDatabase>) {
    match backend {
        Backend::Memory => (Runtime::in_memory(), None),
        Backend::Sqlite | Backend::Postgres => {
            let kind = if backend == Backend::Sqlite {
                DatabaseKind::Sqlite
            } else {
                DatabaseKind::Postgres
            };
            let db = TestDatabase::new(kind)
                .await
                .expect("test database (PostgreSQL at KINDGI_TEST_DATABASE_URL)");
            (Runtime::over(db.db.ports()), Some(db))
        }
    }
}

pub async fn cleanup(db: Option<TestDatabase>) {
    if let Some(db) = db {
        db.cleanup().await.expect("test database cleanup");
    }
}
