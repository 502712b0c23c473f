//! The database as core's storage ports ([`Database::ports`]): runs and their journal
//! ([`RunsStore`]), approvals and pauses ([`WaitsStore`]), agent turns' conversations
//! ([`ConversationStore`]) and the reviewer roster ([`ReviewerStore`]), each implementing its port directly. Like `migrate.rs`, this knows
//! every table's module and nothing imports it back.

use std::sync::Arc;

use kindgi_core::ports::StoragePorts;

use crate::conversations::ConversationStore;
use crate::db::Database;
use crate::mail_triggers::MailTriggerSql;
use crate::providers::ProviderStore;
use crate::reviewers::ReviewerStore;
use crate::runs::RunsStore;
use crate::waits::WaitsStore;

impl Database {
    /// This database (migrated, SQLite or PostgreSQL) as the ports a runtime keeps its runs,
    /// waits and conversations in: `Runtime::over(db.ports())`.
    pub fn ports(&self) -> StoragePorts {
        StoragePorts {
            runs: Arc::new(RunsStore::new(self.clone())),
            waits: Arc::new(WaitsStore::new(self.clone())),
            conversations: Arc::new(ConversationStore::new(self.clone())),
            providers: Arc::new(ProviderStore::new(self.clone())),
            reviewers: Arc::new(ReviewerStore::new(self.clone())),
            mail_triggers: Arc::new(MailTriggerSql::new(self.clone())),
        }
    }
}
