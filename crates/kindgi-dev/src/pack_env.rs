//! The environment pack code runs in. A supervised pack service starts from an empty
//! environment and gets only an allowlist: what its SDK and language need to start (the pack
//! protocol's platform names and prefixes, §7.3, the same lists the official SDKs keep), the
//! names the pack's index declares (`env.required` / `env.optional`), the pack protocol's
//! own tuning variables, and the names the operator adds (`--pack-env NAME`). The runtime's
//! own keys, tokens and database URL (`KINDGI_*` outside the protocol's, `DATABASE_URL`)
//! never reach pack code, whatever the pack declares: the official Python SDK keeps every
//! `KINDGI_*` variable for pack code, so `KINDGI_SECRETS_KEY` inherited by a service would
//! unseal every tenant's secrets. The build and index steps (which run pack code too: build
//! scripts, module imports) keep their inherited environment minus those reserved names,
//! since compilers and package managers need more than a service does.
//!
//! Per-call values (`kindgi env set`, tool `needsSpec.env`, secrets) travel in each call's
//! `ctx`, never through the process environment.

use std::ffi::OsString;

use kindgi_pack::service::env::{PLATFORM_ENV_NAMES, PLATFORM_ENV_PREFIXES};
use kindgi_spec::pack_index::IndexEnv;

/// The pack protocol's own variables (§7.2) an operator may set to tune a service; passed
/// on when set. The supervisor sets the rest (`PORT`, the token, `KINDGI_LOG_FORMAT`,
/// `KINDGI_PACK_ENV_CHECK`) itself.
pub const PROTOCOL_NAMES: &[&str] = &[
    "KINDGI_PACK_SERVICE_MAX_CONCURRENCY",
    "KINDGI_PACK_ENV_FILTER",
    "KINDGI_LOG_LEVEL",
    "KINDGI_LOG_LEVELS",
    "NO_COLOR",
];

/// A name pack code never gets: the runtime's own (`KINDGI_*` outside
/// [`PROTOCOL_NAMES`]: the secrets key, API tokens, the database URL, …) and `DATABASE_URL`.
pub fn is_reserved(name: &str) -> bool {
    (name.starts_with("KINDGI_") && !PROTOCOL_NAMES.contains(&name)) || name == "DATABASE_URL"
}

/// `--pack-env NAME`: `name` when it is a plain variable name that is not reserved (a clap
/// value parser).
pub fn operator_name(name: &str) -> Result<String, String> {
    let plain = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !plain {
        return Err(format!(
            "{name:?} is not a variable name (letters, digits and _, not starting with a digit)"
        ));
    }
    if is_reserved(name) {
        return Err(format!(
            "{name} is one of the runtime's own variables (KINDGI_*, DATABASE_URL), which never reach pack code"
        ));
    }
    Ok(name.to_owned())
}

/// Whether a supervised service keeps `name` from the runtime's environment.
fn kept(name: &str, declared: Option<&IndexEnv>, operator: &[String]) -> bool {
    if is_reserved(name) {
        return false;
    }
    // The platform's names and prefixes are the pack service's own (§7.3): one list. `PORT`
    // among them is set by the supervisor after these.
    PLATFORM_ENV_NAMES.contains(&name)
        || PLATFORM_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
        || PROTOCOL_NAMES.contains(&name)
        || operator.iter().any(|o| o == name)
        || declared.is_some_and(|d| d.required.iter().chain(&d.optional).any(|n| n == name))
}

/// The variables of `from` a pack service starts with (before the supervisor adds its own).
pub fn service_env(
    from: impl IntoIterator<Item = (OsString, OsString)>,
    declared: Option<&IndexEnv>,
    operator: &[String],
) -> Vec<(OsString, OsString)> {
    from.into_iter()
        .filter(|(k, _)| k.to_str().is_some_and(|k| kept(k, declared, operator)))
        .collect()
}

/// The reserved names set in this process's environment (removed from a build or index
/// command's inherited environment).
pub fn reserved_names() -> Vec<OsString> {
    std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| k.to_str().is_some_and(is_reserved))
        .collect()
}
