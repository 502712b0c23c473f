//! Webhook triggers and their fires in memory ([`MemoryWebhookStore`]): lost with the
//! process; for tests and throw-away runtimes. The same rules as the SQL store: dedupe per
//! `(trigger, key)`, auto-pause after [`AUTO_PAUSE_AFTER`] counted failures in a row.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;

use crate::error::StorageError;
use crate::ports::{FireQuery, WebhookQuery, WebhookStore};
use crate::trigger::{AUTO_PAUSE_AFTER, FireOutcome, TriggerStatus};
use crate::webhook::{FireFinish, FireRecorded, WebhookFire, WebhookTrigger, auto_pause_reason};

#[derive(Debug, Default)]
struct Rows {
    /// By trigger id.
    triggers: BTreeMap<String, WebhookTrigger>,
    /// By fire id.
    fires: BTreeMap<String, WebhookFire>,
}

/// Triggers by id, fires by id.
#[derive(Debug, Default)]
pub struct MemoryWebhookStore {
    inner: Mutex<Rows>,
}

impl MemoryWebhookStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self, op: &'static str) -> Result<MutexGuard<'_, Rows>, StorageError> {
        self.inner.lock().map_err(|_| StorageError::poisoned(op))
    }
}

fn live<'a>(rows: &'a mut Rows, tenant: &str, trigger_id: &str) -> Option<&'a mut WebhookTrigger> {
    rows.triggers
        .get_mut(trigger_id)
        .filter(|t| t.tenant == tenant && t.unregistered_at.is_none())
}

#[async_trait]
impl WebhookStore for MemoryWebhookStore {
    async fn register(&self, trigger: &WebhookTrigger) -> Result<(), StorageError> {
        let mut rows = self.lock("webhooks.register")?;
        let taken = rows.triggers.contains_key(&trigger.trigger_id)
            || rows
                .triggers
                .values()
                .any(|t| t.webhook_id == trigger.webhook_id);
        if taken {
            return Err(StorageError::Conflict {
                op: "webhooks.register",
                what: format!("webhook trigger {}", trigger.trigger_id),
                source: None,
            });
        }
        rows.triggers
            .insert(trigger.trigger_id.clone(), trigger.clone());
        Ok(())
    }

    async fn trigger(
        &self,
        tenant: &str,
        trigger_id: &str,
    ) -> Result<Option<WebhookTrigger>, StorageError> {
        let rows = self.lock("webhooks.get")?;
        Ok(rows
            .triggers
            .get(trigger_id)
            .filter(|t| t.tenant == tenant)
            .cloned())
    }

    async fn by_webhook_id(
        &self,
        webhook_id: &str,
    ) -> Result<Option<WebhookTrigger>, StorageError> {
        let rows = self.lock("webhooks.by_webhook_id")?;
        Ok(rows
            .triggers
            .values()
            .find(|t| t.webhook_id == webhook_id)
            .cloned())
    }

    async fn triggers(&self, q: &WebhookQuery) -> Result<Vec<WebhookTrigger>, StorageError> {
        let rows = self.lock("webhooks.list")?;
        let mut out: Vec<WebhookTrigger> = rows
            .triggers
            .values()
            .filter(|t| t.tenant == q.tenant && t.unregistered_at.is_none())
            .filter(|t| q.status.is_none_or(|s| t.status == s))
            .filter(|t| q.project_id.as_ref().is_none_or(|p| &t.project_id == p))
            .filter(|t| {
                q.before.as_ref().is_none_or(|(at, id)| {
                    (t.created_at, t.trigger_id.as_str()) < (*at, id.as_str())
                })
            })
            .cloned()
            .collect();
        out.sort_by(|a, b| (b.created_at, &b.trigger_id).cmp(&(a.created_at, &a.trigger_id)));
        out.truncate(q.limit.max(1));
        Ok(out)
    }

    async fn update(&self, trigger: &WebhookTrigger) -> Result<bool, StorageError> {
        let mut rows = self.lock("webhooks.update")?;
        let Some(row) = live(&mut rows, &trigger.tenant, &trigger.trigger_id) else {
            return Ok(false);
        };
        let kept = (
            row.status,
            row.status_reason.clone(),
            row.failures_in_row,
            row.suppressed,
            row.last_fired_at,
        );
        *row = trigger.clone();
        (
            row.status,
            row.status_reason,
            row.failures_in_row,
            row.suppressed,
            row.last_fired_at,
        ) = kept;
        Ok(true)
    }

