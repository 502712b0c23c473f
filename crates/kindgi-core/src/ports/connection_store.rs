//! The connection store port: a tenant's connections to other apps (see
//! [`crate::connection`]). The API adds, lists and revokes them; the runtime resolves a tool
//! call's `needsSpec.connections` through it and stores the tokens a refresh brings.
//! kindgi-store keeps it in SQLite or PostgreSQL, the tokens sealed like secret values.

use async_trait::async_trait;

use crate::connection::{
    ConnectionHolder, ConnectionQuery, ConnectionRecord, ConnectionTokens, NewConnection,
};
use crate::error::StorageError;

/// A tenant's connections.
#[async_trait]
pub trait ConnectionStore: Send + Sync + std::fmt::Debug {
    /// Adds `new`, or replaces the connection `(tenant, app, holder)` already has (same id,
    /// revoked no more). Returns it as stored.
    async fn add(&self, new: &NewConnection) -> Result<ConnectionRecord, StorageError>;

    /// The connection `id` of `tenant` (revoked or not).
    async fn connection(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ConnectionRecord>, StorageError>;

    /// A page of `query`'s connections (revoked ones included).
    async fn connections(
        &self,
        query: &ConnectionQuery,
    ) -> Result<Vec<ConnectionRecord>, StorageError>;

    /// Marks `id` revoked at `now` (kept when it already was) and forgets its tokens. `None`:
    /// no such connection.
    async fn revoke(
        &self,
        tenant: &str,
        id: &str,
        now: i64,
    ) -> Result<Option<ConnectionRecord>, StorageError>;

    /// The connection of `holder` to `app` in `tenant`, with its tokens (a revoked one comes
    /// without: `None` tokens). `None`: there is none.
    async fn resolve(
        &self,
        tenant: &str,
        app: &str,
        holder: &ConnectionHolder,
    ) -> Result<Option<(ConnectionRecord, Option<ConnectionTokens>)>, StorageError>;

    /// Stores the tokens a refresh brought (a refresh token the endpoint did not rotate
    /// stays). `false`: the connection was revoked or removed meanwhile.
    async fn update_tokens(
        &self,
        tenant: &str,
        id: &str,
        tokens: &ConnectionTokens,
        now: i64,
    ) -> Result<bool, StorageError>;
}
