//! `kindgi runs`.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum RunsCommand {}

pub fn run(command: RunsCommand) -> anyhow::Result<ExitCode> {
    match command {}
}
