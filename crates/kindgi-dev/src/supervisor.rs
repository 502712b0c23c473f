//! The pack service child process: start it (`PORT=0`, a fresh random token, the
//! `listening` line within the boot timeout), forward its output, restart it when it dies
//! (three times, 500 ms apart), and stop it (SIGTERM, a grace period, then SIGKILL).
//!
//! The process currently serving is published in [`ServiceSlot`]; the pack tools' caller
//! reads it on every call, so a call made while no child serves is refused at once as
//! *unavailable* (it provably did not run) instead of waiting or guessing (pack-protocol
//! reference §10, the dev relay's rule).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use base64::Engine as _;
use kindgi_pack::client::{PackClient, PackClientConfig};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use crate::detect::PackKind;
use crate::error::DevError;
use crate::prepare::Prepared;
use kindgi_pack::service::token::TokenFile;

/// How long a child may take to write its `listening` line (`KINDGI_DEV_BOOT_TIMEOUT_MS`).
pub const BOOT_TIMEOUT: Duration = Duration::from_secs(60);
/// Restarts after the child dies, and the pause before each.
pub const MAX_RESTARTS: u32 = 3;
pub const RESTART_PAUSE: Duration = Duration::from_millis(500);
/// SIGTERM → SIGKILL: the service's own 8 s drain plus 2 s.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// A running pack service.
#[derive(Debug)]
pub struct Service {
    pub base_url: String,
    pub pid: u32,
    pub client: PackClient,
}

/// The service currently serving (if any) and why none does.
#[derive(Debug, Default)]
pub struct ServiceSlot {
    current: RwLock<Option<Arc<Service>>>,
    why_not: Mutex<String>,
}

impl ServiceSlot {
    pub fn new() -> Arc<ServiceSlot> {
        Arc::new(ServiceSlot {
            current: RwLock::new(None),
            why_not: Mutex::new("the pack service has not started yet".into()),
        })
    }

    /// The serving service, or why there is none.
    pub fn get(&self) -> Result<Arc<Service>, String> {
        if let Ok(g) = self.current.read()
            && let Some(s) = g.as_ref()
        {
            return Ok(s.clone());
        }
        Err(self
            .why_not
            .lock()
            .map(|g| g.clone())
            .unwrap_or_else(|_| "the pack service is not serving".into()))
    }

    fn set(&self, service: Option<Arc<Service>>, why_not: &str) {
        if let Ok(mut g) = self.current.write() {
            *g = service;
        }
        if let Ok(mut g) = self.why_not.lock() {
            *g = why_not.to_owned();
        }
    }
}

