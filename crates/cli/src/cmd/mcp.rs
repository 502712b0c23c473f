//! `kindgi mcp`.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {}

pub fn run(command: McpCommand) -> anyhow::Result<ExitCode> {
    match command {}
}
