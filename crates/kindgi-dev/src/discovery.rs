//! The discovery file, `.kindgirc.json` in the pack folder: where the dev server listens and
//! its API key, in the shape the official CLI reads (platform-api §12.1), so `kindgi runs …`
//! — ours or the official `kindgi-cli` — run in the pack folder need no flags.
//!
//! ```json
//! {"apiUrl": "http://127.0.0.1:4000", "token": "kgi_…", "tenantId": "default",
//!  "userId": "dev", "packServicePort": 41234, "pid": 4242, "packId": "my-pack"}
//! ```
//!
//! `packServicePort` is the *marker* the official CLI looks for ("written by `kindgi dev`":
//! a number `packServicePort` or a string `packServiceToken`). The official `kindgi dev`
//! also writes `packServiceToken`, but only its own next boot reads it back (to reuse the
//! token of its pack-service front); the CLI's API commands never do, so we do not write the
//! pack service's token anywhere — the file holds the API key only. `pid` and `packId` are
//! ours (additive). A file from before this shape (`url` instead of `apiUrl`) still reads.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's name.
pub const FILE_NAME: &str = ".kindgirc.json";

/// The user id the dev server's key stands for.
pub const DEV_USER: &str = "dev";

/// What the file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Discovery {
    /// The API's base URL (`url` in files written before the official shape).
    #[serde(alias = "url")]
    pub api_url: String,
    /// The dev API key.
    pub token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The port of the pack service serving when the file was written (the marker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack_service_port: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack_id: Option<String>,
}

/// The port of an `http://host:port` URL.
pub fn port_of(url: &str) -> Option<u16> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    authority.rsplit_once(':')?.1.parse().ok()
}

/// Writes `dir/.kindgirc.json` (owner-only permissions, 0600: it holds an API key), through
/// a temporary file so a reader sees the old file or the new one.
pub fn write(dir: &Path, d: &Discovery) -> std::io::Result<PathBuf> {
    let path = dir.join(FILE_NAME);
    let text = serde_json::to_string_pretty(d).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!("{FILE_NAME}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        // Created 0600: the key is never readable by others, not even for a moment.
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    std::io::Write::write_all(&mut file, format!("{text}\n").as_bytes())?;
    file.sync_all()?;
    drop(file);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// The nearest `.kindgirc.json` in `start` or a folder above it, with its path.
pub fn find(start: &Path) -> Option<(PathBuf, Result<Discovery, String>)> {
    let path = start
        .ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())?;
    let parsed = std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()));
    Some((path, parsed))
}
