//! `kindgi pack`.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum PackCommand {}

pub fn run(command: PackCommand) -> anyhow::Result<ExitCode> {
    match command {}
}
