//! The host's egress policy: which addresses an outbound connection caused by a tenant's
//! definition (an http tool and each of its redirect hops, an MCP endpoint registered through
//! the API) may reach. `kindgi server` refuses the operator's own network — loopback,
//! link-local (cloud metadata at 169.254.169.254), private, CGNAT, unspecified, multicast,
//! broadcast and reserved addresses, and IPv6 forms embedding one (`::ffff:127.0.0.1`) —
//! except the ranges the operator allows (`--allow-private-egress CIDR`). `kindgi dev` and
//! library callers use [`EgressPolicy::open`].
//!
//! The rule is applied to the address the client connects to: [`EgressPolicy::resolver`] is a
//! reqwest DNS resolver that resolves and drops refused addresses, so nothing is resolved
//! twice and no DNS-rebinding window opens between a check and the connect;
//! [`EgressPolicy::check_url`] covers IP-literal hosts, which reqwest never resolves, and is
//! what a redirect policy calls on every hop.
//!
//! It lives in `kindgi-tools` because that is the lowest crate every such client depends on
//! (the http synthesizer here, `kindgi-mcp`, `kindgi-api`, `kindgi-host`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use ipnet::IpNet;
use url::Url;

/// The flag that lifts the rule, named in every refusal.
pub const ALLOW_FLAG: &str = "--allow-private-egress";

/// Why an address is refused: the class of address it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Loopback,
    LinkLocal,
    Private,
    SharedCgnat,
    Unspecified,
    Multicast,
    Broadcast,
    Reserved,
}

impl Rule {
    /// "a loopback address (127.0.0.0/8, ::1)" — the words after "is".
    pub fn describe(self) -> &'static str {
        match self {
            Rule::Loopback => "a loopback address (127.0.0.0/8, ::1)",
            Rule::LinkLocal => {
                "a link-local address (169.254.0.0/16, fe80::/10; cloud metadata lives there)"
            }
            Rule::Private => {
                "a private address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7)"
            }
            Rule::SharedCgnat => "a carrier-grade NAT address (100.64.0.0/10)",
            Rule::Unspecified => "an unspecified address (0.0.0.0/8, ::)",
            Rule::Multicast => "a multicast address (224.0.0.0/4, ff00::/8)",
            Rule::Broadcast => "the broadcast address (255.255.255.255)",
            Rule::Reserved => {
                "a reserved address (192.0.0.0/24, 198.18.0.0/15, 240.0.0.0/4, fec0::/10)"
            }
        }
    }
}

/// Why an outbound connection was not made. Never quotes anything the destination said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    /// The host is, or resolves only to, refused addresses.
    #[error("{}", refused_text(host, *address, *rule))]
    Refused {
        host: String,
        address: IpAddr,
        rule: Rule,
    },
    /// The host name did not resolve.
    #[error("the host \"{host}\" did not resolve: {reason}")]
    Unresolved { host: String, reason: String },
    /// The URL has no host, or a scheme other than http(s).
    #[error("{url} is not an http(s) URL with a host")]
    NotHttp { url: String },
}

fn refused_text(host: &str, address: IpAddr, rule: Rule) -> String {
    let what = if host_is(host, address) {
        format!("{address} is {}", rule.describe())
    } else {
        format!(
            "the host \"{host}\" resolves to {address}, which is {}",
            rule.describe()
        )
    };
    format!(
        "{what}; this server does not connect to such addresses for a tenant's definitions. The operator allows it with `kindgi server {ALLOW_FLAG} {}` (or `egress.allowPrivate` in --config)",
        single(address)
    )
}

/// Whether `host` (a URL host, maybe bracketed) is the literal `address`.
fn host_is(host: &str, address: IpAddr) -> bool {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_ok_and(|ip| ip == address)
}

/// `address/32` or `address/128`.
fn single(address: IpAddr) -> String {
    match address {
        IpAddr::V4(_) => format!("{address}/32"),
        IpAddr::V6(_) => format!("{address}/128"),
    }
}

impl EgressError {
    /// The egress refusal somewhere in `error`'s source chain (reqwest wraps what a
    /// resolver returned), so callers report it as it is rather than as a connect failure.
    pub fn find_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a EgressError> {
        let mut next = Some(error);
        while let Some(e) = next {
            if let Some(found) = e.downcast_ref::<EgressError>() {
                return Some(found);
            }
            next = e.source();
        }
        None
    }
}

/// A CIDR the operator allows, e.g. `10.1.0.0/16`; a bare address is a single host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllowedRange(IpNet);

