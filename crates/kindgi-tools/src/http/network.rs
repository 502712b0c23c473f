//! The tool's own `network` policy applied to every request the HTTP synthesizer makes,
//! redirects included: `none` refuses all, `allowlist` admits listed hosts only. (The host's
//! address policy, which no manifest can widen, is [`crate::egress`].)

use kindgi_spec::NetworkPolicy;
use url::Url;

/// How a request's host is judged. Built once per tool.
#[derive(Debug, Clone)]
pub(crate) enum Network {
    Unrestricted,
    Denied,
    /// Lower-cased entries: `host`, `host:port`, or `*.suffix` (any subdomain of suffix).
    Allowlist(Vec<String>),
}

impl Network {
    /// An absent policy means unrestricted (the manifest default).
    pub(crate) fn from_policy(policy: Option<&NetworkPolicy>) -> Self {
        match policy {
            None | Some(NetworkPolicy::Unrestricted) => Network::Unrestricted,
            Some(NetworkPolicy::None) => Network::Denied,
            Some(NetworkPolicy::Allowlist { hosts }) => Network::Allowlist(
                hosts
                    .iter()
                    .map(|h| h.trim().trim_end_matches('.').to_ascii_lowercase())
                    .collect(),
            ),
        }
    }

    /// `Ok` when the tool may reach `url`. `redirected` says the URL came from a redirect.
    pub(crate) fn check(&self, tool_id: &str, url: &Url, redirected: bool) -> Result<(), String> {
        let host = url
            .host_str()
            .unwrap_or("")
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let what = if redirected {
            format!("was redirected to {url}, but it may not reach host \"{host}\"")
        } else {
            format!("may not reach host \"{host}\"")
        };
        match self {
            Network::Unrestricted => Ok(()),
            Network::Denied => Err(format!(
                "http-tool \"{tool_id}\" {what}: its network policy is \"none\" (no egress)"
            )),
            Network::Allowlist(entries) => {
                let port = url.port_or_known_default();
                // IPv6 literals come bracketed from `host_str`; entries may be written either way.
                let bare = host.trim_start_matches('[').trim_end_matches(']');
                let admitted = entries.iter().any(|entry| {
                    if let Some(suffix) = entry.strip_prefix("*.") {
                        return host.len() > suffix.len() + 1
                            && host.ends_with(suffix)
                            && host.as_bytes()[host.len() - suffix.len() - 1] == b'.';
                    }
                    if entry == &host || entry == bare {
                        return true;
                    }
                    match (entry.rsplit_once(':'), port) {
                        (Some((h, p)), Some(port)) => {
                            (h == host || h.trim_start_matches('[').trim_end_matches(']') == bare)
                                && p.parse::<u16>().ok() == Some(port)
                        }
                        _ => false,
                    }
                });
                if admitted {
                    Ok(())
                } else {
                    Err(format!(
                        "http-tool \"{tool_id}\" {what}: it is not in the tool's network allowlist ({})",
                        entries.join(", ")
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(hosts: &[&str]) -> Network {
        Network::from_policy(Some(&NetworkPolicy::Allowlist {
            hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        }))
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn allowlist_matches_host_port_and_wildcards() {
        let e = allow(&["API.example.com", "*.svc.example", "127.0.0.1:8080", "::1"]);
        assert!(
            e.check("t", &url("https://api.example.com/x"), false)
                .is_ok()
        );
        assert!(
            e.check("t", &url("https://a.b.svc.example/x"), false)
                .is_ok()
        );
        assert!(e.check("t", &url("https://svc.example/x"), false).is_err());
        assert!(
            e.check("t", &url("https://evilsvc.example/x"), false)
                .is_err()
        );
        assert!(e.check("t", &url("http://127.0.0.1:8080/x"), false).is_ok());
        assert!(
            e.check("t", &url("http://127.0.0.1:8081/x"), false)
                .is_err()
        );
        assert!(e.check("t", &url("http://[::1]:9/x"), false).is_ok());
        let err = e
            .check("t", &url("https://other.example/x"), true)
            .unwrap_err();
        assert!(
            err.contains("was redirected to https://other.example/x"),
            "{err}"
        );
        assert!(err.contains("not in the tool's network allowlist"), "{err}");
    }

    #[test]
    fn none_refuses_and_absent_allows() {
        let err = Network::from_policy(Some(&NetworkPolicy::None))
            .check("t", &url("http://localhost/"), false)
            .unwrap_err();
        assert_eq!(
            err,
            "http-tool \"t\" may not reach host \"localhost\": its network policy is \"none\" (no egress)"
        );
        assert!(
            Network::from_policy(None)
                .check("t", &url("http://x/"), false)
                .is_ok()
        );
    }
}
