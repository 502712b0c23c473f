//! `kindgi tools`: `check` works on files; `list`, `get` and `register` talk to a running API
//! (see `tools_remote`).

use std::process::ExitCode;

use super::tools_remote;

#[derive(Debug, clap::Subcommand)]
pub enum ToolsCommand {
    #[command(flatten)]
    Remote(tools_remote::RemoteCommand),
}

pub fn run(command: ToolsCommand) -> anyhow::Result<ExitCode> {
    match command {
        ToolsCommand::Remote(c) => tools_remote::run(c),
    }
}