/// A CIDR that did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "\"{text}\" is not a CIDR range: give an address and a prefix length, e.g. 10.1.0.0/16, 127.0.0.2/32 or fd00::/8"
)]
pub struct BadRange {
    pub text: String,
}

impl FromStr for AllowedRange {
    type Err = BadRange;

    fn from_str(text: &str) -> Result<Self, BadRange> {
        let t = text.trim();
        let bad = || BadRange {
            text: text.chars().take(100).collect(),
        };
        let net = match t.parse::<IpNet>() {
            Ok(net) => net.trunc(),
            Err(_) => IpNet::from(t.parse::<IpAddr>().map_err(|_| bad())?),
        };
        Ok(AllowedRange(net))
    }
}

impl fmt::Display for AllowedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl AllowedRange {
    fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(&ip)
    }
}

/// Which addresses outbound connections may reach. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressPolicy {
    /// `None`: every address (open); `Some(allowed)`: public addresses and `allowed`.
    public_only: Option<Arc<[AllowedRange]>>,
}

impl Default for EgressPolicy {
    fn default() -> Self {
        Self::open()
    }
}

impl EgressPolicy {
    /// Every address may be reached (`kindgi dev`, the operator's own packs and servers).
    pub fn open() -> Self {
        Self { public_only: None }
    }

    /// Only public addresses, plus `allowed` (`kindgi server`).
    pub fn public_only(allowed: impl IntoIterator<Item = AllowedRange>) -> Self {
        Self {
            public_only: Some(allowed.into_iter().collect()),
        }
    }

    /// Whether the policy refuses anything at all.
    pub fn is_open(&self) -> bool {
        self.public_only.is_none()
    }

    /// `Err(rule)` when a connection to `ip` is refused.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Rule> {
        let Some(allowed) = &self.public_only else {
            return Ok(());
        };
        let Some(rule) = classify(ip) else {
            return Ok(());
        };
        // An embedded IPv4 address (`::ffff:10.0.0.1`) is allowed by a range of either form.
        let embedded = embedded_v4(ip).map(IpAddr::V4);
        let lifted = allowed
            .iter()
            .any(|r| r.contains(ip) || embedded.is_some_and(|v4| r.contains(v4)));
        if lifted { Ok(()) } else { Err(rule) }
    }

    /// Checks what can be checked of `url` without resolving: its scheme, and its host when
    /// it is an IP literal (which no resolver sees). A name is checked when it resolves.
    pub fn check_url(&self, url: &Url) -> Result<(), EgressError> {
        if self.is_open() {
            return Ok(());
        }
        let host = match url.host() {
            Some(host) if matches!(url.scheme(), "http" | "https") => host,
            _ => {
                return Err(EgressError::NotHttp {
                    url: url.as_str().chars().take(200).collect(),
                });
            }
        };
        let ip = match host {
            url::Host::Ipv4(v4) => IpAddr::V4(v4),
            url::Host::Ipv6(v6) => IpAddr::V6(v6),
            url::Host::Domain(_) => return Ok(()),
        };
        self.check_ip(ip).map_err(|rule| EgressError::Refused {
            host: ip.to_string(),
            address: ip,
            rule,
        })
    }

    /// Resolves `host` and keeps the addresses the policy admits (port `port`); an error
    /// names the first refused address when none is left.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, EgressError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let found: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((bare, port))
                .await
                .map_err(|e| EgressError::Unresolved {
                    host: host.to_owned(),
                    reason: e.to_string(),
                })?
                .collect(),
        };
        let mut first_refused = None;
        let admitted: Vec<SocketAddr> = found
            .into_iter()
            .filter(|a| match self.check_ip(a.ip()) {
                Ok(()) => true,
                Err(rule) => {
                    first_refused.get_or_insert((a.ip(), rule));
                    false
                }
            })
            .collect();
        match (admitted.is_empty(), first_refused) {
            (true, Some((address, rule))) => Err(EgressError::Refused {
                host: host.to_owned(),
                address,
                rule,
            }),
            (true, None) => Err(EgressError::Unresolved {
                host: host.to_owned(),
                reason: "no addresses".to_owned(),
            }),
            (false, _) => Ok(admitted),
        }
    }

    /// A reqwest DNS resolver applying this policy to every name the client resolves.
    pub fn resolver(&self) -> Arc<EgressResolver> {
        Arc::new(EgressResolver {
            policy: self.clone(),
        })
    }

    /// A reqwest client builder for connections under this policy: its resolver when the
    /// policy refuses anything, and no proxy (a proxy would connect for us, unchecked).
    /// Redirects are the caller's to set (checking each hop with [`Self::check_url`]).
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        let builder = reqwest::Client::builder();
        if self.is_open() {
            builder
        } else {
            builder.no_proxy().dns_resolver(self.resolver())
        }
    }

    /// A reqwest redirect policy that follows at most `max` hops, each one checked with
    /// [`Self::check_url`].
    pub fn redirect_policy(&self, max: usize) -> reqwest::redirect::Policy {
        let policy = self.clone();
        reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > max {
                return attempt.error(format!("more than {max} redirects"));
            }
            match policy.check_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(e) => attempt.error(e),
            }
        })
    }
}

