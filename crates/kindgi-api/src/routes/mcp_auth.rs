//! A registered MCP endpoint's credential (platform-api.md §6: a `secretRef` sent as
//! `Authorization: Bearer <value>`, or `auth` — `basic`, `header`,
//! `oauth2-client-credentials`; see `kindgi_mcp::auth`), resolved for the endpoint's tenant —
//! its project's secrets, else the tenant's — each time the endpoint is connected (register,
//! re-sync, boot, proxy). The values (and an access token asked for with them) live only in
//! the connection's options, never in the stored record; every reason a connection gives is
//! masked with them before it is stored or answered. Also who reaches an endpoint at all
//! ([`check_reaches`]: a key limited to a project, its project's only).

use std::sync::Arc;

use kindgi_mcp::auth::{AuthHeaders, AuthPlan, SecretValues};
use kindgi_store::mcp_endpoints::McpEndpointRecord;
use kindgi_store::values::ValuesStore;
use kindgi_tools::egress::EgressPolicy;
use kindgi_tools::secret_mask::SecretMask;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::key_project::{KeyProject, outside};

/// What a connection to one endpoint sends, and the mask that hides it.
#[derive(Debug)]
pub struct EndpointAuth {
    pub headers: AuthHeaders,
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
    egress: &EgressPolicy,
) -> Result<EndpointAuth, String> {
    let mask = SecretMask::new();
    let plan = AuthPlan::of_registration(&record.body);
    let what = plan.describe();
    let mut resolved = SecretValues::new();
    for secret in plan.secrets() {
        let (env, name) = (secret.env_name.as_str(), secret.name.as_str());
        let found = values
            .resolve_secrets_in(&record.tenant_id, Some(project_id), env, &[name])
            .await
            .map_err(|e| {
                format!("secret \"{name}\" (the endpoint's {what}) could not be read: {e}")
            })?;
        let Some(value) = found.get(name) else {
            return Err(format!(
                "secret \"{name}\" (the endpoint's {what}) is not set in env \"{env}\" for this tenant (its project or the tenant); set it with `kindgi secrets set {name} --env={env} --scope=tenant --from-stdin`, then register the endpoint again"
            ));
        };
        mask.add(value.expose());
        resolved.insert(secret.clone(), value.expose().to_owned());
    }
    let (headers, token) = plan
        .headers(&resolved, egress)
        .await
        .map_err(|e| mask.mask_str(&e.to_string()).into_owned())?;
    if let Some(token) = token {
        mask.add(&token);
    }
    for (_, value) in headers.iter() {
        mask.add(value);
    }
    Ok(EndpointAuth { headers, mask })
}

/// `403 permission-denied` naming `mcp_endpoint:<id>` when `record` is not of the project
/// the caller's key is limited to (the tenant's endpoints are no project's).
pub fn check_reaches(
    caller: &Caller,
    record: &McpEndpointRecord,
    action: &str,
) -> Result<(), ApiError> {
    let Some(limit) = &caller.project_id else {
        return Ok(());
    };
    if record.scope_kind == "project" && caller.reaches(Some(&record.scope_id)) {
        return Ok(());
    }
    Err(outside(
        limit,
        action,
        &format!(
            "mcp_endpoint:{}",
            record.endpoint_id.chars().take(200).collect::<String>()
        ),
    ))
}
