//! Whose authority a trigger's runs act with, re-checked at every fire — a schedule's
//! ([`OwnerAccess`], asked by the runtime's schedule loop), a webhook trigger's
//! ([`super::hooks`]) and a mail trigger's ([`super::mail_inbound`]) — over this server's
//! keys and service accounts ([`StoreOwners::lost_access`]): the key that registered (or
//! took over) the trigger must still be valid — not revoked, not expired — and a service
//! account owner still registered; a mail trigger's owner must still be a tenant admin. Lost
//! access refuses the fire (`refused`, with why), never a secret in the detail. A suspended or
//! closing tenant, or a suspended project, skips it instead (`skipped`, the state's code as
//! the detail, not counted toward the auto-pause; [`StoreOwners::standing`]).

use async_trait::async_trait;
use kindgi_core::StorageError;
use kindgi_core::ports::{FireHold, OwnerAccess, TenantStates};
use kindgi_core::schedule::ScheduleRecord;
use kindgi_core::trigger::{OwnerKind, TriggerOwner};
use kindgi_store::Database;
use kindgi_store::service_accounts::{Grant, ServiceAccountStore};
use kindgi_store::tenant_states::TenantStateStore;
use kindgi_store::tokens::{KeyRole, PrincipalKind, TokenRecord, TokenStore};

/// [`OwnerAccess`] over a database's `api_keys` and `service_accounts`.
#[derive(Debug, Clone)]
pub struct StoreOwners {
    tokens: TokenStore,
    accounts: ServiceAccountStore,
    states: TenantStateStore,
}

/// What an owner must still hold at a fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// A valid key (or a registered service account).
    Access,
    /// That, and tenant admin (a mail trigger acts for the people its `senders` name).
    TenantAdmin,
}

impl StoreOwners {
    pub fn new(db: Database) -> StoreOwners {
        StoreOwners {
            tokens: TokenStore::new(db.clone()),
            accounts: ServiceAccountStore::new(db.clone()),
            states: TenantStateStore::new(db),
        }
    }

    /// Why `owner`, acting with key `owner_key_id` (a `tokenId`), may no longer start the
    /// runs of `tenant`'s trigger (`None`: it may). `what` names the trigger in the reason
    /// ("schedule", "webhook trigger", "mail trigger").
    pub async fn lost_access(
        &self,
        tenant: &str,
        owner: &TriggerOwner,
        owner_key_id: Option<&str>,
        needs: Needs,
        what: &str,
    ) -> Result<Option<String>, StorageError> {
        const OP: &str = "triggers.owner_check";
        if let Some(key) = owner_key_id {
            let record = self
                .tokens
                .get(tenant, key)
                .await
                .map_err(|e| e.into_storage(OP))?;
            let why = key_refusal(record.as_ref(), needs, what);
            if why.is_some() {
                return Ok(why);
            }
        }
        let account_id = match (owner.kind, owner_key_id) {
            // A service account named as the owner acts without a key of its own here.
            (OwnerKind::Service, None) => Some(owner.id.clone()),
            _ if needs == Needs::TenantAdmin => self.key_account(tenant, owner_key_id).await?,
            _ => None,
        };
        let Some(account_id) = account_id else {
            return Ok(None);
        };
        let account = self
            .accounts
            .get(tenant, &account_id)
            .await
            .map_err(|e| e.into_storage(OP))?;
        if account.is_none() && owner_key_id.is_none() {
            return self
                .legacy_key_owner(tenant, &account_id, needs, what)
                .await;
        }
        Ok(match account {
            Some(a) if a.unregistered_at.is_some() => {
                Some(format!("service account {account_id} is unregistered"))
            }
            Some(a) if needs == Needs::TenantAdmin && !a.grants.contains(&Grant::TenantAdmin) => {
                Some(format!(
                    "service account {account_id} is no longer a tenant admin"
                ))
            }
            _ => None,
        })
    }