/// The resolver [`EgressPolicy::resolver`] returns.
#[derive(Debug, Clone)]
pub struct EgressResolver {
    policy: EgressPolicy,
}

impl reqwest::dns::Resolve for EgressResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = policy.resolve(&host, 0).await?;
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The class of a non-public address; `None` for a public one.
pub fn classify(ip: IpAddr) -> Option<Rule> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Rule> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => Rule::Unspecified,
        (127, _, _) => Rule::Loopback,
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => Rule::Private,
        (169, 254, _) => Rule::LinkLocal,
        (100, 64..=127, _) => Rule::SharedCgnat,
        (224..=239, _, _) => Rule::Multicast,
        (255, 255, 255) if ip == Ipv4Addr::BROADCAST => Rule::Broadcast,
        (192, 0, 0) | (198, 18..=19, _) | (240..=255, _, _) => Rule::Reserved,
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<Rule> {
    if ip.is_unspecified() {
        return Some(Rule::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Rule::Loopback);
    }
    if let Some(v4) = embedded_v4(IpAddr::V6(ip)) {
        return classify_v4(v4);
    }
    let first = ip.segments()[0];
    Some(match first {
        _ if first & 0xffc0 == 0xfe80 => Rule::LinkLocal,
        _ if first & 0xffc0 == 0xfec0 => Rule::Reserved,
        _ if first & 0xfe00 == 0xfc00 => Rule::Private,
        _ if first & 0xff00 == 0xff00 => Rule::Multicast,
        _ => return None,
    })
}

