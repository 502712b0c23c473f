//! The list of migrations: [`Database::migrate`] runs every store module's own `migrate`.
//!
//! Why a file of its own: every module uses [`Database`], so the list of modules cannot live in
//! `db.rs` without tying the connection to every table in one import circle. Nothing imports this
//! file back; a module that adds tables adds one line here.

use crate::{Database, StoreError};

impl Database {
    /// Create or update every table (idempotent; run it at every start).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        crate::tokens::migrate(self).await?;
        // After `api_keys`: the key lookup joins it, and the order is the one deployed.
        crate::service_accounts::migrate(self).await?;
        crate::tools::migrate(self).await?;
        crate::definitions::migrate(self).await?;
        crate::idempotency::migrate(self).await?;
        crate::runs::migrate(self).await?;
        crate::values::migrate(self).await?;
        crate::mcp_endpoints::migrate(self).await?;
        crate::conversations::migrate(self).await?;
        crate::waits::migrate(self).await?;
        crate::projects::migrate(self).await?;
        crate::providers::migrate(self).await?;
        crate::reviewers::migrate(self).await?;
        crate::schedules::migrate(self).await?;
        crate::webhooks::migrate(self).await?;
        crate::connections::migrate(self).await?;
        crate::mail_triggers::migrate(self).await?;
        crate::tenant_states::migrate(self).await?;
        self.apply_schema("epoch", &[], crate::epoch::DDL).await?;
        Ok(())
    }
}
