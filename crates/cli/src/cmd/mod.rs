//! One module per command group; each exposes its clap types and `run`.

pub mod api_source;
pub mod dev;
pub mod mcp;
pub mod pack;
pub mod runs;
pub mod schema;
pub mod server;
pub mod tokens;
pub mod tools;
pub mod tools_remote;
