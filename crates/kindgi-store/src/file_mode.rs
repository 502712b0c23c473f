//! Owner-only SQLite files. A database holds run inputs and outputs, journals and API-key
//! hashes, so the main file is created mode 0600 *before* SQLite opens it (SQLite then gives
//! its `-wal` and `-shm` files the main file's mode). An existing file, `-wal` or `-shm`
//! with group or other bits is tightened to 0600 at open, with a warning on the log naming
//! the file and the mode it had: the server keeps running, and the data stops being readable
//! by other users from then on.

use std::path::Path;

use crate::StoreError;

/// The mode every database file gets.
pub const DATABASE_FILE_MODE: u32 = 0o600;

/// The files SQLite keeps for the database at `path`.
pub fn sqlite_files(path: &Path) -> [std::path::PathBuf; 3] {
    let with = |suffix: &str| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        std::path::PathBuf::from(p)
    };
    [path.to_owned(), with("-wal"), with("-shm")]
}

/// Create the database file owner-only if it is missing, and tighten the modes of the
/// existing main, `-wal` and `-shm` files. Other platforms: nothing to do.
pub fn prepare_sqlite_file(path: &str) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        unix::prepare(Path::new(path))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::{OpenOptions, Permissions};
    use std::io::ErrorKind;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    use std::path::Path;

    use super::{DATABASE_FILE_MODE, sqlite_files};
    use crate::StoreError;

    fn io_error(path: &Path, what: &str, e: &std::io::Error) -> StoreError {
        StoreError::InvalidUrl {
            url: path.display().to_string(),
            reason: format!("{what}: {e}"),
        }
    }

    pub(super) fn prepare(path: &Path) -> Result<(), StoreError> {
        // `create_new` with mode 0600: the file exists with the right mode before SQLite (or
        // anything else) writes a byte. A file that appeared meanwhile is handled below.
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(DATABASE_FILE_MODE)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            // A missing folder and the like: SQLite's own open reports it with its context.
            Err(_) => return Ok(()),
        }
        for file in sqlite_files(path) {
            let meta = match std::fs::metadata(&file) {
                Ok(m) => m,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(io_error(&file, "cannot read the file's mode", &e)),
            };
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                std::fs::set_permissions(&file, Permissions::from_mode(DATABASE_FILE_MODE))
                    .map_err(|e| {
                        io_error(
                            &file,
                            &format!(
                                "the file is readable by other users (mode {mode:o}) and cannot be restricted to 0600; run `chmod 600` on it"
                            ),
                            &e,
                        )
                    })?;
                tracing::warn!(
                    file = %file.display(),
                    old_mode = format!("{mode:o}"),
                    "database file was readable by other users; its mode is now 600"
                );
            }
        }
        Ok(())
    }
}
