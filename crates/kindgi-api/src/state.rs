//! [`AppState`]: what every handler can reach — the runtime, the stores and the host's
//! settings. Handlers take the whole state or a part of it through axum's `FromRef`
//! (`State<Runtime>`, `State<Arc<ValuesConfig>>`), checked when the router is built: no
//! request-extension layer that could be missing at run time.

use std::sync::Arc;

use axum::extract::FromRef;
use kindgi_runtime::Runtime;
use kindgi_store::Database;
use kindgi_store::definitions::Definitions;
use kindgi_store::tokens::{KeyStatus, TokenStore};
use kindgi_store::tools::StoreRegistry;
use kindgi_tools::registry::ToolRegistry;

use crate::in_flight::InFlight;
use crate::values_config::ValuesConfig;

/// The message of `409 registry-read-only` under `kindgi dev`.
pub const READ_ONLY_REASON: &str = "This registry is read-only: `kindgi dev` serves the pack's tools, flows, agents and guardrails from its files. Change them in the pack (dev reloads it), or publish to a `kindgi server`";

/// Shared state. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub db: Database,
    /// Runs, approvals and waits (`/v1/runs`, `/v1/approvals`, `/v1/waits`).
    pub runtime: Runtime,
    /// The served env and the secrets key of `/v1/env` and `/v1/secrets` (and of MCP
    /// endpoints' secret headers).
    pub values: Arc<ValuesConfig>,
    pub registry: Arc<dyn ToolRegistry>,
    pub tokens: TokenStore,
    /// Flows, agents and guardrails.
    pub definitions: Definitions,
    /// `Some(reason)`: the registries (tools, flows, agents, guardrails) take no writes —
    /// every non-GET/HEAD on them is `409 registry-read-only` with `reason` as its message
    /// (`kindgi dev` serves the pack's files; see [`AppState::read_only_registry`]).
    pub(crate) read_only: Option<Arc<str>>,
    /// The persistent registry when `registry` is it: registering through it records an
    /// idempotent answer in the write's own transaction.
    pub(crate) store_registry: Option<StoreRegistry>,
    /// Idempotency keys whose first request is running in this process.
    pub(crate) in_flight: InFlight,
    /// Whether `POST /v1/mcp/endpoints` may register a `stdio` endpoint (a command run on
    /// this host). Off by default; `kindgi dev` turns it on, `kindgi server` only with
    /// `--allow-stdio-mcp`. Off: `403 host-access-denied`.
    pub allow_stdio_mcp: bool,
    /// The addresses MCP endpoints registered through the API may be reached at (on
    /// register, on proxy requests, on every sync). Open by default; `kindgi server` refuses
    /// private and internal addresses (see `kindgi_tools::egress`).
    pub egress: kindgi_tools::egress::EgressPolicy,
    /// Whether an agent version exists, for `POST /v1/conversations`; `None` accepts any.
    pub agent_exists: Option<AgentExists>,
    /// Rendered exact tool versions (see [`crate::version_cache`]).
    pub(crate) version_bodies: crate::version_cache::VersionBodies,
    /// Open run streams, capped per key, per tenant and in all (see [`crate::stream_caps`]).
    pub streams: crate::stream_caps::StreamCaps,
    /// What paged answers and streams may hold unwritten, over all connections (see
    /// [`crate::body_budget`]).
    pub body_budget: crate::body_budget::BodyBudget,
    /// The key audit bundles are signed with (`None`: `404 signing-not-configured`; see
    /// [`crate::export_signing`]).
    pub export_signer: Option<Arc<crate::export_signing::ExportSigner>>,
    /// Schedules (`/v1/schedules`) and their fire loop's handle, over the same runtime.
    pub schedules: kindgi_runtime::triggers::Schedules,
    /// The webhook receiver's settings, limits and secret cache (see
    /// [`crate::routes::hooks_state`]).
    pub webhooks: crate::routes::hooks_state::Receiver,
    /// How inbound mail's senders are checked (DKIM, SPF, DMARC); `None`: over the system's
    /// resolver, made on first use (see [`crate::routes::mail_sender`]).
    pub mail_sender_check: Option<crate::routes::mail_sender::SenderCheck>,
}

/// `(tenant, agentId, version)` → whether that agent version is registered (and active).
pub type AgentExists = Arc<
    dyn Fn(String, String, String) -> kindgi_tools::BoxFuture<'static, Result<bool, String>>
        + Send
        + Sync,
>;

impl FromRef<AppState> for Runtime {
    fn from_ref(state: &AppState) -> Runtime {
        state.runtime.clone()
    }
}

