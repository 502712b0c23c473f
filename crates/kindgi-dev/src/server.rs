//! `kindgi dev`, start to finish: detect → build → index → supervise the pack service →
//! register → serve the `/v1` API (tools, flows, runs) on `.kindgi/dev.db` → write the
//! discovery file → watch and reload → on SIGINT/SIGTERM stop the child and exit.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kindgi_api::AppState;
use kindgi_runtime::Runtime;
use kindgi_store::Database;
use kindgi_tools::registry::RegisterOptions;

use crate::caller::DevPackCaller;
use crate::detect::{PackKind, detect};
use crate::discovery::{self, Discovery};
use crate::error::DevError;
use crate::prepare::{Prepared, prepare, progress, state_dir};
use crate::register::register;
use crate::supervisor::{ServiceSlot, Supervisor, SupervisorConfig};
use crate::watch;

/// The tenant the dev server's API key belongs to (the runtime's default tenant).
pub const DEV_TENANT: &str = kindgi_runtime::runtime::DEFAULT_TENANT;
/// The default API port.
pub const DEFAULT_PORT: u16 = 4000;
/// How long a stop waits for in-flight runs to store their journals before it aborts them
/// (they are left to resume on the next start either way; see `Runtime::shutdown`).
pub const RUN_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What `kindgi dev` was asked to do.
#[derive(Debug, Clone)]
pub struct DevOptions {
    /// The pack folder.
    pub dir: PathBuf,
    /// API address (`127.0.0.1`) and port (`0` picks a free one).
    pub host: String,
    pub port: u16,
    /// Rebuild and reload when the pack's files change.
    pub watch: bool,
    /// Start from an empty database (deletes `.kindgi/dev.db`).
    pub reset: bool,
    /// Build a Rust pack with `--release`.
    pub release: bool,
}

impl DevOptions {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            host: "127.0.0.1".into(),
            port: DEFAULT_PORT,
            watch: true,
            reset: false,
            release: false,
        }
    }
}

/// Runs the dev server until SIGINT/SIGTERM. `Err` only for a failed start.
pub async fn run(options: DevOptions) -> Result<(), DevError> {
    // First, so a signal at any later moment drains instead of killing the process.
    let shutdown = kindgi_serve::Shutdown::install().map_err(|source| DevError::Io {
        what: "cannot install the signal handlers to serve",
        path: options.dir.clone(),
        source,
    })?;
    let dir = std::fs::canonicalize(&options.dir).map_err(|source| DevError::Io {
        what: "cannot open the pack folder",
        path: options.dir.clone(),
        source,
    })?;
    let kind = detect(&dir)?;
    progress(&format!("{} pack in {}", kind.label(), dir.display()));
    let prepared = prepare(&dir, &kind, options.release).await?;
    let pack = prepared.index.pack_id.clone();

    let db = open_database(&dir, options.reset).await?;
    let model = kindgi_runtime::model::from_env().map_err(|e| DevError::Model {
        message: e.to_string(),
    })?;
    let rt = Runtime::with_database(db.clone()).model(model).build();
    let slot = ServiceSlot::new();
    let caller = DevPackCaller::new(slot.clone());

    progress(&format!(
        "starting the pack service ({})",
        prepared.command_line()
    ));
    let sup_config = SupervisorConfig::from_env(options.watch);
    let mut supervisor =
        Supervisor::start_with(prepared.clone(), &dir, slot.clone(), sup_config.clone()).await?;
    let state = AppState::new(db.clone());
    let done = register(&rt, &prepared.index, &caller);
    report_registration(&pack, &done);
    register_manifests(&state, &prepared).await;
    match rt.recover().await {
        Ok(ids) if !ids.is_empty() => progress(&format!("resumed {} unfinished run(s)", ids.len())),
        Ok(_) => {}
        Err(e) => progress(&format!("could not resume unfinished runs: {e}")),
    }

    let addr = format!("{}:{}", options.host, options.port);
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(source) => {
            supervisor.stop().await;
            return Err(DevError::Listen { addr, source });
        }
    };
    let local = listener.local_addr().map_err(|source| DevError::Listen {
        addr: addr.clone(),
        source,
    })?;
    let url = format!("http://{local}");
    let key = match crate::dev_key::rotate(&state.tokens, &state_dir(&dir), DEV_TENANT).await {
        Ok(k) => k,
        Err(e) => {
            supervisor.stop().await;
            return Err(e);
        }
    };
    let rc = Discovery {
        url: url.clone(),
        token: key.key.clone(),
        pid: Some(std::process::id()),
        pack_id: Some(pack.clone()),
    };
    let rc_path = match discovery::write(&dir, &rc) {
        Ok(p) => p,
        Err(source) => {
            supervisor.stop().await;
            return Err(DevError::Io {
                what: "cannot write the discovery file",
                path: dir.join(discovery::FILE_NAME),
                source,
            });
        }
    };
    let extra = kindgi_api::runs::routes(rt.clone()).merge(kindgi_api::flows::routes(rt.clone()));
    let app = kindgi_api::router_with(state.clone(), extra);
    let server_stop = kindgi_serve::CancellationToken::new();
    let limits = kindgi_serve::Limits::default();
    let server = tokio::spawn(kindgi_api::serve(
        listener,
        app,
        limits,
        server_stop.clone(),
    ));
    println!("kindgi dev: listening on {url}");
    let _ = std::io::stdout().flush();
    progress(&format!(
        "API key for tenant \"{DEV_TENANT}\" in {} — try: kindgi runs start --flow=<id> --input='{{…}}' --dry-run",
        rc_path.display()
    ));

    // Watch and reload until a stop signal.
    let shutdown = shutdown.requested();
    tokio::pin!(shutdown);
    let mut last = if options.watch {
        Some(fingerprint(&dir).await)
    } else {
        None
    };
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            () = tokio::time::sleep(watch::POLL_INTERVAL), if last.is_some() => {
                let now = fingerprint(&dir).await;
                if Some(now) == last {
                    continue;
                }
                // Let a burst of saves settle before rebuilding.
                tokio::time::sleep(watch::POLL_INTERVAL).await;
                last = Some(fingerprint(&dir).await);
                progress("change detected: reloading");
                supervisor = reload(&dir, &kind, options.release, &rt, &caller, &state, &slot, supervisor, &sup_config).await;
            }
        }
    }

    progress("stopping");
    // Runs first, while their pack service still serves: an in-flight run is left to resume
    // on the next start (as after a crash), not failed by its service going away.
    let left = rt.shutdown(RUN_STOP_GRACE).await;
    if !left.is_empty() {
        progress(&format!(
            "{} run(s) in flight left to resume on the next start",
            left.len()
        ));
    }
    server_stop.cancel();
    supervisor.stop().await;
    if let Err(e) = crate::dev_key::retire(&state.tokens, &state_dir(&dir), &key.key_id).await {
        progress(&format!("{e}"));
    }
    let _ = server.await;
    let _ = std::fs::remove_file(&rc_path);
    db.close().await;
    progress("stopped");
    Ok(())
}

