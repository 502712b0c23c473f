//! The retry rule every model adapter shares (the reference's `model-shared/src/retries.ts`):
//! an answer with status 408, 409, 429 or 5xx (Anthropic's 529 `overloaded_error` among them),
//! and a request that got no answer at all, are tried again, up to `attempts` tries in all.
//! The pause before try `n + 1` is the server's `retry-after-ms` (milliseconds) or
//! `retry-after` (seconds, or an HTTP-date), capped at 60 s; without either it is
//! `base·2^(n−1)·(1+rand)` with `base` = 1000 ms.

use reqwest::header::HeaderMap;
use std::time::{Duration, SystemTime};

/// Tries in all when a registration does not say (`adapter_config.maxRetries` + 1).
pub const DEFAULT_ATTEMPTS: u32 = 3;
/// The base of the exponential pause.
pub const DEFAULT_BASE: Duration = Duration::from_millis(1000);
/// No pause is longer, whatever the server asks for.
pub const MAX_PAUSE: Duration = Duration::from_secs(60);

/// How many tries, and the base of the pause between them. Cheap to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all (≥ 1).
    pub attempts: u32,
    pub base: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: DEFAULT_ATTEMPTS,
            base: DEFAULT_BASE,
        }
    }
}

impl RetryPolicy {
    pub fn new(attempts: u32, base: Duration) -> Self {
        Self {
            attempts: attempts.max(1),
            base,
        }
    }

    /// Whether an answer with this status is tried again.
    pub fn is_retryable_status(status: u16) -> bool {
        matches!(status, 408 | 409 | 429) || status >= 500
    }

    /// Whether try number `attempt` (1-based) may be followed by another.
    pub fn may_retry(&self, attempt: u32) -> bool {
        attempt < self.attempts
    }

    /// The pause after failed try number `attempt` (1-based), given the failed answer's
    /// headers when there was an answer.
    pub fn pause(&self, attempt: u32, headers: Option<&HeaderMap>) -> Duration {
        if let Some(asked) = headers.and_then(|h| retry_after(h, SystemTime::now())) {
            return asked.min(MAX_PAUSE);
        }
        let jitter = 1.0 + rand::random::<f64>();
        let exp = 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
        let ms = self.base.as_millis() as f64 * exp * jitter;
        Duration::from_millis(ms.min(MAX_PAUSE.as_millis() as f64) as u64)
    }
}

/// The pause a server asks for: `retry-after-ms`, else `retry-after` as seconds or as an
/// HTTP-date (a date in the past is no pause). `None` when neither is there or readable.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let read = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = read("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_millis(ms.min(1e12) as u64));
    }
    let value = read("retry-after")?;
    if let Ok(s) = value.parse::<f64>() {
        return (s.is_finite() && s >= 0.0)
            .then(|| Duration::from_millis((s.min(1e9) * 1000.0) as u64));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let at = SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_millis(date.timestamp_millis().max(0) as u64))?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(name: &'static str, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480); // 2015-10-21 07:28:00Z
        assert_eq!(
            retry_after(&headers("retry-after-ms", "250"), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(&headers("retry-after", "2"), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(
                &headers("retry-after", "Wed, 21 Oct 2015 07:28:05 GMT"),
                now
            ),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            retry_after(
                &headers("retry-after", "Wed, 21 Oct 2015 07:27:00 GMT"),
                now
            ),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers("retry-after", "soon"), now), None);
    }

    #[test]
    fn pauses_are_capped_and_grow() {
        let p = RetryPolicy::default();
        assert_eq!(p.pause(1, Some(&headers("retry-after", "3600"))), MAX_PAUSE);
        let first = p.pause(1, None);
        assert!(first >= Duration::from_millis(1000) && first <= Duration::from_millis(2000));
        let third = p.pause(3, None);
        assert!(third >= Duration::from_millis(4000) && third <= Duration::from_millis(8000));
        assert_eq!(p.pause(20, None), MAX_PAUSE);
        assert!(RetryPolicy::is_retryable_status(529));
        assert!(!RetryPolicy::is_retryable_status(400));
    }
}
