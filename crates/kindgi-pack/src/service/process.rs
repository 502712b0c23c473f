//! `serve` as a process: the boot sequence of the process contract, in order —
//! logging config, configuration (every problem at once), token scrubbing, the index,
//! missing modules, the env filter, `missing-env`, load steps, listen — then SIGTERM/SIGINT
//! drain and exit 0. Boot problems exit 1 with a `config-invalid` or `boot-failed` record.
//!
//! Everything that touches the process environment happens here, before the async runtime
//! (and so any other thread) exists.

use std::ffi::OsString;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use super::config;
use super::env;
use super::pack::{self, IndexFile};
use super::registry::ModuleRegistry;
use super::token;
use super::{ServiceOptions, serve_on};
use crate::log::{Level, LogConfig, Logger, Record};

fn problems_record(name: &'static str, message: &str, problems: Vec<String>) -> Record {
    Record::lifecycle(Level::Error, name, message).field("problems", problems)
}

fn var(name: &str) -> Option<String> {
    if name == token::TOKEN_VAR {
        if let Some(stash) = token::stashed() {
            return stash.token.clone();
        }
    }
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// Takes the token out of the process now — `KINDGI_PACK_SERVICE_TOKEN_FILE` (read, then
/// unlinked) or `KINDGI_PACK_SERVICE_TOKEN` (for `serve` on Unix, by re-executing without
/// it; see [`token`]) — keeping its value for `serve`. [`crate::sdk::main`] calls it first
/// thing, so even the code that defines a pack's tools never sees the token. Call only while
/// the process has a single thread.
pub fn stash_token() {
    let serving = std::env::args_os().nth(1).is_some_and(|a| a == "serve");
    token::take(serving, remove_vars);
}

/// Removes variables from the process environment.
#[allow(unsafe_code)]
fn remove_vars(names: &[OsString]) {
    for name in names {
        // SAFETY: called only from `stash_token` and `serve_process`, before the tokio
        // runtime is built; the SDK documents that `sdk::main` / `Pack::main` must be called
        // from a plain `fn main`, so no other thread reads or writes the environment meanwhile.
        unsafe { std::env::remove_var(name) };
    }
}

/// Runs the pack service process (`serve` with its arguments, after the command word).
/// Call from a plain `fn main` — not inside an async runtime — before starting threads.
pub fn serve_process(registry: &ModuleRegistry, args: &[String]) -> ExitCode {
    // A no-op after `sdk::main`; with `Pack::main` the token is taken here.
    stash_token();
    super::alloc::keep_large_blocks_mapped();
    let log_config = match LogConfig::from_env(var) {
        Ok(c) => c,
        Err(problems) => {
            let logger = Logger::stderr(LogConfig::default());
            let message = problems.first().cloned().unwrap_or_default();
            logger.write(problems_record("config-invalid", &message, problems));
            return ExitCode::from(1);
        }
    };
    let logger = Arc::new(Logger::stderr(log_config));
    // The libraries' `tracing` events become records too (only a test harness has a
    // subscriber already).
    {
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        let layer = crate::log_tracing::RecordLayer::new(logger.clone());
        let _ = tracing_subscriber::registry().with(layer).try_init();
    }
    let token_problem = token::stashed().and_then(|s| s.problem.clone());
    let config = match config::read(args, var) {
        Ok(c) => c,
        Err(mut problems) => {
            if let Some(p) = token_problem {
                problems.insert(0, p);
            }
            logger.write(problems_record(
                "config-invalid",
                "The pack service configuration is invalid",
                problems,
            ));
            return ExitCode::from(1);
        }
    };
    let boot_failed = |problems: Vec<String>| {
        logger.write(problems_record(
            "boot-failed",
            "The pack service failed to boot",
            problems,
        ));
        ExitCode::from(1)
    };
    let file = match IndexFile::read(&config.index) {
        Ok(f) => f,
        Err(problem) => return boot_failed(vec![problem]),
    };
    let missing_modules = pack::missing_modules(&file.index, registry);
    if !missing_modules.is_empty() {
        return boot_failed(missing_modules);
    }
    if config.env_filter {
        let names: Vec<OsString> = std::env::vars_os().map(|(k, _)| k).collect();
        let declared = file.index.env.as_ref();
        let drop: Vec<OsString> = names
            .into_iter()
            .filter(|n| !env::keeps(&n.to_string_lossy(), declared))
            .collect();
        if !drop.is_empty() {
            remove_vars(&drop);
            let mut shown: Vec<String> = drop
                .iter()
                .map(|n| n.to_string_lossy().into_owned())
                .collect();
            shown.sort();
            logger.write(
                Record::new(Level::Warn, "pack", env::dropped_message(&shown))
                    .with_event("env-dropped")
                    .field("names", shown),
            );
        }
    }
    let missing_env = env::missing(file.index.env.as_ref(), var);
    if !missing_env.is_empty() {
        logger.write(
            Record::new(
                Level::Warn,
                "pack",
                format!(
                    "The pack's env.required names have no value: {}",
                    missing_env.join(", ")
                ),
            )
            .with_event("missing-env")
            .field("check", config.env_check.as_str())
            .field("names", missing_env.clone()),
        );
    }
    let problems = pack::prewarm(&file.index, registry);
    if !problems.is_empty() {
        return boot_failed(problems);
    }
    let host = config.host.clone().unwrap_or_else(|| "0.0.0.0".to_owned());
    let ip = match host.parse::<IpAddr>() {
        Ok(ip) => ip,
        Err(_) => match (host.as_str(), 0)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
        {
            Some(addr) => addr.ip(),
            None => return boot_failed(vec![format!("Cannot resolve --host {host}")]),
        },
    };
    let addr = SocketAddr::new(ip, config.port);
    let runtime = match build_runtime() {
        Ok(rt) => rt,
        Err(e) => return boot_failed(vec![format!("Cannot start the async runtime: {e}")]),
    };
    let options = ServiceOptions {
        token: config.token.clone(),
        addr,
        max_concurrency: config.max_concurrency,
        env_check: config.env_check,
        missing_env,
        tenant: config.tenant.clone(),
        drain: Duration::from_millis(kindgi_spec::pack_protocol::DRAIN_MS),
        limits: super::Limits::default(),
    };
    let code = runtime.block_on(async {
        // Before binding, so a SIGTERM right after `listening` drains instead of killing.
        let shutdown = match kindgi_serve::Shutdown::install() {
            Ok(s) => s,
            Err(e) => return boot_failed(vec![format!("Cannot install the signal handlers: {e}")]),
        };
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => return boot_failed(vec![format!("Cannot listen on {addr}: {e}")]),
        };
        let bound = listener.local_addr().unwrap_or(addr);
        let running = serve_on(listener, bound, &file, registry, options, logger.clone());
        shutdown.requested().await;
        running.drain().await;
        ExitCode::SUCCESS
    });
    // Handlers that outlived their calls are abandoned, not awaited.
    runtime.shutdown_background();
    code
}

/// Two workers by default (the service is I/O-bound and small); `KINDGI_PACK_SERVICE_WORKERS`
/// overrides it (`1` runs everything on one thread).
fn build_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let workers = var("KINDGI_PACK_SERVICE_WORKERS")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get().min(2)));
    if workers == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
    }
}
