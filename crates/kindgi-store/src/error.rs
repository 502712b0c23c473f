//! The storage failure domain: one error type for every store operation.

use thiserror::Error;

/// A storage failure. Domain outcomes (a tool that is not there, a duplicate version) are not
/// `StoreError`s: each store module returns its own domain error and wraps this one.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database URL or path cannot be used.
    #[error("database URL {url:?} is not usable: {reason}")]
    InvalidUrl { url: String, reason: String },
    /// Connecting (or opening the SQLite file) failed.
    #[error("cannot open database {target}: {source}")]
    Connect {
        target: String,
        #[source]
        source: sqlx::Error,
    },
    /// A migration statement failed.
    #[error("migration of {module} failed: {source}")]
    Migrate {
        module: &'static str,
        #[source]
        source: sqlx::Error,
    },
    /// A query failed; `op` names the operation, e.g. `tools.get_version`.
    #[error("database operation {op} failed: {source}")]
    Query {
        op: &'static str,
        #[source]
        source: sqlx::Error,
    },
    /// A stored row cannot be decoded (corrupt JSON, a bad column value).
    #[error("stored data for {what} is corrupt: {reason}")]
    Corrupt { what: String, reason: String },
}

impl StoreError {
    /// Wrap a query error with the operation's name.
    pub fn query(op: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
        move |source| StoreError::Query { op, source }
    }

    /// True when the underlying error is a unique-constraint violation (on either backend).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Query {
                source: sqlx::Error::Database(e),
                ..
            } => e.is_unique_violation(),
            _ => false,
        }
    }
}

impl StoreError {
    /// This error as a storage port's [`kindgi_core::StorageError`] for `op`, kept as its
    /// source: a unique-key violation is a conflict, a corrupt row is corrupt, anything else
    /// a backend failure.
    pub fn into_storage(self, op: &'static str) -> kindgi_core::StorageError {
        use kindgi_core::StorageError;
        if self.is_unique_violation() {
            return StorageError::Conflict {
                op,
                what: "a row with this key".into(),
                source: Some(Box::new(self)),
            };
        }
        match self {
            StoreError::Corrupt { what, reason } => StorageError::Corrupt {
                what,
                reason,
                source: None,
            },
            other => StorageError::backend(op, other),
        }
    }

    /// [`StoreError::into_storage`] as a closure (for `map_err`).
    pub fn storage(op: &'static str) -> impl FnOnce(StoreError) -> kindgi_core::StorageError {
        move |e| e.into_storage(op)
    }
}
