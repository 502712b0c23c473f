//! `kindgi tokens`: create and revoke API keys directly in the database. A key is printed
//! once, on stdout, alone on its line; only its SHA-256 hash is stored.

use std::process::ExitCode;

use anyhow::Context as _;
use kindgi_store::Database;
use kindgi_store::tokens::{TokenError, TokenStore};

use super::server::DEFAULT_DATABASE;

#[derive(Debug, clap::Subcommand)]
pub enum TokensCommand {
    /// Create an API key for a tenant and print it (once).
    Create {
        /// A SQLite file path, `sqlite:PATH`, or a postgres:// URL.
        #[arg(long, env = "KINDGI_DATABASE_URL", default_value = DEFAULT_DATABASE)]
        database: String,
        /// The tenant the key acts for (A-Z a-z 0-9 . _ -, at most 128 characters).
        #[arg(long)]
        tenant: String,
        /// Expire the key after this many days.
        #[arg(long)]
        expires_in_days: Option<u32>,
    },
    /// Revoke a key by its id (printed at creation).
    Revoke {
        #[arg(long, env = "KINDGI_DATABASE_URL", default_value = DEFAULT_DATABASE)]
        database: String,
        /// The key id (16 hex digits).
        #[arg(long)]
        key_id: String,
    },
}

pub fn run(command: TokensCommand) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        match command {
            TokensCommand::Create {
                database,
                tenant,
                expires_in_days,
            } => {
                let db = open(&database).await?;
                let expires_at =
                    expires_in_days.map(|d| kindgi_store::now_millis() + i64::from(d) * 86_400_000);
                let result = TokenStore::new(db.clone())
                    .create(&tenant, expires_at)
                    .await;
                db.close().await;
                match result {
                    Ok(key) => {
                        println!("{}", key.key);
                        eprintln!(
                            "created API key {} for tenant {:?}; it is shown only now",
                            key.key_id, key.tenant
                        );
                        Ok(ExitCode::SUCCESS)
                    }
                    Err(e @ TokenError::InvalidTenant { .. }) => {
                        eprintln!("kindgi: {e}");
                        Ok(ExitCode::from(2))
                    }
                    Err(e) => Err(e.into()),
                }
            }
            TokensCommand::Revoke { database, key_id } => {
                let db = open(&database).await?;
                let result = TokenStore::new(db.clone()).revoke(&key_id).await;
                db.close().await;
                match result {
                    Ok(()) => {
                        eprintln!("revoked API key {key_id}");
                        Ok(ExitCode::SUCCESS)
                    }
                    Err(e @ TokenError::UnknownKey { .. }) => {
                        eprintln!("kindgi: {e}");
                        Ok(ExitCode::from(1))
                    }
                    Err(e) => Err(e.into()),
                }
            }
        }
    })
}

async fn open(url: &str) -> anyhow::Result<Database> {
    let db = Database::connect(url).await?;
    db.migrate().await?;
    Ok(db)
}
