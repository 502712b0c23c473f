//! The pack service's environment rules: which variables the env filter keeps (declared
//! names, `KINDGI_*`, the platform's own), and which required names are missing.
//! Pure functions over name lists; the process entry applies them to the real environment.

use kindgi_spec::pack_index::IndexEnv;

/// Platform variables every implementation keeps (identical in TS/PY/JVM).
pub const PLATFORM_ENV_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "HOSTNAME",
    "USER",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "PWD",
    "SHLVL",
    "_",
    "__CF_USER_TEXT_ENCODING",
    "NODE_ENV",
    "NODE_VERSION",
    "YARN_VERSION",
    "NODE_OPTIONS",
    "NODE_EXTRA_CA_CERTS",
    "JAVA_HOME",
    "JAVA_VERSION",
    "JAVA_TOOL_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "_JAVA_OPTIONS",
    "VIRTUAL_ENV",
    "PORT",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "K_SERVICE",
    "K_REVISION",
    "K_CONFIGURATION",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_EXECUTION_ENV",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "ECS_CONTAINER_METADATA_URI",
    "ECS_CONTAINER_METADATA_URI_V4",
    "IDENTITY_ENDPOINT",
    "IDENTITY_HEADER",
    "MSI_ENDPOINT",
    "MSI_SECRET",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_AUTHORITY_HOST",
];

/// Prefixes of platform variables the filter keeps.
pub const PLATFORM_ENV_PREFIXES: &[&str] =
    &["LC_", "PYTHON", "OTEL_", "CLOUD_RUN_", "CONTAINER_APP_"];

/// Whether the env filter keeps `name`.
pub fn keeps(name: &str, declared: Option<&IndexEnv>) -> bool {
    name.starts_with("KINDGI_")
        || PLATFORM_ENV_NAMES.contains(&name)
        || PLATFORM_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
        || declared.is_some_and(|env| {
            env.required.iter().any(|n| n == name) || env.optional.iter().any(|n| n == name)
        })
}

/// The names the filter drops, sorted.
pub fn dropped<'a>(
    names: impl IntoIterator<Item = &'a str>,
    declared: Option<&IndexEnv>,
) -> Vec<String> {
    let mut out: Vec<String> = names
        .into_iter()
        .filter(|n| !keeps(n, declared))
        .map(str::to_owned)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The `env-dropped` message.
pub fn dropped_message(names: &[String]) -> String {
    let noun = if names.len() == 1 {
        "a variable".to_owned()
    } else {
        format!("{} variables", names.len())
    };
    format!(
        "Dropped {noun} the pack doesn't declare: {} (declare them in the pack's env, or set \
         KINDGI_PACK_ENV_FILTER=off)",
        names.join(", ")
    )
}

/// Required names whose value is unset or empty (whitespace counts as set), in index order.
pub fn missing(declared: Option<&IndexEnv>, get: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let Some(env) = declared else {
        return Vec::new();
    };
    env.required
        .iter()
        .filter(|name| get(name).is_none_or(|v| v.is_empty()))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> IndexEnv {
        IndexEnv {
            required: vec!["A".into(), "B".into()],
            optional: vec!["O".into()],
        }
    }

    #[test]
    fn filter_keeps_declared_kindgi_and_platform() {
        let names = [
            "A",
            "O",
            "X",
            "KINDGI_LOG_FORMAT",
            "LC_ALL",
            "AWS_SECRET_ACCESS_KEY",
            "K_SERVICE",
        ];
        assert_eq!(dropped(names, Some(&env())), ["AWS_SECRET_ACCESS_KEY", "X"]);
        assert_eq!(dropped(["A"], None), ["A"]);
    }

    #[test]
    fn missing_counts_empty_not_whitespace() {
        let got = missing(Some(&env()), |n| match n {
            "A" => Some(String::new()),
            "B" => Some(" ".into()),
            _ => None,
        });
        assert_eq!(got, ["A"]);
    }

    #[test]
    fn message_says_a_variable_for_one() {
        assert!(dropped_message(&["X".into()]).starts_with("Dropped a variable the pack"));
        assert!(dropped_message(&["X".into(), "Y".into()]).starts_with("Dropped 2 variables"));
    }
}
