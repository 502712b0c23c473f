//! A pack folder run as a supervised pack service, start to reload: detect → build → index →
//! supervise ([`FolderPack::start`]), notice a source change ([`FolderPack::changed`]),
//! rebuild and restart ([`FolderPack::reload`]; a failed rebuild keeps the previous build
//! serving), stop ([`FolderPack::stop`]).
//!
//! A pack with no primitives yet (the official `minimal` template: empty discovery folders,
//! the indexer's `discovery-empty`) is not a failure: it starts with no build and no
//! service, says so, and its first saved tool or agent is built and served on reload.
//!
//! The service serving now is published in the [`ServiceSlot`] the caller passes in, which
//! the pack dispatch (`kindgi_pack_client::dispatch::PackServiceCaller`) reads on every call. What
//! to do with a (new) index — registering its tools, agents and flows — is the host's
//! business, not this crate's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::detect::{PackKind, detect};
use crate::error::DevError;
use crate::prepare::{Prepared, prepare, progress};
use crate::supervisor::{ServiceSlot, Supervisor, SupervisorConfig};
use crate::watch;

/// A pack folder whose service is supervised.
#[derive(Debug)]
pub struct FolderPack {
    dir: PathBuf,
    kind: PackKind,
    release: bool,
    config: SupervisorConfig,
    slot: Arc<ServiceSlot>,
    supervisor: Supervisor,
    /// `None` while the pack has no primitives yet.
    prepared: Option<Prepared>,
    last: u64,
}

/// What a pack with no primitives is told, and what a call meanwhile answers.
const NO_PRIMITIVES_YET: &str = "the pack has no tools, guardrails, agents or flows yet";

/// The build of the pack in `dir`, or `None` when it has no primitives yet (said once here).
async fn prepare_or_empty(
    dir: &Path,
    kind: &PackKind,
    release: bool,
) -> Result<Option<Prepared>, DevError> {
    match prepare(dir, kind, release).await {
        Ok(p) => Ok(Some(p)),
        Err(e) if e.indexer_code() == Some(crate::error::DISCOVERY_EMPTY) => {
            let empty = DevError::NoPrimitives {
                dir: dir.to_owned(),
            };
            progress(&format!("{empty}; kindgi dev keeps running"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

impl FolderPack {
    /// Detects, builds and indexes the pack in `dir`, and boots its service into `slot`.
    pub async fn start(
        dir: &Path,
        release: bool,
        config: SupervisorConfig,
        slot: Arc<ServiceSlot>,
    ) -> Result<FolderPack, DevError> {
        let dir = std::fs::canonicalize(dir).map_err(|source| DevError::Io {
            what: "cannot open the pack folder",
            path: dir.to_owned(),
            source,
        })?;
        let kind = detect(&dir)?;
        progress(&format!("{} pack in {}", kind.label(), dir.display()));
        let prepared = prepare_or_empty(&dir, &kind, release).await?;
        let supervisor = match &prepared {
            Some(prepared) => {
                progress(&format!(
                    "starting the pack service ({})",
                    prepared.command_line()
                ));
                Supervisor::start_with(prepared.clone(), &dir, slot.clone(), config.clone()).await?
            }
            None => {
                slot.set(None, NO_PRIMITIVES_YET);
                Supervisor::idle()
            }
        };
        let last = fingerprint(&dir).await;
        Ok(FolderPack {
            dir,
            kind,
            release,
            config,
            slot,
            supervisor,
            prepared,
            last,
        })
    }

    /// The pack folder (canonical).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The build serving now (its index); `None` while the pack has no primitives yet.
    pub fn prepared(&self) -> Option<&Prepared> {
        self.prepared.as_ref()
    }

    /// The slot the service is published in.
    pub fn slot(&self) -> &Arc<ServiceSlot> {
        &self.slot
    }

    /// Completes once the pack's sources changed (polled every [`watch::POLL_INTERVAL`];
    /// a burst of saves is let settle first).
    pub async fn changed(&mut self) {
        loop {
            tokio::time::sleep(watch::POLL_INTERVAL).await;
            if fingerprint(&self.dir).await == self.last {
                continue;
            }
            tokio::time::sleep(watch::POLL_INTERVAL).await;
            self.last = fingerprint(&self.dir).await;
            return;
        }
    }

    /// Rebuilds, re-indexes and restarts. `Some` with the new build once it serves; `None`
    /// when the build failed (the previous build keeps serving) or the new service did not
    /// boot (none serves until the next change).
    pub async fn reload(&mut self) -> Option<&Prepared> {
        let prepared = match prepare_or_empty(&self.dir, &self.kind, self.release).await {
            Ok(Some(p)) => p,
            Ok(None) => {
                // Every primitive is gone: nothing to serve until one is saved again.
                let old = std::mem::replace(&mut self.supervisor, Supervisor::idle());
                old.stop().await;
                self.slot.set(None, NO_PRIMITIVES_YET);
                self.prepared = None;
                return None;
            }
            Err(e) => {
                progress(&format!(
                    "reload failed; the previous build keeps serving:\n{e}"
                ));
                return None;
            }
        };
        let old = std::mem::replace(&mut self.supervisor, Supervisor::idle());
        old.stop().await;
        progress(&format!(
            "starting the pack service ({})",
            prepared.command_line()
        ));
        match Supervisor::start_with(
            prepared.clone(),
            &self.dir,
            self.slot.clone(),
            self.config.clone(),
        )
        .await
        {
            Ok(s) => {
                self.supervisor = s;
                Some(self.prepared.insert(prepared))
            }
            Err(e) => {
                progress(&format!(
                    "reload failed: {e}\nkindgi dev: no pack service is serving; save a file to try again"
                ));
                None
            }
        }
    }

    /// Stops the service (SIGTERM, then SIGKILL after the grace period).
    pub async fn stop(self) {
        self.supervisor.stop().await;
    }
}

async fn fingerprint(dir: &Path) -> u64 {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || watch::fingerprint(&dir))
        .await
        .unwrap_or(0)
}
