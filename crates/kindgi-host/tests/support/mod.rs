//! What the kindgi-host integration tests share: the repository root, runtimes over each
//! store backend ([`backends`]) for the runtime's database tests, and the runtime tests'
//! tool helpers ([`tools`]: one copy, kindgi-runtime's `tests/support`, included here).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod backends;
#[path = "../../../kindgi-runtime/tests/support/mod.rs"]
pub mod tools;

// Not every test file uses every helper.
#[allow(unused_imports)]
pub use backends::{ALL, Backend, builder, cleanup};
#[allow(unused_imports)]
pub use tools::{counting_tool, manifest, read_only, tool};

/// The repository root (where `target/`, `examples/` and `.venv` are).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
}
