//! Registered model providers in memory ([`MemoryProviderRegistry`]): lost with the
//! process; for tests and throw-away runtimes.

use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::error::StorageError;
use crate::ports::{ProviderRegistration, ProviderRegistry, ProviderWrite};

/// Active registrations by `(tenant, id)`.
type Rows = BTreeMap<(String, String), ProviderRegistration>;

/// Active registrations by `(tenant, id)`.
#[derive(Debug, Default)]
pub struct MemoryProviderRegistry {
    inner: Mutex<Rows>,
}

impl MemoryProviderRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self, op: &'static str) -> Result<std::sync::MutexGuard<'_, Rows>, StorageError> {
        self.inner.lock().map_err(|_| StorageError::poisoned(op))
    }
}

#[async_trait]
impl ProviderRegistry for MemoryProviderRegistry {
    async fn register(
        &self,
        registration: &ProviderRegistration,
    ) -> Result<ProviderWrite, StorageError> {
        let mut map = self.lock("providers.register")?;
        let key = (registration.tenant.clone(), registration.id.clone());
        if map.contains_key(&key) {
            return Ok(ProviderWrite::AlreadyRegistered);
        }
        let mut stored = registration.clone();
        stored.unregistered_at = None;
        map.insert(key, stored);
        Ok(ProviderWrite::Registered)
    }

    async fn provider(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ProviderRegistration>, StorageError> {
        let map = self.lock("providers.get")?;
        Ok(map.get(&(tenant.to_owned(), id.to_owned())).cloned())
    }

    async fn providers(
        &self,
        tenant: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProviderRegistration>, StorageError> {
        let map = self.lock("providers.list")?;
        Ok(map
            .values()
            .filter(|r| r.tenant == tenant && after.is_none_or(|a| r.id.as_str() > a))
            .take(limit)
            .cloned()
            .collect())
    }

    async fn unregister(&self, tenant: &str, id: &str, _at: i64) -> Result<bool, StorageError> {
        let mut map = self.lock("providers.unregister")?;
        Ok(map.remove(&(tenant.to_owned(), id.to_owned())).is_some())
    }
}
