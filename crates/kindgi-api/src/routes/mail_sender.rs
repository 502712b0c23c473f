//! Who sent an inbound mail, proven or not: DKIM, SPF and DMARC over the raw message with
//! `mail-auth` ([`SenderCheck::check`]). A mail's `From` names a person only when DMARC
//! passes for the `From` domain — a DKIM signature or the SPF-checked envelope sender aligned
//! with it; anything else (a forged or unaligned `From`, a domain that publishes no DMARC
//! record, several `From` addresses) is [`Verdict::Refused`] with a detail code, and a DNS
//! failure is [`Verdict::Unavailable`] (the sender may retry).
//!
//! DNS is injectable: [`SenderCheck::system`] asks the system's resolver (timeouts set, and a
//! bounded cache of what it learnt); [`SenderCheck::offline`] answers only the records a test
//! preloads ([`SenderCheck::preload_txt`]) and "no such record" to every other TXT lookup,
//! so a test's checks never leave the machine.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mail_auth::common::parse::TxtRecordParser;
use mail_auth::common::verify::DomainKey;
use mail_auth::dmarc::Dmarc;
use mail_auth::dmarc::verify::DmarcParameters;
use mail_auth::hickory_resolver::config::{
    ConnectionConfig, NameServerConfig, ResolverConfig, ResolverOpts,
};
use mail_auth::hickory_resolver::proto::op::ResponseCode;
use mail_auth::spf::Spf;
use mail_auth::spf::verify::SpfParameters;
use mail_auth::{
    AuthenticatedMessage, DkimResult, DmarcResult, DnsError, Error as AuthError, MX,
    MessageAuthenticator, Parameters, RecordSet, ResolverCache, SpfOutput, SpfResult, Txt,
};

/// How long one DNS query may take, and how often it is tried.
pub const DNS_TIMEOUT: Duration = Duration::from_secs(5);
pub const DNS_ATTEMPTS: usize = 2;
/// How long a whole check (every lookup DKIM, SPF and DMARC make) may take.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(20);
/// Entries kept per record type by the system resolver's cache.
const CACHE_ENTRIES: usize = 4096;

/// What the SMTP conversation (or the provider that had it) says about the delivery.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Envelope {
    /// The connecting client's address (SPF's subject).
    pub remote_ip: Option<IpAddr>,
    pub helo: Option<String>,
    /// `MAIL FROM` (empty for a bounce).
    pub mail_from: Option<String>,
    /// `RCPT TO`, lower-case.
    pub rcpt_to: Vec<String>,
}

/// The outcome of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// DMARC passed, aligned: `from` (lower-case) sent it.
    Aligned { from: String },
    /// Nothing proves the sender: `detail` is the fire's detail code.
    Refused {
        detail: &'static str,
        /// What each mechanism said, for the log.
        why: String,
    },
    /// A lookup failed or took too long: nobody can tell yet.
    Unavailable { why: String },
}

/// A TTL cache of one record type, bounded; offline, every miss has the same answer.
struct DnsCache<K, V> {
    entries: Mutex<HashMap<K, (V, Instant)>>,
    /// Offline: what a lookup of a name nobody preloaded answers (`None`: ask the resolver).
    miss: Option<V>,
}

impl<K, V> DnsCache<K, V> {
    fn new(miss: Option<V>) -> Self {
        DnsCache {
            entries: Mutex::new(HashMap::new()),
            miss,
        }
    }
}

impl<K: Hash + Eq, V: Clone> ResolverCache<K, V> for DnsCache<K, V> {
    fn get<Q>(&self, name: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entries = self.entries.lock().ok()?;
        match entries.get(name) {
            Some((v, until)) if *until > Instant::now() => Some(v.clone()),
            _ => self.miss.clone(),
        }
    }

    fn remove<Q>(&self, name: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.lock().ok()?.remove(name).map(|(v, _)| v)
    }

    fn insert(&self, key: K, value: V, valid_until: Instant) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries.len() >= CACHE_ENTRIES {
            let now = Instant::now();
            entries.retain(|_, (_, until)| *until > now);
            if entries.len() >= CACHE_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(key, (value, valid_until));
    }
}

/// The record caches the checks share.
struct Caches {
    txt: DnsCache<Box<str>, Txt>,
    mx: DnsCache<Box<str>, RecordSet<MX>>,
    ipv4: DnsCache<Box<str>, RecordSet<Ipv4Addr>>,
    ipv6: DnsCache<Box<str>, RecordSet<Ipv6Addr>>,
    ptr: DnsCache<IpAddr, RecordSet<Box<str>>>,
}

