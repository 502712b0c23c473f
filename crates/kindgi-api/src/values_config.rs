//! The served env and the secrets key a host runs `/v1/env` and `/v1/secrets` under
//! ([`ValuesConfig`]), held by the state; the process environment's when the host gives
//! none. A leaf: the state holds it, the routes read it.

use std::sync::{Arc, OnceLock};

use kindgi_store::seal::SealKey;
use kindgi_store::values::DEFAULT_SERVED_ENV;

/// The secrets key as configured.
#[derive(Debug, Clone)]
pub enum KeyState {
    Ready(SealKey),
    /// No key configured: secret writes answer 503 saying how to set one.
    Missing,
    /// A key is configured but unusable (the reason names the variable or file, never the key).
    Invalid(String),
}

/// The served env and the secrets key.
#[derive(Debug, Clone)]
pub struct ValuesConfig {
    pub served_env: String,
    pub key: KeyState,
}

impl ValuesConfig {
    /// A configuration from its parts.
    pub fn new(served_env: impl Into<String>, key: Option<SealKey>) -> ValuesConfig {
        ValuesConfig {
            served_env: served_env.into(),
            key: key.map_or(KeyState::Missing, KeyState::Ready),
        }
    }

    /// `KINDGI_ENV` (default `local`) and the key from `KINDGI_SECRETS_KEY[_FILE]`.
    pub fn from_env() -> ValuesConfig {
        let served_env = std::env::var("KINDGI_ENV")
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| DEFAULT_SERVED_ENV.to_owned());
        if !is_env_name(&served_env) {
            tracing::warn!(
                served_env = %clip(&served_env),
                "KINDGI_ENV is not an env name ([a-z][a-z0-9-]{{0,62}}): every env and secret write will be refused"
            );
        }
        let key = match SealKey::from_env() {
            Ok(Some(key)) => KeyState::Ready(key),
            Ok(None) => KeyState::Missing,
            Err(e) => {
                tracing::warn!(error = %e, "the secrets key is not usable; secret writes will be refused");
                KeyState::Invalid(e.to_string())
            }
        };
        ValuesConfig { served_env, key }
    }

    /// The key, when it is usable.
    pub fn seal_key(&self) -> Option<SealKey> {
        match &self.key {
            KeyState::Ready(k) => Some(k.clone()),
            _ => None,
        }
    }
}

static PROCESS_CONFIG: OnceLock<Arc<ValuesConfig>> = OnceLock::new();

impl ValuesConfig {
    /// The process environment's configuration ([`ValuesConfig::from_env`], read once):
    /// what a state holds until the host gives its own.
    pub fn process() -> Arc<ValuesConfig> {
        PROCESS_CONFIG
            .get_or_init(|| Arc::new(ValuesConfig::from_env()))
            .clone()
    }
}

/// Whether `s` is an env name: `[a-z][a-z0-9-]{0,62}`.
pub fn is_env_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// Echo at most 200 characters of client input.
pub fn clip(s: &str) -> String {
    s.chars().take(200).collect()
}
