//! Where an API command goes, and with which key: the official CLI's precedence
//! (platform-api.md §12.1), per field —
//!
//! `--url`/`--token` > `KINDGI_API_URL`/`KINDGI_API_TOKEN` > `./.kindgirc.json` (this folder
//! only; `kindgi dev` writes it) > `~/.kindgi/config.json`.
//!
//! Only the string fields `apiUrl` (and our older `url`) and `token` are read; a file that
//! is not JSON is an error. The address and the key come from one source: a key from
//! `--token` goes wherever the command goes (it was typed for this command), but a
//! `KINDGI_API_TOKEN` goes only with an address from `--url` or `KINDGI_API_URL` — never to
//! an address a config file names (a variable set for a hosted API must not reach whatever a
//! folder's `.kindgirc.json` points at; issue 19). With a file's address the file's own key
//! is used (with a note that the variable was not), and without one the command is refused
//! before anything is sent. A key read from a file goes only to the address stored beside it (compared after
//! normalising scheme, host — `localhost`, `127.0.0.1` and `[::1]` are one — default port
//! and trailing `/`); a file key without an address, or for another address, is refused
//! here, before anything is sent. `.kindgirc.json` is also used only when it belongs to the
//! current user, has no group/other permission bits (0600) and names a loopback address —
//! it is a local dev runtime's, and a folder is easy to be handed. `--hosted` ignores it.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The dev runtime's file, in the current folder.
pub const RC_FILE: &str = ".kindgirc.json";

/// The address and key to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub url: String,
    pub token: Option<String>,
    /// A note for stderr (the dev runtime's file wins over the home config's address).
    pub note: Option<String>,
}

/// What the command line and environment gave.
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub url: Option<String>,
    pub token: Option<String>,
    /// `token` is `KINDGI_API_TOKEN`'s (not `--token`'s).
    pub token_from_env: bool,
    pub hosted: bool,
}

impl Given {
    /// Flags over `KINDGI_API_URL`/`KINDGI_API_TOKEN`; empty values count as unset.
    pub fn from_flags_and_env(url: Option<&str>, token: Option<&str>, hosted: bool) -> Given {
        let pick = |flag: Option<&str>, var: &str| {
            flag.map(str::to_owned)
                .filter(|s| !s.trim().is_empty())
                .or_else(|| std::env::var(var).ok())
                .filter(|s| !s.trim().is_empty())
        };
        let flag_token = token.is_some_and(|t| !t.trim().is_empty());
        let token = pick(token, "KINDGI_API_TOKEN");
        Given {
            url: pick(url, "KINDGI_API_URL"),
            token_from_env: token.is_some() && !flag_token,
            token,
            hosted,
        }
    }
}

/// One config file's two fields.
#[derive(Debug, Clone, Default)]
struct FileFields {
    path: PathBuf,
    url: Option<String>,
    token: Option<String>,
}

/// Decide the address and key for a command `cmd` run in `cwd` with home folder `home`.
/// `Err` is the message to print (exit 1).
pub fn resolve(
    given: &Given,
    cwd: &Path,
    home: Option<&Path>,
    cmd: &str,
) -> Result<Resolved, String> {
    // An environment key does not go to a file's address, so a file may have to give both.
    let needs_files = given.url.is_none() || given.token.is_none() || given.token_from_env;
    let rc = if needs_files && !given.hosted {
        let path = cwd.join(RC_FILE);
        path.is_file().then(|| read_rc(&path)).transpose()?
    } else {
        None
    };
    let home_file = match home {
        Some(h) if needs_files => {
            let path = h.join(".kindgi").join("config.json");
            path.is_file().then(|| read_file(&path)).transpose()?
        }
        _ => None,
    };
    let files: Vec<&FileFields> = rc.iter().chain(home_file.iter()).collect();
    let url = given
        .url
        .clone()
        .or_else(|| files.iter().find_map(|f| f.url.clone()))
        .ok_or_else(|| {
            "API URL not configured. Set KINDGI_API_URL, pass --url=..., or run `kindgi auth login`.".to_owned()
        })?;
    // Where the address came from: the command line or environment, else the first file
    // that names one.
    let url_file = match given.url {
        Some(_) => None,
        None => files.iter().find(|f| f.url.is_some()).copied(),
    };
    let file_key = || match files.iter().find(|f| f.token.is_some()) {
        None => Ok(None),
        Some(f) => file_token(f, &url).map(Some),
    };
    let (token, env_note) = match (&given.token, url_file) {
        (Some(_), Some(f)) if given.token_from_env => {
            let shown = f.path.display();
            let Some(own) = file_key()? else {
                return Err(format!(
                    "KINDGI_API_TOKEN is not sent to {url}, which {shown} names: a key from the environment goes only with an address from KINDGI_API_URL or --url. Set KINDGI_API_URL too, pass --token, or add the address's own `token` to the file"
                ));
            };
            let note = format!(
                "kindgi {cmd}: KINDGI_API_TOKEN is not sent to {url} ({shown} names that address); the file's own key is used"
            );
            (Some(own), Some(note))
        }
        (Some(t), _) => (Some(t.clone()), None),
        (None, _) => (file_key()?, None),
    };
    let dev_note = match (&rc, &home_file) {
        (Some(rc), Some(h)) if given.url.is_none() => match (&rc.url, &h.url) {
            (Some(a), Some(b)) if !same_address(a, b) => Some(format!(
                "kindgi {cmd} goes to the kindgi dev runtime at {a} ({} says so). For {b}, pass --hosted.",
                rc.path.display()
            )),
            _ => None,
        },
        _ => None,
    };
    let note = match (dev_note, env_note) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    };
    Ok(Resolved {
        url: url.trim_end_matches('/').to_owned(),
        token,
        note,
    })
}

