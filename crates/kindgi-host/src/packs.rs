//! Starting the packs a host names ([`PackSource`]) and keeping them registered.
//!
//! * **Remote** — a deployed pack service at a URL with its token (read from the named
//!   environment variable now, never logged), and the index its build wrote. The service
//!   is asked for `/v1/info` once at start: unreachable is a warning, not a failure (the
//!   host starts; each call fails `pack-unreachable` until the service answers), and a
//!   service that names another pack or other tools than the index is a warning too.
//! * **Folder** — a pack folder built, indexed and supervised ([`kindgi_dev::FolderPack`]);
//!   with `watch`, a source change rebuilds, restarts and re-registers it.
//!
//! Either way the pack's tools are called through its own [`PackServiceCaller`], which reads
//! the pack's slot: the relay rule and cancellation are the dispatch's
//! (`kindgi_pack_client::dispatch`).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use kindgi_dev::FolderPack;
use kindgi_dev::supervisor::SupervisorConfig;
use kindgi_pack_client::dispatch::{PackServiceCaller, ServiceSlot};
use kindgi_serve::CancellationToken;
use kindgi_spec::pack_index::PackIndex;

use crate::config::PackSource;
use crate::error::HostError;
use crate::register::{Registered, Registrar};

/// The largest pack index read (32 MiB).
pub const MAX_INDEX_BYTES: u64 = 32 * 1024 * 1024;

/// A started pack.
#[derive(Debug)]
pub struct RunningPack {
    pub source: PackSource,
    /// The index's `packId`.
    pub pack_id: String,
    slot: Arc<ServiceSlot>,
    /// A folder pack's supervising task (it stops the service when `stop` fires).
    task: Option<tokio::task::JoinHandle<()>>,
    stop: CancellationToken,
}

impl RunningPack {
    /// The port of the service serving now (`None` while none does).
    pub fn service_port(&self) -> Option<u16> {
        let serving = self.slot.get().ok()?;
        kindgi_dev::discovery::port_of(&serving.base_url)
    }

