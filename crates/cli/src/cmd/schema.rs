//! `kindgi schema`.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum SchemaCommand {}

pub fn run(command: SchemaCommand) -> anyhow::Result<ExitCode> {
    match command {}
}
