//! `kindgi dev [PACK_DIR]`: a host (`kindgi_host::Host`) with one pack folder — built,
//! indexed, supervised and (unless `--no-watch`) reloaded on change — over an embedded
//! SQLite database (`.kindgi/dev.db`), on 127.0.0.1. Mints the folder's dev key and writes
//! `.kindgirc.json` (the official CLI's shape, 0600) for `kindgi runs`. Exit 0 on a clean
//! stop (SIGINT/SIGTERM), 1 when it cannot start. See `docs/dev.md`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use kindgi_dev::discovery::{self, Discovery};
use kindgi_dev::prepare::state_dir;
use kindgi_dev::{DEV_TENANT, DevError};
use kindgi_host::{Host, HostConfig, PackSource};

const NAME: &str = "kindgi dev";

#[derive(Debug, clap::Args)]
pub struct DevArgs {
    /// The pack folder (Cargo.toml, pyproject.toml with [tool.kindgi], or package.json).
    #[arg(default_value = ".")]
    pub pack_dir: PathBuf,
    /// API port on 127.0.0.1 (0 picks a free one).
    #[arg(long, env = "KINDGI_DEV_PORT", default_value_t = kindgi_dev::DEFAULT_PORT)]
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
    /// A variable of this process's environment passed on to the pack service besides the
    /// allowlist (docs/dev.md "The pack's environment"); repeatable. Never a KINDGI_* one.
    #[arg(long, value_name = "NAME", value_parser = kindgi_dev::pack_env::operator_name)]
    pub pack_env: Vec<String>,
    /// The local SMTP listener's port on 127.0.0.1: mail sent there reaches the mail
    /// triggers (docs/mail-triggers.md); 0 picks a free one.
    #[arg(long, env = "KINDGI_DEV_SMTP_PORT", default_value_t = 2525)]
    pub smtp_port: u16,
    /// Do not start the local SMTP listener.
    #[arg(long)]
    pub no_smtp: bool,
}

pub fn run(args: DevArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    match runtime.block_on(dev(args)) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("kindgi dev: error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn progress(what: &str) {
    eprintln!("{NAME}: {what}");
}

async fn dev(args: DevArgs) -> Result<(), Box<dyn std::error::Error>> {
    // First, so a signal at any later moment drains instead of killing the process.
    let shutdown = kindgi_serve::Shutdown::install().map_err(|source| DevError::Io {
        what: "cannot install the signal handlers to serve",
        path: args.pack_dir.clone(),
        source,
    })?;
    let dir = std::fs::canonicalize(&args.pack_dir).map_err(|source| DevError::Io {
        what: "cannot open the pack folder",
        path: args.pack_dir.clone(),
        source,
    })?;
    let state = state_dir(&dir);
    std::fs::create_dir_all(&state).map_err(|source| DevError::Io {
        what: "cannot create the state folder",
        path: state.clone(),
        source,
    })?;
    if args.reset {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(state.join(format!("dev.db{suffix}")));
        }
    }
    let mut config = HostConfig::new(
        state.join("dev.db").display().to_string(),
        format!("127.0.0.1:{}", args.port),
    );
    config.supervisor = kindgi_dev::supervisor::SupervisorConfig::from_env(!args.no_watch);
    config.supervisor.pack_env = args.pack_env.clone();
    // The pack's files are the truth: the API's registries serve them and take no writes.
    config.read_only_registry = true;
    config.allow_stdio_mcp = true;
    // The egress policy stays open: one developer's machine, whose pack and definitions are
    // their own, reaches loopback and the local network (docs/host.md).
    config.served_env = super::server::served_env()?;
    // Secrets sealed under the operator's key when there is one, else the folder's own.
    config.secrets_key =
        match kindgi_store::seal::SealKey::from_env().map_err(|e| anyhow::anyhow!("{e}"))? {
            Some(k) => Some(k),
            None => Some(
                kindgi_store::seal::dev_key(&dir)
                    .map_err(|e| anyhow::anyhow!("{e}"))
                    .context("cannot keep the dev secrets key")?,
            ),
        };
    // As the official dev: secrets not set through the API come from the pack's env files.
    config.secrets_dotenv = Some(kindgi_host::dotenv::DotenvSource::pack(dir.clone()));
    // Audit bundles are signed with the operator's export key, when one is set.
    config.export_signer = kindgi_api::export_signing::ExportSigner::from_env()
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot read the export signing key")?
        .map(std::sync::Arc::new);
    config.packs.push(PackSource::Folder {
        dir: dir.clone(),
        tenant: DEV_TENANT.into(),
        watch: !args.no_watch,
        release: args.release,
    });
    let host = Host::start(NAME, config).await?;
    let key = match kindgi_dev::dev_key::rotate(&host.state().tokens, &state, DEV_TENANT).await {
        Ok(k) => k,
        Err(e) => {
            host.stop().await;
            return Err(e.into());
        }
    };
    let pack = host.packs().first();
    let rc = Discovery {
        api_url: host.url().to_owned(),
        token: key.key.clone(),
        tenant_id: Some(DEV_TENANT.into()),
        // The person the dev key acts for (the key's principal).
        user_id: Some(kindgi_store::tokens::operator_user_id(DEV_TENANT)),
        pack_service_port: pack.and_then(|p| p.service_port()),
        pid: Some(std::process::id()),
        pack_id: pack.map(|p| p.pack_id.clone()),
    };
    let rc_path = match discovery::write(&dir, &rc) {
        Ok(p) => p,
        Err(source) => {
            host.stop().await;
            return Err(DevError::Io {
                what: "cannot write the discovery file",
                path: dir.join(discovery::FILE_NAME),
                source,
            }
            .into());
        }
    };
    println!("kindgi dev: listening on {}", host.url());
    let _ = std::io::stdout().flush();
    progress(&format!(
        "API key for tenant \"{DEV_TENANT}\" in {} — try: kindgi runs start --flow=<id> --input='{{…}}' --dry-run",
        rc_path.display()
    ));

    let smtp = if args.no_smtp {
        None
    } else {
        let config = kindgi_host::smtp::SmtpConfig::loopback(args.smtp_port);
        match kindgi_host::smtp::SmtpListener::start(host.state().clone(), config).await {
            Ok(l) => {
                progress(&format!("SMTP for mail triggers on {}", l.local_addr()));
                Some(l)
            }
            Err(e) => {
                progress(&format!(
                    "warning: no SMTP listener on 127.0.0.1:{}: {e} (pick another with --smtp-port)",
                    args.smtp_port
                ));
                None
            }
        }
    };

    shutdown.requested().await;
    progress("stopping");
    if let Some(l) = smtp {
        l.stop().await;
    }
    let tokens = host.state().tokens.clone();
    let (_, db) = host.stop_keeping_database().await;
    retire(&tokens, &state, &key.key_id, &rc_path).await;
    db.close().await;
    progress("stopped");
    Ok(())
}

async fn retire(
    tokens: &kindgi_store::tokens::TokenStore,
    state: &Path,
    key_id: &str,
    rc_path: &Path,
) {
    let _ = std::fs::remove_file(rc_path);
    if let Err(e) = kindgi_dev::dev_key::retire(tokens, state, key_id).await {
        progress(&format!("{e}"));
    }
}
