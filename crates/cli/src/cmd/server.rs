//! `kindgi server`: a host (`kindgi_host::Host`) from flags and an optional `--config FILE`:
//! the `/v1` API (tools, flows, runs) over a SQLite file (default `kindgi.db`) or a
//! PostgreSQL URL, running the packs and MCP servers it names. Prints where it listens;
//! stops gracefully on SIGINT/SIGTERM (the handlers are in place before it binds): runs in
//! flight are left to resume, in-flight requests finish within the grace period, the rest
//! are dropped, the database is closed cleanly. A second signal exits at once.
//!
//! Packs, repeatable: `--pack-url URL --pack-token-env NAME --pack-index FILE` (a deployed
//! pack service; the i-th `--pack-token-env` and `--pack-index` go with the i-th
//! `--pack-url`) and `--pack-dir DIR` (a pack folder it builds, indexes and supervises).
//! `--tenant T` applies to the `--pack-url`, `--pack-dir` or `--mcp` just before it; given
//! before all of them it is the default of every one without its own.
//!
//! Started with a pack's `.kindgi/dev/runtime.env` (`set -a; . .kindgi/dev/runtime.env;
//! set +a; kindgi server`), it is the runtime the official `kindgi dev --runtime-url`
//! expects: [`kindgi_host::config::DevRuntimeEnv`] (docs/server.md).

use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::Args as _;
use kindgi_host::config::check_tenant;
use kindgi_host::{ConfigFile, DEFAULT_TENANT, Host, HostConfig, McpServer, PackSource};
use kindgi_serve::{Limits, Shutdown, limits};
use kindgi_tools::egress::{AllowedRange, EgressPolicy};

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7070";
/// Default database: a SQLite file in the working directory.
pub const DEFAULT_DATABASE: &str = "kindgi.db";

const MS: fn(Duration) -> u64 = |d| d.as_millis() as u64;

