//! The definition-source port: a fallback the host plugs in behind the runtime's in-memory
//! catalogues (e.g. the store's flow, agent and guardrail registries), answering
//! definitions as JSON — a flow definition; an agent definition in the agent schema's
//! shape; a guardrail definition or a pack index's guardrail entry. Exact versions are
//! immutable, so the runtime compiles what it answers once and caches it.

use async_trait::async_trait;
use serde_json::Value;

use crate::error::StorageError;

/// Definitions as JSON, per tenant. A failure fails the lookup
/// `definition-source-failed`.
#[async_trait]
pub trait DefinitionSource: Send + Sync + std::fmt::Debug {
    /// `Ok(None)` when the tenant has no such flow (or version).
    async fn flow_json(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Value>, StorageError>;

    /// `Ok(None)` when the tenant has no such agent (or version).
    async fn agent_json(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Value>, StorageError>;

    /// `Ok(None)` when the tenant has no such guardrail (or it is unregistered). Default:
    /// none.
    async fn guardrail_json(&self, tenant: &str, id: &str) -> Result<Option<Value>, StorageError> {
        let _ = (tenant, id);
        Ok(None)
    }
}