    /// What stops `tenant`'s `project` from running anything: `tenant-closing`,
    /// `tenant-suspended`, `project-suspended` (`None`: nothing does), in one read.
    pub async fn standing(
        &self,
        tenant: &str,
        project: &str,
    ) -> Result<Option<&'static str>, StorageError> {
        Ok(self.states.standing(tenant, Some(project)).await?.code())
    }

    /// A trigger stored before owner keys were kept, owned by a key that is its own
    /// principal (`owner {kind: service, id: <tokenId or keyId>}`): that key, checked; no such
    /// key: an unregistered service account.
    async fn legacy_key_owner(
        &self,
        tenant: &str,
        id: &str,
        needs: Needs,
        what: &str,
    ) -> Result<Option<String>, StorageError> {
        const OP: &str = "triggers.owner_check";
        if let Some(record) = self
            .tokens
            .get(tenant, id)
            .await
            .map_err(|e| e.into_storage(OP))?
        {
            return Ok(key_refusal(Some(&record), needs, what));
        }
        let live = self
            .tokens
            .active_keys(tenant)
            .await
            .map_err(|e| e.into_storage(OP))?;
        if needs == Needs::Access && live.iter().any(|k| k.key_id == id) {
            return Ok(None);
        }
        Ok(Some(format!("service account {id} is unregistered")))
    }

    /// The service account whose key `owner_key_id` is, if it is one's.
    async fn key_account(
        &self,
        tenant: &str,
        owner_key_id: Option<&str>,
    ) -> Result<Option<String>, StorageError> {
        let Some(key) = owner_key_id else {
            return Ok(None);
        };
        let record = self
            .tokens
            .get(tenant, key)
            .await
            .map_err(|e| e.into_storage("triggers.owner_check"))?;
        Ok(record
            .and_then(|r| r.principal)
            .filter(|p| p.kind == PrincipalKind::ServiceAccount)
            .map(|p| p.id))
    }
}

/// Why the owner's key `record` no longer lets it start runs (`None`: it does).
fn key_refusal(record: Option<&TokenRecord>, needs: Needs, what: &str) -> Option<String> {
    let now = kindgi_core::now_millis();
    match record {
        None => Some(format!("the key that owns this {what} no longer exists")),
        Some(r) if r.revoked_at.is_some() => {
            Some(format!("the key that owns this {what} was revoked"))
        }
        Some(r) if r.expires_at.is_some_and(|at| at <= now) => {
            Some(format!("the key that owns this {what} has expired"))
        }
        Some(r)
            if needs == Needs::TenantAdmin
                && (r.role != KeyRole::Admin || r.project_id.is_some()) =>
        {
            Some(format!(
                "the key that owns this {what} is not a tenant admin's"
            ))
        }
        Some(_) => None,
    }
}

/// The detail of a fire refused for `why`, with what an admin can do (`take_over`).
pub fn refused_detail(why: &str, take_over: &str) -> String {
    format!("The owner lost access: {why}. {take_over}")
}

#[async_trait]
impl OwnerAccess for StoreOwners {
    /// The tenant's and project's state first (a suspended one's fire is `skipped`, with its
    /// code as the detail), then the owner.
    async fn refusal(&self, s: &ScheduleRecord) -> Result<Option<FireHold>, StorageError> {
        if let Some(code) = self.standing(&s.tenant, &s.project_id).await? {
            return Ok(Some(FireHold::Skipped(code.to_owned())));
        }
        let why = self
            .lost_access(
                &s.tenant,
                &s.owner,
                s.owner_key_id.as_deref(),
                Needs::Access,
                "schedule",
            )
            .await?;
        Ok(why.map(|why| {
            FireHold::Refused(refused_detail(
                &why,
                &format!(
                    "An admin can take the schedule over (POST /v1/schedules/{}/owner)",
                    s.id
                ),
            ))
        }))
    }
}
