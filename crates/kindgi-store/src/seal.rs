//! Secret values at rest: AES-256-GCM under a key the operator provides.
//!
//! * **The key** ([`SealKey`]): 32 bytes, given as base64 in `KINDGI_SECRETS_KEY`, or in a file
//!   named by `KINDGI_SECRETS_KEY_FILE` that only its owner may read (mode 0600; a file with
//!   group or other bits is refused). [`SealKey::from_env`] reads them; [`dev_key`] is what
//!   `kindgi dev` uses: the key in `.kindgi/secrets.key`, generated (0600) the first time.
//!   Generate one with `head -c 32 /dev/urandom | base64`.
//! * **A sealed value** is `v1:` + base64(nonce ‖ ciphertext ‖ tag): a fresh random 96-bit nonce
//!   per value, and associated data ([`SealContext`]) binding the tenant, scope, env, name and
//!   version, so a ciphertext copied to another row (another tenant, name or version) does not
//!   open: [`SealKey::open`] fails with [`SealError::Undecryptable`], as it does under a wrong
//!   key.
//! * **A plaintext** leaves this module only as a [`SecretValue`], whose `Debug` and `Display`
//!   print `<redacted>` and whose bytes are overwritten when it is dropped. Nothing here logs,
//!   and no error carries a value or key bytes.

use std::path::{Path, PathBuf};

use aes_gcm::aead::{Aead as _, KeyInit as _, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use thiserror::Error;

/// The variable holding the key as base64 of 32 bytes.
pub const KEY_ENV: &str = "KINDGI_SECRETS_KEY";
/// The variable naming a file (mode 0600) that holds the key as base64.
pub const KEY_FILE_ENV: &str = "KINDGI_SECRETS_KEY_FILE";
/// Where `kindgi dev` keeps its key, under the project directory.
pub const DEV_KEY_FILE: &str = ".kindgi/secrets.key";
/// The prefix of every sealed value (the format's version).
const FORMAT: &str = "v1:";
const NONCE_LEN: usize = 12;
/// The longest key file read (a base64 key is 44 bytes; whitespace allowed around it).
const MAX_KEY_FILE: u64 = 4096;

/// How to configure a key, for error messages.
pub const KEY_HOWTO: &str = "set KINDGI_SECRETS_KEY to the base64 of 32 random bytes (`head -c 32 /dev/urandom | base64`), or KINDGI_SECRETS_KEY_FILE to a file holding it that only its owner can read (chmod 600)";

/// Why a key cannot be loaded, or a sealed value cannot be opened. Never carries key bytes or
/// a plaintext.
#[derive(Debug, Error)]
pub enum SealError {
    /// The key is not base64 of exactly 32 bytes. `from` says where it came from.
    #[error("the secrets key from {from} is not usable: {reason}; {KEY_HOWTO}")]
    InvalidKey { from: String, reason: String },
    /// The key file cannot be read or created.
    #[error("the secrets key file {path} cannot be used: {reason}")]
    KeyFile { path: PathBuf, reason: String },
    /// The key file can be read by others.
    #[error(
        "the secrets key file {path} has mode {mode:o}: others can read it; run `chmod 600 {path}`",
        path = path.display()
    )]
    KeyFileMode { path: PathBuf, mode: u32 },
    /// Both variables are set; only one may be.
    #[error("both {KEY_ENV} and {KEY_FILE_ENV} are set: set only one")]
    BothSet,
    /// A stored value is not in the sealed format.
    #[error("a stored secret value is not in the sealed format ({reason})")]
    Malformed { reason: &'static str },
    /// Authentication failed: another key sealed it, or it was moved from another row.
    #[error(
        "a stored secret value cannot be decrypted: the secrets key is not the one it was sealed with, or the value was moved from another secret, scope or version"
    )]
    Undecryptable,
    /// Encryption itself failed (not expected with a valid key).
    #[error("a secret value could not be encrypted")]
    Encrypt,
}

/// A secret's plaintext. `Debug` and `Display` print `<redacted>`; read it with
/// [`SecretValue::expose`]. Its bytes are overwritten when it is dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    pub fn new(value: String) -> SecretValue {
        SecretValue(value)
    }

    /// The plaintext. Do not log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretValue(<redacted>)")
    }
}

impl std::fmt::Display for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Drop for SecretValue {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.0).into_bytes();
        bytes.fill(0);
        std::hint::black_box(&bytes);
    }
}

/// What a sealed value belongs to: the associated data of its encryption.
#[derive(Debug, Clone, Copy)]
pub struct SealContext<'a> {
    pub tenant: &'a str,
    /// `tenant`, `org` or `project`.
    pub scope_kind: &'a str,
    /// The org or project id (empty for the tenant scope).
    pub scope_id: &'a str,
    pub env_name: &'a str,
    pub name: &'a str,
    pub version: i64,
}

