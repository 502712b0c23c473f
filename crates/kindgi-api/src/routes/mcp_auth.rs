//! A registered MCP endpoint's `secretRef` (platform-api.md §6: sent as
//! `Authorization: Bearer <value>`), resolved for the endpoint's tenant — its project's
//! secret, else the tenant's — each time the endpoint is connected (register, re-sync, boot,
//! proxy). The value lives only in the connection's options, never in the stored record;
//! every reason a connection gives is masked with it before it is stored or answered.

use std::sync::Arc;

use kindgi_mcp::BearerToken;
use kindgi_store::mcp_endpoints::McpEndpointRecord;
use kindgi_store::values::ValuesStore;
use kindgi_tools::secret_mask::SecretMask;
use serde_json::Value;

/// What a connection to one endpoint sends, and the mask that hides it.
#[derive(Debug)]
pub struct EndpointAuth {
    pub bearer: Option<BearerToken>,
    pub mask: Arc<SecretMask>,
}

impl EndpointAuth {
    /// `why` with the endpoint's secret masked.
    pub fn masked(&self, why: &str) -> String {
        self.mask.mask_str(why).into_owned()
    }
}

/// The endpoint's credential for `project_id` (the endpoint's project, else its tenant's
/// Default project), or why it cannot be had: a missing secret names itself and the
/// command that sets it.
pub async fn resolve(
    values: &ValuesStore,
    record: &McpEndpointRecord,
    project_id: &str,
) -> Result<EndpointAuth, String> {
    let mask = SecretMask::new();
    if let Some(scheme) = record.body.get("auth").map(|a| {
        a.get("scheme")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    }) {
        return Err(format!(
            "the endpoint's auth (scheme \"{scheme}\") is not sent by this runtime yet; name the token with `secretRef` instead (sent as Authorization: Bearer)"
        ));
    }
    let Some(reference) = record.body.get("secretRef") else {
        return Ok(EndpointAuth { bearer: None, mask });
    };
    let text = |key: &str| {
        reference
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (env, name) = (text("envName"), text("name"));
    let found = values
        .resolve_secrets_in(&record.tenant_id, Some(project_id), env, &[name])
        .await
        .map_err(|e| {
            format!("secret \"{name}\" (the endpoint's secretRef) could not be read: {e}")
        })?;
    let Some(value) = found.get(name) else {
        return Err(format!(
            "secret \"{name}\" (the endpoint's secretRef) is not set in env \"{env}\" for this tenant (its project or the tenant); set it with `kindgi secrets set {name} --env={env} --scope=tenant --from-stdin`, then register the endpoint again"
        ));
    };
    mask.add(value.expose());
    Ok(EndpointAuth {
        bearer: Some(BearerToken::new(value.expose())),
        mask,
    })
}
