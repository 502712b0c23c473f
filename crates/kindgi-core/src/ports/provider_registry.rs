//! The provider registry port: a tenant's registered model providers (`/v1/providers`),
//! each a `ProviderMetadata` with the adapter that instantiates it, its non-secret
//! `adapter_config` and the name of the tenant secret its key resolves from (never the
//! key). The API writes it; the runtime's model router reads it per agent turn.
//!
//! Unregistering is a tombstone (`unregistered_at`): reads then miss the row and its id is
//! free to register again. An active id registered twice is refused
//! ([`ProviderWrite::AlreadyRegistered`]), decided by the store in one statement so two
//! concurrent registrations cannot both win.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::StorageError;

/// The tenant secret a provider's key resolves from (`secret_ref`): names only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    pub env_name: String,
    pub name: String,
}

/// One registered model provider of a tenant.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderRegistration {
    /// The tenant's name (as keys carry it).
    pub tenant: String,
    /// `metadata.id`.
    pub id: String,
    /// e.g. `@kindgi/adapter-model-openai-compat`.
    pub adapter_id: String,
    /// The `ProviderMetadata` as registered (validated by the API).
    pub metadata: Value,
    pub secret_ref: Option<SecretRef>,
    /// Flat, non-secret settings (`baseUrl`, a cloud project).
    pub adapter_config: Map<String, Value>,
    pub send_traceparent: bool,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds; `Some` once unregistered.
    pub unregistered_at: Option<i64>,
}

impl ProviderRegistration {
    /// `metadata.fallback` (absent: `false`).
    pub fn is_fallback(&self) -> bool {
        self.metadata
            .get("fallback")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `metadata.models[]`, as registered.
    pub fn models(&self) -> &[Value] {
        self.metadata
            .get("models")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The names of `metadata.models[]`, in order.
    pub fn model_names(&self) -> Vec<&str> {
        self.models()
            .iter()
            .filter_map(|m| m.get("name").and_then(Value::as_str))
            .collect()
    }

    /// `metadata.defaultModel`.
    pub fn default_model(&self) -> Option<&str> {
        self.metadata.get("defaultModel").and_then(Value::as_str)
    }
}

/// What [`ProviderRegistry::register`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderWrite {
    /// Stored (new, or replacing an unregistered row).
    Registered,
    /// An active provider of the tenant already has that id.
    AlreadyRegistered,
}

/// A tenant's registered model providers.
#[async_trait]
pub trait ProviderRegistry: Send + Sync + std::fmt::Debug {
    /// Stores `registration` (its `created_at` as given, `unregistered_at` cleared) unless
    /// an active one has its id.
    async fn register(
        &self,
        registration: &ProviderRegistration,
    ) -> Result<ProviderWrite, StorageError>;

    /// The active provider `id` of `tenant`.
    async fn provider(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ProviderRegistration>, StorageError>;

    /// `tenant`'s active providers by id, after `after`, at most `limit`.
    async fn providers(
        &self,
        tenant: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProviderRegistration>, StorageError>;

    /// Tombstones the active provider `id`; `false` when there is none.
    async fn unregister(&self, tenant: &str, id: &str, at: i64) -> Result<bool, StorageError>;
}
