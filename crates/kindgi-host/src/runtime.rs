//! The runtime over a database: the one place a [`RuntimeBuilder`] is given kindgi-store's
//! implementations of core's storage ports — runs and their journal ([`RunsStore`]),
//! approvals and pauses ([`WaitsStore`]) and agent turns' conversations
//! ([`ConversationStore`]). The runtime itself knows only the ports, so it builds and tests
//! without sqlx; a host, a test or a benchmark that wants a durable runtime starts here.

use std::sync::Arc;

use kindgi_runtime::{Runtime, RuntimeBuilder};
use kindgi_store::Database;
use kindgi_store::conversations::ConversationStore;
use kindgi_store::runs::RunsStore;
use kindgi_store::waits::WaitsStore;

/// A runtime builder over a migrated database (SQLite or PostgreSQL): its runs, waits and
/// conversations are kept in `db`. The rest (tools, model, definition source, …) is the
/// caller's to add, as on any [`RuntimeBuilder`].
pub fn runtime_builder(db: Database) -> RuntimeBuilder {
    Runtime::builder(Arc::new(RunsStore::new(db.clone())))
        .wait_store(Arc::new(WaitsStore::new(db.clone())))
        .conversations(Arc::new(ConversationStore::new(db)))
}
