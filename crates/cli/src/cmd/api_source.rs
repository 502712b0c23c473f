//! Where `kindgi runs` sends its calls, and with which key. The address and the key always
//! come from the same trust source, so a key is never sent to an address someone else chose:
//!
//! 1. **Given by the caller**: `--api`/`--token`, or `KINDGI_API_URL`/`KINDGI_API_TOKEN`
//!    (a flag wins over its variable, per field, as in the official CLI). Both or neither.
//! 2. **A discovery file**: the nearest `.kindgirc.json` (this folder or one above it), as
//!    `kindgi dev` writes it: `{"url" | "apiUrl": "http://127.0.0.1:P", "token": "kgi_…"}`.
//!    It is used only if it is owned by the current user, has no group/other permission bits
//!    (0600), and names a loopback address; otherwise the command stops and says which file
//!    and why. A key from the file goes only to the file's own address: an address given by
//!    the caller takes the file's key only when it is the same address (scheme, host —
//!    `localhost`, `127.0.0.1` and `[::1]` are one — and port compared), as the official CLI
//!    does (platform-api.md §12.1).
//!
//! A key given by the caller with no address given is refused rather than sent to the file's
//! address (the official CLI would send it; we do not, on purpose: the file may not be yours
//! to trust). `~/.kindgi/config.json` is not read yet.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The discovery file's name (what `kindgi dev` writes).
pub const FILE_NAME: &str = ".kindgirc.json";

/// The address and key to use, and where they came from (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiSource {
    pub url: String,
    pub token: String,
}

/// What the caller gave: flags first, then the environment, per field.
#[derive(Debug, Clone, Default)]
pub struct Given {
    pub url: Option<String>,
    pub token: Option<String>,
}

impl Given {
    /// `--api`/`--token` over `KINDGI_API_URL`/`KINDGI_API_TOKEN`; empty values count as unset.
    pub fn from_flags_and_env(api: Option<&str>, token: Option<&str>) -> Given {
        let pick = |flag: Option<&str>, var: &str| {
            flag.map(str::to_owned)
                .or_else(|| std::env::var(var).ok())
                .filter(|s| !s.trim().is_empty())
        };
        Given {
            url: pick(api, "KINDGI_API_URL"),
            token: pick(token, "KINDGI_API_TOKEN"),
        }
    }
}

/// Decide the address and key for a command run in `cwd`. `Err` is the message to print.
pub fn resolve(given: &Given, cwd: &Path) -> Result<ApiSource, String> {
    if let (Some(url), Some(token)) = (&given.url, &given.token) {
        return Ok(ApiSource {
            url: url.clone(),
            token: token.clone(),
        });
    }
    if given.token.is_some() {
        return Err(
            "an API key is given (--token or KINDGI_API_TOKEN) but no address: pass --api URL (or KINDGI_API_URL) too; a key you give is never sent to an address read from a file".to_owned(),
        );
    }
    let Some(path) = find(cwd) else {
        return Err(match &given.url {
            Some(_) => "no API key: pass --token KEY (or KINDGI_API_TOKEN); `kindgi tokens create` makes one".to_owned(),
            None => "no API to talk to: run `kindgi dev` in the pack folder (it writes .kindgirc.json), or pass --api URL --token KEY (KINDGI_API_URL, KINDGI_API_TOKEN)".to_owned(),
        });
    };
    let file = read_trusted(&path)?;
    match &given.url {
        None => Ok(file),
        Some(url) if same_address(url, &file.url) => Ok(ApiSource {
            url: url.clone(),
            token: file.token,
        }),
        Some(url) => Err(format!(
            "no API key for {url}: the key in {} is for {}, and is sent only there; pass --token KEY (or KINDGI_API_TOKEN) for {url}",
            path.display(),
            file.url
        )),
    }
}

/// The nearest discovery file in `start` or a folder above it.
pub fn find(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())
}

/// Read `path` if it is safe to trust: ours, 0600, loopback.
pub fn read_trusted(path: &Path) -> Result<ApiSource, String> {
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
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{shown} is not valid JSON: {e}"))?;
    let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    let url = field("apiUrl").or_else(|| field("url")).ok_or_else(|| {
        format!("{shown} names no address (a string `apiUrl` or `url`); delete it and restart `kindgi dev`, or pass --api URL --token KEY")
    })?;
    let token = field("token").filter(|t| !t.is_empty()).ok_or_else(|| {
        format!("{shown} holds no key (a string `token`); delete it and restart `kindgi dev`, or pass --api URL --token KEY")
    })?;
    if !is_loopback_url(&url) {
        return Err(format!(
            "{shown} names {url}, which is not a loopback address (127.0.0.1, [::1], localhost); a discovery file is trusted only for a local dev server. Delete the file, or pass --api URL --token KEY"
        ));
    }
    Ok(ApiSource { url, token })
}

#[cfg(unix)]
fn check_owner_and_mode(path: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "{} belongs to another user (uid {}, you are {me}), so its address and key are not used; delete it, or pass --api URL --token KEY",
            path.display(),
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{} is readable or writable by other users (mode {mode:o}), so its address and key are not used; run `chmod 600 {}` (it holds an API key), or pass --api URL --token KEY",
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
}
