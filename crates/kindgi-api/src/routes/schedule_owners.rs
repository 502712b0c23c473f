//! Whose authority a schedule's runs act with, re-checked at every fire
//! ([`OwnerAccess`] over this server's keys and service accounts): the key that registered
//! (or took over) a schedule must still be valid — not revoked, not expired — and a service
//! account owner still registered. Lost access refuses the fire (`refused`, with why), never
//! a secret in the detail.

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::ports::OwnerAccess;
use kindgi_core::schedule::ScheduleRecord;
use kindgi_core::trigger::OwnerKind;
use kindgi_store::Database;
use kindgi_store::service_accounts::ServiceAccountStore;
use kindgi_store::tokens::TokenStore;

/// [`OwnerAccess`] over a database's `api_keys` and `service_accounts`.
#[derive(Debug, Clone)]
pub struct StoreOwners {
    tokens: TokenStore,
    accounts: ServiceAccountStore,
}

impl StoreOwners {
    pub fn new(db: Database) -> StoreOwners {
        StoreOwners {
            tokens: TokenStore::new(db.clone()),
            accounts: ServiceAccountStore::new(db),
        }
    }
}

#[async_trait]
impl OwnerAccess for StoreOwners {
    async fn refusal(&self, s: &ScheduleRecord) -> Result<Option<String>, StorageError> {
        const OP: &str = "schedules.owner_check";
        if let Some(key) = &s.owner_key_id {
            let record = self
                .tokens
                .get(&s.tenant, key)
                .await
                .map_err(|e| e.into_storage(OP))?;
            let now = kindgi_core::now_millis();
            let why = match record {
                None => Some("the key that owns this schedule no longer exists"),
                Some(r) if r.revoked_at.is_some() => {
                    Some("the key that owns this schedule was revoked")
                }
                Some(r) if r.expires_at.is_some_and(|at| at <= now) => {
                    Some("the key that owns this schedule has expired")
                }
                Some(_) => None,
            };
            if let Some(why) = why {
                return Ok(Some(format!(
                    "The owner lost access: {why}. An admin can take the schedule over (POST /v1/schedules/{}/owner)",
                    s.id
                )));
            }
        }
        if s.owner.kind == OwnerKind::Service && s.owner_key_id.is_none() {
            let account = self
                .accounts
                .get(&s.tenant, &s.owner.id)
                .await
                .map_err(|e| e.into_storage(OP))?;
            if account.is_none_or(|a| a.unregistered_at.is_some()) {
                return Ok(Some(format!(
                    "The owner lost access: service account {} is unregistered. An admin can take the schedule over (POST /v1/schedules/{}/owner)",
                    s.owner.id, s.id
                )));
            }
        }
        Ok(None)
    }
}