#[allow(clippy::too_many_arguments)]
/// Rebuild, re-index, restart, re-register. A failed build keeps the running service.
async fn reload(
    dir: &Path,
    kind: &PackKind,
    release: bool,
    rt: &Runtime,
    caller: &Arc<DevPackCaller>,
    state: &AppState,
    slot: &Arc<ServiceSlot>,
    old: Supervisor,
    config: &SupervisorConfig,
) -> Supervisor {
    let prepared = match prepare(dir, kind, release).await {
        Ok(p) => p,
        Err(e) => {
            progress(&format!(
                "reload failed; the previous build keeps serving:\n{e}"
            ));
            return old;
        }
    };
    old.stop().await;
    progress(&format!(
        "starting the pack service ({})",
        prepared.command_line()
    ));
    let next = match Supervisor::start_with(prepared.clone(), dir, slot.clone(), config.clone())
        .await
    {
        Ok(s) => s,
        Err(e) => {
            progress(&format!(
                "reload failed: {e}\nkindgi dev: no pack service is serving; save a file to try again"
            ));
            // An idle supervisor stand-in: nothing to stop.
            return Supervisor::idle();
        }
    };
    let done = register(rt, &prepared.index, caller);
    report_registration(&prepared.index.pack_id, &done);
    register_manifests(state, &prepared).await;
    next
}

fn report_registration(pack: &str, done: &crate::register::Registered) {
    progress(&format!("pack \"{pack}\" registered: {}", done.summary()));
    for s in &done.skipped {
        progress(&format!("  left out {s}"));
    }
}

/// Lists the pack's tools in the API's tool registry (`GET /v1/tools`); a version already
/// registered stays as it was.
async fn register_manifests(state: &AppState, prepared: &Prepared) {
    for tool in &prepared.index.tools {
        let Ok(manifest) = crate::register::manifest_of(tool) else {
            continue;
        };
        let _ = state
            .registry
            .register(DEV_TENANT, &manifest, RegisterOptions::default())
            .await;
    }
}

async fn open_database(dir: &Path, reset: bool) -> Result<Database, DevError> {
    let state = state_dir(dir);
    let path = state.join("dev.db");
    if reset {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(state.join(format!("dev.db{suffix}")));
        }
    }
    let err = |message: String| DevError::Database {
        path: path.clone(),
        message,
    };
    let db = Database::connect(&path.display().to_string())
        .await
        .map_err(|e| err(e.to_string()))?;
    db.migrate().await.map_err(|e| err(e.to_string()))?;
    Ok(db)
}

async fn fingerprint(dir: &Path) -> u64 {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || watch::fingerprint(&dir))
        .await
        .unwrap_or(0)
}
