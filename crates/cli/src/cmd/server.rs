//! `kindgi server`: serve the `/v1` REST API over a SQLite file (default `kindgi.db`) or a
//! PostgreSQL URL. Prints where it listens; stops gracefully on SIGINT/SIGTERM (in-flight
//! requests finish, the database is closed cleanly).

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use kindgi_api::{AppState, router};
use kindgi_store::Database;

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7070";
/// Default database: a SQLite file in the working directory.
pub const DEFAULT_DATABASE: &str = "kindgi.db";

#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "KINDGI_LISTEN", default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// A SQLite file path (created if missing), `sqlite:PATH`, or a postgres:// URL.
    #[arg(long, env = "KINDGI_DATABASE_URL", default_value = DEFAULT_DATABASE)]
    pub database: String,
}

pub fn run(args: ServerArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: ServerArgs) -> anyhow::Result<ExitCode> {
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
    kindgi_api::serve(listener, app, shutdown_signal())
        .await
        .context("the server failed")?;
    db.close().await;
    eprintln!("kindgi server stopped");
    Ok(ExitCode::SUCCESS)
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