impl SealContext<'_> {
    /// Length-prefixed fields, so no two contexts encode alike.
    fn encode(&self) -> Vec<u8> {
        let version = self.version.to_string();
        let fields = [
            self.tenant,
            self.scope_kind,
            self.scope_id,
            self.env_name,
            self.name,
            version.as_str(),
        ];
        let mut out = b"kindgi-secret-v1".to_vec();
        for f in fields {
            out.extend_from_slice(&(f.len() as u64).to_be_bytes());
            out.extend_from_slice(f.as_bytes());
        }
        out
    }
}

/// The key secret values are sealed under. `Debug` shows no key material.
#[derive(Clone)]
pub struct SealKey {
    /// Shared: the expanded key schedule is about 1 KiB, and clones are per request.
    cipher: std::sync::Arc<Aes256Gcm>,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(<redacted>)")
    }
}

impl SealKey {
    /// A key from its 32 bytes.
    pub fn from_bytes(bytes: &[u8; 32]) -> SealKey {
        SealKey {
            cipher: std::sync::Arc::new(Aes256Gcm::new(bytes.into())),
        }
    }

    /// A fresh random key, and its base64 text (to store).
    pub fn generate() -> (SealKey, String) {
        let mut bytes: [u8; 32] = rand::random();
        let text = STANDARD.encode(bytes);
        let key = SealKey::from_bytes(&bytes);
        bytes.fill(0);
        (key, text)
    }

