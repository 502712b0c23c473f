//! The dispatchers of registry MCP tools (the ones `POST /v1/mcp/endpoints` registered): the
//! server a tool's `mcpEndpoint` names, connected on first use under the host's policy and
//! kept for the calls after it.
//!
//! An endpoint that authenticates (platform-api.md §6: a `secretRef`, or `auth` with
//! `basic`, `header` or `oauth2-client-credentials`; see `kindgi_mcp::auth`) is connected
//! with the secrets the *run* resolves, on each call: the values come through the call's
//! `ToolContext.secrets` (the run's masking resolver, so the run's journal masks them), are
//! turned into the plan's headers (asking the token endpoint, for client credentials), and a
//! connection is reused only by calls that made the same headers — a rotated secret or a new
//! access token opens a new connection, and one tenant's connection never serves another's
//! credential. The plan is read from the endpoint's record when the tool is resolved, so it is
//! the one registered now, not one copied into the tool.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use async_trait::async_trait;
use kindgi_mcp::auth::{AuthHeaders, AuthPlan, SecretValues};
use kindgi_mcp::{
    ConnectOptions, DEFAULT_CALL_TIMEOUT, Endpoint, McpClient, McpSource, mcp_dispatchers,
};
use kindgi_runtime::{RegistryToolError, ToolDispatcher};
use kindgi_spec::ToolManifest;
use kindgi_store::mcp_endpoints::McpEndpointStore;
use kindgi_tools::dispatch::{ToolCallError, ToolTransport};
use kindgi_tools::egress::EgressPolicy;
use kindgi_tools::{ToolContext, secret_mask::SecretMask};
use serde_json::Value;
use tokio::sync::Mutex;

/// The most connections kept at once; past it the oldest is let go (its calls finish).
const MAX_CONNECTIONS: usize = 256;

/// The host's rules for the MCP servers registry tools name: the addresses they may be
/// reached at, and whether a `mcp+stdio://` one (a command run here) may be started.
#[derive(Debug, Clone, Default)]
pub struct McpPolicy {
    pub egress: EgressPolicy,
    pub allow_stdio: bool,
}

/// A server's tools as dispatchers, by the server's own tool name.
type McpTools = HashMap<String, Arc<dyn ToolDispatcher>>;

/// One connection's identity: the address and a digest of the credential it was made with.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    address: String,
    credential: Option<String>,
}

/// The kept connections' tools, and the order they were made in (for letting go of the oldest).
#[derive(Default)]
struct Kept {
    tools: HashMap<Key, McpTools>,
    order: VecDeque<Key>,
}

/// Connections of registry MCP tools, and where their endpoints' credentials are named.
#[derive(Clone, Default)]
pub struct RegistryMcp {
    servers: Arc<Mutex<Kept>>,
    policy: McpPolicy,
    endpoints: Option<McpEndpointStore>,
}

impl std::fmt::Debug for RegistryMcp {
    // The keys hold credentials: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryMcp")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl RegistryMcp {
    pub fn new(policy: McpPolicy) -> Self {
        Self {
            policy,
            ..Self::default()
        }
    }

    /// Reads endpoints' `secretRef`s from `endpoints` (without it, no call sends one).
    pub fn with_endpoints(mut self, endpoints: McpEndpointStore) -> Self {
        self.endpoints = Some(endpoints);
        self
    }

    /// The dispatcher of `manifest` (a registry MCP tool of `tenant`), or `None` when its
    /// server does not list it.
    pub async fn tool(
        &self,
        tenant: &str,
        manifest: &ToolManifest,
    ) -> Result<Option<Arc<dyn ToolDispatcher>>, RegistryToolError> {
        let Some(address) = manifest.mcp_endpoint.clone() else {
            return Ok(None);
        };
        let name = kindgi_mcp::mcp_tool_name(manifest).to_owned();
        match self.auth_plan(tenant, manifest).await? {
            AuthPlan::None => {
                self.dispatcher(&address, &name, &AuthHeaders::default())
                    .await
            }
            plan => Ok(Some(Arc::new(AuthedMcpTool {
                manifest: manifest.clone(),
                address,
                name,
                plan,
                mcp: self.clone(),
            }))),
        }
    }

    /// How the endpoint that registered `manifest` (`metadata.mcp.endpointId`) signs in.
    async fn auth_plan(
        &self,
        tenant: &str,
        manifest: &ToolManifest,
    ) -> Result<AuthPlan, RegistryToolError> {
        let (Some(store), Some(endpoint_id)) = (
            &self.endpoints,
            manifest
                .metadata
                .as_ref()
                .and_then(|m| m.get("mcp"))
                .and_then(|m| m.get("endpointId"))
                .and_then(Value::as_str),
        ) else {
            return Ok(AuthPlan::None);
        };
        let record = store.get(tenant, endpoint_id).await.map_err(|e| {
            RegistryToolError::EndpointUnreadable {
                endpoint_id: endpoint_id.to_owned(),
                source: Box::new(e),
            }
        })?;
        Ok(record.map_or(AuthPlan::None, |r| AuthPlan::of_registration(&r.body)))
    }

