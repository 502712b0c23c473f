//! Does a delivery prove its sender (platform-api.md §9.2 step 4)? The two signature kinds a
//! webhook trigger takes ([`SignatureConfig`]):
//!
//! * `hmac-sha256`: the trigger's header (matched case-insensitively) starts with its
//!   `prefix`; the rest, trimmed, is 64 hex characters or 43 base64 characters and `=`; it
//!   must equal the HMAC-SHA256 of the raw body under the secret's UTF-8 bytes.
//! * `standard-webhooks`: `webhook-id`, `webhook-timestamp` (`^\d{1,15}$`, within the
//!   tolerance of this clock, else `stale`) and `webhook-signature`, space-separated
//!   `v1,<base64>` (several, for key rotation: one match is enough) over
//!   `<id>.<timestamp>.<body>`, keyed by the base64 after `whsec_`.
//!
//! Every comparison is `ring::hmac::verify`'s, in constant time. A refusal names only which
//! of three things was wrong ([`Refusal`]); the sender learns none of it (one 401 body).

use axum::http::HeaderMap;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kindgi_core::webhook::{DEFAULT_TOLERANCE_SECONDS, SignatureConfig, SignatureEncoding};
use ring::hmac;

/// Why a delivery was refused (a fire's `detail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    SignatureMissing,
    SignatureInvalid,
    Stale,
}

impl Refusal {
    pub fn detail(self) -> &'static str {
        match self {
            Refusal::SignatureMissing => "signature-missing",
            Refusal::SignatureInvalid => "signature-invalid",
            Refusal::Stale => "stale",
        }
    }
}

/// The Standard Webhooks headers.
pub const SW_ID: &str = "webhook-id";
pub const SW_TIMESTAMP: &str = "webhook-timestamp";
pub const SW_SIGNATURE: &str = "webhook-signature";
/// Signatures looked at in one `webhook-signature` header, at most.
const MAX_SIGNATURES: usize = 16;

