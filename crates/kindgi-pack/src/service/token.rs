//! How the pack token reaches the service without reaching pack code.
//!
//! Removing `KINDGI_PACK_SERVICE_TOKEN` from the environment is not enough: the kernel keeps
//! the environment the process was started with, and pack code can read it back from
//! `/proc/self/environ`. So (an extension of the process contract):
//! - `KINDGI_PACK_SERVICE_TOKEN_FILE` names a file holding the token, readable by its owner
//!   only; the service reads it and unlinks it (and its folder, when that is a
//!   `kindgi-pack-token*` folder and empty) before any pack code runs. `kindgi dev` starts
//!   Rust packs this way.
//! - When only `KINDGI_PACK_SERVICE_TOKEN` is given, `serve` on Unix writes it to such a file
//!   and re-executes itself without the variable (same PID, same arguments), so the new
//!   image's `/proc/self/environ` lacks it. If that cannot be done (no temp folder, the
//!   binary is gone), the variable is still removed from the live environment, as before.

use std::ffi::OsString;
use std::path::Path;
use std::sync::OnceLock;

pub(crate) const TOKEN_VAR: &str = "KINDGI_PACK_SERVICE_TOKEN";
pub(crate) const TOKEN_FILE_VAR: &str = "KINDGI_PACK_SERVICE_TOKEN_FILE";
/// The name every token folder starts with (the one `kindgi dev` makes, and the re-exec's).
pub const TOKEN_DIR_PREFIX: &str = "kindgi-pack-token";

/// What [`take`] found.
#[derive(Debug, Default)]
pub(crate) struct Stash {
    pub token: Option<String>,
    /// Why the token file could not be used (a `config-invalid` problem).
    pub problem: Option<String>,
}

static STASH: OnceLock<Stash> = OnceLock::new();

/// The stash, once [`take`] ran.
pub(crate) fn stashed() -> Option<&'static Stash> {
    STASH.get()
}

/// Takes the token out of the process (environment and file) once; later calls do nothing.
/// `reexec` allows the re-execution described in the module comment. Call only while the
/// process has a single thread.
pub(crate) fn take(reexec: bool, remove_vars: fn(&[OsString])) {
    if STASH.get().is_some() {
        return;
    }
    let file = std::env::var_os(TOKEN_FILE_VAR).filter(|p| !p.is_empty());
    let stash = match file {
        Some(path) => read_file(Path::new(&path)),
        None => {
            let token = std::env::var_os(TOKEN_VAR).map(|v| v.to_string_lossy().into_owned());
            if reexec && let Some(token) = &token {
                reexec_without(token);
            }
            Stash {
                token,
                problem: None,
            }
        }
    };
    if STASH.set(stash).is_ok() {
        remove_vars(&[OsString::from(TOKEN_VAR), OsString::from(TOKEN_FILE_VAR)]);
    }
}

/// Reads and unlinks a token file.
fn read_file(path: &Path) -> Stash {
    let problem = |what: String| Stash {
        token: None,
        problem: Some(format!(
            "{TOKEN_FILE_VAR} names {}, which {what}",
            path.display()
        )),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(path) {
            Err(e) => return problem(format!("cannot be read: {e}")),
            Ok(m) if m.mode() & 0o077 != 0 => {
                let _ = std::fs::remove_file(path);
                return problem(format!(
                    "others may read (mode {:o}); make it readable by its owner only (chmod 600)",
                    m.mode() & 0o777
                ));
            }
            Ok(_) => {}
        }
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return problem(format!("cannot be read: {e}")),
    };
    if let Err(e) = std::fs::remove_file(path) {
        return problem(format!(
            "could not be removed after reading ({e}), so pack code could read it too; put it \
             in a folder the service may write, or pass {TOKEN_VAR}"
        ));
    }
    if let Some(dir) = path.parent()
        && dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(TOKEN_DIR_PREFIX))
    {
        // Fails (and is left alone) unless empty.
        let _ = std::fs::remove_dir(dir);
    }
    Stash {
        token: Some(text),
        problem: None,
    }
}

/// Writes `token` to a private file and replaces this process with a fresh image of the
/// same binary that reads it. Returns only if that could not be done.
#[cfg(unix)]
fn reexec_without(token: &str) {
    use std::os::unix::process::CommandExt;
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let Ok(file) = TokenFile::write(token) else {
        return;
    };
    let path = file.path();
    let mut args = std::env::args_os();
    let arg0 = args.next();
    let mut cmd = std::process::Command::new(&exe);
    if let Some(arg0) = arg0 {
        cmd.arg0(arg0);
    }
    cmd.args(args)
        .env_remove(TOKEN_VAR)
        .env(TOKEN_FILE_VAR, &path);
    // Only returns on failure; then the file and folder are removed when `file` drops.
    let _ = cmd.exec();
}

#[cfg(not(unix))]
fn reexec_without(_token: &str) {}

/// A token written for a child service to read (`KINDGI_PACK_SERVICE_TOKEN_FILE`): a file
/// only its owner may read, in a private `kindgi-pack-token…` folder. The child unlinks both;
/// dropping this removes whatever is left.
#[derive(Debug)]
pub struct TokenFile {
    dir: tempfile::TempDir,
}

impl TokenFile {
    /// The variable that names the file.
    pub const VAR: &'static str = TOKEN_FILE_VAR;

    pub fn write(token: &str) -> std::io::Result<TokenFile> {
        use std::io::Write;
        let dir = tempfile::Builder::new()
            .prefix(TOKEN_DIR_PREFIX)
            .tempdir()?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options
            .open(dir.path().join("token"))?
            .write_all(token.as_bytes())?;
        Ok(TokenFile { dir })
    }

    pub fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("token")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_file_is_read_then_removed_with_its_folder() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("kindgi-pack-token-x");
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "tok-123\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let stash = read_file(&file);
        assert_eq!(stash.token.as_deref(), Some("tok-123\n"));
        assert!(stash.problem.is_none());
        assert!(!file.exists());
        assert!(!dir.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "tok").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let stash = read_file(&file);
        assert!(stash.token.is_none());
        let problem = stash.problem.unwrap();
        assert!(problem.contains("chmod 600"), "{problem}");
        let missing = read_file(&dir.path().join("nope"));
        assert!(missing.problem.unwrap().contains("cannot be read"));
    }
}