/// A random token: 24 bytes, base64url (32 characters).
pub fn new_token() -> String {
    let bytes: [u8; 24] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn boot_timeout() -> Duration {
    std::env::var("KINDGI_DEV_BOOT_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(BOOT_TIMEOUT)
}

/// A supervised pack service (one build of the pack).
#[derive(Debug)]
pub struct Supervisor {
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

struct Spec {
    prepared: Prepared,
    dir: PathBuf,
    pack: String,
}

impl Supervisor {
    /// Boots the service of `prepared` and keeps it running, publishing it in `slot`.
    pub async fn start(
        prepared: Prepared,
        dir: &Path,
        slot: Arc<ServiceSlot>,
    ) -> Result<Supervisor, DevError> {
        let spec = Spec {
            pack: prepared.index.pack_id.clone(),
            prepared,
            dir: dir.to_owned(),
        };
        let (child, service) = boot(&spec).await?;
        slot.set(Some(service), "");
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(monitor(spec, child, slot, rx));
        Ok(Supervisor {
            stop: Some(tx),
            task: Some(task),
        })
    }

    /// A supervisor of nothing (after a reload whose service failed to boot).
    pub fn idle() -> Supervisor {
        Supervisor {
            stop: None,
            task: None,
        }
    }

    /// Stops the service (SIGTERM, then SIGKILL after the grace period) and waits for it.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

async fn monitor(
    spec: Spec,
    child: Child,
    slot: Arc<ServiceSlot>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut child = Some(child);
    let mut restarts = 0u32;
    loop {
        let Some(c) = child.as_mut() else {
            // Gave up: wait for the stop request only.
            let _ = (&mut stop).await;
            return;
        };
        tokio::select! {
            _ = &mut stop => {
                slot.set(None, "the pack service is stopping");
                terminate(c).await;
                return;
            }
            status = c.wait() => {
                let how = match status {
                    Ok(s) => s.to_string(),
                    Err(e) => e.to_string(),
                };
                child = None;
                slot.set(None, &format!("the pack service of \"{}\" exited ({how}) and is restarting", spec.pack));
                while child.is_none() {
                    if restarts >= MAX_RESTARTS {
                        let why = format!(
                            "the pack service of \"{}\" exited ({how}) and was restarted {MAX_RESTARTS} times; fix the pack and save a file to reload it",
                            spec.pack
                        );
                        eprintln!("kindgi dev: {why}");
                        slot.set(None, &why);
                        break;
                    }
                    restarts += 1;
                    eprintln!(
                        "kindgi dev: the pack service exited ({how}); restarting it in {} ms ({restarts} of {MAX_RESTARTS})",
                        RESTART_PAUSE.as_millis()
                    );
                    tokio::select! {
                        _ = &mut stop => return,
                        () = tokio::time::sleep(RESTART_PAUSE) => {}
                    }
                    match boot(&spec).await {
                        Ok((c, service)) => {
                            eprintln!("kindgi dev: pack service restarted at {}", service.base_url);
                            slot.set(Some(service), "");
                            child = Some(c);
                        }
                        Err(e) => eprintln!("kindgi dev: {e}"),
                    }
                }
            }
        }
    }
}

/// SIGTERM, up to [`STOP_GRACE`] to exit, then SIGKILL.
async fn terminate(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    if let Some(pid) = child.id() {
        // `kill` is the only way to send SIGTERM without unsafe code or a new dependency.
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await;
    }
    if tokio::time::timeout(STOP_GRACE, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// What the child's stderr told us while it booted.
#[derive(Debug, Default)]
struct BootNews {
    port: Option<oneshot::Sender<u16>>,
    problems: Vec<String>,
}

/// Starts one child and waits for its `listening` line.
async fn boot(spec: &Spec) -> Result<(Child, Arc<Service>), DevError> {
    let token = new_token();
    let p = &spec.prepared;
    let mut cmd = Command::new(&p.program);
    cmd.args(&p.args)
        .arg("--index")
        .arg(&p.index_path)
        .arg("--module-root")
        .arg(&spec.dir)
        .arg("--host")
        .arg("127.0.0.1")
        .current_dir(&spec.dir)
        .env("PORT", "0")
        .env("KINDGI_LOG_FORMAT", "json")
        .env("KINDGI_PACK_ENV_CHECK", "warn")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // A Rust service reads its token from a file it unlinks before any pack code runs, so pack
    // code cannot read it back (not even from /proc/self/environ); the official Python and
    // TypeScript services know only the variable. The file lives until the boot is over.
    let rust = matches!(crate::detect::detect(&spec.dir), Ok(PackKind::Rust));
    let _token_file = match rust.then(|| TokenFile::write(&token)) {
        Some(Ok(file)) => {
            cmd.env(TokenFile::VAR, file.path());
            Some(file)
        }
        _ => {
            cmd.env("KINDGI_PACK_SERVICE_TOKEN", &token);
            None
        }
    };
    // Its own process group: a terminal's Ctrl-C reaches `kindgi dev` only, which then stops
    // the service in order (SIGTERM, drain) instead of racing it.
    #[cfg(unix)]
    cmd.process_group(0);
    let command = p.command_line();
    let mut child = cmd.spawn().map_err(|source| DevError::Spawn {
        command: command.clone(),
        dir: spec.dir.clone(),
        source,
    })?;
    let (port_tx, port_rx) = oneshot::channel();
    let news = Arc::new(Mutex::new(BootNews {
        port: Some(port_tx),
        problems: Vec::new(),
    }));
    let stderr_done = child.stderr.take().map(|stderr| {
        let news = news.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                relay_line(&line, &news);
            }
        })
    });
    if let Some(stdout) = child.stdout.take() {
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[pack] {line}");
            }
        });
    }
    let boot_err = |reason: String| DevError::Boot {
        pack: spec.pack.clone(),
        command: command.clone(),
        reason,
    };
    let limit = boot_timeout();
    let port = tokio::select! {
        port = port_rx => port.map_err(|_| boot_err("its stderr closed before a listening line".into()))?,
        status = child.wait() => {
            if let Some(t) = stderr_done {
                let _ = tokio::time::timeout(Duration::from_secs(2), t).await;
            }
            let problems = news.lock().map(|n| n.problems.clone()).unwrap_or_default();
            let status = status.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
            let detail = if problems.is_empty() {
                String::new()
            } else {
                format!(":\n  - {}", problems.join("\n  - "))
            };
            return Err(boot_err(format!("it exited ({status}) before listening{detail}")));
        }
        () = tokio::time::sleep(limit) => {
            let _ = child.kill().await;
            return Err(boot_err(format!("no listening line within {} ms", limit.as_millis())));
        }
    };
    let base_url = format!("http://127.0.0.1:{port}");
    let client = PackClient::new(PackClientConfig::new(base_url.clone(), token))
        .map_err(|e| boot_err(format!("cannot make its client: {e}")))?;
    let pid = child.id().unwrap_or(0);
    Ok((
        child,
        Arc::new(Service {
            base_url,
            pid,
            client,
        }),
    ))
}

/// Reads one stderr line: a service event (`listening`, `boot-failed`, …) is acted on; every
/// line is shown on our stderr, a JSON record as `[pack] level message`.
fn relay_line(line: &str, news: &Mutex<BootNews>) {
    let Ok(Value::Object(rec)) = serde_json::from_str::<Value>(line) else {
        eprintln!("[pack] {line}");
        return;
    };
    let event = rec
        .get("event")
        .or_else(|| rec.get("kind"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let problems: Vec<String> = rec
        .get("problems")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|p| {
                    p.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| p.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    if let Ok(mut n) = news.lock() {
        match event {
            "listening" => {
                if let Some(port) = rec.get("port").and_then(Value::as_u64)
                    && let Ok(port) = u16::try_from(port)
                    && let Some(tx) = n.port.take()
                {
                    let _ = tx.send(port);
                }
            }
            "boot-failed" | "config-invalid" => n.problems.extend(problems.iter().cloned()),
            _ => {}
        }
    }
    let level = rec.get("level").and_then(Value::as_str).unwrap_or("info");
    let message = rec
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| line.to_owned());
    eprintln!("[pack] {level} {message}");
    for p in problems {
        eprintln!("[pack]   - {p}");
    }
}