    /// A key from base64 text (standard or URL-safe alphabet, surrounding whitespace ignored).
    /// `from` names the source for the error message.
    pub fn from_base64(text: &str, from: &str) -> Result<SealKey, SealError> {
        let invalid = |reason: &str| SealError::InvalidKey {
            from: from.to_owned(),
            reason: reason.to_owned(),
        };
        let text = text.trim();
        if text.is_empty() {
            return Err(invalid("it is empty"));
        }
        let decoded = STANDARD
            .decode(text)
            .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(text))
            .map_err(|_| invalid("it is not base64"))?;
        let mut bytes: [u8; 32] = decoded.as_slice().try_into().map_err(|_| {
            invalid(&format!(
                "it decodes to {} bytes, not 32 (AES-256 needs 32)",
                decoded.len()
            ))
        })?;
        let key = SealKey::from_bytes(&bytes);
        bytes.fill(0);
        Ok(key)
    }

    /// A key from a file holding its base64, readable by its owner only (mode 0600 or
    /// stricter on Unix).
    pub fn from_file(path: &Path) -> Result<SealKey, SealError> {
        let file_err = |reason: String| SealError::KeyFile {
            path: path.to_owned(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| file_err(e.to_string()))?;
        if !meta.is_file() {
            return Err(file_err("it is not a regular file".into()));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(SealError::KeyFileMode {
                    path: path.to_owned(),
                    mode,
                });
            }
        }
        if meta.len() > MAX_KEY_FILE {
            return Err(file_err(format!(
                "it is {} bytes; a key file holds one base64 key (44 characters)",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| file_err(e.to_string()))?;
        SealKey::from_base64(&text, &path.display().to_string())
    }

    /// The key the process environment gives: [`KEY_ENV`] or [`KEY_FILE_ENV`] (not both);
    /// `None` when neither is set (or both are empty).
    pub fn from_env() -> Result<Option<SealKey>, SealError> {
        SealKey::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`SealKey::from_env`] over any variable lookup (for tests and embedding hosts).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<SealKey>, SealError> {
        let inline = lookup(KEY_ENV).filter(|v| !v.trim().is_empty());
        let file = lookup(KEY_FILE_ENV).filter(|v| !v.trim().is_empty());
        match (inline, file) {
            (Some(_), Some(_)) => Err(SealError::BothSet),
            (Some(text), None) => SealKey::from_base64(&text, KEY_ENV).map(Some),
            (None, Some(path)) => SealKey::from_file(Path::new(path.trim())).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// Seal `plaintext` for `context`: `v1:` + base64(nonce ‖ ciphertext ‖ tag).
    pub fn seal(&self, context: &SealContext<'_>, plaintext: &str) -> Result<String, SealError> {
        let nonce_bytes: [u8; NONCE_LEN] = rand::random();
        let aad = context.encode();
        let sealed = self
            .cipher
            .encrypt(
                Nonce::from_slice(&nonce_bytes),
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: &aad,
                },
            )
            .map_err(|_| SealError::Encrypt)?;
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce_bytes);
        out.extend_from_slice(&sealed);
        Ok(format!("{FORMAT}{}", STANDARD.encode(out)))
    }

    /// Open a value [`SealKey::seal`] made for the same `context`.
    pub fn open(&self, context: &SealContext<'_>, sealed: &str) -> Result<SecretValue, SealError> {
        let body = sealed.strip_prefix(FORMAT).ok_or(SealError::Malformed {
            reason: "unknown format prefix",
        })?;
        let bytes = STANDARD.decode(body).map_err(|_| SealError::Malformed {
            reason: "not base64",
        })?;
        if bytes.len() < NONCE_LEN + 16 {
            return Err(SealError::Malformed {
                reason: "too short",
            });
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let aad = context.encode();
        let mut plain = self
            .cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| SealError::Undecryptable)?;
        match String::from_utf8(std::mem::take(&mut plain)) {
            Ok(text) => Ok(SecretValue::new(text)),
            Err(e) => {
                let mut raw = e.into_bytes();
                raw.fill(0);
                Err(SealError::Malformed {
                    reason: "the plaintext is not UTF-8",
                })
            }
        }
    }
}

/// `kindgi dev`'s key: the one in `<project_dir>/.kindgi/secrets.key`, created (mode 0600,
/// a fresh random key) when the file is missing. A file others can read is refused, as by
/// [`SealKey::from_file`].
pub fn dev_key(project_dir: &Path) -> Result<SealKey, SealError> {
    let path = project_dir.join(DEV_KEY_FILE);
    match std::fs::metadata(&path) {
        Ok(_) => SealKey::from_file(&path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_dev_key(&path),
        Err(e) => Err(SealError::KeyFile {
            path,
            reason: e.to_string(),
        }),
    }
}

fn create_dev_key(path: &Path) -> Result<SealKey, SealError> {
    use std::io::Write as _;
    let file_err = |reason: String| SealError::KeyFile {
        path: path.to_owned(),
        reason,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| file_err(e.to_string()))?;
    }
    let (key, text) = SealKey::generate();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut file) => {
            file.write_all(format!("{text}\n").as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| file_err(e.to_string()))?;
            Ok(key)
        }
        // Another process created it first: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => SealKey::from_file(path),
        Err(e) => Err(file_err(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(name: &str, version: i64) -> SealContext<'_> {
        SealContext {
            tenant: "acme",
            scope_kind: "tenant",
            scope_id: "",
            env_name: "local",
            name,
            version,
        }
    }

    #[test]
    fn seals_and_opens_and_binds_the_context() {
        let (key, _) = SealKey::generate();
        let sealed = key
            .seal(&ctx("API_KEY", 1), "s3cret-value")
            .unwrap_or_default();
        assert!(sealed.starts_with("v1:"));
        assert!(!sealed.contains("s3cret"));
        let opened = key
            .open(&ctx("API_KEY", 1), &sealed)
            .map(|v| v.expose().to_owned());
        assert_eq!(opened.ok().as_deref(), Some("s3cret-value"));
        assert!(matches!(
            key.open(&ctx("OTHER", 1), &sealed),
            Err(SealError::Undecryptable)
        ));
        assert!(matches!(
            key.open(&ctx("API_KEY", 2), &sealed),
            Err(SealError::Undecryptable)
        ));
        let (other, _) = SealKey::generate();
        assert!(matches!(
            other.open(&ctx("API_KEY", 1), &sealed),
            Err(SealError::Undecryptable)
        ));
        // Two seals of one value differ (fresh nonce).
        assert_ne!(
            key.seal(&ctx("API_KEY", 1), "s3cret-value")
                .unwrap_or_default(),
            sealed
        );
    }

    #[test]
    fn keys_parse_with_clear_errors_and_redact() {
        let (_, text) = SealKey::generate();
        assert!(SealKey::from_base64(&text, KEY_ENV).is_ok());
        let short = SealKey::from_base64("AAAA", KEY_ENV)
            .err()
            .map(|e| e.to_string());
        assert!(short.unwrap_or_default().contains("3 bytes, not 32"));
        let e = SealKey::from_lookup(|n| Some(format!("{n}-x"))).err();
        assert!(matches!(e, Some(SealError::BothSet)));
        assert!(matches!(SealKey::from_lookup(|_| None), Ok(None)));
        let (key, _) = SealKey::generate();
        assert_eq!(format!("{key:?}"), "SealKey(<redacted>)");
        let v = SecretValue::new("hunter2".into());
        assert_eq!(format!("{v} {v:?}"), "<redacted> SecretValue(<redacted>)");
    }
}