/// Checks `body` and `headers` against `config` under `secret`, at `now_secs` (Unix seconds).
pub fn verify(
    config: &SignatureConfig,
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
    now_secs: i64,
) -> Result<(), Refusal> {
    match config {
        SignatureConfig::HmacSha256 {
            encoding,
            header,
            prefix,
        } => verify_hmac(*encoding, header, prefix.as_deref(), secret, headers, body),
        SignatureConfig::StandardWebhooks { tolerance_seconds } => {
            let tolerance = tolerance_seconds.unwrap_or(DEFAULT_TOLERANCE_SECONDS);
            verify_standard(tolerance, secret, headers, body, now_secs)
        }
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn verify_hmac(
    encoding: SignatureEncoding,
    name: &str,
    prefix: Option<&str>,
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), Refusal> {
    let value = header(headers, name)
        .filter(|v| !v.trim().is_empty())
        .ok_or(Refusal::SignatureMissing)?;
    let rest = match prefix {
        Some(p) => value
            .trim_start()
            .strip_prefix(p)
            .ok_or(Refusal::SignatureInvalid)?,
        None => value,
    };
    let tag = decode_tag(encoding, rest.trim()).ok_or(Refusal::SignatureInvalid)?;
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    hmac::verify(&key, body, &tag).map_err(|_| Refusal::SignatureInvalid)
}

/// A 32-byte tag written as 64 hex characters or 43 base64 characters and `=`.
fn decode_tag(encoding: SignatureEncoding, text: &str) -> Option<Vec<u8>> {
    match encoding {
        SignatureEncoding::Hex if text.len() == 64 => hex::decode(text).ok(),
        SignatureEncoding::Base64 if text.len() == 44 && text.ends_with('=') => {
            STANDARD.decode(text).ok().filter(|t| t.len() == 32)
        }
        _ => None,
    }
}

fn verify_standard(
    tolerance: u32,
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
    now_secs: i64,
) -> Result<(), Refusal> {
    let (Some(id), Some(ts), Some(signatures)) = (
        header(headers, SW_ID),
        header(headers, SW_TIMESTAMP),
        header(headers, SW_SIGNATURE),
    ) else {
        return Err(Refusal::SignatureMissing);
    };
    let ts = ts.trim();
    if ts.is_empty() || ts.len() > 15 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Refusal::SignatureInvalid);
    }
    let at: i64 = ts.parse().map_err(|_| Refusal::SignatureInvalid)?;
    if (now_secs - at).abs() > i64::from(tolerance) {
        return Err(Refusal::Stale);
    }
    let key_bytes = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .map_err(|_| Refusal::SignatureInvalid)?;
    let key = hmac::Key::new(hmac::HMAC_SHA256, &key_bytes);
    let mut signed = Vec::with_capacity(id.len() + ts.len() + body.len() + 2);
    signed.extend_from_slice(id.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(ts.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(body);
    let matched = signatures
        .split_ascii_whitespace()
        .take(MAX_SIGNATURES)
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|b64| STANDARD.decode(b64).ok())
        .any(|tag| hmac::verify(&key, &signed, &tag).is_ok());
    if matched {
        Ok(())
    } else {
        Err(Refusal::SignatureInvalid)
    }
}

/// A new signing secret: 40 of `[A-Za-z0-9]`, or `whsec_<base64 of 32 random bytes>` for
/// Standard Webhooks.
pub fn generate_secret(config: &SignatureConfig) -> String {
    use rand::Rng as _;
    let mut rng = rand::rng();
    match config {
        SignatureConfig::StandardWebhooks { .. } => {
            let bytes: [u8; 32] = rng.random();
            format!("whsec_{}", STANDARD.encode(bytes))
        }
        SignatureConfig::HmacSha256 { .. } => (0..40)
            .map(|_| char::from(rng.sample(rand::distr::Alphanumeric)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn sign(secret: &[u8], data: &[u8]) -> Vec<u8> {
        hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), data)
            .as_ref()
            .to_vec()
    }

    #[test]
    fn hmac_hex_with_a_prefix() {
        let config = SignatureConfig::HmacSha256 {
            encoding: SignatureEncoding::Hex,
            header: "X-Hub-Signature-256".into(),
            prefix: Some("sha256=".into()),
        };
        let mut h = HeaderMap::new();
        assert_eq!(
            verify(&config, "s", &h, b"{}", 0),
            Err(Refusal::SignatureMissing)
        );
        let good = format!("sha256={}", hex::encode(sign(b"s", b"{}")));
        h.insert("x-hub-signature-256", HeaderValue::from_str(&good).unwrap());
        assert_eq!(verify(&config, "s", &h, b"{}", 0), Ok(()));
        assert_eq!(
            verify(&config, "t", &h, b"{}", 0),
            Err(Refusal::SignatureInvalid)
        );
        let bare = hex::encode(sign(b"s", b"{}"));
        h.insert("x-hub-signature-256", HeaderValue::from_str(&bare).unwrap());
        assert_eq!(
            verify(&config, "s", &h, b"{}", 0),
            Err(Refusal::SignatureInvalid)
        );
    }

    #[test]
    fn standard_webhooks_rotation_and_staleness() {
        let key = [7u8; 32];
        let secret = format!("whsec_{}", STANDARD.encode(key));
        let config = SignatureConfig::StandardWebhooks {
            tolerance_seconds: None,
        };
        let sig = STANDARD.encode(sign(&key, b"msg_1.1000.{}"));
        let mut h = HeaderMap::new();
        h.insert(SW_ID, HeaderValue::from_static("msg_1"));
        h.insert(SW_TIMESTAMP, HeaderValue::from_static("1000"));
        let both = format!("v1,AAAA v1,{sig}");
        h.insert(SW_SIGNATURE, HeaderValue::from_str(&both).unwrap());
        assert_eq!(verify(&config, &secret, &h, b"{}", 1100), Ok(()));
        assert_eq!(
            verify(&config, &secret, &h, b"{}", 1000 + 600),
            Err(Refusal::Stale)
        );
        assert_eq!(
            verify(&config, &secret, &h, b"{ }", 1000),
            Err(Refusal::SignatureInvalid)
        );
    }

    #[test]
    fn generated_secrets_have_the_official_shapes() {
        let s = generate_secret(&SignatureConfig::default());
        assert_eq!(s.len(), 40);
        assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
        let w = generate_secret(&SignatureConfig::StandardWebhooks {
            tolerance_seconds: None,
        });
        let raw = STANDARD.decode(w.strip_prefix("whsec_").unwrap()).unwrap();
        assert_eq!(raw.len(), 32);
    }
}
