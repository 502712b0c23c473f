//! The database as core's storage ports ([`Database::ports`]): runs and their journal
//! ([`RunsStore`]), approvals and pauses ([`WaitsStore`]), agent turns' conversations
//! ([`ConversationStore`]) and the reviewer roster ([`ReviewerStore`]), each implementing its port directly. Like `migrate.rs`, this knows
//! every table's module and nothing imports it back.

use std::sync::Arc;

use kindgi_core::ports::StoragePorts;

use crate::connections::ConnectionsStore;
use crate::conversations::ConversationStore;
use crate::db::Database;
use crate::mail_triggers::MailTriggerSql;
use crate::providers::ProviderStore;
use crate::reviewers::ReviewerStore;
use crate::runs::RunsStore;
use crate::schedules::ScheduleSqlStore;
use crate::waits::WaitsStore;
use crate::webhooks::WebhookTriggerStore;

impl Database {
    /// This database (migrated, SQLite or PostgreSQL) as the ports a runtime keeps its runs,
    /// waits and conversations in: `Runtime::over(db.ports())`.
    pub fn ports(&self) -> StoragePorts {
        self.ports_sealed(None)
    }

    /// [`Database::ports`] with connections' tokens sealed under `key` (the secrets key;
    /// without one a connection cannot be added or used).
    pub fn ports_sealed(&self, key: Option<crate::seal::SealKey>) -> StoragePorts {
        StoragePorts {
            runs: Arc::new(RunsStore::new(self.clone())),
            waits: Arc::new(WaitsStore::new(self.clone())),
            conversations: Arc::new(ConversationStore::new(self.clone())),
            providers: Arc::new(ProviderStore::new(self.clone())),
            reviewers: Arc::new(ReviewerStore::new(self.clone())),
            schedules: Arc::new(ScheduleSqlStore::new(self.clone())),
            webhooks: Arc::new(WebhookTriggerStore::new(self.clone())),
            connections: Arc::new(ConnectionsStore::new(self.clone(), key)),
            mail_triggers: Arc::new(MailTriggerSql::new(self.clone())),
        }
    }
}
