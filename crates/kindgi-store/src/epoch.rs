//! Change epochs: cheap, cross-process "did anything change?" counters for one database,
//! so readers may cache what only changes when someone writes it — API keys
//! (a revocation must take effect on the next request, whichever process revoked) and tool
//! versions (immutable except for their tombstone).
//!
//! **SQLite file.** An epoch is the length of a small append-only file beside the database
//! (`<db>-keys.epoch`, `<db>-registry.epoch`, mode 0600): a writer appends one byte after
//! its change commits (`O_APPEND` writes of one byte are atomic between processes), and a
//! reader's check is one `fstat` of a file it holds open — no query, no lock. A cache entry
//! remembers the epoch it was filled at and is used only while the epoch is unchanged.
//!
//! Every process that writes the database sees these files. A file that cannot be opened
//! disables the epoch (and so the cache) with a warning; it never refuses a request.
//!
//! **PostgreSQL** (other hosts may write it): triggers notify each change as it commits and
//! every process `LISTEN`s, moving in-memory counters on ([`listen`]); no epoch while not
//! listening. An in-memory SQLite database has no epochs, and callers then do not cache.

mod listen;

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::sync::Arc;

/// What an epoch counts changes of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpochKind {
    /// API keys and service accounts.
    Keys,
    /// The tool registry.
    Registry,
}

/// The longest a writer waits to hear its own change announced ([`Epochs::announced`]).
pub const ANNOUNCE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// A change about to be made (see [`Epochs::before_change`]).
#[derive(Debug, Clone, Copy)]
#[must_use = "pass it to Epochs::announced once the change committed"]
pub struct Change {
    kind: EpochKind,
    /// Notifications heard before it (`None`: not listening; nothing to wait for).
    heard: Option<u64>,
}

/// The epochs of one database (none for in-memory SQLite).
#[derive(Debug, Clone, Default)]
pub struct Epochs {
    keys: Option<Arc<File>>,
    registry: Option<Arc<File>>,
    notified: Option<Arc<listen::Notified>>,
}

/// The PostgreSQL triggers that announce changes (applied by [`crate::Database::migrate`];
/// this module takes no `Database`, which owns its [`Epochs`]).
pub(crate) use listen::DDL;

fn open(path: &Path) -> Option<Arc<File>> {
    match OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
    {
        Ok(f) => Some(Arc::new(f)),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "change epoch unavailable; reads are not cached");
            None
        }
    }
}

impl Epochs {
    /// The epochs beside the SQLite file `db_path`.
    pub fn beside(db_path: &str) -> Epochs {
        Epochs {
            keys: open(Path::new(&format!("{db_path}-keys.epoch"))),
            registry: open(Path::new(&format!("{db_path}-registry.epoch"))),
            notified: None,
        }
    }

    /// The epochs of the PostgreSQL database behind `pool`, from its change notifications.
    pub fn notified(pool: sqlx::PgPool) -> Epochs {
        Epochs {
            notified: Some(Arc::new(listen::Notified::new(pool))),
            ..Epochs::default()
        }
    }

    fn file(&self, kind: EpochKind) -> Option<&Arc<File>> {
        match kind {
            EpochKind::Keys => self.keys.as_ref(),
            EpochKind::Registry => self.registry.as_ref(),
        }
    }

    /// The epoch now, or `None` when there is none (do not cache).
    pub fn current(&self, kind: EpochKind) -> Option<u64> {
        if let Some(n) = &self.notified {
            return n.current(kind);
        }
        self.file(kind)?.metadata().ok().map(|m| m.len())
    }

    /// Waits until this process has seen the epoch of `kind` move from `before` (what
    /// [`Epochs::current`] said earlier): a change another process committed since is then
    /// in force here. SQLite file epochs see changes synchronously, so this returns at once;
    /// on PostgreSQL it waits for the change's notification (from `None`: until listening).
    pub async fn moved_past(&self, kind: EpochKind, before: Option<u64>) {
        if let Some(n) = &self.notified {
            n.moved_past(kind, before).await;
        }
    }

    /// Before a change of `kind`: what [`Epochs::announced`] waits past once it committed.
    pub fn before_change(&self, kind: EpochKind) -> Change {
        Change {
            kind,
            heard: self.notified.as_ref().and_then(|n| n.heard(kind)),
        }
    }

    /// After `change` committed: marks it, as [`Epochs::bump`] does, and on PostgreSQL waits
    /// (at most [`ANNOUNCE_WAIT`]) until this process has heard the change's own notification,
    /// so that other processes have it too by the time the writer answers its caller.
    pub async fn announced(&self, change: Change) {
        self.bump(change.kind);
        if let (Some(n), Some(before)) = (&self.notified, change.heard)
            && !n.heard_past(change.kind, before, ANNOUNCE_WAIT).await
        {
            tracing::warn!(
                "a change's notification was not heard back within {} ms; other hosts may answer from their caches until it arrives",
                ANNOUNCE_WAIT.as_millis()
            );
        }
    }

    /// Marks a committed change: every cache filled before it is stale from now on.
    pub fn bump(&self, kind: EpochKind) {
        if let Some(n) = &self.notified {
            n.bump_local(kind);
        }
        if let Some(f) = self.file(kind)
            && let Err(e) = (&**f).write_all(b".")
        {
            tracing::warn!(error = %e, "cannot mark a change epoch");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bump_from_another_handle_is_seen_at_once() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let db = dir.path().join("k.db").display().to_string();
        let reader = Epochs::beside(&db);
        let writer = Epochs::beside(&db);
        let before = reader.current(EpochKind::Keys);
        assert!(before.is_some());
        writer.bump(EpochKind::Keys);
        assert_ne!(reader.current(EpochKind::Keys), before);
        assert_eq!(
            reader.current(EpochKind::Registry),
            writer.current(EpochKind::Registry)
        );
        assert_eq!(Epochs::default().current(EpochKind::Keys), None);
    }
}
