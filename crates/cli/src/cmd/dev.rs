//! `kindgi dev [PACK_DIR]`: build and index the pack, supervise its pack service, register
//! its tools, agents and flows, and serve the `/v1` API on 127.0.0.1 with an embedded SQLite
//! database (`.kindgi/dev.db`). Writes `.kindgirc.json` for `kindgi runs`. Exit 0 on a clean
//! stop (SIGINT/SIGTERM), 1 when it cannot start. See `docs/dev.md`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use kindgi_dev::DevOptions;

#[derive(Debug, clap::Args)]
pub struct DevArgs {
    /// The pack folder (Cargo.toml, pyproject.toml with [tool.kindgi], or package.json).
    #[arg(default_value = ".")]
    pub pack_dir: PathBuf,
    /// API port on 127.0.0.1 (0 picks a free one).
    #[arg(long, env = "KINDGI_DEV_PORT", default_value_t = kindgi_dev::server::DEFAULT_PORT)]
    pub port: u16,
    /// Do not rebuild and reload when the pack's files change.
    #[arg(long)]
    pub no_watch: bool,
    /// Start from an empty dev database (deletes .kindgi/dev.db).
    #[arg(long)]
    pub reset: bool,
    /// Build a Rust pack with `cargo build --release`.
    #[arg(long)]
    pub release: bool,
}

pub fn run(args: DevArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let mut options = DevOptions::new(args.pack_dir);
    options.port = args.port;
    options.watch = !args.no_watch;
    options.reset = args.reset;
    options.release = args.release;
    match runtime.block_on(kindgi_dev::run(options)) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("kindgi dev: error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
