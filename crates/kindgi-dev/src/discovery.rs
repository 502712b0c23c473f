//! The discovery file, `.kindgirc.json` in the pack folder: where the dev server listens and
//! its API key, so `kindgi runs …` run in the pack folder (or below it) need no flags.
//!
//! ```json
//! {"url": "http://127.0.0.1:4000", "token": "kgi_…", "pid": 4242, "packId": "my-pack"}
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's name.
pub const FILE_NAME: &str = ".kindgirc.json";

/// What the file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Discovery {
    pub url: String,
    pub token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack_id: Option<String>,
}

/// Writes `dir/.kindgirc.json` (owner-only permissions: it holds an API key).
pub fn write(dir: &Path, d: &Discovery) -> std::io::Result<PathBuf> {
    let path = dir.join(FILE_NAME);
    let text = serde_json::to_string_pretty(d).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!("{FILE_NAME}.tmp"));
    std::fs::write(&tmp, format!("{text}\n"))?;
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
