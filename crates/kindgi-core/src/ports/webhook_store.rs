//! The webhook trigger port (platform-api.md §9): the triggers a tenant registered and their
//! fire history. Deliveries are deduped here, across servers sharing one database (a unique
//! `(trigger, dedupe key)`); a fire's start outcome is counted here toward the trigger's
//! auto-pause ([`AUTO_PAUSE_AFTER`](crate::trigger::AUTO_PAUSE_AFTER) refused or failed
//! starts in a row), so two servers count one sequence. Refusals of deliveries (a bad
//! signature, a limit) never count.

use async_trait::async_trait;

use crate::error::StorageError;
use crate::trigger::TriggerStatus;
use crate::webhook::{FireFinish, FireRecorded, WebhookFire, WebhookTrigger};

/// A page of a tenant's live triggers: newest first, after `(created_at, trigger_id)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookQuery {
    pub tenant: String,
    pub status: Option<TriggerStatus>,
    pub project_id: Option<String>,
    pub before: Option<(i64, String)>,
    pub limit: usize,
}

/// A page of one trigger's fires: newest first, before `(fired_at, fire_id)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FireQuery {
    pub tenant: String,
    pub trigger_id: String,
    pub before: Option<(i64, String)>,
    pub limit: usize,
}

/// A tenant's webhook triggers and their fires.
#[async_trait]
pub trait WebhookStore: Send + Sync + std::fmt::Debug {
    /// Stores a new trigger (`Conflict` when its ids are taken).
    async fn register(&self, trigger: &WebhookTrigger) -> Result<(), StorageError>;

    /// Trigger `trigger_id` of `tenant`, unregistered ones included.
    async fn trigger(
        &self,
        tenant: &str,
        trigger_id: &str,
    ) -> Result<Option<WebhookTrigger>, StorageError>;

    /// The trigger a receive URL names, unregistered ones included (any tenant: the caller
    /// checks the URL's tenant).
    async fn by_webhook_id(&self, webhook_id: &str)
    -> Result<Option<WebhookTrigger>, StorageError>;

    /// A page of live (not unregistered) triggers.
    async fn triggers(&self, query: &WebhookQuery) -> Result<Vec<WebhookTrigger>, StorageError>;

    /// Writes the editable fields of `trigger` (input, label, flow version, secret name and
    /// scope, signature, delivery id header, limits, owner, unattended tools, `updated_at`).
    /// False: no live trigger of that id.
    async fn update(&self, trigger: &WebhookTrigger) -> Result<bool, StorageError>;

    /// Moves a live trigger from `from` to `to` (resume clears the reason and the count).
    /// False: not live, or not in `from`.
    async fn set_status(
        &self,
        tenant: &str,
        trigger_id: &str,
        from: TriggerStatus,
        to: TriggerStatus,
        now: i64,
    ) -> Result<bool, StorageError>;

    /// Tombstones a live trigger. False: none live.
    async fn unregister(
        &self,
        tenant: &str,
        trigger_id: &str,
        now: i64,
    ) -> Result<bool, StorageError>;

    /// Records `fire` and the trigger's `last_fired_at`. With a `dedupe_key` already held by
    /// a fire of the same trigger, records nothing new: bumps that fire's `duplicates`.
    async fn record_fire(&self, fire: &WebhookFire) -> Result<FireRecorded, StorageError>;

    /// Sets what became of `fire_id`'s start, and counts it: a counted refused/failed start
    /// adds one to the trigger's run of failures, pausing it at the limit; a started one
    /// resets it. True when this finish paused the trigger.
    async fn finish_fire(
        &self,
        tenant: &str,
        trigger_id: &str,
        fire_id: &str,
        finish: &FireFinish,
    ) -> Result<bool, StorageError>;

    /// Counts one refusal that is not recorded as a fire (past the per-minute record cap):
    /// `suppressedRefusals` of the minute starting at `minute`.
    async fn count_suppressed(
        &self,
        tenant: &str,
        trigger_id: &str,
        minute: i64,
    ) -> Result<(), StorageError>;

    /// A page of a trigger's fires.
    async fn fires(&self, query: &FireQuery) -> Result<Vec<WebhookFire>, StorageError>;

    /// The fire `fire_id` of `tenant`.
    async fn fire(&self, tenant: &str, fire_id: &str) -> Result<Option<WebhookFire>, StorageError>;
}
