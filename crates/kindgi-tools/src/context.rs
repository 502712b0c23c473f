//! The context a handler runs with: who and what the call is for, env values, secrets,
//! and the cancellation signal.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::BoxFuture;

/// Resolves a secret reference (`envName`, `name`) to its value.
pub trait SecretResolver: Send + Sync + std::fmt::Debug {
    fn resolve<'a>(
        &'a self,
        env_name: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// Resolved secret values by name. `Debug` prints the names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretValues(pub BTreeMap<String, String>);

impl std::fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// Everything a handler may use besides its input. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub tenant_id: String,
    pub run_id: Option<String>,
    pub request_id: Option<String>,
    pub idempotency_key: Option<String>,
    pub principal: Option<Value>,
    pub project_id: Option<String>,
    pub org_id: Option<String>,
    /// Env values the caller passes; a handler sees only the names its tool declares.
    pub env: Option<Arc<BTreeMap<String, String>>>,
    /// Fired when the caller gives up (deadline, disconnect, cancellation). Cooperative.
    pub signal: CancellationToken,
    pub secrets: Option<Arc<dyn SecretResolver>>,
    /// The values of the secrets the tool declares (`needsSpec.secrets`), resolved before a
    /// call that leaves the process (a pack tool's `ctx.secrets`); `None` for every other.
    pub secret_values: Option<Arc<SecretValues>>,
    /// Access tokens of the connections the tool declared, by the tool's name for each.
    pub connections: Option<Arc<BTreeMap<String, String>>>,
    /// For a call of a tool that may pause (`pauses: true`): the wait token and the link the
    /// tool hands to the other system (seed 000; docs/pauses.md).
    pub wait: Option<WaitTicket>,
}

/// A pausing call's wait: the other system answers by `POST`ing the call's result to
/// `link` (which carries `token`) before `expires_at`.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitTicket {
    /// Unguessable, single-use, scoped to the run's tenant.
    pub token: String,
    /// Where the other system sends its answer.
    pub link: String,
    /// RFC 3339 UTC: when the wait times out unless the tool asks for another timeout.
    pub expires_at: String,
    /// The wait's timeout in milliseconds (24 h unless the tool says otherwise).
    pub timeout_ms: u64,
}

impl std::fmt::Debug for WaitTicket {
    // The token is a capability: never in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitTicket")
            .field("token", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field("timeout_ms", &self.timeout_ms)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context for tests: tenant `tenant-test`, run `run-test`, an unfired signal.
    pub fn for_test() -> Self {
        Self::new("tenant-test").with_run_id("run-test")
    }

    pub fn new(tenant_id: impl Into<String>) -> Self {
        Self {
            tenant_id: tenant_id.into(),
            run_id: None,
            request_id: None,
            idempotency_key: None,
            principal: None,
            project_id: None,
            org_id: None,
            env: None,
            signal: CancellationToken::new(),
            secrets: None,
            secret_values: None,
            connections: None,
            wait: None,
        }
    }

    pub fn with_run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    pub fn with_env(mut self, env: BTreeMap<String, String>) -> Self {
        self.env = Some(Arc::new(env));
        self
    }
}
