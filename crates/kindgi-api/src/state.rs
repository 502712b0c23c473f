//! [`AppState`]: what every handler can reach. Routes added by other crates (flows, runs)
//! take the same state: build a `Router<AppState>` and pass it to [`crate::router_with`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kindgi_store::Database;
use kindgi_store::tokens::{KeyStatus, TokenStore, hash_key};
use kindgi_store::tools::StoreRegistry;
use kindgi_tools::registry::ToolRegistry;

/// How long a successful key lookup is reused before the database is asked again. A revoked
/// key stops working within this time.
pub const AUTH_CACHE_TTL: Duration = Duration::from_secs(5);
const AUTH_CACHE_MAX: usize = 10_000;

/// Shared state. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub db: Database,
    pub registry: Arc<dyn ToolRegistry>,
    pub tokens: TokenStore,
    auth_cache: Arc<Mutex<HashMap<String, (String, Instant)>>>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("db", &self.db.display_target())
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State over a migrated database: the persistent registry and its API keys.
    pub fn new(db: Database) -> AppState {
        let registry = Arc::new(StoreRegistry::new(db.clone()));
        AppState::with_registry(db, registry)
    }

    /// State with another registry implementation (e.g. the in-memory one).
    pub fn with_registry(db: Database, registry: Arc<dyn ToolRegistry>) -> AppState {
        AppState {
            tokens: TokenStore::new(db.clone()),
            db,
            registry,
            auth_cache: Arc::default(),
        }
    }

    /// Look a bearer key up, through a short-lived cache of valid keys (keyed by hash).
    pub async fn authenticate(&self, key: &str) -> Result<KeyStatus, kindgi_store::StoreError> {
        let hash = hash_key(key);
        if let Ok(cache) = self.auth_cache.lock() {
            if let Some((tenant, at)) = cache.get(&hash) {
                if at.elapsed() < AUTH_CACHE_TTL {
                    return Ok(KeyStatus::Valid {
                        tenant: tenant.clone(),
                        key_id: hash[..16].to_owned(),
                    });
                }
            }
        }
        let status = self.tokens.authenticate(key).await?;
        if let (KeyStatus::Valid { tenant, .. }, Ok(mut cache)) = (&status, self.auth_cache.lock())
        {
            if cache.len() >= AUTH_CACHE_MAX {
                cache.retain(|_, (_, at)| at.elapsed() < AUTH_CACHE_TTL);
                if cache.len() >= AUTH_CACHE_MAX {
                    cache.clear();
                }
            }
            cache.insert(hash, (tenant.clone(), Instant::now()));
        }
        Ok(status)
    }

    /// Forget cached key lookups (after revoking a key in-process).
    pub fn clear_auth_cache(&self) {
        if let Ok(mut cache) = self.auth_cache.lock() {
            cache.clear();
        }
    }
}