/// Checks senders (cheap to clone).
#[derive(Clone)]
pub struct SenderCheck {
    authenticator: MessageAuthenticator,
    caches: Arc<Caches>,
    /// This server's name, in SPF's explanations.
    host: Arc<str>,
}

impl std::fmt::Debug for SenderCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SenderCheck")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

/// Why no resolver could be made.
#[derive(Debug, thiserror::Error)]
#[error("the DNS resolver for mail checks cannot be set up: {0}")]
pub struct ResolverUnavailable(String);

fn options() -> ResolverOpts {
    let mut o = ResolverOpts::default();
    o.timeout = DNS_TIMEOUT;
    o.attempts = DNS_ATTEMPTS;
    o
}

impl SenderCheck {
    /// Over the system's resolver (`/etc/resolv.conf`), with [`DNS_TIMEOUT`] per query.
    pub fn system(host: &str) -> Result<SenderCheck, ResolverUnavailable> {
        let (config, _) = mail_auth::hickory_resolver::system_conf::read_system_conf()
            .map_err(|e| ResolverUnavailable(e.to_string()))?;
        let authenticator = MessageAuthenticator::new(config, options())
            .map_err(|e| ResolverUnavailable(e.to_string()))?;
        Ok(SenderCheck::over(authenticator, None, host))
    }

    /// Answers only preloaded records; every other TXT name has none (NXDOMAIN). Lookups of
    /// other types go to a resolver on the loopback discard port, so they fail here too.
    pub fn offline(host: &str) -> Result<SenderCheck, ResolverUnavailable> {
        let mut udp = ConnectionConfig::udp();
        udp.port = 9;
        let server = NameServerConfig::new(IpAddr::V4(Ipv4Addr::LOCALHOST), true, vec![udp]);
        let mut o = options();
        o.timeout = Duration::from_millis(200);
        o.attempts = 1;
        let authenticator =
            MessageAuthenticator::new(ResolverConfig::from_name_servers(vec![server]), o)
                .map_err(|e| ResolverUnavailable(e.to_string()))?;
        let missing = Txt::Error(AuthError::Dns(DnsError::RecordNotFound(
            ResponseCode::NXDomain,
        )));
        Ok(SenderCheck::over(authenticator, Some(missing), host))
    }

    fn over(authenticator: MessageAuthenticator, txt_miss: Option<Txt>, host: &str) -> Self {
        SenderCheck {
            authenticator,
            caches: Arc::new(Caches {
                txt: DnsCache::new(txt_miss),
                mx: DnsCache::new(None),
                ipv4: DnsCache::new(None),
                ipv6: DnsCache::new(None),
                ptr: DnsCache::new(None),
            }),
            host: Arc::from(host),
        }
    }

    /// Preloads the TXT record `record` at `name` (`sel._domainkey.example.test`,
    /// `example.test` for SPF, `_dmarc.example.test`), parsed as its name and text say.
    pub fn preload_txt(&self, name: &str, record: &str) -> Result<(), String> {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let bytes = record.as_bytes();
        let txt: Txt = if name.starts_with("_dmarc.") {
            Dmarc::parse(bytes).into()
        } else if name.contains("._domainkey.") {
            DomainKey::parse(bytes).into()
        } else if record.starts_with("v=spf1") {
            Spf::parse(bytes).into()
        } else {
            return Err(format!("no record type is known for {name:?}"));
        };
        if let Txt::Error(e) = &txt {
            return Err(format!("the record at {name:?} does not parse: {e}"));
        }
        let forever = Instant::now() + Duration::from_secs(86_400 * 365);
        self.caches
            .txt
            .insert(format!("{name}.").into_boxed_str(), txt, forever);
        Ok(())
    }

    /// Checks `raw` as delivered per `envelope`, within [`CHECK_TIMEOUT`].
    pub async fn check(&self, raw: &[u8], envelope: &Envelope) -> Verdict {
        match tokio::time::timeout(CHECK_TIMEOUT, self.check_now(raw, envelope)).await {
            Ok(v) => v,
            Err(_) => Verdict::Unavailable {
                why: format!("the DNS lookups took over {} s", CHECK_TIMEOUT.as_secs()),
            },
        }
    }

