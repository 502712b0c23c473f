//! One module per command group; each exposes its clap types and `run`.

pub mod approvals;
pub mod dev;
pub mod env;
pub mod mcp;
pub mod pack;
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
pub mod tokens;
pub mod tools;
pub mod tools_remote;