    /// The tool `name` of the server at `address` connected with `auth`: a kept connection,
    /// or a new one (made without holding the lock, so a slow server delays only its callers).
    async fn dispatcher(
        &self,
        address: &str,
        name: &str,
        auth: &AuthHeaders,
    ) -> Result<Option<Arc<dyn ToolDispatcher>>, RegistryToolError> {
        let key = Key {
            address: address.to_owned(),
            credential: auth.fingerprint(),
        };
        if let Some(tools) = self.servers.lock().await.tools.get(&key) {
            return Ok(tools.get(name).cloned());
        }
        let tools = self.connect(address, auth).await?;
        let found = tools.get(name).cloned();
        let mut kept = self.servers.lock().await;
        if !kept.tools.contains_key(&key) {
            if kept.order.len() >= MAX_CONNECTIONS
                && let Some(oldest) = kept.order.pop_front()
            {
                kept.tools.remove(&oldest);
            }
            kept.order.push_back(key.clone());
            kept.tools.insert(key, tools);
        }
        Ok(found)
    }

    async fn connect(
        &self,
        address: &str,
        auth: &AuthHeaders,
    ) -> Result<McpTools, RegistryToolError> {
        let endpoint = Endpoint::parse(address).map_err(|e| RegistryToolError::BadAddress {
            address: address.to_owned(),
            source: Box::new(e),
        })?;
        if matches!(endpoint, Endpoint::Stdio { .. }) && !self.policy.allow_stdio {
            return Err(RegistryToolError::StdioRefused {
                address: address.to_owned(),
            });
        }
        let options = ConnectOptions {
            egress: self.policy.egress.clone(),
            auth: auth.clone(),
            ..ConnectOptions::default()
        };
        // What the server answers may quote the credential it was sent.
        let mask = SecretMask::new();
        for (_, value) in auth.iter() {
            mask.add(value);
        }
        let client = McpClient::connect_to(endpoint, options)
            .await
            .map_err(|e| RegistryToolError::Unreachable {
                address: address.to_owned(),
                reason: mask.mask_str(&e.to_string()).into_owned(),
            })?;
        let source: Arc<dyn McpSource> = Arc::new(client);
        let tools = mcp_dispatchers(source, DEFAULT_CALL_TIMEOUT)
            .await
            .map_err(|e| RegistryToolError::ToolsUnlisted {
                address: address.to_owned(),
                reason: mask.mask_str(&e.to_string()).into_owned(),
            })?;
        Ok(tools
            .into_iter()
            .map(|t| (kindgi_mcp::mcp_tool_name(t.manifest()).to_owned(), t))
            .collect())
    }
}

/// A registry MCP tool whose endpoint authenticates with a secret: each call resolves it
/// through the run and is served by a connection made with that value.
#[derive(Debug)]
struct AuthedMcpTool {
    manifest: ToolManifest,
    address: String,
    /// The server's own name of the tool.
    name: String,
    plan: AuthPlan,
    mcp: RegistryMcp,
}

impl AuthedMcpTool {
    fn not_run(&self, why: String) -> ToolCallError {
        ToolCallError {
            code: "precondition-failed".into(),
            message: format!("Tool \"{}\" was not run: {why}", self.manifest.id),
            tool_id: self.manifest.id.clone(),
            transport: true,
            issues: Vec::new(),
        }
    }
}

#[async_trait]
impl ToolDispatcher for AuthedMcpTool {
    fn manifest(&self) -> &ToolManifest {
        &self.manifest
    }

    fn transport(&self) -> ToolTransport {
        ToolTransport::Mcp
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<Value, ToolCallError> {
        let what = self.plan.describe();
        let Some(resolver) = &ctx.secrets else {
            return Err(self.not_run(format!(
                "its MCP endpoint signs in with its {what}, and this call has no way to resolve secrets"
            )));
        };
        let mut values = SecretValues::new();
        for secret in self.plan.secrets() {
            let (env_name, name) = (&secret.env_name, &secret.name);
            let value = resolver.resolve(env_name, name).await.map_err(|why| {
                self.not_run(format!(
                    "secret \"{name}\" (its MCP endpoint's {what}) could not be resolved in env \"{env_name}\": {why}"
                ))
            })?;
            values.insert(secret.clone(), value);
        }
        let mask = SecretMask::new();
        for value in values.values() {
            mask.add(value);
        }
        let (auth, _) = self
            .plan
            .headers(&values, &self.mcp.policy.egress)
            .await
            .map_err(|e| self.not_run(mask.mask_str(&e.to_string()).into_owned()))?;
        let tool = self
            .mcp
            .dispatcher(&self.address, &self.name, &auth)
            .await
            .map_err(|why| self.not_run(why.to_string()))?
            .ok_or_else(|| {
                self.not_run(format!(
                    "its MCP server no longer lists a tool named \"{}\"",
                    self.name
                ))
            })?;
        tool.call(input, ctx).await
    }
}
