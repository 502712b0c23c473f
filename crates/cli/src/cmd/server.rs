//! `kindgi server`.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct ServerArgs {}

pub fn run(_args: ServerArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`kindgi server` is not built yet")
}
