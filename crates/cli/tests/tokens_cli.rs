//! `kindgi tokens create|revoke` against a real SQLite file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_kindgi");

#[test]
fn create_prints_a_fresh_key_once_and_revoke_works() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let db = db.to_str().unwrap();
    let run = |args: &[&str]| Command::new(BIN).args(args).output().unwrap();
    let a = run(&["tokens", "create", "--database", db, "--tenant", "acme"]);
    let b = run(&["tokens", "create", "--database", db, "--tenant", "acme"]);
    assert!(a.status.success() && b.status.success());
    let (ka, kb) = (
        String::from_utf8(a.stdout).unwrap(),
        String::from_utf8(b.stdout).unwrap(),
    );
    assert_eq!(ka.lines().count(), 1);
    assert_ne!(ka, kb, "keys are random");
    // The key itself is not stored.
    let raw = std::fs::read(dir.path().join("k.db")).unwrap_or_default();
    let wal = std::fs::read(dir.path().join("k.db-wal")).unwrap_or_default();
    let key = ka.trim().as_bytes();
    assert!(!raw.windows(key.len()).any(|w| w == key) && !wal.windows(key.len()).any(|w| w == key));
    // The key id is on stderr; revoking it works, an unknown id exits 1.
    let stderr = String::from_utf8(a.stderr).unwrap();
    let key_id = stderr.split_whitespace().nth(3).unwrap();
    assert_eq!(key_id.len(), 16, "{stderr}");
    assert!(
        run(&["tokens", "revoke", "--database", db, "--key-id", key_id])
            .status
            .success()
    );
    assert_eq!(
        run(&[
            "tokens",
            "revoke",
            "--database",
            db,
            "--key-id",
            "ffffffffffffffff"
        ])
        .status
        .code(),
        Some(1)
    );
    // Bad tenant names are usage errors.
    let bad = run(&[
        "tokens",
        "create",
        "--database",
        db,
        "--tenant",
        "no spaces",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tenant name"));
    assert_eq!(
        run(&["tokens", "create", "--database", db]).status.code(),
        Some(2),
        "--tenant is required"
    );
}