/// A file's key, if it may go to `url`.
fn file_token(f: &FileFields, url: &str) -> Result<String, String> {
    let token = f.token.clone().unwrap_or_default();
    match &f.url {
        Some(own) if same_address(own, url) => Ok(token),
        Some(own) => Err(format!(
            "the API key in {} is for {own}, and is sent only there; for {url}, pass --token (or KINDGI_API_TOKEN)",
            f.path.display()
        )),
        None => Err(format!(
            "the API key in {} names no address (`apiUrl`), so it is not sent; add `apiUrl`, or pass --token (or KINDGI_API_TOKEN)",
            f.path.display()
        )),
    }
}

/// Reads `apiUrl`/`url` and `token` from a JSON config file.
fn read_file(path: &Path) -> Result<FileFields, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown} cannot be read: {e}"))?;
    fields_of(path, &text)
}

fn fields_of(path: &Path, text: &str) -> Result<FileFields, String> {
    let shown = path.display();
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("{shown} is not valid JSON: {e}"))?;
    let field = |name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    Ok(FileFields {
        path: path.to_owned(),
        url: field("apiUrl").or_else(|| field("url")),
        token: field("token"),
    })
}

/// Reads `.kindgirc.json` if it is safe to trust: ours, 0600, loopback.
fn read_rc(path: &Path) -> Result<FileFields, String> {
    let shown = path.display();
    let mut file = std::fs::File::open(path).map_err(|e| format!("{shown} cannot be read: {e}"))?;
    // Check the file that was opened (not the path again), so it cannot be swapped between.
    let meta = file
        .metadata()
        .map_err(|e| format!("{shown} cannot be read: {e}"))?;
    check_owner_and_mode(path, &meta)?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut file, &mut text)
        .map_err(|e| format!("{shown} cannot be read: {e}"))?;
    let fields = fields_of(path, &text)?;
    if let Some(url) = &fields.url
        && !is_loopback_url(url)
    {
        return Err(format!(
            "{shown} names {url}, which is not a loopback address (127.0.0.1, [::1], localhost); a .kindgirc.json is trusted only for a local dev runtime. Delete the file, pass --hosted, or pass --url URL --token KEY"
        ));
    }
    Ok(fields)
}

