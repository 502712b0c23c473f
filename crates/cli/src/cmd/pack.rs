//! `kindgi pack`: pack-service tooling. `conformance` runs the black-box conformance kit
//! (`kindgi_conformance`) against the service a command starts.

use std::process::ExitCode;

use kindgi_conformance::{self as conformance, Implementation, KitOptions};

#[derive(Debug, clap::Subcommand)]
pub enum PackCommand {
    /// Check a pack service against pack protocol v2, black-box: start it with COMMAND, run
    /// the checklist (1–84), print one line per check and `N passed, M failed`. Exit 1 when a
    /// check failed. See docs/conformance.md.
    Conformance(ConformanceArgs),
}

#[derive(Debug, clap::Args)]
pub struct ConformanceArgs {
    /// Only these checks: numbers and ranges, e.g. `12,14,30-36`.
    #[arg(long, value_name = "N,M,A-B")]
    pub only: Option<String>,
    /// The implementation under test, for its known divergences: `rust` (default; none),
    /// `python-0.1.10`, `typescript-0.1.10`. Detected from the command: `-m kindgi.pack` is
    /// the official Python service, `@kindgi/handler-runtime/…` the official TypeScript one.
    #[arg(long, value_name = "NAME")]
    pub implementation: Option<String>,
    /// Fail, rather than skip, a check whose tool, check or index variant the fixture lacks.
    #[arg(long)]
    pub require_all: bool,
    /// The service's command line; it must name the base index with `--index PATH`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn run(command: PackCommand, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    match command {
        PackCommand::Conformance(args) => conformance_cmd(args, runtime),
    }
}

fn conformance_cmd(
    args: ConformanceArgs,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<ExitCode> {
    let only = args
        .only
        .as_deref()
        .map(conformance::parse_only)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--only: {e}"))?;
    let implementation = match &args.implementation {
        Some(name) => Implementation::parse(name),
        None => Implementation::detect(&args.command).unwrap_or(Implementation::Rust),
    };
    let options = KitOptions {
        command: args.command,
        only,
        implementation,
        require_all: args.require_all,
    };
    let mut out = std::io::stdout();
    let summary = runtime.block_on(conformance::run(options, &mut out))?;
    Ok(if summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
