//! The tenant approval-policy port: where the runtime gets a tenant's `hitl` policy (the
//! host plugs in its policy store or its configuration file). Asked once at the start of
//! each agent turn, and again when a parked turn resumes, so a gate not reached before the
//! park follows the rules in force then. A failure fails the turn closed
//! (`tenant-policy-unavailable`), before any tool runs.
//!
//! The policy's parsed form `P` is the engine's (the runtime's `HitlSpec`): the port only
//! says how it is fetched, so it does not pull the policy language below the engine.

use async_trait::async_trait;

use crate::error::StorageError;

/// A tenant's approval policy, per tenant name.
#[async_trait]
pub trait TenantApprovalPolicy<P>: Send + Sync + std::fmt::Debug {
    /// The tenant's policy (`None`: it has none).
    async fn hitl_policy(&self, tenant: &str) -> Result<Option<P>, StorageError>;
}
