//! The one error every storage port returns: what failed, with the backend's own error kept
//! as the source (never flattened into a string), so a caller can match on the kind of
//! failure and a log can print the whole chain.

/// A backend's error, kept as the source of a [`StorageError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A storage port failed. Domain outcomes (a run that is not there when reading, a
/// compare-and-set that lost) are not errors: ports answer them as `Ok(None)` / `Ok(false)`.
///
/// The text of each variant includes its source's text: callers today put `Display` into
/// the messages runs and the API report (`journal-unavailable: …`), and the cause belongs
/// there.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The backend failed (a query, the connection, a poisoned lock); `op` names the
    /// operation (`runs.insert_run`, `waits.get_pause`, …).
    #[error("{op} failed: {source}")]
    Backend {
        op: &'static str,
        #[source]
        source: BoxError,
    },
    /// A row with this key already exists (an insert of a known id, a unique key).
    #[error("{op} failed: {what} already exists")]
    Conflict {
        op: &'static str,
        what: String,
        #[source]
        source: Option<BoxError>,
    },
    /// A journal entry of this `(run, sequence)` is already there: another process writes
    /// the run (it was taken over). The executor stops the run on it, without failing it.
    #[error("journal entry {run_id}#{sequence} already exists")]
    DuplicateSequence { run_id: String, sequence: u64 },
    /// The row an update names is not there.
    #[error("{op} failed: no {what}")]
    NotFound { op: &'static str, what: String },
    /// A stored row cannot be decoded (corrupt JSON, an unknown status).
    #[error("stored data for {what} is corrupt: {reason}")]
    Corrupt {
        what: String,
        reason: String,
        #[source]
        source: Option<BoxError>,
    },
}

impl StorageError {
    /// A backend failure of `op`, keeping `source`.
    pub fn backend(op: &'static str, source: impl Into<BoxError>) -> StorageError {
        StorageError::Backend {
            op,
            source: source.into(),
        }
    }

    /// A closure wrapping a backend error of `op` (for `map_err`).
    pub fn backend_of<E: Into<BoxError>>(op: &'static str) -> impl FnOnce(E) -> StorageError {
        move |e| StorageError::backend(op, e)
    }

    /// A row of `what` that cannot be decoded, because of `source`.
    pub fn corrupt(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StorageError {
        StorageError::Corrupt {
            what: what.into(),
            reason: source.to_string(),
            source: Some(Box::new(source)),
        }
    }

    /// A poisoned in-memory lock (a thread panicked holding it).
    pub fn poisoned(op: &'static str) -> StorageError {
        StorageError::backend(op, "the in-memory store's lock is poisoned")
    }

    /// The operation, where the variant names one.
    pub fn op(&self) -> Option<&'static str> {
        match self {
            StorageError::Backend { op, .. }
            | StorageError::Conflict { op, .. }
            | StorageError::NotFound { op, .. } => Some(op),
            StorageError::DuplicateSequence { .. } | StorageError::Corrupt { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn the_source_is_kept_and_named_in_the_text() {
        let io = std::io::Error::other("disk gone");
        let e = StorageError::backend("runs.get_run", io);
        assert_eq!(e.to_string(), "runs.get_run failed: disk gone");
        assert_eq!(e.op(), Some("runs.get_run"));
        let source = e.source().map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("disk gone"));
    }

    #[test]
    fn corrupt_rows_keep_their_decoder_error() {
        let bad = serde_json::from_str::<u32>("\"x\"").map(drop);
        let Err(json) = bad else {
            panic!("\"x\" is not a number");
        };
        let e = StorageError::corrupt("run r1", json);
        assert!(
            e.to_string()
                .starts_with("stored data for run r1 is corrupt: ")
        );
        assert!(e.source().is_some());
        assert_eq!(e.op(), None);
    }
}
