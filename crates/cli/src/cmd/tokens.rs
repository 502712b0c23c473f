//! `kindgi tokens`.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum TokensCommand {}

pub fn run(command: TokensCommand) -> anyhow::Result<ExitCode> {
    match command {}
}