#[cfg(unix)]
fn check_owner_and_mode(path: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "{} belongs to another user (uid {}, you are {me}), so its address and key are not used; delete it, pass --hosted, or pass --url URL --token KEY",
            path.display(),
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{} is readable or writable by other users (mode {mode:o}), so its address and key are not used; run `chmod 600 {}` (it holds an API key), or pass --url URL --token KEY",
            path.display(),
            path.display()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner_and_mode(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

/// Scheme, host and port of an `http(s)://` URL, with the default port filled in and the
/// loopback names made one.
fn address(url: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        (host.to_owned(), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p)),
            None => (authority.to_owned(), None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default_port,
    };
    let host = host.to_ascii_lowercase();
    let host = if is_loopback_host(&host) {
        "loopback".to_owned()
    } else {
        host
    };
    Some((scheme, host, port))
}

fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// True for an `http(s)://` URL whose host is a loopback address.
pub fn is_loopback_url(url: &str) -> bool {
    address(url).is_some_and(|(_, host, _)| host == "loopback")
}

/// True when two URLs name the same server (see the module docs).
pub fn same_address(a: &str, b: &str) -> bool {
    matches!((address(a), address(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls() {
        for u in [
            "http://127.0.0.1:4000",
            "http://localhost:1/",
            "http://[::1]:7070",
            "https://127.0.0.2",
        ] {
            assert!(is_loopback_url(u), "{u}");
        }
        for u in [
            "http://example.com:4000",
            "http://10.0.0.1",
            "http://127.0.0.1.evil.com",
            "ftp://127.0.0.1",
            "http://u@127.0.0.1",
            "127.0.0.1:80",
        ] {
            assert!(!is_loopback_url(u), "{u}");
        }
    }

    #[test]
    fn addresses_compare_after_normalising() {
        assert!(same_address(
            "http://localhost:4000/",
            "http://127.0.0.1:4000"
        ));
        assert!(same_address("HTTP://[::1]:80", "http://localhost"));
        assert!(!same_address(
            "http://127.0.0.1:4000",
            "http://127.0.0.1:4001"
        ));
        assert!(!same_address("https://127.0.0.1", "http://127.0.0.1"));
    }

    fn write(dir: &Path, name: &str, text: &str) {
        let path = dir.join(name);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).unwrap_or_default();
        }
        std::fs::write(&path, text).unwrap_or_default();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
    }

    #[test]
    fn precedence_is_per_field() {
        let Ok(cwd) = tempfile::tempdir() else { return };
        let Ok(home) = tempfile::tempdir() else {
            return;
        };
        write(
            home.path(),
            ".kindgi/config.json",
            r#"{"apiUrl":"http://127.0.0.1:2","token":"home"}"#,
        );
        let none = Given::default();
        let r = resolve(&none, cwd.path(), Some(home.path()), "x");
        assert_eq!(
            r.map(|r| (r.url, r.token)),
            Ok(("http://127.0.0.1:2".into(), Some("home".into())))
        );
        // The folder file wins, with its own key.
        write(
            cwd.path(),
            RC_FILE,
            r#"{"apiUrl":"http://127.0.0.1:1/","token":"rc"}"#,
        );
        let r = resolve(&none, cwd.path(), Some(home.path()), "x");
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (r.url.as_str(), r.token.as_deref()),
            ("http://127.0.0.1:1", Some("rc"))
        );
        assert!(r.note.is_some_and(|n| n.contains("pass --hosted")));
        // --hosted skips it.
        let hosted = Given {
            hosted: true,
            ..Given::default()
        };
        let r = resolve(&hosted, cwd.path(), Some(home.path()), "x");
        assert_eq!(r.map(|r| r.token), Ok(Some("home".into())));
        // A flag token goes wherever the address is.
        let t = Given {
            token: Some("flag".into()),
            ..Given::default()
        };
        let r = resolve(&t, cwd.path(), Some(home.path()), "x");
        assert_eq!(
            r.map(|r| (r.url, r.token)),
            Ok(("http://127.0.0.1:1".into(), Some("flag".into())))
        );
        // A file key is not sent to another address.
        let u = Given {
            url: Some("http://127.0.0.1:3".into()),
            ..Given::default()
        };
        let r = resolve(&u, cwd.path(), Some(home.path()), "x");
        assert!(r.is_err_and(|e| e.contains("is sent only there")));
        // The same address, written differently, takes it.
        let u = Given {
            url: Some("http://localhost:1".into()),
            ..Given::default()
        };
        let r = resolve(&u, cwd.path(), Some(home.path()), "x");
        assert_eq!(r.map(|r| r.token), Ok(Some("rc".into())));
        // Home fills what the folder file lacks.
        write(cwd.path(), RC_FILE, r#"{"apiUrl":"http://127.0.0.1:2"}"#);
        let r = resolve(&none, cwd.path(), Some(home.path()), "x");
        assert_eq!(r.map(|r| r.token), Ok(Some("home".into())));
        // Malformed JSON is fatal; no address anywhere says how to give one.
        write(cwd.path(), RC_FILE, "{nope");
        assert!(
            resolve(&none, cwd.path(), Some(home.path()), "x")
                .is_err_and(|e| e.contains("not valid JSON"))
        );
        let Ok(empty) = tempfile::tempdir() else {
            return;
        };
        let r = resolve(&none, empty.path(), Some(empty.path()), "x");
        assert!(r.is_err_and(|e| e.starts_with("API URL not configured")));
    }
}
