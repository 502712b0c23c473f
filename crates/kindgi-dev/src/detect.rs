//! Which kind of pack a folder holds, and how to build, index and serve it.
//!
//! * **Rust**: a `Cargo.toml`. `cargo build`, then the pack binary's `index` and `serve`.
//! * **Python**: a `pyproject.toml` with a `[tool.kindgi…]` section. `python -m kindgi.pack
//!   index|serve`, with the Python from `$KINDGI_PYTHON`, else a `.venv` in the pack folder or
//!   a folder above it (the repository's), else `python3`.
//! * **TypeScript** (best effort): a `package.json` with a `"kindgi"` key. The index is the
//!   one the TS tool chain wrote (`.kindgi/index.json`, `dist/index.json` or `index.json`),
//!   served by `@kindgi/handler-runtime`'s `dist/pack-service/main.js` from a `node_modules`
//!   in the pack folder or above it, with `$KINDGI_NODE` or `node`.

use std::path::{Path, PathBuf};

use crate::error::DevError;

/// A detected pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackKind {
    Rust,
    Python { python: PathBuf },
    TypeScript { node: PathBuf, main_js: PathBuf },
}

impl PackKind {
    pub fn label(&self) -> &'static str {
        match self {
            PackKind::Rust => "Rust",
            PackKind::Python { .. } => "Python",
            PackKind::TypeScript { .. } => "TypeScript",
        }
    }
}

/// Detects the pack in `dir` (already canonical). Python wins over Rust when a folder has
/// both a `pyproject.toml` with a kindgi section and a `Cargo.toml` (a Python pack with a
/// native extension).
pub fn detect(dir: &Path) -> Result<PackKind, DevError> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    if let Some(text) = read("pyproject.toml")
        && text
            .lines()
            .any(|l| l.trim_start().starts_with("[tool.kindgi"))
    {
        return Ok(PackKind::Python {
            python: python_for(dir),
        });
    }
    if dir.join("Cargo.toml").is_file() {
        return Ok(PackKind::Rust);
    }
    if let Some(text) = read("package.json") {
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| DevError::BadPack {
                dir: dir.to_owned(),
                message: format!("package.json is not valid JSON: {e}"),
            })?;
        if json.get("kindgi").is_some() {
            let main_js = find_upwards(
                dir,
                "node_modules/@kindgi/handler-runtime/dist/pack-service/main.js",
            )
            .ok_or_else(|| DevError::BadPack {
                dir: dir.to_owned(),
                message: "a TypeScript pack needs @kindgi/handler-runtime installed (node_modules/@kindgi/handler-runtime/dist/pack-service/main.js was not found here or above); run `npm install`".into(),
            })?;
            let node = std::env::var_os("KINDGI_NODE")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("node"));
            return Ok(PackKind::TypeScript { node, main_js });
        }
    }
    Err(DevError::NoPack {
        dir: dir.to_owned(),
    })
}

/// `$KINDGI_PYTHON`, else `.venv/bin/python` in `dir` or a folder above it, else `python3`.
pub fn python_for(dir: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("KINDGI_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    find_upwards(dir, ".venv/bin/python").unwrap_or_else(|| PathBuf::from("python3"))
}

/// `dir/rel`, or the same under the nearest ancestor that has it.
pub fn find_upwards(dir: &Path, rel: &str) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join(rel)).find(|p| p.is_file())
}
