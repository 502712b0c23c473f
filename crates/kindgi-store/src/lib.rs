//! Kindgi storage: the embedded SQLite default and PostgreSQL, for API keys, the tool
//! registry, runs and their journal, registered MCP endpoints and conversations.
//!
//! Start with [`Database::connect`] (a SQLite file path, `sqlite:` URL or `postgres://` URL)
//! and [`Database::migrate`]. Each module owns its tables and its migration
//! (`tokens`, `tools`, `definitions`, `runs`, `values`, `mcp_endpoints`, `conversations`, `waits`); see [`db`] for the connection and migration design, and
//! `docs/store.md` for the table layout. Every statement is written once for both databases
//! ([`sql`]: `$N` placeholders, [`on_pool!`]). Secret values are sealed at rest by [`seal`]
//! (AES-256-GCM under the operator's key) before [`values`] stores them.

pub mod connections;
pub mod conversations;
pub mod db;
pub mod definitions;
pub mod epoch;
pub mod error;
pub mod file_mode;
mod group_commit;
pub mod idempotency;
pub mod mail_triggers;
pub mod mcp_endpoints;
mod migrate;
mod ports;
pub mod projects;
pub mod providers;
pub mod reviewers;
pub mod runs;
pub mod schedules;
pub mod seal;
pub mod service_accounts;
pub mod sql;
pub mod tenant_states;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tokens;
pub mod tools;
pub mod values;
pub mod waits;
pub mod webhooks;

pub use db::{Backend, ConnectOptions, Database, DatabaseKind, SqlitePools, now_millis};
pub use error::StoreError;
