//! The dev server's API key: one per pack folder. Each start mints a fresh key and revokes
//! the one before it (rotation), and a clean stop revokes the current one, so a folder's dev
//! database holds at most one dev key that still authenticates — after a crash, the
//! crashed run's key, until the next start revokes it.
//!
//! The key's id (not the secret) is kept in `.kindgi/dev-key-id`. A dev database from before
//! that file existed has one live key per start ever made; the first start that finds no
//! file revokes every live non-expiring key of the dev tenant but its own — those are all
//! `kindgi dev`'s (a key minted by hand with an expiry is kept).

use std::path::{Path, PathBuf};

use kindgi_store::tokens::{CreatedKey, TokenError, TokenStore};

use crate::error::DevError;

/// The file, in the state folder, naming the current dev key.
pub const KEY_ID_FILE: &str = "dev-key-id";

fn key_id_path(state_dir: &Path) -> PathBuf {
    state_dir.join(KEY_ID_FILE)
}

fn db_error(state_dir: &Path, what: &str, e: impl std::fmt::Display) -> DevError {
    DevError::Database {
        path: state_dir.join("dev.db"),
        message: format!("{what}: {e}"),
    }
}

/// Mints this start's key for `tenant` and revokes the previous dev key(s).
pub async fn rotate(
    tokens: &TokenStore,
    state_dir: &Path,
    tenant: &str,
) -> Result<CreatedKey, DevError> {
    let path = key_id_path(state_dir);
    let previous = std::fs::read_to_string(&path)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    let key = tokens
        .create(tenant, None)
        .await
        .map_err(|e| db_error(state_dir, "cannot create the dev API key", e))?;
    write_key_id(&path, &key.key_id).map_err(|source| DevError::Io {
        what: "cannot record the dev API key's id in",
        path: path.clone(),
        source,
    })?;
    let stale: Vec<String> = match previous {
        Some(id) => vec![id],
        None => tokens
            .active_keys(tenant)
            .await
            .map_err(|e| db_error(state_dir, "cannot list the dev API keys", e))?
            .into_iter()
            .filter(|k| k.expires_at.is_none())
            .map(|k| k.key_id)
            .collect(),
    };
    for id in stale.iter().filter(|id| **id != key.key_id) {
        revoke(tokens, state_dir, id).await?;
    }
    Ok(key)
}

/// Revokes the dev key `key_id` (on a clean stop). Already gone is fine.
pub async fn retire(tokens: &TokenStore, state_dir: &Path, key_id: &str) -> Result<(), DevError> {
    revoke(tokens, state_dir, key_id).await
}

async fn revoke(tokens: &TokenStore, state_dir: &Path, key_id: &str) -> Result<(), DevError> {
    match tokens.revoke(key_id).await {
        Ok(()) | Err(TokenError::UnknownKey { .. }) => Ok(()),
        Err(e) => Err(db_error(
            state_dir,
            "cannot revoke the previous dev API key",
            e,
        )),
    }
}

/// Writes the id through a temporary file (owner-only), so a crash leaves the old or the new.
fn write_key_id(path: &Path, key_id: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, format!("{key_id}\n"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, path)
}
