//! Mail triggers and their fires in memory ([`MemoryMailTriggers`]): lost with the process;
//! for tests and throw-away runtimes. Same answers as kindgi-store's SQL.

use async_trait::async_trait;
use std::sync::Mutex;

use crate::error::StorageError;
use crate::mail_trigger::{
    FireEnd, FireRecorded, MailFire, MailFireQuery, MailTrigger, MailTriggerQuery,
};
use crate::ports::MailTriggerStore;
use crate::trigger::TriggerStatus;

#[derive(Debug, Default)]
struct Rows {
    /// Live and unregistered triggers (`Some(at)`: unregistered), in creation order.
    triggers: Vec<(MailTrigger, Option<i64>)>,
    fires: Vec<MailFire>,
}

/// Mail triggers and fires in memory.
#[derive(Debug, Default)]
pub struct MemoryMailTriggers {
    inner: Mutex<Rows>,
}

impl MemoryMailTriggers {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self, op: &'static str) -> Result<std::sync::MutexGuard<'_, Rows>, StorageError> {
        self.inner.lock().map_err(|_| StorageError::poisoned(op))
    }
}

fn taken(op: &'static str, address: &str) -> StorageError {
    StorageError::Conflict {
        op,
        what: format!("a mail trigger for {address}"),
        source: None,
    }
}

impl Rows {
    fn live_mut(&mut self, tenant: &str, id: &str) -> Option<&mut MailTrigger> {
        self.triggers
            .iter_mut()
            .find(|(t, gone)| gone.is_none() && t.tenant == tenant && t.trigger_id == id)
            .map(|(t, _)| t)
    }

    fn address_taken(&self, address: &str, except: &str) -> bool {
        self.triggers
            .iter()
            .any(|(t, gone)| gone.is_none() && t.address == address && t.trigger_id != except)
    }
}

#[async_trait]
impl MailTriggerStore for MemoryMailTriggers {
    async fn create(&self, trigger: &MailTrigger) -> Result<(), StorageError> {
        let mut rows = self.lock("mail_triggers.create")?;
        if rows.address_taken(&trigger.address, "") {
            return Err(taken("mail_triggers.create", &trigger.address));
        }
        rows.triggers.push((trigger.clone(), None));
        Ok(())
    }

    async fn get(
        &self,
        tenant: &str,
        trigger_id: &str,
    ) -> Result<Option<MailTrigger>, StorageError> {
        let mut rows = self.lock("mail_triggers.get")?;
        Ok(rows.live_mut(tenant, trigger_id).map(|t| t.clone()))
    }

    async fn by_address(&self, address: &str) -> Result<Option<MailTrigger>, StorageError> {
        let rows = self.lock("mail_triggers.by_address")?;
        Ok(rows
            .triggers
            .iter()
            .find(|(t, gone)| gone.is_none() && t.address == address)
            .map(|(t, _)| t.clone()))
    }

    async fn list(&self, q: &MailTriggerQuery) -> Result<Vec<MailTrigger>, StorageError> {
        let rows = self.lock("mail_triggers.list")?;
        let mut out: Vec<MailTrigger> = rows
            .triggers
            .iter()
            .filter(|(t, gone)| {
                gone.is_none()
                    && t.tenant == q.tenant
                    && q.status.is_none_or(|s| s == t.status)
                    && q.project_id.as_ref().is_none_or(|p| *p == t.project_id)
                    && q.after.as_ref().is_none_or(|(at, id)| {
                        (t.created_at, t.trigger_id.as_str()) > (*at, id.as_str())
                    })
            })
            .map(|(t, _)| t.clone())
            .collect();
        out.sort_by(|a, b| (a.created_at, &a.trigger_id).cmp(&(b.created_at, &b.trigger_id)));
        out.truncate(q.limit.max(1));
        Ok(out)
    }

