//! Looking a file up in a folder or the nearest ancestor that has it (a `.venv`, a
//! `node_modules` package): what detection and the TypeScript toolchain both need, in a leaf
//! so neither imports the other for it.

use std::path::{Path, PathBuf};

/// `dir/rel`, or the same under the nearest ancestor that has it.
pub fn find_upwards(dir: &Path, rel: &str) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join(rel)).find(|p| p.is_file())
}
