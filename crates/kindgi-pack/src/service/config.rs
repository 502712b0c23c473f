//! The process contract's configuration: `--index`, `--module-root`, `--host` and the
//! `KINDGI_PACK_*` / `PORT` variables. Every problem is collected, so a person sees them all
//! at once (`config-invalid`).

use std::path::PathBuf;

/// The strict env check (not ready while a required name is missing) or a warning only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvCheck {
    Strict,
    Warn,
}

impl EnvCheck {
    pub fn as_str(self) -> &'static str {
        match self {
            EnvCheck::Strict => "strict",
            EnvCheck::Warn => "warn",
        }
    }
}

/// What `serve` was asked to do.
#[derive(Debug, Clone)]
pub struct ProcessConfig {
    pub index: PathBuf,
    /// Accepted for compatibility; a Rust pack's modules are compiled in.
    pub module_root: Option<PathBuf>,
    /// `None` means every interface.
    pub host: Option<String>,
    pub token: String,
    pub port: u16,
    pub max_concurrency: usize,
    pub env_check: EnvCheck,
    pub env_filter: bool,
    /// `KINDGI_PACK_TENANT_ID` (protocol 2.7.0).
    pub tenant: Option<String>,
}

/// The token rule: trimmed, then one or more printable ASCII characters without spaces.
pub fn parse_token(raw: Option<&str>) -> Result<String, String> {
    let token = raw.map(str::trim).unwrap_or_default();
    if token.is_empty() {
        return Err("KINDGI_PACK_SERVICE_TOKEN is required".to_owned());
    }
    if !token.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Err(
            "KINDGI_PACK_SERVICE_TOKEN may hold only printable ASCII without spaces (it \
                    travels in an HTTP header). Use a random value such as `openssl rand -hex 32`."
                .to_owned(),
        );
    }
    Ok(token.to_owned())
}

fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// Reads the configuration from `serve`'s arguments (after the command word) and `get`.
pub fn read(
    args: &[String],
    get: impl Fn(&str) -> Option<String>,
) -> Result<ProcessConfig, Vec<String>> {
    let mut problems = Vec::new();
    let mut index: Option<String> = None;
    let mut module_root: Option<String> = None;
    let mut host: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg, None),
        };
        let slot = match flag {
            "--index" => Some(&mut index),
            "--module-root" => Some(&mut module_root),
            "--host" => Some(&mut host),
            "--bundle-map" => None,
            _ => {
                // Unknown arguments are ignored, as the TypeScript and Python services do.
                i += 1;
                continue;
            }
        };
        let value = match inline {
            Some(v) => Some(v),
            None => {
                i += 1;
                args.get(i).cloned()
            }
        };
        match (value, slot) {
            (None, _) => problems.push(format!("{flag} needs a value")),
            (Some(v), Some(slot)) => *slot = Some(v),
            (Some(_), None) => {}
        }
        i += 1;
    }
    if host.as_deref().is_some_and(|h| h.trim().is_empty()) {
        problems.push("--host needs an address".to_owned());
    }
    let token = parse_token(get("KINDGI_PACK_SERVICE_TOKEN").as_deref()).unwrap_or_else(|p| {
        problems.push(p);
        String::new()
    });
    let port = match get("PORT") {
        None => 8080,
        Some(raw) if raw.trim().is_empty() => 0,
        Some(raw) => raw.trim().parse::<u16>().unwrap_or_else(|_| {
            problems.push(format!("PORT must be a port number, got {}", quoted(&raw)));
            0
        }),
    };
    let max_concurrency = match get("KINDGI_PACK_SERVICE_MAX_CONCURRENCY") {
        None => kindgi_spec::pack_protocol::DEFAULT_MAX_CONCURRENCY,
        Some(raw) if raw.trim().is_empty() => kindgi_spec::pack_protocol::DEFAULT_MAX_CONCURRENCY,
        Some(raw) => match raw.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                problems.push(
                    "KINDGI_PACK_SERVICE_MAX_CONCURRENCY must be a positive integer".to_owned(),
                );
                1
            }
        },
    };
    let env_check = match get("KINDGI_PACK_ENV_CHECK").as_deref().map(str::trim) {
        None | Some("") | Some("strict") => EnvCheck::Strict,
        Some("warn") => EnvCheck::Warn,
        Some(other) => {
            problems.push(format!(
                "KINDGI_PACK_ENV_CHECK must be `strict` or `warn`, not {}",
                quoted(other)
            ));
            EnvCheck::Strict
        }
    };
    let env_filter = match get("KINDGI_PACK_ENV_FILTER").as_deref().map(str::trim) {
        None | Some("") | Some("on") => true,
        Some("off") => false,
        Some(other) => {
            problems.push(format!(
                "KINDGI_PACK_ENV_FILTER must be `on` or `off`, not {}",
                quoted(other)
            ));
            true
        }
    };
    let tenant = get("KINDGI_PACK_TENANT_ID")
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    if !problems.is_empty() {
        return Err(problems);
    }
    let index = index
        .or_else(|| get("KINDGI_PACK_INDEX").filter(|p| !p.is_empty()))
        .unwrap_or_else(|| "/app/index.json".to_owned());
    Ok(ProcessConfig {
        index: PathBuf::from(index),
        module_root: module_root.map(PathBuf::from),
        host,
        token,
        port,
        max_concurrency,
        env_check,
        env_filter,
        tenant,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn all_problems_at_once() {
        let err = read(
            &[],
            env(&[
                ("KINDGI_PACK_SERVICE_TOKEN", "t"),
                ("PORT", "x"),
                ("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "0"),
            ]),
        )
        .unwrap_err();
        assert_eq!(
            err,
            [
                "PORT must be a port number, got \"x\"",
                "KINDGI_PACK_SERVICE_MAX_CONCURRENCY must be a positive integer"
            ]
        );
    }

    #[test]
    fn token_is_trimmed_and_checked() {
        assert_eq!(parse_token(Some("abc\n")).unwrap(), "abc");
        assert!(
            parse_token(Some("two words"))
                .unwrap_err()
                .contains("printable ASCII")
        );
        assert_eq!(
            parse_token(Some("  ")).unwrap_err(),
            "KINDGI_PACK_SERVICE_TOKEN is required"
        );
    }

    #[test]
    fn flags() {
        let args: Vec<String> = ["--index", "i.json", "--host", "", "--module-root=m"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let err = read(&args, env(&[("KINDGI_PACK_SERVICE_TOKEN", "t")])).unwrap_err();
        assert_eq!(err, ["--host needs an address"]);
        let args: Vec<String> = ["--index"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            read(&args, env(&[("KINDGI_PACK_SERVICE_TOKEN", "t")])).unwrap_err(),
            ["--index needs a value"]
        );
        let ok = read(
            &[],
            env(&[
                ("KINDGI_PACK_SERVICE_TOKEN", "t"),
                ("KINDGI_PACK_ENV_CHECK", "warn"),
            ]),
        )
        .unwrap();
        assert_eq!(ok.port, 8080);
        assert_eq!(ok.env_check, EnvCheck::Warn);
        assert_eq!(ok.index, PathBuf::from("/app/index.json"));
    }
}
