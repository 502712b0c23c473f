//! SQLite database files are owner-only (0600): created so before SQLite writes to them, and
//! tightened when an existing file is looser. Stats the main file, `-wal` and `-shm` after
//! real writes, while the database is open (WAL mode keeps both side files then).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use kindgi_store::Database;
use kindgi_store::file_mode::sqlite_files;
use kindgi_store::tokens::TokenStore;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

async fn write_some(db: &Database) {
    db.migrate().await.unwrap();
    let tokens = TokenStore::new(db.clone());
    for _ in 0..5 {
        tokens.create("acme", None).await.unwrap();
    }
}

fn assert_owner_only(path: &Path) {
    for file in sqlite_files(path) {
        assert_eq!(
            mode(&file),
            0o600,
            "{} must be owner-only (0600)",
            file.display()
        );
    }
}

#[tokio::test]
async fn new_database_files_are_created_0600() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kindgi.db");
    let db = Database::connect(path.to_str().unwrap()).await.unwrap();
    write_some(&db).await;
    assert_owner_only(&path);
    db.close().await;
}

#[tokio::test]
async fn existing_loose_files_are_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let db = Database::connect(path.to_str().unwrap()).await.unwrap();
    write_some(&db).await;
    db.close().await;
    // An older release left them world-readable.
    for file in sqlite_files(&path) {
        if file.exists() {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    assert_eq!(mode(&path), 0o644);
    let db = Database::connect(path.to_str().unwrap()).await.unwrap();
    write_some(&db).await;
    assert_owner_only(&path);
    db.close().await;
}
