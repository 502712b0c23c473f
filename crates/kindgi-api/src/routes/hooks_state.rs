//! What the webhook receiver keeps in this process (platform-api.md §9.2): its settings
//! ([`WebhookSettings`]: the public URL receive URLs are made of, the tenant-wide receive
//! limit), the per-minute windows of its limits ([`Windows`]: a trigger's
//! `rateLimitPerMinute`, the tenant's `webhook-receives`, a client's refusals, a trigger's
//! recorded refusals) and signing secrets read in the last 10 seconds.
//!
//! Windows are fixed minutes per key, in memory, so each server counts its own share: a
//! limit holds per server, not across a fleet (docs/webhooks.md says so). Every map is
//! bounded: past [`MAX_KEYS`] keys, the windows of past minutes are dropped, then the map is
//! cleared (a limit then starts over, never refuses what it should take).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kindgi_store::seal::SecretValue;

/// The most keys one window map holds before it is pruned.
pub const MAX_KEYS: usize = 10_000;
/// How long a signing secret read is reused.
pub const SECRET_TTL: Duration = Duration::from_secs(10);
/// Refusals a minute from one client past which it gets `429`, unrecorded.
pub const CLIENT_REFUSALS_PER_MINUTE: u64 = 60;
/// Refusals (and skips) a minute per trigger recorded as fires; past it they only count.
pub const RECORDED_REFUSALS_PER_MINUTE: u64 = 20;
/// The tenant-wide receive limit when the host sets none (deliveries a minute).
pub const DEFAULT_TENANT_RECEIVES_PER_MINUTE: u64 = 12_000;

/// The receiver's settings.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// `KINDGI_PUBLIC_URL`, without a trailing `/` (`None`: records carry no `receiveUrl`).
    pub public_url: Option<String>,
    /// Accepted deliveries a minute across a tenant's triggers.
    pub tenant_receives_per_minute: u64,
}

impl WebhookSettings {
    /// `KINDGI_PUBLIC_URL` from the process environment; the default tenant limit.
    pub fn from_env() -> WebhookSettings {
        WebhookSettings {
            public_url: std::env::var("KINDGI_PUBLIC_URL")
                .ok()
                .map(|u| u.trim().trim_end_matches('/').to_owned())
                .filter(|u| !u.is_empty()),
            tenant_receives_per_minute: DEFAULT_TENANT_RECEIVES_PER_MINUTE,
        }
    }
}

/// A count per key in the current minute.
#[derive(Debug, Default)]
pub struct Windows {
    counts: Mutex<HashMap<String, (i64, u64)>>,
}

/// The minute `now_ms` is in (its start, ms) and the whole seconds left of it (≥ 1).
pub fn minute_of(now_ms: i64) -> (i64, u64) {
    let start = now_ms - now_ms.rem_euclid(60_000);
    let left = (start + 60_000 - now_ms).div_euclid(1000).max(1);
    (start, u64::try_from(left).unwrap_or(1))
}

impl Windows {
    /// This minute's count of `key`.
    pub fn count(&self, key: &str, now_ms: i64) -> u64 {
        let (minute, _) = minute_of(now_ms);
        let Ok(map) = self.counts.lock() else {
            return 0;
        };
        map.get(key)
            .filter(|(m, _)| *m == minute)
            .map_or(0, |(_, n)| *n)
    }

    /// Adds one to `key`'s count of this minute; the new count.
    pub fn bump(&self, key: &str, now_ms: i64) -> u64 {
        let (minute, _) = minute_of(now_ms);
        let Ok(mut map) = self.counts.lock() else {
            return 0;
        };
        if map.len() >= MAX_KEYS && !map.contains_key(key) {
            map.retain(|_, (m, _)| *m == minute);
            if map.len() >= MAX_KEYS {
                map.clear();
            }
        }
        let entry = map.entry(key.to_owned()).or_insert((minute, 0));
        if entry.0 != minute {
            *entry = (minute, 0);
        }
        entry.1 += 1;
        entry.1
    }

    /// Takes one of `limit` a minute for `key`: `Err(retry after seconds)` when this minute's
    /// are used up (nothing counted then).
    pub fn take(&self, key: &str, limit: u64, now_ms: i64) -> Result<(), u64> {
        if self.count(key, now_ms) >= limit {
            return Err(minute_of(now_ms).1);
        }
        self.bump(key, now_ms);
        Ok(())
    }
}

/// Signing secrets read recently, by `(tenant, scope, name)`; `None`: unreadable.
#[derive(Debug, Default)]
pub struct SecretCache {
    entries: Mutex<HashMap<String, (Instant, Option<SecretValue>)>>,
}

impl SecretCache {
    pub fn get(&self, key: &str) -> Option<Option<SecretValue>> {
        let map = self.entries.lock().ok()?;
        map.get(key)
            .filter(|(at, _)| at.elapsed() < SECRET_TTL)
            .map(|(_, v)| v.clone())
    }

    pub fn put(&self, key: &str, value: Option<SecretValue>) {
        let Ok(mut map) = self.entries.lock() else {
            return;
        };
        if map.len() >= MAX_KEYS {
            map.retain(|_, (at, _)| at.elapsed() < SECRET_TTL);
            if map.len() >= MAX_KEYS {
                map.clear();
            }
        }
        map.insert(key.to_owned(), (Instant::now(), value));
    }

    /// Forgets every entry (a trigger's secret was named again here).
    pub fn clear(&self) {
        if let Ok(mut map) = self.entries.lock() {
            map.clear();
        }
    }
}

/// The receiver's state, shared by every request of a server. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Receiver {
    pub settings: Arc<WebhookSettings>,
    /// Accepted deliveries per trigger.
    pub per_trigger: Arc<Windows>,
    /// Accepted deliveries per tenant.
    pub per_tenant: Arc<Windows>,
    /// Refusals per client.
    pub refusals_by_client: Arc<Windows>,
    /// Recorded refusals per trigger.
    pub refusals_by_trigger: Arc<Windows>,
    pub secrets: Arc<SecretCache>,
}

impl Receiver {
    pub fn new(settings: WebhookSettings) -> Receiver {
        Receiver {
            settings: Arc::new(settings),
            per_trigger: Arc::default(),
            per_tenant: Arc::default(),
            refusals_by_client: Arc::default(),
            refusals_by_trigger: Arc::default(),
            secrets: Arc::default(),
        }
    }
}

impl Default for Receiver {
    fn default() -> Receiver {
        Receiver::new(WebhookSettings::from_env())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_takes_its_limit_then_says_when_to_retry() {
        let w = Windows::default();
        let t = 120_000 + 1_500;
        assert_eq!(w.take("k", 2, t), Ok(()));
        assert_eq!(w.take("k", 2, t), Ok(()));
        assert_eq!(w.take("k", 2, t), Err(58));
        assert_eq!(w.take("k", 2, t + 60_000), Ok(()));
        assert_eq!(minute_of(179_999), (120_000, 1));
    }
}
