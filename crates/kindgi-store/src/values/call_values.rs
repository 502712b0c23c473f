//! Env values and secrets into tool calls: [`ValuesStore`] as core's [`CallValues`] port
//! over the env and secret tables (`/v1/env`, `/v1/secrets`). A call's env values are its
//! tenant's for the served env (`KINDGI_ENV`, default `local`), its run's project's (the
//! Default project's for a run of none) beating the tenant's; an in-process handler's
//! secrets are resolved, one at a time and only when it asks, through a
//! [`SecretResolver`]; a pack tool's declared secrets (`needsSpec.secrets`) all at once
//! before its call, the same way (the run's project's beating the tenant's). The runtime masks every value resolved in what the run stores.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::ids::default_project_id;
use kindgi_core::ports::CallValues;
use kindgi_spec::ToolManifest;
use kindgi_tools::context::SecretResolver;
use kindgi_tools::tool::BoxFuture;

use super::ValuesStore;

#[async_trait]
impl CallValues for ValuesStore {
    async fn env(
        &self,
        tenant: &str,
        project: Option<&str>,
        _tool: &ToolManifest,
        names: &[String],
    ) -> Result<BTreeMap<String, String>, StorageError> {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let project = project_or_default(tenant, project);
        self.resolve_env(tenant, Some(&project), &self.served_env, &names)
            .await
            .map_err(StorageError::backend_of("values.resolve_env"))
    }

    async fn secret_values(
        &self,
        tenant: &str,
        project: Option<&str>,
        _tool: &ToolManifest,
        names: &[String],
    ) -> Result<BTreeMap<String, String>, StorageError> {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let project = project_or_default(tenant, project);
        let found = self
            .resolve_secrets_in(tenant, Some(&project), &self.served_env, &names)
            .await
            .map_err(StorageError::backend_of("values.resolve_secrets"))?;
        Ok(found
            .into_iter()
            .map(|(name, value)| (name, value.expose().to_owned()))
            .collect())
    }

    fn served_env(&self) -> &str {
        &self.served_env
    }

    fn provider_secrets(&self, tenant: &str) -> Option<Arc<dyn SecretResolver>> {
        Some(Arc::new(TenantSecrets {
            store: self.clone(),
            tenant: tenant.to_owned(),
            project: default_project_id(tenant),
        }))
    }

    fn secrets(
        &self,
        tenant: &str,
        project: Option<&str>,
        _tool: &ToolManifest,
    ) -> Option<Arc<dyn SecretResolver>> {
        Some(Arc::new(TenantSecrets {
            store: self.clone(),
            tenant: tenant.to_owned(),
            project: project_or_default(tenant, project),
        }))
    }
}

/// `project`, or `tenant`'s Default project for a run of none.
fn project_or_default(tenant: &str, project: Option<&str>) -> String {
    project.map_or_else(|| default_project_id(tenant), str::to_owned)
}

/// One tenant's secrets in one project (beating the tenant's), resolved on demand.
#[derive(Debug)]
struct TenantSecrets {
    store: ValuesStore,
    tenant: String,
    project: String,
}

impl SecretResolver for TenantSecrets {
    fn resolve<'a>(
        &'a self,
        env_name: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let mut found = self
                .store
                .resolve_secrets_in(&self.tenant, Some(&self.project), env_name, &[name])
                .await
                .map_err(|e| e.to_string())?;
            match found.remove(name) {
                Some(v) => Ok(v.expose().to_owned()),
                None => Err(format!(
                    "secret \"{name}\" is not set in env \"{env_name}\" for this tenant; set it with `kindgi secrets set`"
                )),
            }
        })
    }
}
