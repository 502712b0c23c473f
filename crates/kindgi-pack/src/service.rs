//! The pack service (pack protocol v2 over HTTP): runs the tools and guardrail checks a
//! binary has compiled in, as its pack index lists them.
//!
//! Design:
//! - [`registry`] maps module paths to compiled-in handlers; [`pack`] reads the index, binds
//!   each entry to its handler and compiles every schema once at boot.
//! - [`http`] is hyper 1 used directly, so statuses, headers and the body-size rule are
//!   exact; [`call`] applies the protocol's parse rules and runs a handler in its own task
//!   under the call's deadline (the answer goes out at the deadline; the handler is
//!   signalled, never killed, and logged when it finishes late). [`limits`] bounds what
//!   bodies and parsed calls may cost; validation and large parses run off the async
//!   workers (`offload`).
//! - [`process`] is the process contract: configuration, token scrubbing and the env filter
//!   before any pack code runs, boot problems, `listening`, and the SIGTERM drain.
//! - [`start`] runs a service inside a test or another program (no process-global effects).

pub(crate) mod alloc;
pub(crate) mod body;
pub mod call;
pub mod config;
pub mod env;
pub(crate) mod estimate;
pub mod http;
pub mod limits;
pub(crate) mod offload;
pub mod pack;
pub(crate) mod pause_slot;
pub mod process;
pub mod registry;
pub(crate) mod state;
pub mod token;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use config::{EnvCheck, ProcessConfig};
pub use limits::Limits;
pub use pack::IndexFile;
pub use registry::{
    CheckContext, Evaluate, LoadFn, Module, ModuleRegistry, RegisteredCheck, RegisteredTool,
};

use crate::log::{Level, Logger, Record};
use state::State;

/// How a service runs (the process entry fills this from its configuration).
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    pub token: String,
    /// Address to bind: `127.0.0.1:0` picks a free loopback port.
    pub addr: SocketAddr,
    pub max_concurrency: usize,
    pub env_check: EnvCheck,
    /// Required env names that have no value (see [`env::missing`]).
    pub missing_env: Vec<String>,
    pub tenant: Option<String>,
    /// How long a drain waits for in-flight calls (8 s in the process contract).
    pub drain: Duration,
    /// Budgets for body bytes, parsed calls and CPU-heavy jobs.
    pub limits: Limits,
}

impl ServiceOptions {
    /// Loopback, any free port, the default cap, strict env check, an 8 s drain.
    pub fn loopback(token: impl Into<String>) -> Self {
        Self {
            token: token.into(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            max_concurrency: kindgi_spec::pack_protocol::DEFAULT_MAX_CONCURRENCY,
            env_check: EnvCheck::Strict,
            missing_env: Vec::new(),
            tenant: None,
            drain: Duration::from_millis(kindgi_spec::pack_protocol::DRAIN_MS),
            limits: Limits::default(),
        }
    }
}

/// Why a service did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The index names modules or handlers the binary lacks, or a load step failed.
    #[error("The pack service failed to boot: {}", problems.join("; "))]
    Boot { problems: Vec<String> },
    #[error("Cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// A service that is listening.
pub struct RunningService {
    pub addr: SocketAddr,
    state: Arc<State>,
    stop_accepting: CancellationToken,
    drain: Duration,
    server: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RunningService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningService")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// Binds the index to `registry` (missing modules and failed load steps are boot problems),
/// binds the listener and serves. Writes `missing-env`, then `listening`.
pub async fn start(
    file: &IndexFile,
    registry: &ModuleRegistry,
    options: ServiceOptions,
    logger: Arc<Logger>,
) -> Result<RunningService, StartError> {
    let mut problems = pack::missing_modules(&file.index, registry);
    if problems.is_empty() {
        problems = pack::prewarm(&file.index, registry);
    }
    if !problems.is_empty() {
        return Err(StartError::Boot { problems });
    }
    let listener = TcpListener::bind(options.addr)
        .await
        .map_err(|source| StartError::Listen {
            addr: options.addr,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| StartError::Listen {
        addr: options.addr,
        source,
    })?;
    Ok(serve_on(listener, addr, file, registry, options, logger))
}

/// Serves a bound listener (boot checks already done).
pub(crate) fn serve_on(
    listener: TcpListener,
    addr: SocketAddr,
    file: &IndexFile,
    registry: &ModuleRegistry,
    options: ServiceOptions,
    logger: Arc<Logger>,
) -> RunningService {
    let loaded = pack::LoadedPack::bind(file, registry, &options.missing_env);
    let strict_missing = (options.env_check == EnvCheck::Strict && !options.missing_env.is_empty())
        .then(|| {
            let body =
                serde_json::json!({"error": "missing env", "missingEnv": options.missing_env});
            bytes::Bytes::from(body.to_string())
        });
    let state = Arc::new(State::new(
        loaded,
        logger.clone(),
        &options.token,
        options.tenant.clone(),
        strict_missing,
        options.max_concurrency,
        options.limits,
    ));
    state.ready.store(true, Ordering::Release);
    let stop_accepting = CancellationToken::new();
    let server = tokio::spawn(http::serve(
        listener,
        state.clone(),
        stop_accepting.clone(),
        Duration::from_millis(250),
    ));
    logger.write(
        Record::lifecycle(
            Level::Info,
            "listening",
            format!("Listening on port {}", addr.port()),
        )
        .field("port", addr.port())
        .field("packId", file.index.pack_id.as_str())
        .field("artifactVersion", file.index.artifact_version.as_str()),
    );
    RunningService {
        addr,
        state,
        stop_accepting,
        drain: options.drain,
        server,
    }
}

impl RunningService {
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Calls admitted and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.state.in_flight()
    }

    /// The SIGTERM sequence: stop being ready (`draining`), wait for in-flight calls (up to
    /// the drain time), close every connection, write `stopped`.
    pub async fn drain(self) {
        let state = &self.state;
        state.draining.store(true, Ordering::Release);
        state.logger.write(Record::lifecycle(
            Level::Info,
            "draining",
            "Draining: finishing the calls in flight",
        ));
        let until = Instant::now() + self.drain;
        // Like the reference's 25 ms poll, stay up for at least one poll interval, so a caller
        // that asks right after SIGTERM is told `draining` rather than refused a connection.
        tokio::time::sleep(Duration::from_millis(25).min(self.drain)).await;
        while state.in_flight() > 0 {
            let now = Instant::now();
            if now >= until {
                break;
            }
            let wait = (until - now).min(Duration::from_millis(25));
            let _ = tokio::time::timeout(wait, state.idle.notified()).await;
        }
        self.stop_accepting.cancel();
        let _ = self.server.await;
        state
            .logger
            .write(Record::lifecycle(Level::Info, "stopped", "Stopped"));
    }
}