#[derive(Debug, clap::Args)]
pub struct ServerArgs {
    /// Address to listen on (port 0 picks a free port). Default 127.0.0.1:7070.
    #[arg(long, env = "KINDGI_LISTEN")]
    pub listen: Option<String>,
    /// A SQLite file path (created if missing), `sqlite:PATH`, or a postgres:// URL.
    /// Default kindgi.db.
    #[arg(long, env = "KINDGI_DATABASE_URL")]
    pub database: Option<String>,
    /// A JSON configuration file: {listen, database, packs: [{url, tokenEnv, index, tenant}
    /// | {dir, tenant, watch}], mcp: [{endpoint, tenant}], egress: {allowPrivate: [CIDR]},
    /// limits: {maxStreamsPerKey, maxStreamsPerTenant, maxStreams, bodyBudgetBytes}}.
    /// Flags win over its listen, database and limits; their packs come after its packs.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A deployed pack service's base URL (http or https); repeatable.
    #[arg(long, value_name = "URL")]
    pub pack_url: Vec<String>,
    /// The environment variable holding the token of the pack service of the matching
    /// --pack-url (the value is never printed).
    #[arg(long, value_name = "NAME")]
    pub pack_token_env: Vec<String>,
    /// The index file the build of the matching --pack-url's pack wrote (its tools'
    /// schemas, agents and flows).
    #[arg(long, value_name = "FILE")]
    pub pack_index: Vec<PathBuf>,
    /// A pack folder to build, index and supervise; repeatable.
    #[arg(long, value_name = "DIR")]
    pub pack_dir: Vec<PathBuf>,
    /// A variable of this process's environment passed on to each --pack-dir pack's service besides the
    /// allowlist (docs/host.md "The pack's environment"); repeatable. Never a KINDGI_* one.
    #[arg(long, value_name = "NAME", value_parser = kindgi_dev::pack_env::operator_name)]
    pub pack_env: Vec<String>,
    /// An MCP server whose tools are registered (mcp+stdio://…, mcp+http(s)://…); repeatable.
    #[arg(long, value_name = "ENDPOINT")]
    pub mcp: Vec<String>,
    /// Let `POST /v1/mcp/endpoints` register `stdio` endpoints: commands this server runs.
    #[arg(long)]
    pub allow_stdio_mcp: bool,
    /// A CIDR range (e.g. 10.20.0.0/16, 127.0.0.2/32) that http tools and MCP endpoints a
    /// tenant registers may reach although it is private, loopback, link-local or otherwise
    /// internal (refused by default); repeatable, comma-separated in the variable. Packs and
    /// MCP servers named here or in --config are never held to the rule.
    #[arg(
        long,
        value_name = "CIDR",
        env = "KINDGI_ALLOW_PRIVATE_EGRESS",
        value_delimiter = ','
    )]
    pub allow_private_egress: Vec<AllowedRange>,
    /// The tenant of the pack or MCP server named just before (default "default").
    #[arg(long, value_name = "T")]
    pub tenant: Vec<String>,
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
    /// A write to a client blocked this long (the client stopped reading) closes the
    /// connection, in milliseconds.
    #[arg(long, env = "KINDGI_WRITE_TIMEOUT_MS", default_value_t = MS(limits::DEFAULT_WRITE_TIMEOUT),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub write_timeout_ms: u64,
    /// Run streams (`GET /v1/runs/{id}/stream`, `…/progress/stream`) one API key may hold
    /// open at once; past it `429 rate-limit-exceeded` with `Retry-After`. Default 16; at
    /// least 1, at most --max-streams-per-tenant. `limits.maxStreamsPerKey` in --config.
    #[arg(long, value_name = "N", env = "KINDGI_MAX_STREAMS_PER_KEY")]
    pub max_streams_per_key: Option<u64>,
    /// Run streams one tenant's keys may hold open together (then 429). Default 64; at most
    /// --max-streams. `limits.maxStreamsPerTenant` in --config.
    #[arg(long, value_name = "N", env = "KINDGI_MAX_STREAMS_PER_TENANT")]
    pub max_streams_per_tenant: Option<u64>,
    /// Run streams open at once over all tenants (then 429). Default 256, half of the
    /// default --max-connections, so plain requests and /health always have room.
    /// `limits.maxStreams` in --config.
    #[arg(long, value_name = "N", env = "KINDGI_MAX_STREAMS")]
    pub max_streams: Option<u64>,
    /// Bytes all paged answers (a run's journal, the runs list) and run streams may hold
    /// written but not yet taken by their slow readers; past it they wait for room. Default
    /// 268435456 (256 MiB); at least 1024. `limits.bodyBudgetBytes` in --config.
    #[arg(long, value_name = "BYTES", env = "KINDGI_BODY_BUDGET_BYTES")]
    pub body_budget_bytes: Option<u64>,
}

impl ServerArgs {
    fn limits(&self) -> Limits {
        Limits {
            header_read_timeout: Duration::from_millis(self.header_timeout_ms),
            idle_timeout: Duration::from_millis(self.idle_timeout_ms),
            body_timeout: Some(Duration::from_millis(self.body_timeout_ms)),
            write_timeout: Duration::from_millis(self.write_timeout_ms),
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            shutdown_grace: Duration::from_millis(self.shutdown_grace_ms),
        }
    }

    /// The stream and body caps the flags give (each optional: the file's, else defaults).
    fn caps(&self) -> kindgi_host::caps::ConfigLimits {
        kindgi_host::caps::ConfigLimits {
            max_streams_per_key: self.max_streams_per_key,
            max_streams_per_tenant: self.max_streams_per_tenant,
            max_streams: self.max_streams,
            body_budget_bytes: self.body_budget_bytes,
        }
    }
}