    async fn set_status(
        &self,
        tenant: &str,
        trigger_id: &str,
        from: TriggerStatus,
        to: TriggerStatus,
        now: i64,
    ) -> Result<bool, StorageError> {
        let mut rows = self.lock("webhooks.set_status")?;
        match live(&mut rows, tenant, trigger_id) {
            Some(t) if t.status == from => {
                t.status = to;
                t.updated_at = now;
                if to == TriggerStatus::Active {
                    t.status_reason = None;
                    t.failures_in_row = 0;
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn unregister(
        &self,
        tenant: &str,
        trigger_id: &str,
        now: i64,
    ) -> Result<bool, StorageError> {
        let mut rows = self.lock("webhooks.unregister")?;
        match live(&mut rows, tenant, trigger_id) {
            Some(t) => {
                t.unregistered_at = Some(now);
                t.updated_at = now;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn record_fire(&self, fire: &WebhookFire) -> Result<FireRecorded, StorageError> {
        let mut rows = self.lock("webhooks.record_fire")?;
        if let Some(key) = &fire.dedupe_key
            && let Some(first) = rows
                .fires
                .values_mut()
                .find(|f| f.trigger_id == fire.trigger_id && f.dedupe_key.as_deref() == Some(key))
        {
            first.duplicates += 1;
            first.last_duplicate_at = Some(fire.fired_at);
            return Ok(FireRecorded::Duplicate {
                first_fire_id: first.fire_id.clone(),
            });
        }
        rows.fires.insert(fire.fire_id.clone(), fire.clone());
        if let Some(t) = rows.triggers.get_mut(&fire.trigger_id) {
            t.last_fired_at = Some(fire.fired_at);
        }
        Ok(FireRecorded::New)
    }

    async fn finish_fire(
        &self,
        tenant: &str,
        trigger_id: &str,
        fire_id: &str,
        finish: &FireFinish,
    ) -> Result<bool, StorageError> {
        let mut rows = self.lock("webhooks.finish_fire")?;
        if let Some(f) = rows.fires.get_mut(fire_id).filter(|f| f.tenant == tenant) {
            f.outcome = finish.outcome;
            f.run_id.clone_from(&finish.run_id);
            f.detail.clone_from(&finish.detail);
            f.counts_toward_pause = Some(finish.counts_toward_pause);
        }
        let Some(t) = live(&mut rows, tenant, trigger_id) else {
            return Ok(false);
        };
        match finish.outcome {
            FireOutcome::Started => t.failures_in_row = 0,
            FireOutcome::Refused | FireOutcome::Failed if finish.counts_toward_pause => {
                t.failures_in_row += 1;
                if t.failures_in_row >= AUTO_PAUSE_AFTER && t.status == TriggerStatus::Active {
                    t.status = TriggerStatus::Paused;
                    t.status_reason = Some(auto_pause_reason(
                        finish.detail.as_deref().unwrap_or("unknown"),
                    ));
                    t.updated_at = finish.now;
                    return Ok(true);
                }
            }
            _ => {}
        }
        Ok(false)
    }

    async fn count_suppressed(
        &self,
        tenant: &str,
        trigger_id: &str,
        minute: i64,
    ) -> Result<(), StorageError> {
        let mut rows = self.lock("webhooks.count_suppressed")?;
        if let Some(t) = live(&mut rows, tenant, trigger_id) {
            t.suppressed = match t.suppressed {
                Some((since, n)) if since == minute => Some((since, n + 1)),
                _ => Some((minute, 1)),
            };
        }
        Ok(())
    }

    async fn fires(&self, q: &FireQuery) -> Result<Vec<WebhookFire>, StorageError> {
        let rows = self.lock("webhooks.fires")?;
        let mut out: Vec<WebhookFire> = rows
            .fires
            .values()
            .filter(|f| f.tenant == q.tenant && f.trigger_id == q.trigger_id)
            .filter(|f| {
                q.before
                    .as_ref()
                    .is_none_or(|(at, id)| (f.fired_at, f.fire_id.as_str()) < (*at, id.as_str()))
            })
            .cloned()
            .collect();
        out.sort_by(|a, b| (b.fired_at, &b.fire_id).cmp(&(a.fired_at, &a.fire_id)));
        out.truncate(q.limit.max(1));
        Ok(out)
    }

    async fn fire(&self, tenant: &str, fire_id: &str) -> Result<Option<WebhookFire>, StorageError> {
        let rows = self.lock("webhooks.fire")?;
        Ok(rows
            .fires
            .get(fire_id)
            .filter(|f| f.tenant == tenant)
            .cloned())
    }
}