    /// Stops a folder pack's service (a remote one is not ours to stop).
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

pub(crate) fn say(name: &str, what: &str) {
    eprintln!("{name}: {what}");
}

fn report(name: &str, pack: &str, tenant: &str, done: &Registered) {
    say(
        name,
        &format!(
            "pack \"{pack}\" registered for tenant \"{tenant}\": {}",
            done.summary()
        ),
    );
    for l in &done.left_out {
        say(
            name,
            &format!("  left out {} \"{}\": {}", l.kind.as_str(), l.id, l.why),
        );
    }
    for n in &done.notes {
        say(name, &format!("  {n}"));
    }
}

/// Starts `source` and registers it.
pub async fn start(
    name: &'static str,
    source: &PackSource,
    registrar: &Registrar,
    supervisor: &SupervisorConfig,
) -> Result<RunningPack, HostError> {
    match source {
        PackSource::Remote {
            url,
            token_env,
            index,
            tenant,
        } => start_remote(name, source, url, token_env, index, tenant, registrar).await,
        PackSource::Folder {
            dir,
            tenant,
            watch,
            release,
        } => {
            let mut config = supervisor.clone();
            config.watching = *watch;
            let slot = ServiceSlot::new();
            let folder = FolderPack::start(dir, *release, config, slot.clone()).await?;
            let caller = PackServiceCaller::new(slot.clone());
            let key = source.label();
            let pack_id = match folder.prepared() {
                Some(prepared) => {
                    let index = &prepared.index;
                    let done = registrar.register(&key, tenant, index, &caller).await;
                    report(name, &index.pack_id, tenant, &done);
                    index.pack_id.clone()
                }
                None => {
                    // No primitives yet (the folder pack said so): nothing to register; the
                    // folder names the pack until its first build says its id.
                    folder_name(folder.dir())
                }
            };
            let stop = CancellationToken::new();
            let task = tokio::spawn(supervise(
                name,
                folder,
                *watch,
                stop.clone(),
                registrar.clone(),
                key,
                tenant.clone(),
                caller,
            ));
            Ok(RunningPack {
                source: source.clone(),
                pack_id,
                slot,
                task: Some(task),
                stop,
            })
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn supervise(
    name: &'static str,
    mut folder: FolderPack,
    watch: bool,
    stop: CancellationToken,
    registrar: Registrar,
    key: String,
    tenant: String,
    caller: Arc<PackServiceCaller>,
) {
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            () = folder.changed(), if watch => {
                say(name, "change detected: reloading");
                if let Some(prepared) = folder.reload().await {
                    let index = prepared.index.clone();
                    let done = registrar.register(&key, &tenant, &index, &caller).await;
                    report(name, &index.pack_id, &tenant, &done);
                }
            }
        }
    }
    folder.stop().await;
}

/// The last component of `dir`, for a pack that has no index yet.
fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

fn read_index(url: &str, path: &Path) -> Result<PackIndex, HostError> {
    let bad = |message: String| HostError::BadIndex {
        url: url.to_owned(),
        path: path.to_owned(),
        message,
    };
    let len = std::fs::metadata(path)
        .map_err(|e| bad(format!("cannot read it: {e}")))?
        .len();
    if len > MAX_INDEX_BYTES {
        return Err(bad(format!(
            "it is {len} bytes, over the {MAX_INDEX_BYTES} byte limit"
        )));
    }
    kindgi_dev::prepare::read_index(path).map_err(|e| match e {
        kindgi_dev::DevError::BadIndex { message, .. } => {
            bad(format!("not a valid index: {message}"))
        }
        other => bad(other.to_string()),
    })
}

async fn start_remote(
    name: &'static str,
    source: &PackSource,
    url: &str,
    token_env: &str,
    index_path: &Path,
    tenant: &str,
    registrar: &Registrar,
) -> Result<RunningPack, HostError> {
    let token = std::env::var(token_env)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| HostError::MissingToken {
            url: url.to_owned(),
            var: token_env.to_owned(),
        })?;
    let index = read_index(url, index_path)?;
    let slot = ServiceSlot::remote(url, &token, |_| {}).map_err(|e| HostError::BadPackService {
        url: url.to_owned(),
        message: e.to_string(),
    })?;
    drop(token);
    check_remote(name, url, &slot, &index).await;
    let caller = PackServiceCaller::new(slot.clone());
    let done = registrar
        .register(&source.label(), tenant, &index, &caller)
        .await;
    report(name, &index.pack_id, tenant, &done);
    Ok(RunningPack {
        source: source.clone(),
        pack_id: index.pack_id.clone(),
        slot,
        task: None,
        stop: CancellationToken::new(),
    })
}

/// `/v1/info` once: a warning when the service is unreachable or disagrees with the index.
async fn check_remote(name: &str, url: &str, slot: &ServiceSlot, index: &PackIndex) {
    let Ok(serving) = slot.get() else { return };
    match serving.client.info().await {
        Ok(info) => {
            if info.pack_id != index.pack_id {
                say(
                    name,
                    &format!(
                        "warning: the pack service at {url} serves pack \"{}\", but its index names \"{}\"",
                        info.pack_id, index.pack_id
                    ),
                );
            }
            let served: BTreeSet<&str> = info.tools.iter().map(|t| t.id.as_str()).collect();
            let missing: Vec<&str> = index
                .tools
                .iter()
                .map(|t| t.id.as_str())
                .filter(|id| !served.contains(id))
                .collect();
            if !missing.is_empty() {
                say(
                    name,
                    &format!(
                        "warning: the pack service at {url} does not serve {} of its index: {}",
                        if missing.len() == 1 {
                            "this tool"
                        } else {
                            "these tools"
                        },
                        missing.join(", ")
                    ),
                );
            }
            say(
                name,
                &format!(
                    "pack service at {url}: pack \"{}\" {} (artifact {})",
                    info.pack_id, info.pack_version, info.artifact_version
                ),
            );
        }
        Err(e) => say(
            name,
            &format!(
                "warning: the pack service of \"{}\" is unreachable at start ({e}); its tools fail with pack-unreachable until it answers",
                index.pack_id
            ),
        ),
    }
}
