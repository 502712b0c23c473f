//! [`HostError`]: why a host could not start. Each names what failed and where; none
//! carries a secret (a pack token is named by its environment variable, never shown).

use std::path::PathBuf;

/// A host that could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("the configuration {path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("the environment variable {var}: {message}")]
    EnvVar { var: &'static str, message: String },
    #[error("the database {target} could not be opened: {message}")]
    Database { target: String, message: String },
    #[error("the model settings (KINDGI_MODEL…) are not usable: {message}")]
    Model { message: String },
    #[error(
        "the pack service {url}: its token variable {var} is not set (or empty); export {var} with the service's token"
    )]
    MissingToken { url: String, var: String },
    #[error("the pack service {url}: {message}")]
    BadPackService { url: String, message: String },
    #[error("the pack index {path} for {url}: {message}")]
    BadIndex {
        url: String,
        path: PathBuf,
        message: String,
    },
    #[error(transparent)]
    Folder(#[from] kindgi_dev::DevError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
}
