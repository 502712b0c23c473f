//! What the host plugs into the runtime behind its in-memory catalogues (besides the
//! store's `Definitions`, which is the runtime's definition source itself): a factory that serves a
//! registry pack tool (one registered through `POST /v1/tools`) with the pack service of a
//! pack this host runs for the tenant, chosen by the tool id's pack prefix, and a registry
//! MCP tool with its endpoint's server ([`crate::registry_mcp`]). The same
//! services run a pack's guardrail checks for agent turns ([`GuardrailChecks`], pack
//! protocol `check-invoke`), chosen by the check id's pack prefix.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use kindgi_pack_client::dispatch::{CheckCallError, PackServiceCaller};
use kindgi_runtime::guardrail::{CheckError, CheckRequest, GuardrailChecks};
use kindgi_runtime::resolve::{RegistryToolError, RegistryToolFactory};
use kindgi_runtime::{PackTool, ToolDispatcher};
use kindgi_spec::ToolManifest;

use crate::registry_mcp::RegistryMcp;

/// Tenant → pack id → the caller of the service serving that pack now; and the servers of
/// registry MCP tools (`POST /v1/mcp/endpoints`).
#[derive(Debug, Clone, Default)]
pub struct PackServices {
    inner: Arc<RwLock<HashMap<String, PacksOfTenant>>>,
    mcp: RegistryMcp,
}

/// Pack id → the caller of its service.
type PacksOfTenant = HashMap<String, Arc<PackServiceCaller>>;

impl PackServices {
    /// Serves registry MCP tools with `mcp` (its policy, its endpoints' credentials).
    pub fn with_registry_mcp(mut self, mcp: RegistryMcp) -> Self {
        self.mcp = mcp;
        self
    }

    pub fn set(&self, tenant: &str, pack_id: &str, caller: Arc<PackServiceCaller>) {
        if let Ok(mut g) = self.inner.write() {
            g.entry(tenant.to_owned())
                .or_default()
                .insert(pack_id.to_owned(), caller);
        }
    }

    /// The pack that owns the primitive `id` (`<pack>.<name>`, where a pack id may itself
    /// hold dots, `acme.sample`): the tenant's pack whose id is the longest prefix of `id`
    /// ending before a `.`.
    fn owner_of(&self, tenant: &str, id: &str) -> Option<(String, Arc<PackServiceCaller>)> {
        let guard = self.inner.read().ok()?;
        let packs = guard.get(tenant)?;
        id.match_indices('.')
            .rev()
            .find_map(|(i, _)| packs.get_key_value(&id[..i]))
            .map(|(pack, caller)| (pack.clone(), caller.clone()))
    }
}

#[async_trait]
impl RegistryToolFactory for PackServices {
    async fn build(
        &self,
        tenant: &str,
        manifest: &ToolManifest,
    ) -> Result<Option<Arc<dyn ToolDispatcher>>, RegistryToolError> {
        if manifest.is_mcp() {
            return self.mcp.tool(tenant, manifest).await;
        }
        // A pack's tool ids are `<pack>.<name>`: the longest running pack id before a `.`.
        let Some((pack, caller)) = self.owner_of(tenant, &manifest.id) else {
            return Ok(None);
        };
        let caller: Arc<dyn kindgi_runtime::PackCaller> = caller;
        Ok(Some(Arc::new(PackTool::new(
            manifest.clone(),
            pack,
            caller,
        ))))
    }
}

#[async_trait]
impl GuardrailChecks for PackServices {
    async fn run_check(
        &self,
        request: CheckRequest<'_>,
    ) -> Result<kindgi_spec::pack_protocol::CheckResult, CheckError> {
        let unknown = |why: &str| CheckError {
            code: "unknown-check".into(),
            message: format!(
                "Guardrail \"{}\" references unregistered check \"{}\" ({why})",
                request.guardrail_id, request.check_id
            ),
        };
        // A pack's check ids are `<pack>.checks.<name>`, where the pack id may hold dots
        // (`acme.sample.checks.x`): the longest running pack id before a `.` owns it.
        if !request.check_id.contains('.') {
            return Err(unknown("a check id names its pack before a \".\""));
        }
        let Some((pack, caller)) = self.owner_of(request.tenant, request.check_id) else {
            return Err(unknown(
                "no pack whose id it starts with runs for this tenant",
            ));
        };
        caller
            .call_check(
                request.check_id,
                request.config.clone(),
                request.trace.clone(),
                &request.cancel,
            )
            .await
            .map_err(|e| match e {
                CheckCallError::NotInPack { .. } => {
                    unknown(&format!("pack \"{pack}\" serves no such check"))
                }
                CheckCallError::Check { code, message } => CheckError {
                    code: "check-failed".into(),
                    message: format!(
                        "guardrail \"{}\": its check threw: {code}: {message}",
                        request.guardrail_id
                    ),
                },
                CheckCallError::Transport { message } => CheckError {
                    code: "pack-unreachable".into(),
                    message,
                },
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kindgi_pack_client::dispatch::ServiceSlot;

    #[test]
    fn a_pack_id_with_dots_owns_the_ids_it_prefixes() {
        let services = PackServices::default();
        for pack in ["acme", "acme.sample", "acme.sample.extra"] {
            services.set("t", pack, PackServiceCaller::new(ServiceSlot::new()));
        }
        let owner = |id: &str| services.owner_of("t", id).map(|(p, _)| p);
        assert_eq!(
            owner("acme.sample.checks.response-not-empty").as_deref(),
            Some("acme.sample")
        );
        assert_eq!(
            owner("acme.sample.extra.echo").as_deref(),
            Some("acme.sample.extra")
        );
        assert_eq!(owner("acme.sample.echo").as_deref(), Some("acme.sample"));
        assert_eq!(owner("acme.other").as_deref(), Some("acme"));
        // A prefix that is not a whole segment does not own an id.
        assert_eq!(owner("acmex.echo"), None);
        assert_eq!(owner("acme"), None);
        assert_eq!(
            services
                .owner_of("other-tenant", "acme.echo")
                .map(|(p, _)| p),
            None
        );
    }
}
