//! The call-values port (platform-api.md §7, "Into a tool call"): before each call the
//! runtime asks the provider the host plugs in for the values of the tool's
//! `needsSpec.env` names and for a secret resolver, for the call's tenant and the project
//! of its run (`None`: the tenant's Default project; a project's value beats the tenant's).
//! What the runtime does with them (the missing-value checks, masking) is the runtime's.

use async_trait::async_trait;
use kindgi_spec::ToolManifest;
use kindgi_tools::context::SecretResolver;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::StorageError;

/// Env values and secrets for a tool call, per tenant. The host implements it (over the
/// env and secret stores of its deployment).
#[async_trait]
pub trait CallValues: Send + Sync + std::fmt::Debug {
    /// The values `tenant` has for `names` (the tool's `needsSpec.env` names, in declaration
    /// order); a name without a value is left out. `Err` fails the call.
    async fn env(
        &self,
        tenant: &str,
        project: Option<&str>,
        tool: &ToolManifest,
        names: &[String],
    ) -> Result<BTreeMap<String, String>, StorageError>;

    /// The resolver of `tenant`'s secrets for this tool (`needsSpec.secrets`, an http spec's
    /// `secretRef`), if there is one.
    fn secrets(
        &self,
        tenant: &str,
        project: Option<&str>,
        tool: &ToolManifest,
    ) -> Option<Arc<dyn SecretResolver>>;

    /// The values `tenant` has for `names` (the tool's `needsSpec.secrets` names) in the
    /// served env, for a call that leaves the process; a name without a value is left out.
    /// `Err` fails the call.
    async fn secret_values(
        &self,
        tenant: &str,
        project: Option<&str>,
        tool: &ToolManifest,
        names: &[String],
    ) -> Result<BTreeMap<String, String>, StorageError>;

    /// The env the values are served from (`KINDGI_ENV`), for messages.
    fn served_env(&self) -> &str;

    /// The resolver of `tenant`'s secrets for a registered model provider's `secret_ref`
    /// (the model router's); `None` when the host keeps no secrets.
    fn provider_secrets(&self, _tenant: &str) -> Option<Arc<dyn SecretResolver>> {
        None
    }
}
