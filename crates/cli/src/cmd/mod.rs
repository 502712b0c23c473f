//! One module per command group; each exposes its clap types and `run`.

pub mod approvals;
pub mod args;
pub mod auth;
pub mod conversations;
pub mod dev;
pub mod env;
pub mod guardrails;
pub mod init;
pub mod mcp;
pub mod pack;
pub mod projects;
pub mod providers;
pub mod registry;
pub mod reviewers;
pub mod runs;
pub mod runs_journal;
pub mod runs_resume;
pub mod runs_start;
pub mod runs_stream;
pub mod schema;
pub mod secrets;
pub mod server;
pub mod tenant;
pub mod tokens;
pub mod tools;
pub mod tools_remote;