/// The IPv4 address an IPv6 address carries: mapped (`::ffff:a.b.c.d`), compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:AABB:CCDD::`).
fn embedded_v4(ip: IpAddr) -> Option<Ipv4Addr> {
    let IpAddr::V6(v6) = ip else {
        return None;
    };
    let s = v6.segments();
    let low = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0, 0, 0, 0, 0, 0, hi, lo] => Some(low(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(low(hi, lo)),
        [0x2002, hi, lo, ..] => Some(low(hi, lo)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(allow: &[&str]) -> EgressPolicy {
        EgressPolicy::public_only(allow.iter().map(|a| a.parse::<AllowedRange>().unwrap()))
    }

    fn rule(ip: &str) -> Option<Rule> {
        server(&[]).check_ip(ip.parse().unwrap()).err()
    }

    #[test]
    fn every_refused_range_is_refused_and_public_addresses_pass() {
        for (ip, expected) in [
            ("127.0.0.1", Rule::Loopback),
            ("127.255.255.254", Rule::Loopback),
            ("::1", Rule::Loopback),
            ("169.254.169.254", Rule::LinkLocal),
            ("fe80::1", Rule::LinkLocal),
            ("febf::1", Rule::LinkLocal),
            ("10.0.0.1", Rule::Private),
            ("172.16.0.1", Rule::Private),
            ("172.31.255.255", Rule::Private),
            ("192.168.1.1", Rule::Private),
            ("fc00::1", Rule::Private),
            ("fd12:3456::1", Rule::Private),
            ("100.64.0.1", Rule::SharedCgnat),
            ("100.127.255.255", Rule::SharedCgnat),
            ("0.0.0.0", Rule::Unspecified),
            ("0.1.2.3", Rule::Unspecified),
            ("::", Rule::Unspecified),
            ("224.0.0.1", Rule::Multicast),
            ("239.255.255.255", Rule::Multicast),
            ("ff02::1", Rule::Multicast),
            ("255.255.255.255", Rule::Broadcast),
            ("240.0.0.1", Rule::Reserved),
            ("198.18.0.1", Rule::Reserved),
            ("192.0.0.8", Rule::Reserved),
            ("fec0::1", Rule::Reserved),
        ] {
            assert_eq!(rule(ip), Some(expected), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.15.255.255",
            "172.32.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "169.253.0.1",
            "192.169.0.1",
            "11.0.0.1",
            "2001:4860:4860::8888",
            "2606:4700::1111",
        ] {
            assert_eq!(rule(ip), None, "{ip}");
        }
    }

    #[test]
    fn ipv6_forms_embedding_a_refused_ipv4_address_are_refused() {
        for (ip, expected) in [
            ("::ffff:127.0.0.1", Rule::Loopback),
            ("::ffff:7f00:2", Rule::Loopback),
            ("::127.0.0.1", Rule::Loopback),
            ("::ffff:169.254.169.254", Rule::LinkLocal),
            ("::ffff:10.1.2.3", Rule::Private),
            ("::ffff:0.0.0.0", Rule::Unspecified),
            ("64:ff9b::192.168.0.1", Rule::Private),
            ("2002:7f00:1::", Rule::Loopback),
            ("2002:a9fe:a9fe::1", Rule::LinkLocal),
        ] {
            assert_eq!(rule(ip), Some(expected), "{ip}");
        }
        assert_eq!(rule("::ffff:8.8.8.8"), None);
        assert_eq!(rule("2002:808:808::1"), None);
    }

    #[test]
    fn the_allow_list_lifts_exactly_its_ranges() {
        let p = server(&["127.0.0.2/32", "10.1.0.0/16", "fd00::/8", "192.168.7.9"]);
        let ok = |ip: &str| p.check_ip(ip.parse().unwrap()).is_ok();
        assert!(ok("127.0.0.2"));
        assert!(
            ok("::ffff:127.0.0.2"),
            "the mapped form of an allowed address"
        );
        assert!(!ok("127.0.0.1"));
        assert!(!ok("127.0.0.3"));
        assert!(ok("10.1.255.255"));
        assert!(!ok("10.2.0.1"));
        assert!(ok("fd00::5"));
        assert!(!ok("fc00::5"));
        assert!(ok("192.168.7.9"), "a bare address is a /32");
        assert!(!ok("192.168.7.10"));
        assert!(!ok("169.254.169.254"));
        // An open policy refuses nothing.
        assert!(
            EgressPolicy::open()
                .check_ip("127.0.0.1".parse().unwrap())
                .is_ok()
        );
    }

    #[test]
    fn bad_ranges_say_what_to_give() {
        for text in ["10.0.0.0/33", "nope", "10.0.0/8", "", "::1/129"] {
            let err = text.parse::<AllowedRange>().unwrap_err().to_string();
            assert!(err.contains("is not a CIDR range"), "{text}: {err}");
            assert!(err.contains("10.1.0.0/16"), "{err}");
        }
        assert_eq!(
            "10.9.8.7/8".parse::<AllowedRange>().unwrap().to_string(),
            "10.0.0.0/8"
        );
    }

    #[test]
    fn literal_urls_are_checked_and_the_error_names_host_address_rule_and_flag() {
        let p = server(&[]);
        let url = |s: &str| Url::parse(s).unwrap();
        let err = p.check_url(&url("http://127.0.0.2:9/x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "127.0.0.2 is a loopback address (127.0.0.0/8, ::1); this server does not connect to such addresses for a tenant's definitions. The operator allows it with `kindgi server --allow-private-egress 127.0.0.2/32` (or `egress.allowPrivate` in --config)"
        );
        assert!(p.check_url(&url("http://[::ffff:7f00:1]/")).is_err());
        assert!(p.check_url(&url("http://169.254.169.254/latest")).is_err());
        assert!(p.check_url(&url("http://example.com/")).is_ok());
        assert!(matches!(
            p.check_url(&url("ftp://example.com/")),
            Err(EgressError::NotHttp { .. })
        ));
        assert!(EgressPolicy::open().check_url(&url("ftp://x/")).is_ok());
    }

    #[tokio::test]
    async fn names_are_resolved_and_filtered() {
        let p = server(&["127.0.0.3/32"]);
        let err = p.resolve("localhost", 80).await.unwrap_err();
        match &err {
            EgressError::Refused { host, rule, .. } => {
                assert_eq!(host, "localhost");
                assert_eq!(*rule, Rule::Loopback);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            err.to_string()
                .starts_with("the host \"localhost\" resolves to "),
            "{err}"
        );
        let allowed = server(&["127.0.0.0/8", "::1/128"]);
        let addrs = allowed.resolve("localhost", 80).await.unwrap();
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.port() == 80));
    }
}