    async fn update(&self, trigger: &MailTrigger) -> Result<bool, StorageError> {
        let mut rows = self.lock("mail_triggers.update")?;
        if rows.address_taken(&trigger.address, &trigger.trigger_id) {
            return Err(taken("mail_triggers.update", &trigger.address));
        }
        let Some(t) = rows.live_mut(&trigger.tenant, &trigger.trigger_id) else {
            return Ok(false);
        };
        t.address = trigger.address.clone();
        t.project_id = trigger.project_id.clone();
        t.config = trigger.config.clone();
        t.status = trigger.status;
        t.status_reason = trigger.status_reason.clone();
        if trigger.status == TriggerStatus::Active {
            t.consecutive_failures = 0;
        }
        t.updated_at = trigger.updated_at;
        Ok(true)
    }

    async fn unregister(
        &self,
        tenant: &str,
        trigger_id: &str,
        now: i64,
    ) -> Result<bool, StorageError> {
        let mut rows = self.lock("mail_triggers.unregister")?;
        let found = rows
            .triggers
            .iter_mut()
            .find(|(t, gone)| gone.is_none() && t.tenant == tenant && t.trigger_id == trigger_id);
        Ok(match found {
            Some((_, gone)) => {
                *gone = Some(now);
                true
            }
            None => false,
        })
    }

    async fn record_fire(&self, fire: &MailFire) -> Result<FireRecorded, StorageError> {
        let mut rows = self.lock("mail_triggers.record_fire")?;
        if let Some(key) = &fire.dedupe_key
            && let Some(first) = rows
                .fires
                .iter_mut()
                .find(|f| f.trigger_id == fire.trigger_id && f.dedupe_key.as_ref() == Some(key))
        {
            first.duplicates += 1;
            first.last_duplicate_at = Some(fire.fired_at);
            return Ok(FireRecorded::Duplicate(Box::new(first.clone())));
        }
        rows.fires.push(fire.clone());
        Ok(FireRecorded::New)
    }

    async fn end_fire(
        &self,
        tenant: &str,
        fire_id: &str,
        end: &FireEnd,
    ) -> Result<(), StorageError> {
        let mut rows = self.lock("mail_triggers.end_fire")?;
        if let Some(f) = rows
            .fires
            .iter_mut()
            .find(|f| f.tenant == tenant && f.fire_id == fire_id)
        {
            f.outcome = end.outcome;
            f.run_id = end.run_id.clone();
            f.detail = end.detail.clone();
        }
        Ok(())
    }

    async fn count_start(
        &self,
        tenant: &str,
        trigger_id: &str,
        failed: bool,
        pause_after: u32,
        reason: &str,
        now: i64,
    ) -> Result<Option<MailTrigger>, StorageError> {
        let mut rows = self.lock("mail_triggers.count_start")?;
        let Some(t) = rows.live_mut(tenant, trigger_id) else {
            return Ok(None);
        };
        t.last_fired_at = Some(now);
        if failed {
            t.consecutive_failures += 1;
            if t.consecutive_failures >= pause_after && t.status == TriggerStatus::Active {
                t.status = TriggerStatus::Paused;
                t.status_reason = Some(reason.to_owned());
                t.updated_at = now;
            }
        } else {
            t.consecutive_failures = 0;
        }
        Ok(Some(t.clone()))
    }

    async fn fires(&self, q: &MailFireQuery) -> Result<Vec<MailFire>, StorageError> {
        let rows = self.lock("mail_triggers.fires")?;
        let mut out: Vec<MailFire> = rows
            .fires
            .iter()
            .filter(|f| {
                f.tenant == q.tenant
                    && f.trigger_id == q.trigger_id
                    && q.before.as_ref().is_none_or(|(at, id)| {
                        (f.fired_at, f.fire_id.as_str()) < (*at, id.as_str())
                    })
            })
            .cloned()
            .collect();
        out.sort_by(|a, b| (b.fired_at, &b.fire_id).cmp(&(a.fired_at, &a.fire_id)));
        out.truncate(q.limit.max(1));
        Ok(out)
    }
}
