//! `kindgi`: the command line. Thin by design: clap parses the raw arguments, each command
//! module validates them and calls into the library crates.
//!
//! Exit codes (every command): 0 success, 1 the thing checked or run failed (an invalid
//! manifest, a failed run, a failed conformance check), 2 a usage error (clap's own code)
//! or input that cannot be used at all (a schema that does not compile).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cmd;

#[derive(Debug, Parser)]
#[command(
    name = "kindgi",
    version,
    about = "Kindgi: an agent runtime whose unit of work is the tool"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check manifests, and list, get or register tools on a running API.
    #[command(subcommand)]
    Tools(cmd::tools::ToolsCommand),
    /// Validate an instance against a JSON Schema, as the runtime does.
    #[command(subcommand)]
    Schema(cmd::schema::SchemaCommand),
    /// Pack services: the conformance kit.
    #[command(subcommand)]
    Pack(cmd::pack::PackCommand),
    /// MCP servers as tool sources.
    #[command(subcommand)]
    Mcp(cmd::mcp::McpCommand),
    /// Serve the /v1 REST API.
    Server(cmd::server::ServerArgs),
    /// API keys.
    #[command(subcommand)]
    Tokens(cmd::tokens::TokensCommand),
    /// Start runs and read them.
    #[command(subcommand)]
    Runs(cmd::runs::RunsCommand),
    /// Run a pack locally: build, index, supervise its pack service and serve the API.
    Dev(cmd::dev::DevArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Tools(c) => cmd::tools::run(c),
        Command::Schema(c) => cmd::schema::run(c),
        Command::Pack(c) => cmd::pack::run(c),
        Command::Mcp(c) => cmd::mcp::run(c),
        Command::Server(a) => cmd::server::run(a),
        Command::Tokens(c) => cmd::tokens::run(c),
        Command::Runs(c) => cmd::runs::run(c),
        Command::Dev(a) => cmd::dev::run(a),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("kindgi: {err:#}");
            ExitCode::from(2)
        }
    }
}
