//! [`DevError`]: why `kindgi dev` could not start (or had to stop). Each names what failed
//! and where, so the message alone tells the user what to fix.

use std::path::PathBuf;

/// A failure of the dev supervisor.
#[derive(Debug, thiserror::Error)]
pub enum DevError {
    #[error(
        "{dir}: no pack here — expected a Cargo.toml (Rust), a pyproject.toml with a [tool.kindgi] section (Python) or a kindgi.config.ts (TypeScript)"
    )]
    NoPack { dir: PathBuf },
    #[error("{dir}: {message}")]
    BadPack { dir: PathBuf, message: String },
    #[error("the pack in {dir} failed to build ({command}):\n{output}")]
    Build {
        dir: PathBuf,
        command: String,
        output: String,
    },
    #[error("the pack in {dir} failed to index ({command}):\n{output}")]
    Index {
        dir: PathBuf,
        command: String,
        output: String,
    },
    #[error("the pack index {path} is not valid: {message}")]
    BadIndex { path: PathBuf, message: String },
    #[error("could not run {command} in {dir}: {source}")]
    Spawn {
        command: String,
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the pack service of {pack} ({command}) failed to boot: {reason}")]
    Boot {
        pack: String,
        command: String,
        reason: String,
    },
    #[error("the dev database {path} could not be opened: {message}")]
    Database { path: PathBuf, message: String },
    #[error("the model settings (KINDGI_MODEL…) are not usable: {message}")]
    Model { message: String },
    #[error("could not listen on {addr}: {source}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the TypeScript file {path} could not be transformed to JavaScript (fix the file; kindgi dev rebuilds on save):\n{message}"
    )]
    Transform { path: PathBuf, message: String },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
