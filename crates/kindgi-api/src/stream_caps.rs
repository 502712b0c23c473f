//! Caps on open run streams (`GET /v1/runs/{id}/stream`, `…/progress/stream`): per API key,
//! per tenant and in all, so that one key (or one tenant) holding streams open can never
//! fill the server's connection cap — there is always room for other tenants and for
//! `/health`. Past a cap the answer is `429 rate-limit-exceeded` with `Retry-After` and
//! `details {limit, max}` (`limit`: `streams-per-key`, `streams-per-tenant` or
//! `streams-total`), the reference's shape for its other rate limits. A stream holds its
//! [`StreamSlot`] until its body is dropped (it ended, or its connection closed).
//!
//! Defaults, against `kindgi serve`'s 512 connections (256 per address): 16 per key, 64 per
//! tenant, 256 in all — streams can take at most half the connections, and one tenant an
//! eighth, so the other half always serves plain requests and `/health`. The operator
//! changes them with `kindgi server --max-streams-per-key`, `--max-streams-per-tenant` and
//! `--max-streams` (`kindgi_host::caps`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::ApiError;

/// Streams one key may hold open.
pub const DEFAULT_PER_KEY: usize = 16;
/// Streams one tenant's keys may hold open together.
pub const DEFAULT_PER_TENANT: usize = 64;
/// Streams open at once over all tenants: half of `kindgi_serve`'s default connection cap.
pub const DEFAULT_TOTAL: usize = kindgi_serve::limits::DEFAULT_MAX_CONNECTIONS / 2;
/// `Retry-After` of a refused stream, in seconds.
pub const RETRY_AFTER_S: u32 = 5;

/// The caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    pub per_key: usize,
    pub per_tenant: usize,
    pub total: usize,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            per_key: DEFAULT_PER_KEY,
            per_tenant: DEFAULT_PER_TENANT,
            total: DEFAULT_TOTAL,
        }
    }
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_key: HashMap<String, usize>,
    per_tenant: HashMap<String, usize>,
}

/// The streams open now, counted against [`StreamLimits`]. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct StreamCaps {
    limits: StreamLimits,
    open: Arc<Mutex<Open>>,
}

/// Which cap refused a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamsFull {
    PerKey(usize),
    PerTenant(usize),
    Total(usize),
}

impl StreamCaps {
    pub fn new(limits: StreamLimits) -> StreamCaps {
        StreamCaps {
            limits,
            open: Arc::default(),
        }
    }

    pub fn limits(&self) -> StreamLimits {
        self.limits
    }

    /// A slot for one more stream of `key_id` (of `tenant`), or the cap it would pass.
    pub fn open(&self, tenant: &str, key_id: &str) -> Result<StreamSlot, StreamsFull> {
        let l = self.limits;
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.per_key.get(key_id).copied().unwrap_or(0) >= l.per_key {
            return Err(StreamsFull::PerKey(l.per_key));
        }
        if open.per_tenant.get(tenant).copied().unwrap_or(0) >= l.per_tenant {
            return Err(StreamsFull::PerTenant(l.per_tenant));
        }
        if open.total >= l.total {
            return Err(StreamsFull::Total(l.total));
        }
        open.total += 1;
        *open.per_key.entry(key_id.to_owned()).or_default() += 1;
        *open.per_tenant.entry(tenant.to_owned()).or_default() += 1;
        Ok(StreamSlot {
            caps: self.open.clone(),
            tenant: tenant.to_owned(),
            key_id: key_id.to_owned(),
        })
    }
}

/// One open stream's place under the caps; given back when dropped.
#[derive(Debug)]
pub struct StreamSlot {
    caps: Arc<Mutex<Open>>,
    tenant: String,
    key_id: String,
}

fn release(counts: &mut HashMap<String, usize>, name: &str) {
    if let Some(n) = counts.get_mut(name) {
        *n -= 1;
        if *n == 0 {
            counts.remove(name);
        }
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.caps.lock().unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        release(&mut open.per_key, &self.key_id);
        release(&mut open.per_tenant, &self.tenant);
    }
}

impl IntoResponse for StreamsFull {
    fn into_response(self) -> Response {
        let (limit, max, who) = match self {
            StreamsFull::PerKey(n) => ("streams-per-key", n, "This API key already holds"),
            StreamsFull::PerTenant(n) => {
                ("streams-per-tenant", n, "This tenant's keys already hold")
            }
            StreamsFull::Total(n) => ("streams-total", n, "This server already serves"),
        };
        let message = format!(
            "{who} {max} open run streams, the most allowed; close one, or retry after {RETRY_AFTER_S} s"
        );
        let mut r = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate-limit-exceeded",
            message,
        )
        .with_details(json!({"limit": limit, "max": max}))
        .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_S));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_and_release() {
        let caps = StreamCaps::new(StreamLimits {
            per_key: 2,
            per_tenant: 3,
            total: 4,
        });
        let a1 = caps.open("t", "a").ok();
        let _a2 = caps.open("t", "a").ok();
        assert_eq!(caps.open("t", "a").err(), Some(StreamsFull::PerKey(2)));
        let _b1 = caps.open("t", "b").ok();
        assert_eq!(caps.open("t", "b").err(), Some(StreamsFull::PerTenant(3)));
        let _c1 = caps.open("u", "c").ok();
        assert_eq!(caps.open("u", "c").err(), Some(StreamsFull::Total(4)));
        drop(a1);
        assert!(caps.open("t", "a").is_ok());
    }
}