impl FromRef<AppState> for Arc<ValuesConfig> {
    fn from_ref(state: &AppState) -> Arc<ValuesConfig> {
        state.values.clone()
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("db", &self.db.display_target())
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State over a migrated database: the persistent registry, its API keys, and a runtime
    /// over the same database until the host gives its own ([`AppState::with_runtime`]).
    pub fn new(db: Database) -> AppState {
        let registry = StoreRegistry::new(db.clone());
        let mut state = AppState::with_registry(db, Arc::new(registry.clone()));
        state.store_registry = Some(registry);
        state
    }

    /// State with another registry implementation (e.g. the in-memory one). Idempotent
    /// answers are then recorded after the write, not in its transaction.
    pub fn with_registry(db: Database, registry: Arc<dyn ToolRegistry>) -> AppState {
        // A host gives its own ([`AppState::with_runtime`]).
        let runtime = Runtime::over(db.ports()).build();
        let schedules = kindgi_runtime::triggers::Schedules::new(
            db.ports().schedules,
            runtime.clone(),
            Arc::new(crate::routes::schedule_owners::StoreOwners::new(db.clone())),
        );
        AppState {
            runtime,
            schedules,
            values: ValuesConfig::process(),
            tokens: TokenStore::new(db.clone()),
            definitions: Definitions::new(db.clone()),
            read_only: None,
            db,
            registry,
            store_registry: None,
            in_flight: InFlight::default(),
            allow_stdio_mcp: false,
            egress: kindgi_tools::egress::EgressPolicy::open(),
            agent_exists: None,
            version_bodies: Default::default(),
            streams: Default::default(),
            body_budget: Default::default(),
            export_signer: None,
            webhooks: Default::default(),
            mail_sender_check: None,
        }
    }

    /// Check inbound mail's senders with `check` (a test's offline records, say).
    pub fn with_mail_sender_check(
        mut self,
        check: crate::routes::mail_sender::SenderCheck,
    ) -> AppState {
        self.mail_sender_check = Some(check);
        self
    }

    /// The sender check of inbound mail: the state's, else one over the system's resolver
    /// (made once per process; `503` while it cannot be made).
    pub fn mail_sender_check(
        &self,
    ) -> Result<crate::routes::mail_sender::SenderCheck, crate::ApiError> {
        use crate::routes::mail_sender::SenderCheck;
        static SYSTEM: std::sync::OnceLock<Result<SenderCheck, String>> =
            std::sync::OnceLock::new();
        if let Some(c) = &self.mail_sender_check {
            return Ok(c.clone());
        }
        match SYSTEM.get_or_init(|| SenderCheck::system("kindgi").map_err(|e| e.to_string())) {
            Ok(c) => Ok(c.clone()),
            Err(e) => {
                tracing::warn!(error = %e, "inbound mail: no DNS resolver");
                Err(crate::ApiError::new(
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    "mail-auth-unavailable",
                    "The sender's DKIM, SPF and DMARC records cannot be read now; retry later",
                ))
            }
        }
    }

    /// The same state with the webhook receiver's settings (default: `KINDGI_PUBLIC_URL`
    /// from the process environment, the default tenant receive limit).
    pub fn with_webhook_settings(
        mut self,
        settings: crate::routes::hooks_state::WebhookSettings,
    ) -> AppState {
        self.webhooks = crate::routes::hooks_state::Receiver::new(settings);
        self
    }

    /// Sign exports (audit bundles) with `signer` (`None`: signing not configured).
    pub fn with_export_signer(
        mut self,
        signer: Option<Arc<crate::export_signing::ExportSigner>>,
    ) -> AppState {
        self.export_signer = signer;
        self
    }

    /// Make the registries read-only (`true`) or writable: while read-only, every write to
    /// `/v1/{tools,flows,agents,guardrails}` is `409 registry-read-only` with
    /// [`READ_ONLY_REASON`] as its message, and the reads serve what the host put in the
    /// store (e.g. [`Definitions::put_flow`]).
    /// The persistent tool registry, when `registry` is it (hosts put pack tools in it).
    pub fn store_registry(&self) -> Option<&StoreRegistry> {
        self.store_registry.as_ref()
    }

    pub fn read_only_registry(self, read_only: bool) -> AppState {
        self.read_only_registry_because(read_only.then_some(READ_ONLY_REASON))
    }

    /// [`AppState::read_only_registry`] with its own message (`None`: writable).
    pub fn read_only_registry_because(mut self, reason: Option<&str>) -> AppState {
        self.read_only = reason.map(Arc::from);
        self
    }

    /// The same state over `runtime` (the host's, with its tools, model and sources).
    pub fn with_runtime(mut self, runtime: Runtime) -> AppState {
        self.schedules = self.schedules.with_runtime(runtime.clone());
        self.runtime = runtime;
        self
    }

    /// The same state under the host's values configuration (default: the process
    /// environment's, [`ValuesConfig::process`]).
    pub fn with_values(mut self, values: ValuesConfig) -> AppState {
        self.values = Arc::new(values);
        self
    }

    /// The same state with other caps on open run streams.
    pub fn stream_limits(mut self, limits: crate::stream_caps::StreamLimits) -> AppState {
        self.streams = crate::stream_caps::StreamCaps::new(limits);
        self
    }

    /// The registry epoch to render cached version bodies under (see
    /// [`crate::version_cache`]), when this state may cache them (`None`: do not).
    pub fn version_epoch(&self) -> Option<u64> {
        self.store_registry()?;
        self.db
            .epochs()
            .current(kindgi_store::epoch::EpochKind::Registry)
    }

    /// Why the registries take no writes, when they don't.
    pub fn registry_read_only_reason(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    /// Look a bearer key up. A valid key is kept in memory under the database's keys epoch
    /// ([`kindgi_store::epoch`]), so a revocation — by this process or by `kindgi tokens
    /// revoke` in another one — takes effect on the next request that sees it: at once on a
    /// SQLite file, on PostgreSQL as soon as the change's notification arrives.
    pub async fn authenticate(&self, key: &str) -> Result<KeyStatus, kindgi_store::StoreError> {
        self.tokens.authenticate(key).await
    }
}
