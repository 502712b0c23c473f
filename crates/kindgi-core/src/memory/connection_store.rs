//! Connections in memory ([`MemoryConnectionStore`]): lost with the process; for tests and
//! throw-away runtimes. Tokens are kept as given (nothing here is at rest).

use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::connection::{
    ConnectionHolder, ConnectionQuery, ConnectionRecord, ConnectionTokens, NewConnection,
    normalize_permissions,
};
use crate::error::StorageError;
use crate::ports::ConnectionStore;

/// Connections by id, with their tokens (`None` once revoked).
type Rows = BTreeMap<String, (ConnectionRecord, Option<ConnectionTokens>)>;

/// Connections by id.
#[derive(Debug, Default)]
pub struct MemoryConnectionStore {
    inner: Mutex<Rows>,
}

impl MemoryConnectionStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self, op: &'static str) -> Result<std::sync::MutexGuard<'_, Rows>, StorageError> {
        self.inner.lock().map_err(|_| StorageError::poisoned(op))
    }
}

fn find<'a>(
    rows: &'a mut Rows,
    tenant: &str,
    app: &str,
    holder: &ConnectionHolder,
) -> Option<&'a mut (ConnectionRecord, Option<ConnectionTokens>)> {
    rows.values_mut()
        .find(|(r, _)| r.tenant == tenant && r.app == app && r.holder == *holder)
}

#[async_trait]
impl ConnectionStore for MemoryConnectionStore {
    async fn add(&self, new: &NewConnection) -> Result<ConnectionRecord, StorageError> {
        let mut rows = self.lock("connections.add")?;
        let refreshable = new.tokens.refresh_token.is_some();
        if let Some((r, t)) = find(&mut rows, &new.tenant, &new.app, &new.holder) {
            r.permissions = normalize_permissions(new.permissions.clone());
            r.expires_at = new.tokens.expires_at;
            r.refreshable = refreshable;
            r.refresh = new.refresh.clone();
            r.updated_at = new.now;
            r.revoked_at = None;
            *t = Some(new.tokens.clone());
            return Ok(r.clone());
        }
        let record = ConnectionRecord {
            id: uuid::Uuid::new_v4().to_string(),
            tenant: new.tenant.clone(),
            app: new.app.clone(),
            holder: new.holder.clone(),
            permissions: normalize_permissions(new.permissions.clone()),
            expires_at: new.tokens.expires_at,
            refreshable,
            refresh: new.refresh.clone(),
            created_by: new.created_by.clone(),
            created_at: new.now,
            updated_at: new.now,
            revoked_at: None,
        };
        rows.insert(
            record.id.clone(),
            (record.clone(), Some(new.tokens.clone())),
        );
        Ok(record)
    }

    async fn connection(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ConnectionRecord>, StorageError> {
        let rows = self.lock("connections.get")?;
        Ok(rows
            .get(id)
            .filter(|(r, _)| r.tenant == tenant)
            .map(|(r, _)| r.clone()))
    }

    async fn connections(
        &self,
        query: &ConnectionQuery,
    ) -> Result<Vec<ConnectionRecord>, StorageError> {
        let rows = self.lock("connections.list")?;
        let mut found: Vec<ConnectionRecord> = rows
            .values()
            .filter(|(r, _)| query.matches(r))
            .map(|(r, _)| r.clone())
            .collect();
        found.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        found.truncate(query.limit.max(1));
        Ok(found)
    }

    async fn revoke(
        &self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<ConnectionRecord>, StorageError> {
        let mut rows = self.lock("connections.revoke")?;
        let Some((r, t)) = rows.get_mut(id).filter(|(r, _)| r.tenant == tenant) else {
            return Ok(None);
        };
        if r.revoked_at.is_none() {
            r.revoked_at = Some(now);
            r.updated_at = now;
            r.refreshable = false;
        }
        *t = None;
        Ok(Some(r.clone()))
    }

    async fn resolve(
        &self,
        tenant: &str,
        app: &str,
        holder: &ConnectionHolder,
    ) -> Result<Option<(ConnectionRecord, Option<ConnectionTokens>)>, StorageError> {
        let mut rows = self.lock("connections.resolve")?;
        Ok(find(&mut rows, tenant, app, holder).cloned())
    }

    async fn update_tokens(
        &self,
        tenant: &str,
        id: &str,
        tokens: &ConnectionTokens,
        now: i64,
    ) -> Result<bool, StorageError> {
        let mut rows = self.lock("connections.update_tokens")?;
        let Some((r, t)) = rows
            .get_mut(id)
            .filter(|(r, _)| r.tenant == tenant && r.revoked_at.is_none())
        else {
            return Ok(false);
        };
        let kept = t.as_ref().and_then(|t| t.refresh_token.clone());
        let refresh_token = tokens.refresh_token.clone().or(kept);
        r.expires_at = tokens.expires_at;
        r.refreshable = refresh_token.is_some();
        r.updated_at = now;
        *t = Some(ConnectionTokens {
            refresh_token,
            ..tokens.clone()
        });
        Ok(true)
    }
}
