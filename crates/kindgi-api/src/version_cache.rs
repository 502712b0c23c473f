//! The rendered bodies of exact tool versions (`GET /v1/tools/{id}/versions/{v}`), kept in
//! memory. An exact version is immutable except for its tombstone, and every change to one
//! (unregister, reinstate, a host replacing a pack tool's manifest) bumps the store's
//! registry epoch ([`kindgi_store::epoch`]) in whichever process made it (on PostgreSQL,
//! a trigger's notification carries it to every process); a body is served from here only
//! while the epoch is the one it was rendered at. Without an epoch (in-memory SQLite, or a
//! PostgreSQL host not listening yet) nothing is cached (the epoch to render under is
//! [`crate::AppState::version_epoch`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

/// The most bodies kept; past it the cache starts over.
const MAX_BODIES: usize = 4_096;
/// The largest body kept (a bigger manifest is rendered each time).
const MAX_BODY: usize = 64 * 1024;

type Key = (String, String, String);

/// Rendered version bodies by (tenant, tool id, version), with the epoch of each.
#[derive(Debug, Clone, Default)]
pub struct VersionBodies {
    inner: Arc<Mutex<HashMap<Key, (u64, Bytes)>>>,
}

impl VersionBodies {
    pub fn get(&self, epoch: u64, tenant: &str, id: &str, version: &str) -> Option<Bytes> {
        let g = self.inner.lock().ok()?;
        let key = (tenant.to_owned(), id.to_owned(), version.to_owned());
        match g.get(&key) {
            Some((e, body)) if *e == epoch => Some(body.clone()),
            _ => None,
        }
    }

    pub fn put(&self, epoch: u64, tenant: &str, id: &str, version: &str, body: Bytes) {
        if body.len() > MAX_BODY {
            return;
        }
        if let Ok(mut g) = self.inner.lock() {
            if g.len() >= MAX_BODIES {
                g.clear();
            }
            g.insert(
                (tenant.to_owned(), id.to_owned(), version.to_owned()),
                (epoch, body),
            );
        }
    }
}
