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
    /// A pack in a language this runtime does not build or serve (the official `java` and
    /// `scala` templates): say what it does support instead of "no pack here".
    #[error(
        "{dir}: a {language} pack ({file}) — this runtime does not build or serve {language} packs. \
         It runs TypeScript, Python and Rust packs from a folder (kindgi dev, kindgi server --pack-dir), \
         and a pack service in any language that speaks pack protocol v2 by its URL \
         (kindgi server --pack-url URL --pack-token-env NAME --pack-index FILE)"
    )]
    UnsupportedLanguage {
        dir: PathBuf,
        language: &'static str,
        /// The build file that told us the language (`pom.xml`, `build.sbt`, …).
        file: &'static str,
    },
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
    /// The pack's discovery found no tool, guardrail, agent or flow source yet (the official
    /// indexer's `discovery-empty`; the official `minimal` template). Not fatal: `kindgi dev`
    /// stays up and loads them when one is saved.
    #[error(
        "{dir}: no tools, guardrails, agents or flows yet — add one under the folders kindgi.config.ts discovers; it loads when you save it"
    )]
    NoPrimitives { dir: PathBuf },
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

/// The code the official TypeScript indexer ends with when discovery found no source file.
pub const DISCOVERY_EMPTY: &str = "discovery-empty";

impl DevError {
    /// The official indexer's failure code, from its last-words line
    /// `kindgi-index: <code>: <message>` (the indexer reports its code only in that line, so
    /// it is read here, once, where its output enters; nothing else looks at the text).
    pub fn indexer_code(&self) -> Option<&str> {
        let DevError::Index { output, .. } = self else {
            return None;
        };
        output.lines().find_map(|line| {
            let rest = line.trim().strip_prefix("kindgi-index: ")?;
            let (code, _) = rest.split_once(": ")?;
            let well_formed = !code.is_empty()
                && code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            well_formed.then_some(code)
        })
    }
}
