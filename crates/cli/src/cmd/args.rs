//! Arguments as the official CLI checks them, for the commands that copy it (`conversations`,
//! `guardrails`, `projects`, `tenant`): a required positional (``Missing required argument:
//! <label>``), a flag that was given a value (``--<name> takes a value``), a JSON argument
//! given inline or as `@<file>` (capped), and slugs.

use serde_json::Value;

use crate::api::CliError;

/// The largest `@<file>` read.
pub const MAX_JSON_BYTES: u64 = 4 * 1024 * 1024;

/// `value`, or the official usage error naming `label`.
pub fn required(value: Option<String>, label: &str) -> Result<String, CliError> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| CliError::Usage(format!("Missing required argument: {label}")))
}

/// A flag that, when given, must have a value (trimmed).
pub fn given(value: Option<String>, name: &str) -> Result<Option<String>, CliError> {
    match value {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Err(CliError::Usage(format!("--{name} takes a value"))),
        Some(v) => Ok(Some(v.trim().to_owned())),
    }
}

/// JSON given inline or as `@<file>` (`--spec`, `--input`): an object or any value.
pub fn json_input(flag: &str, raw: &str) -> Result<Value, CliError> {
    let text = match raw.strip_prefix('@') {
        Some(path) => {
            let len = std::fs::metadata(path)
                .map_err(|e| {
                    CliError::Usage(format!("--{flag} @{path}: cannot read the file: {e}"))
                })?
                .len();
            if len > MAX_JSON_BYTES {
                return Err(CliError::Usage(format!(
                    "--{flag} @{path}: the file is over {MAX_JSON_BYTES} bytes"
                )));
            }
            std::fs::read_to_string(path).map_err(|e| {
                CliError::Usage(format!("--{flag} @{path}: cannot read the file: {e}"))
            })?
        }
        None => raw.to_owned(),
    };
    serde_json::from_str(&text).map_err(|e| CliError::Usage(format!("Malformed JSON input: {e}")))
}

/// A project slug as the official CLI sends one: `^[a-z0-9][a-z0-9-]{0,62}$`.
pub fn is_project_slug(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// A workspace slug: lowercase letters, digits and single hyphens, a letter or digit at
/// both ends, at most 63 characters.
pub fn is_tenant_slug(s: &str) -> bool {
    is_project_slug(s) && !s.ends_with('-') && !s.contains("--")
}

/// A name as a slug, as the official CLI makes one: lowercase ASCII letters and digits, each
/// run of anything else one `-`, none at either end, at most 63 characters (accents are not
/// folded here: a non-ASCII letter is a separator).
pub fn slug_of(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed: String = out.trim_matches('-').chars().take(63).collect();
    trimmed.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_made_and_checked_as_the_official_cli_does() {
        assert_eq!(slug_of("Support bot"), "support-bot");
        assert_eq!(slug_of("  --A  b!! "), "a-b");
        assert_eq!(slug_of("!!"), "");
        assert!(is_project_slug("a-b--c"));
        assert!(!is_project_slug("-a"));
        assert!(!is_tenant_slug("a--b"));
        assert!(is_tenant_slug("acme-1"));
        assert_eq!(
            required(None, "project-id").unwrap_err(),
            CliError::Usage("Missing required argument: project-id".into())
        );
        assert!(given(Some(" ".into()), "name").is_err());
    }
}