    async fn check_now(&self, raw: &[u8], envelope: &Envelope) -> Verdict {
        let refused = |detail, why: String| Verdict::Refused { detail, why };
        let Some(message) = AuthenticatedMessage::parse(raw) else {
            return refused("message-unparseable", "no headers".into());
        };
        let mut froms: Vec<String> = message.from.iter().map(|f| f.to_lowercase()).collect();
        froms.dedup();
        let from = match froms.as_slice() {
            [] => return refused("from-missing", "the message has no From address".into()),
            [one] => one.clone(),
            _ => {
                return refused(
                    "from-ambiguous",
                    "the message has several From addresses".into(),
                );
            }
        };
        let c = &*self.caches;
        let dkim = self
            .authenticator
            .verify_dkim(
                Parameters::new(&message)
                    .with_txt_cache(&c.txt)
                    .with_mx_cache(&c.mx)
                    .with_ipv4_cache(&c.ipv4)
                    .with_ipv6_cache(&c.ipv6)
                    .with_ptr_cache(&c.ptr),
            )
            .await;
        let spf = self.spf(envelope).await;
        let mail_from_domain = envelope
            .mail_from
            .as_deref()
            .and_then(|m| m.rsplit_once('@').map(|(_, d)| d))
            .or(envelope.helo.as_deref())
            .unwrap_or_default()
            .to_owned();
        let dmarc = self
            .authenticator
            .verify_dmarc(
                Parameters::new(DmarcParameters {
                    message: &message,
                    dkim_output: &dkim,
                    dkim2_output: None,
                    rfc5321_mail_from_domain: &mail_from_domain,
                    spf_output: &spf,
                })
                .with_txt_cache(&c.txt)
                .with_mx_cache(&c.mx)
                .with_ipv4_cache(&c.ipv4)
                .with_ipv6_cache(&c.ipv6)
                .with_ptr_cache(&c.ptr),
            )
            .await;
        let why = format!(
            "dkim: {}, spf: {:?}, dmarc (dkim aligned): {}, dmarc (spf aligned): {}",
            dkim.iter()
                .map(|d| format!("{:?}", d.result()))
                .collect::<Vec<_>>()
                .join("; "),
            spf.result(),
            word(dmarc.dkim_result()),
            word(dmarc.spf_result()),
        );
        let (d, s) = (dmarc.dkim_result(), dmarc.spf_result());
        if *d == DmarcResult::Pass || *s == DmarcResult::Pass {
            return Verdict::Aligned { from };
        }
        let dns_failed = matches!(d, DmarcResult::TempError(_))
            || matches!(s, DmarcResult::TempError(_))
            || spf.result() == SpfResult::TempError
            || dkim
                .iter()
                .any(|o| matches!(o.result(), DkimResult::TempError(_)));
        if dns_failed {
            return Verdict::Unavailable { why };
        }
        // No record at (or above) the From domain: nothing says what aligned would mean.
        if dmarc.dmarc_record().is_none() {
            return refused("dmarc-none", why);
        }
        refused("dmarc-fail", why)
    }

    /// SPF of the envelope sender (else of the HELO name); `none` without a client address.
    async fn spf(&self, envelope: &Envelope) -> SpfOutput {
        let c = &*self.caches;
        let Some(ip) = envelope.remote_ip else {
            return SpfOutput::new(String::new());
        };
        let helo = envelope.helo.as_deref().unwrap_or("unknown");
        let params = match envelope.mail_from.as_deref().filter(|m| m.contains('@')) {
            Some(sender) => SpfParameters::verify_mail_from(ip, helo, &self.host, sender),
            None => SpfParameters::verify_ehlo(ip, helo, &self.host),
        };
        self.authenticator
            .verify_spf(
                Parameters::new(params)
                    .with_txt_cache(&c.txt)
                    .with_mx_cache(&c.mx)
                    .with_ipv4_cache(&c.ipv4)
                    .with_ipv6_cache(&c.ipv6)
                    .with_ptr_cache(&c.ptr),
            )
            .await
    }
}

fn word(r: &DmarcResult) -> &'static str {
    match r {
        DmarcResult::Pass => "pass",
        DmarcResult::Fail(_) => "fail",
        DmarcResult::TempError(_) => "temperror",
        DmarcResult::PermError(_) => "permerror",
        DmarcResult::None => "none",
    }
}
