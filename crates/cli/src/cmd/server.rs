//! `kindgi server`: serve the `/v1` REST API over a SQLite file (default `kindgi.db`) or a
//! PostgreSQL URL. Prints where it listens; stops gracefully on SIGINT/SIGTERM (the handlers
//! are in place before it binds): in-flight requests finish within the grace period, the
//! rest are dropped, the database is closed cleanly. A second signal exits at once.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use kindgi_api::{AppState, router};
use kindgi_serve::{Limits, Shutdown, limits};
use kindgi_store::Database;

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7070";
/// Default database: a SQLite file in the working directory.
pub const DEFAULT_DATABASE: &str = "kindgi.db";

const MS: fn(Duration) -> u64 = |d| d.as_millis() as u64;

#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "KINDGI_LISTEN", default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// A SQLite file path (created if missing), `sqlite:PATH`, or a postgres:// URL.
    #[arg(long, env = "KINDGI_DATABASE_URL", default_value = DEFAULT_DATABASE)]
    pub database: String,
    /// After SIGTERM/SIGINT, how long in-flight requests get to finish before every
    /// connection still open is dropped, in milliseconds.
    #[arg(long, env = "KINDGI_SHUTDOWN_GRACE_MS", default_value_t = MS(limits::DEFAULT_SHUTDOWN_GRACE))]
    pub shutdown_grace_ms: u64,
    /// Connections open at once; more are closed unread.
    #[arg(long, env = "KINDGI_MAX_CONNECTIONS", default_value_t = limits::DEFAULT_MAX_CONNECTIONS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections: usize,
    /// Connections open at once from one IP address; more are closed unread.
    #[arg(long, env = "KINDGI_MAX_CONNECTIONS_PER_IP", default_value_t = limits::DEFAULT_MAX_CONNECTIONS_PER_IP,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections_per_ip: usize,
    /// Bound on receiving a request's head (and on a new connection's first one), in
    /// milliseconds.
    #[arg(long, env = "KINDGI_HEADER_TIMEOUT_MS", default_value_t = MS(limits::DEFAULT_HEADER_READ_TIMEOUT),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: u64,
    /// A connection with no request in progress for this long is closed, in milliseconds.
    #[arg(long, env = "KINDGI_IDLE_TIMEOUT_MS", default_value_t = MS(limits::DEFAULT_IDLE_TIMEOUT),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_ms: u64,
    /// Bound on receiving a request's body (408 `request-timeout` past it), in milliseconds.
    #[arg(long, env = "KINDGI_BODY_TIMEOUT_MS", default_value_t = MS(limits::DEFAULT_BODY_TIMEOUT),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_ms: u64,
}

impl ServerArgs {
    fn limits(&self) -> Limits {
        Limits {
            header_read_timeout: Duration::from_millis(self.header_timeout_ms),
            idle_timeout: Duration::from_millis(self.idle_timeout_ms),
            body_timeout: Some(Duration::from_millis(self.body_timeout_ms)),
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            shutdown_grace: Duration::from_millis(self.shutdown_grace_ms),
        }
    }
}

pub fn run(args: ServerArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: ServerArgs) -> anyhow::Result<ExitCode> {
    // First, so a signal at any later moment drains instead of killing the process.
    let shutdown = Shutdown::install().context("cannot install the signal handlers")?;
    let db = Database::connect(&args.database).await?;
    db.migrate().await?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener
        .local_addr()
        .context("cannot read the listening address")?;
    println!(
        "kindgi server listening on http://{addr} (database: {} {})",
        db.kind().as_str(),
        db.display_target()
    );
    let _ = std::io::stdout().flush();
    let app = router(AppState::new(db.clone()));
    let drained = kindgi_api::serve(listener, app, args.limits(), shutdown.token()).await;
    if drained.dropped > 0 {
        eprintln!(
            "kindgi server: {} connection(s) still open after the grace period were dropped",
            drained.dropped
        );
    }
    db.close().await;
    eprintln!("kindgi server stopped");
    Ok(ExitCode::SUCCESS)
}
