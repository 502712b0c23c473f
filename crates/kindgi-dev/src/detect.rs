//! Which kind of pack a folder holds, and how to build, index and serve it.
//!
//! * **Rust**: a `Cargo.toml`. `cargo build`, then the pack binary's `index` and `serve`.
//! * **Python**: a `pyproject.toml` with a `[tool.kindgi…]` section. `python -m kindgi.pack
//!   index|serve`, with the Python from `$KINDGI_PYTHON`, else a `.venv` in the pack folder or
//!   a folder above it (the repository's), else `python3`.
//! * **TypeScript**: a `kindgi.config.{ts,mts,mjs,js,cjs}` (what the official scaffolds,
//!   `kindgi init`, write and the official indexer reads), or a `package.json` with a
//!   `"kindgi"` key or an `@kindgi/sdk` / `@kindgi/handler-runtime` dependency. Indexed by
//!   `@kindgi/handler-runtime`'s indexer and served by its pack service, from a
//!   `node_modules` in the pack folder or above it, with the Node [`crate::typescript`]
//!   picks.
//! * **Java / Scala** (a `pom.xml`, `build.gradle[.kts]`, `build.sbt`, `build.sc`: the
//!   official `java` and `scala` templates): refused with a message naming what this runtime
//!   runs ([`DevError::UnsupportedLanguage`]), not "no pack here".

use std::path::{Path, PathBuf};

use crate::error::DevError;
use crate::typescript;
// Kept at its old path (`detect::find_upwards`).
pub use crate::upwards::find_upwards;

/// A detected pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackKind {
    Rust,
    Python {
        python: PathBuf,
    },
    /// `runtime`: the `@kindgi/handler-runtime` package folder the pack resolves.
    TypeScript {
        node: PathBuf,
        runtime: PathBuf,
    },
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
/// native extension); a `kindgi.config.*` wins over a `Cargo.toml` (it names the pack's
/// language as plainly as a file can).
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
    if typescript::config_file(dir).is_some() {
        return typescript_pack(dir);
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
        if names_kindgi(&json) {
            return typescript_pack(dir);
        }
    }
    if let Some((language, file)) = jvm_build(dir) {
        return Err(DevError::UnsupportedLanguage {
            dir: dir.to_owned(),
            language,
            file,
        });
    }
    Err(DevError::NoPack {
        dir: dir.to_owned(),
    })
}

/// The JVM build files the official `java` and `scala` templates (and ordinary JVM projects)
/// carry, with the language each stands for: a pack we can name but not run.
const JVM_BUILDS: [(&str, &str); 5] = [
    ("build.sbt", "Scala"),
    ("pom.xml", "Java"),
    ("build.gradle", "Java"),
    ("build.gradle.kts", "Java"),
    ("build.sc", "Scala"),
];

/// The language and build file of a JVM project in `dir`, if it is one.
fn jvm_build(dir: &Path) -> Option<(&'static str, &'static str)> {
    JVM_BUILDS
        .iter()
        .find(|(file, _)| dir.join(file).is_file())
        .map(|(file, language)| (*language, *file))
}

/// A `package.json` that says it is a Kindgi pack: a `"kindgi"` key, or the official SDK
/// or pack runtime among its dependencies.
fn names_kindgi(json: &serde_json::Value) -> bool {
    json.get("kindgi").is_some()
        || ["dependencies", "devDependencies"].iter().any(|deps| {
            ["@kindgi/sdk", "@kindgi/handler-runtime"]
                .iter()
                .any(|name| json[deps].get(name).is_some())
        })
}

/// A TypeScript pack in `dir`: it needs `@kindgi/handler-runtime` to resolve from there.
fn typescript_pack(dir: &Path) -> Result<PackKind, DevError> {
    let runtime = typescript::find_runtime(dir).ok_or_else(|| DevError::BadPack {
        dir: dir.to_owned(),
        message: typescript::missing_runtime_message(),
    })?;
    Ok(PackKind::TypeScript {
        node: typescript::node_for(&runtime),
        runtime,
    })
}

/// `$KINDGI_PYTHON`, else `.venv/bin/python` in `dir` or a folder above it, else `python3`.
pub fn python_for(dir: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("KINDGI_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    find_upwards(dir, ".venv/bin/python").unwrap_or_else(|| PathBuf::from("python3"))
}