pub fn run(args: ServerArgs) -> anyhow::Result<ExitCode> {
    let (packs, mcp) = match sources_from_flags(&args, server_argv()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("kindgi server: error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(serve(args, packs, mcp))
}

/// The arguments after `kindgi` (`server …`), for finding where each flag was given.
fn server_argv() -> Vec<OsString> {
    std::env::args_os().skip(1).collect()
}

/// One pack or MCP flag, where it was given.
enum Given {
    Url(String),
    Dir(PathBuf),
    Mcp(String),
    Tenant(String),
}

/// The packs and MCP servers the flags name, each with its tenant (see the module doc).
fn sources_from_flags(
    args: &ServerArgs,
    argv: Vec<OsString>,
) -> anyhow::Result<(Vec<PackSource>, Vec<McpServer>)> {
    if args.pack_token_env.len() != args.pack_url.len()
        || args.pack_index.len() != args.pack_url.len()
    {
        bail!(
            "each --pack-url needs one --pack-token-env NAME and one --pack-index FILE (got {} --pack-url, {} --pack-token-env, {} --pack-index)",
            args.pack_url.len(),
            args.pack_token_env.len(),
            args.pack_index.len()
        );
    }
    let matches = ServerArgs::augment_args(clap::Command::new("server"))
        .ignore_errors(true)
        .try_get_matches_from(argv)
        .ok();
    let mut given: Vec<(usize, Given)> = Vec::new();
    let positions = |id: &str, n: usize| -> Vec<usize> {
        matches
            .as_ref()
            .and_then(|m| m.indices_of(id))
            .map(|i| i.collect::<Vec<_>>())
            .filter(|v| v.len() == n)
            // Without positions (not expected): flags in the order of their kinds.
            .unwrap_or_else(|| (0..n).collect())
    };
    for (i, url) in positions("pack_url", args.pack_url.len())
        .into_iter()
        .zip(&args.pack_url)
    {
        given.push((i, Given::Url(url.clone())));
    }
    for (i, dir) in positions("pack_dir", args.pack_dir.len())
        .into_iter()
        .zip(&args.pack_dir)
    {
        given.push((i, Given::Dir(dir.clone())));
    }
    for (i, e) in positions("mcp", args.mcp.len()).into_iter().zip(&args.mcp) {
        given.push((i, Given::Mcp(e.clone())));
    }
    for (i, t) in positions("tenant", args.tenant.len())
        .into_iter()
        .zip(&args.tenant)
    {
        check_tenant(t).map_err(anyhow::Error::msg)?;
        given.push((i, Given::Tenant(t.clone())));
    }
    given.sort_by_key(|(i, _)| *i);

    // (kind, index into its list, tenant)
    let mut named: Vec<(Given, Option<String>)> = Vec::new();
    let mut default_tenant: Option<String> = None;
    for (_, g) in given {
        match g {
            Given::Tenant(t) => match named.last_mut() {
                Some((_, tenant @ None)) => *tenant = Some(t),
                Some((_, Some(_))) => {
                    bail!("--tenant {t} follows another --tenant for the same pack")
                }
                None if default_tenant.is_none() => default_tenant = Some(t),
                None => bail!("--tenant {t}: two --tenant before any pack"),
            },
            other => named.push((other, None)),
        }
    }
    let default_tenant = default_tenant.unwrap_or_else(|| DEFAULT_TENANT.into());
    let mut packs = Vec::new();
    let mut mcp = Vec::new();
    let mut remote = args.pack_token_env.iter().zip(&args.pack_index);
    for (g, tenant) in named {
        let tenant = tenant.unwrap_or_else(|| default_tenant.clone());
        match g {
            Given::Url(url) => {
                let Some((token_env, index)) = remote.next() else {
                    bail!("--pack-url {url} has no --pack-token-env and --pack-index");
                };
                packs.push(PackSource::Remote {
                    url,
                    token_env: token_env.clone(),
                    index: index.clone(),
                    tenant,
                });
            }
            Given::Dir(dir) => packs.push(PackSource::Folder {
                dir,
                tenant,
                watch: false,
                release: false,
            }),
            Given::Mcp(endpoint) => mcp.push(McpServer { endpoint, tenant }),
            Given::Tenant(_) => {}
        }
    }
    Ok((packs, mcp))
}

async fn serve(
    args: ServerArgs,
    packs: Vec<PackSource>,
    mcp: Vec<McpServer>,
) -> anyhow::Result<ExitCode> {
    // First, so a signal at any later moment drains instead of killing the process.
    let shutdown = Shutdown::install().context("cannot install the signal handlers")?;
    let file = match &args.config {
        Some(path) => {
            let file = ConfigFile::read(path)?;
            let base = path
                .parent()
                .map(|p| p.to_owned())
                .unwrap_or_else(|| PathBuf::from("."));
            let packs = file.pack_sources(path, &base)?;
            let mcp = file.mcp_servers(path)?;
            let hitl = file.tenant_hitl(path)?;
            let egress = file.allowed_egress(path)?;
            Some((file, packs, mcp, hitl, egress))
        }
        None => None,
    };
    // The official `kindgi dev --runtime-url`'s runtime.env, when its token is set.
    let dev_env = kindgi_host::config::DevRuntimeEnv::from_vars(|n| std::env::var(n).ok())?;
    let listen_flag = args
        .listen
        .clone()
        .or_else(|| dev_env.as_ref().and_then(|d| d.listen.clone()));
    let pick = |flag: &Option<String>, from_file: Option<&Option<String>>, default: &str| {
        flag.clone()
            .or_else(|| from_file.and_then(|f| f.clone()))
            .unwrap_or_else(|| default.to_owned())
    };
    let mut config = HostConfig::new(
        pick(
            &args.database,
            file.as_ref().map(|f| &f.0.database),
            DEFAULT_DATABASE,
        ),
        pick(
            &listen_flag,
            file.as_ref().map(|f| &f.0.listen),
            DEFAULT_LISTEN,
        ),
    );
    config.limits = args.limits();
    let file_limits = args
        .config
        .as_deref()
        .zip(file.as_ref().map(|f| &f.0.limits));
    config.caps = kindgi_host::caps::resolve(&args.caps(), file_limits)
        .map_err(|problems| anyhow::anyhow!("the stream and body caps: {}", problems.join("; ")))?;
    config.served_env = served_env()?;
    config.allow_stdio_mcp = args.allow_stdio_mcp;
    config.supervisor.pack_env = args.pack_env.clone();
    // Secrets are sealed under the operator's key; without one, secret writes are refused
    // with how to set it.
    config.secrets_key = kindgi_store::seal::SealKey::from_env()
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot read the secrets key")?;
    // Audit bundles are signed with the operator's export key, when one is set.
    config.export_signer = kindgi_api::export_signing::ExportSigner::from_env()
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot read the export signing key")?
        .map(std::sync::Arc::new);
    // A tenant's definitions reach public addresses only, and the ranges the operator allows.
    let mut allowed = args.allow_private_egress.clone();
    if let Some((_, file_packs, file_mcp, file_hitl, file_egress)) = file {
        config.packs = file_packs;
        config.mcp = file_mcp;
        config.tenant_hitl = file_hitl;
        allowed.extend(file_egress);
    }
    config.egress = EgressPolicy::public_only(allowed);
    config.packs.extend(packs);
    config.mcp.extend(mcp);
    if let Some(dev) = &dev_env {
        config.packs.push(dev.pack_source());
        config.secrets_dotenv = dev.dotenv_secrets.clone();
    }
    let host = Host::start("kindgi server", config).await?;
    if let Some(dev) = &dev_env {
        host.state()
            .tokens
            .adopt_for_user(&dev.tenant, &dev.seed_user, &dev.token)
            .await
            .context("cannot adopt KINDGI_API_TOKEN as the dev token")?;
        eprintln!(
            "kindgi server: runtime.env: KINDGI_API_TOKEN (***) is a tenant admin's key of {:?} for user {:?}; pack service {}",
            dev.tenant, dev.seed_user, dev.pack_service_url
        );
    }
    println!(
        "kindgi server listening on {} (database: {} {})",
        host.url(),
        host.database().kind().as_str(),
        host.database().display_target()
    );
    let _ = std::io::stdout().flush();
    shutdown.requested().await;
    let drained = host.stop().await;
    if drained.dropped > 0 {
        eprintln!(
            "kindgi server: {} connection(s) still open after the grace period were dropped",
            drained.dropped
        );
    }
    eprintln!("kindgi server stopped");
    Ok(ExitCode::SUCCESS)
}

/// The env this runtime serves: `KINDGI_ENV`, default `local`.
pub(crate) fn served_env() -> anyhow::Result<String> {
    let env = std::env::var("KINDGI_ENV")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| kindgi_api::routes::values::DEFAULT_SERVED_ENV.to_owned());
    let valid = kindgi_api::routes::values::is_env_name(&env);
    if !valid {
        anyhow::bail!(
            "KINDGI_ENV={env:?} is not an env name: use a lower-case letter, then up to 62 letters, digits or -"
        );
    }
    Ok(env)
}
