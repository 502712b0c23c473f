//! `kindgi dev`.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct DevArgs {}

pub fn run(_args: DevArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`kindgi dev` is not built yet")
}
