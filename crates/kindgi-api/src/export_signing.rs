//! The deployment's export signing key (platform-api.md §4 audit bundles, `OA:ExportSigningKey`):
//! an Ed25519 key the operator configures, what `POST /v1/approvals/{id}/audit-bundle` signs
//! with and `GET /v1/export-signing-keys` lists. None configured: exports answer `404
//! signing-not-configured` and the list is empty.
//!
//! Configured as the reference's runtime is: `KINDGI_EXPORT_SIGNING_KEY_PATH=<file>`, a PEM
//! PKCS#8 Ed25519 private key (`openssl genpkey -algorithm ed25519 -out export.pem`), or
//! `KINDGI_EXPORT_SIGNING_KEY`, the same file's text in base64 (`base64 < export.pem`, for
//! platforms that hand secrets over as environment variables). Read at start; a value that is
//! not such a key stops the start with the reason. (EC P-256 keys and KMS keys, which the
//! reference also takes, are not supported.) The key id is derived from the public key (`ex_` and 16
//! base64url characters), so the same key keeps its id. The private key never leaves the
//! process: no answer, log or stored row holds it.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use sha2::{Digest, Sha256};

/// The environment variable naming the key file.
pub const ENV_PATH: &str = "KINDGI_EXPORT_SIGNING_KEY_PATH";
/// The environment variable holding the key file's text, base64.
pub const ENV: &str = "KINDGI_EXPORT_SIGNING_KEY";
/// The largest key file read.
pub const MAX_KEY_FILE: u64 = 16 * 1024;

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410), before the 32 key bytes.
const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// Why the configured key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SigningKeyError {
    #[error("{ENV_PATH}: cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{ENV_PATH}: {path} is larger than {MAX_KEY_FILE} bytes")]
    TooLarge { path: String },
    #[error("{path} is not a PEM `PRIVATE KEY` (PKCS#8) block")]
    NotPem { path: String },
    #[error("{path} is not an Ed25519 PKCS#8 private key: {reason}")]
    NotEd25519 { path: String, reason: String },
}

/// The signing key.
pub struct ExportSigner {
    pair: Ed25519KeyPair,
    key_id: String,
}

impl std::fmt::Debug for ExportSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportSigner")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl ExportSigner {
    /// From PKCS#8 DER (v1, as openssl writes it, or v2).
    pub fn from_pkcs8(der: &[u8]) -> Result<ExportSigner, String> {
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der).map_err(|e| e.to_string())?;
        let digest = Sha256::digest(pair.public_key().as_ref());
        let id = URL_SAFE_NO_PAD.encode(digest);
        Ok(ExportSigner {
            key_id: format!("ex_{}", &id[..16]),
            pair,
        })
    }

    /// From a PEM `PRIVATE KEY` block's text.
    pub fn from_pem(text: &str, path: &str) -> Result<ExportSigner, SigningKeyError> {
        let not_pem = || SigningKeyError::NotPem {
            path: path.to_owned(),
        };
        let begin = "-----BEGIN PRIVATE KEY-----";
        let end = "-----END PRIVATE KEY-----";
        let start = text.find(begin).ok_or_else(not_pem)? + begin.len();
        let stop = text[start..].find(end).ok_or_else(not_pem)? + start;
        let body: String = text[start..stop]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let der = STANDARD.decode(body).map_err(|_| not_pem())?;
        ExportSigner::from_pkcs8(&der).map_err(|reason| SigningKeyError::NotEd25519 {
            path: path.to_owned(),
            reason,
        })
    }

    /// The key `KINDGI_EXPORT_SIGNING_KEY_PATH` names, else the one `KINDGI_EXPORT_SIGNING_KEY`
    /// holds (`None`: both unset or empty).
    pub fn from_env() -> Result<Option<ExportSigner>, SigningKeyError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if let Some(path) = var(ENV_PATH) {
            return ExportSigner::from_file(path.trim()).map(Some);
        }
        let Some(b64) = var(ENV) else {
            return Ok(None);
        };
        let not_pem = || SigningKeyError::NotPem {
            path: ENV.to_owned(),
        };
        let compact: String = b64.chars().filter(|c| !c.is_whitespace()).collect();
        let text = STANDARD
            .decode(compact)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(not_pem)?;
        ExportSigner::from_pem(&text, ENV).map(Some)
    }

    /// The key in the PEM file `path`.
    pub fn from_file(path: &str) -> Result<ExportSigner, SigningKeyError> {
        let read = |source| SigningKeyError::Read {
            path: path.to_owned(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(read)?;
        if meta.len() > MAX_KEY_FILE {
            return Err(SigningKeyError::TooLarge {
                path: path.to_owned(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        ExportSigner::from_pem(&text, path)
    }

    /// `ex_` and 16 base64url characters of the public key's SHA-256.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The raw 32-byte public key.
    pub fn public_key(&self) -> &[u8] {
        self.pair.public_key().as_ref()
    }

    /// The public key as PEM SPKI.
    pub fn public_key_pem(&self) -> String {
        let mut der = SPKI_PREFIX.to_vec();
        der.extend_from_slice(self.public_key());
        format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
            STANDARD.encode(der)
        )
    }

    /// `sha256:` and the hex SHA-256 of the raw public key.
    pub fn fingerprint(&self) -> String {
        format!("sha256:{}", hex::encode(Sha256::digest(self.public_key())))
    }

    /// The 64-byte Ed25519 signature of `bytes`.
    pub fn sign(&self, bytes: &[u8]) -> Vec<u8> {
        self.pair.sign(bytes).as_ref().to_vec()
    }
}

/// Whether `signature` is `public_key`'s (raw 32 bytes) Ed25519 signature of `bytes`.
pub fn verify(public_key: &[u8], bytes: &[u8], signature: &[u8]) -> bool {
    UnparsedPublicKey::new(&ED25519, public_key)
        .verify(bytes, signature)
        .is_ok()
}

/// The raw public key of a PEM SPKI Ed25519 key (what an export's `publicKey` holds).
pub fn public_key_from_pem(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .flat_map(|l| l.trim().chars())
        .collect();
    let der = STANDARD.decode(body).ok()?;
    der.strip_prefix(&SPKI_PREFIX[..])
        .filter(|k| k.len() == 32)
        .map(<[u8]>::to_vec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_and_verifies_through_the_pem_public_key() {
        let rng = ring::rand::SystemRandom::new();
        let der = Ed25519KeyPair::generate_pkcs8(&rng).map(|d| d.as_ref().to_vec());
        let signer = der.ok().and_then(|d| ExportSigner::from_pkcs8(&d).ok());
        let Some(signer) = signer else {
            panic!("a generated key reads back");
        };
        assert!(signer.key_id().starts_with("ex_") && signer.key_id().len() == 19);
        let sig = signer.sign(b"bundle");
        let public = public_key_from_pem(&signer.public_key_pem()).unwrap_or_default();
        assert!(verify(&public, b"bundle", &sig));
        assert!(!verify(&public, b"bundle!", &sig));
        assert!(ExportSigner::from_pem("nope", "k.pem").is_err());
    }
}
