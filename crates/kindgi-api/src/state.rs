//! [`AppState`]: what every handler can reach. Routes added by other crates (flows, runs)
//! take the same state: build a `Router<AppState>` and pass it to [`crate::router_with`].

use std::sync::Arc;

use kindgi_store::Database;
use kindgi_store::tokens::{KeyStatus, TokenStore};
use kindgi_store::tools::StoreRegistry;
use kindgi_tools::registry::ToolRegistry;

use crate::idempotency::InFlight;

/// Shared state. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub db: Database,
    pub registry: Arc<dyn ToolRegistry>,
    pub tokens: TokenStore,
    /// The persistent registry when `registry` is it: registering through it records an
    /// idempotent answer in the write's own transaction.
    pub(crate) store_registry: Option<StoreRegistry>,
    /// Idempotency keys whose first request is running in this process.
    pub(crate) in_flight: InFlight,
    /// Whether `POST /v1/mcp/endpoints` may register a `stdio` endpoint (a command run on
    /// this host). Off by default; `kindgi dev` turns it on, `kindgi server` only with
    /// `--allow-stdio-mcp`. Off: `403 host-access-denied`.
    pub allow_stdio_mcp: bool,
    /// Whether an agent version exists, for `POST /v1/conversations`; `None` accepts any.
    pub agent_exists: Option<AgentExists>,
}

/// `(tenant, agentId, version)` → whether that agent version is registered (and active).
pub type AgentExists = Arc<
    dyn Fn(String, String, String) -> kindgi_tools::BoxFuture<'static, Result<bool, String>>
        + Send
        + Sync,
>;

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
        let registry = StoreRegistry::new(db.clone());
        let mut state = AppState::with_registry(db, Arc::new(registry.clone()));
        state.store_registry = Some(registry);
        state
    }

    /// State with another registry implementation (e.g. the in-memory one). Idempotent
    /// answers are then recorded after the write, not in its transaction.
    pub fn with_registry(db: Database, registry: Arc<dyn ToolRegistry>) -> AppState {
        AppState {
            tokens: TokenStore::new(db.clone()),
            db,
            registry,
            store_registry: None,
            in_flight: InFlight::default(),
            allow_stdio_mcp: false,
            agent_exists: None,
        }
    }

    /// Look a bearer key up. Nothing is cached: every request reads the key's row (one
    /// primary-key read), so a revocation — by this process or by `kindgi tokens revoke` in
    /// another one — takes effect on the next request.
    pub async fn authenticate(&self, key: &str) -> Result<KeyStatus, kindgi_store::StoreError> {
        self.tokens.authenticate(key).await
    }
}
