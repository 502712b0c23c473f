//! The API commands' shared parts: the global flags ([`ApiArgs`]), where the API is
//! ([`address`]), the one client ([`client`]), the failure type and exit-code table
//! ([`errors`]) and printing ([`output`]). Every command that talks to `/v1` — `runs`,
//! `flows`, `agents`, `tools` (but `check`), `tokens` (but `--database`) — goes through
//! [`ApiArgs::connect`], and all of them run on the process's one tokio runtime (`main`).

pub mod address;
pub mod client;
pub mod errors;
pub mod output;

pub use client::{ApiClient, push, segment};
pub use errors::CliError;
pub use output::Output;

/// The official CLI's global flags, on every API command.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ApiArgs {
    /// The Kindgi API's URL (over KINDGI_API_URL and the config files).
    #[arg(long = "url", visible_alias = "api", value_name = "URL")]
    pub url: Option<String>,
    /// The API token (over KINDGI_API_TOKEN and the config files); goes where the command goes.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Ignore the kindgi dev runtime's ./.kindgirc.json.
    #[arg(long)]
    pub hosted: bool,
    /// Pretty-printed JSON (the default).
    #[arg(long)]
    pub json: bool,
    /// Compact, one-line JSON.
    #[arg(long, conflicts_with = "json")]
    pub raw: bool,
    /// A table, for commands that list.
    #[arg(long)]
    pub table: bool,
    /// Print nothing: the exit code alone reports the result.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Show the whole error when a command fails.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

impl ApiArgs {
    pub fn output(&self) -> Output {
        Output {
            raw: self.raw,
            table: self.table,
            quiet: self.quiet,
        }
    }

    /// The client for command `cmd` (e.g. `runs get`), from the flags, the environment and
    /// the config files.
    pub fn connect(&self, cmd: &str) -> Result<ApiClient, CliError> {
        let given = address::Given::from_flags_and_env(
            self.url.as_deref(),
            self.token.as_deref(),
            self.hosted,
        );
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::Local(format!("cannot read the current folder: {e}")))?;
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(std::path::PathBuf::from);
        let resolved =
            address::resolve(&given, &cwd, home.as_deref(), cmd).map_err(CliError::Local)?;
        if let Some(note) = &resolved.note
            && !self.quiet
        {
            eprintln!("{note}");
        }
        ApiClient::new(&resolved.url, resolved.token)
    }
}
