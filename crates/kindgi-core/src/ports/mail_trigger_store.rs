//! The mail trigger port (`/v1/mail-triggers`, the inbound mail receiver): the triggers, by id
//! and by address, and their fires, deduplicated per trigger on the message's id. The API asks
//! it; kindgi-store keeps it in SQLite or PostgreSQL, [`crate::memory`] in memory.

use async_trait::async_trait;

use crate::error::StorageError;
use crate::mail_trigger::{
    FireEnd, FireRecorded, MailFire, MailFireQuery, MailTrigger, MailTriggerQuery,
};

/// A tenant's mail triggers and their fires.
#[async_trait]
pub trait MailTriggerStore: Send + Sync + std::fmt::Debug {
    /// Stores a new trigger. [`StorageError::Conflict`] when a live trigger (of any tenant)
    /// has its address.
    async fn create(&self, trigger: &MailTrigger) -> Result<(), StorageError>;

    /// The live trigger `trigger_id` of `tenant`.
    async fn get(
        &self,
        tenant: &str,
        trigger_id: &str,
    ) -> Result<Option<MailTrigger>, StorageError>;

    /// The live trigger whose address is `address` (lower-case), of whichever tenant.
    async fn by_address(&self, address: &str) -> Result<Option<MailTrigger>, StorageError>;

    /// A page of `query.tenant`'s live triggers.
    async fn list(&self, query: &MailTriggerQuery) -> Result<Vec<MailTrigger>, StorageError>;

    /// Replaces what may change (address, project, config, status and reason, `updated_at`)
    /// of the live trigger `trigger.trigger_id`. `false`: no such trigger.
    /// [`StorageError::Conflict`] when another live trigger has the new address.
    async fn update(&self, trigger: &MailTrigger) -> Result<bool, StorageError>;

    /// Soft-deletes it (its address is free again). `false`: no such live trigger.
    async fn unregister(
        &self,
        tenant: &str,
        trigger_id: &str,
        now: i64,
    ) -> Result<bool, StorageError>;

    /// Records `fire`. With a `dedupe_key` the trigger already has a fire for, nothing new is
    /// stored: that fire counts one more duplicate and is returned.
    async fn record_fire(&self, fire: &MailFire) -> Result<FireRecorded, StorageError>;

    /// Sets how the fire `fire_id` ended.
    async fn end_fire(
        &self,
        tenant: &str,
        fire_id: &str,
        end: &FireEnd,
    ) -> Result<(), StorageError>;

    /// Counts a start on the trigger: `failed` adds one to its failures in a row and, at
    /// `pause_after`, pauses it with `reason`; a start that started clears them. Sets
    /// `last_fired_at`. Returns the trigger as stored (`None`: gone).
    async fn count_start(
        &self,
        tenant: &str,
        trigger_id: &str,
        failed: bool,
        pause_after: u32,
        reason: &str,
        now: i64,
    ) -> Result<Option<MailTrigger>, StorageError>;

    /// A page of one trigger's fires.
    async fn fires(&self, query: &MailFireQuery) -> Result<Vec<MailFire>, StorageError>;
}
