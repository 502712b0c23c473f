//! What the kindgi-host integration tests share.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root (where `target/`, `examples/` and `.venv` are).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
}
