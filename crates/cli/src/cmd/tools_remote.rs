//! `kindgi tools list|get|register`: talk to a running `/v1` API.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum RemoteCommand {}

pub fn run(command: RemoteCommand) -> anyhow::Result<ExitCode> {
    match command {}
}
