//! The pack service child process: start it (`PORT=0`, a fresh random token, the
//! `listening` line within the boot timeout), forward its output, restart it when it dies
//! (three times, 500 ms apart; the budget is whole again once a service has stayed up for
//! 60 s), and stop it (SIGTERM, a grace period, then SIGKILL). It dies with `kindgi dev`
//! ([`crate::parent_death`]). What it writes is relayed with the secret values sent to it
//! masked (the slot's [`SecretMask`]).
//!
//! The process currently serving is published in [`ServiceSlot`]; the pack tools' caller
//! (`kindgi_pack_client::dispatch::PackServiceCaller`) reads it on every call, so a call made while no child serves is refused at once as
//! *unavailable* (it provably did not run) instead of waiting or guessing (pack-protocol
//! reference §10, the dev relay's rule).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use kindgi_pack_client::client::{PackClient, PackClientConfig};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use crate::detect::PackKind;
use crate::error::DevError;
use crate::prepare::Prepared;
use kindgi_pack::service::token::TokenFile;
use kindgi_tools::secret_mask::SecretMask;

/// How long a child may take to write its `listening` line (`KINDGI_DEV_BOOT_TIMEOUT_MS`).
pub const BOOT_TIMEOUT: Duration = Duration::from_secs(60);
/// Restarts after the child dies, and the pause before each.
pub const MAX_RESTARTS: u32 = 3;
pub const RESTART_PAUSE: Duration = Duration::from_millis(500);
/// A service that stayed up this long was healthy: its exit starts a fresh restart budget
/// (`KINDGI_DEV_RESTART_RESET_MS`). Long enough that a service crashing on every call or
/// every few seconds still runs out of restarts; short enough that a crash an hour into a
/// session is not counted against the morning's.
pub const RESTART_RESET: Duration = Duration::from_secs(60);
/// SIGTERM → SIGKILL: the service's own 8 s drain plus 2 s.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// The service serving now, as the pack dispatch reads it (re-exported from
/// `kindgi_pack_client::dispatch`, where the caller lives).
pub use kindgi_pack_client::dispatch::{ServiceSlot, Serving as Service};

/// A random token: 24 bytes, base64url (32 characters).
pub fn new_token() -> String {
    let bytes: [u8; 24] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Milliseconds from the environment variable `name` (a positive integer), else `default`.
fn env_millis(name: &str, default: Duration) -> Duration {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(default)
}

/// How a supervisor boots, restarts and gives up.
#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    /// How long a child may take to write its `listening` line.
    pub boot_timeout: Duration,
    /// Restarts in a row before giving up, and the pause before each.
    pub max_restarts: u32,
    pub restart_pause: Duration,
    /// A child up this long was healthy: when it exits the budget starts afresh.
    pub restart_reset: Duration,
    /// `kindgi dev` reloads on a saved file (else the give-up message says to restart it).
    pub watching: bool,
    /// Variables the operator passes on to the service besides the allowlist
    /// (`--pack-env NAME`; [`crate::pack_env`]).
    pub pack_env: Vec<String>,
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        Self {
            boot_timeout: BOOT_TIMEOUT,
            max_restarts: MAX_RESTARTS,
            restart_pause: RESTART_PAUSE,
            restart_reset: RESTART_RESET,
            watching: true,
            pack_env: Vec::new(),
        }
    }
}

impl SupervisorConfig {
    /// The defaults, with `KINDGI_DEV_BOOT_TIMEOUT_MS` and `KINDGI_DEV_RESTART_RESET_MS`
    /// honoured.
    pub fn from_env(watching: bool) -> Self {
        Self {
            boot_timeout: env_millis("KINDGI_DEV_BOOT_TIMEOUT_MS", BOOT_TIMEOUT),
            restart_reset: env_millis("KINDGI_DEV_RESTART_RESET_MS", RESTART_RESET),
            watching,
            ..Self::default()
        }
    }

    /// What to do once the restarts are used up.
    fn give_up_advice(&self) -> &'static str {
        if self.watching {
            "fix the pack and save a file to reload it"
        } else {
            "fix the pack and restart kindgi dev (it is not watching files: --no-watch)"
        }
    }
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
    config: SupervisorConfig,
    /// The secret values sent to the service (the slot's): masked in what it writes.
    mask: Arc<SecretMask>,
}

impl Supervisor {
    /// Boots the service of `prepared` and keeps it running, publishing it in `slot`
    /// ([`SupervisorConfig::from_env`], watching).
    pub async fn start(
        prepared: Prepared,
        dir: &Path,
        slot: Arc<ServiceSlot>,
    ) -> Result<Supervisor, DevError> {
        Supervisor::start_with(prepared, dir, slot, SupervisorConfig::from_env(true)).await
    }

    /// [`Supervisor::start`] with an explicit configuration.
    pub async fn start_with(
        prepared: Prepared,
        dir: &Path,
        slot: Arc<ServiceSlot>,
        config: SupervisorConfig,
    ) -> Result<Supervisor, DevError> {
        let spec = Spec {
            pack: prepared.index.pack_id.clone(),
            prepared,
            dir: dir.to_owned(),
            config,
            mask: slot.mask().clone(),
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
    let mut up_since = tokio::time::Instant::now();
    let max = spec.config.max_restarts;
    let pause = spec.config.restart_pause;
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
                if up_since.elapsed() >= spec.config.restart_reset {
                    // It ran healthy for a while: this is a new failure, not the same one.
                    restarts = 0;
                }
                while child.is_none() {
                    if restarts >= max {
                        let why = format!(
                            "the pack service of \"{}\" exited ({how}) and was restarted {max} times in a row; {}",
                            spec.pack,
                            spec.config.give_up_advice()
                        );
                        eprintln!("kindgi dev: {why}");
                        slot.set(None, &why);
                        break;
                    }
                    restarts += 1;
                    eprintln!(
                        "kindgi dev: the pack service exited ({how}); restarting it in {} ms ({restarts} of {max})",
                        pause.as_millis()
                    );
                    tokio::select! {
                        _ = &mut stop => return,
                        () = tokio::time::sleep(pause) => {}
                    }
                    match boot(&spec).await {
                        Ok((c, service)) => {
                            eprintln!("kindgi dev: pack service restarted at {}", service.base_url);
                            slot.set(Some(service), "");
                            child = Some(c);
                            up_since = tokio::time::Instant::now();
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
        .arg(p.module_root.as_deref().unwrap_or(&spec.dir))
        .arg("--host")
        .arg("127.0.0.1")
        .current_dir(&spec.dir)
        // An allowlist, never the runtime's own keys (crate::pack_env).
        .env_clear()
        .envs(crate::pack_env::service_env(
            std::env::vars_os(),
            p.index.env.as_ref(),
            &spec.config.pack_env,
        ))
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
    crate::parent_death::die_with_parent(&mut cmd);
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
        let mask = spec.mask.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                relay_line(&line, &news, &mask);
            }
        })
    });
    if let Some(stdout) = child.stdout.take() {
        let mask = spec.mask.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[pack] {}", mask.mask_str(&line));
            }
        });
    }
    let boot_err = |reason: String| DevError::Boot {
        pack: spec.pack.clone(),
        command: command.clone(),
        reason,
    };
    let limit = spec.config.boot_timeout;
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
    let pid = child.id();
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
/// line is shown on our stderr, a JSON record as `[pack] level message`, with the secret
/// values sent to the service masked (`mask`), whatever the pack's own redaction missed.
fn relay_line(line: &str, news: &Mutex<BootNews>, mask: &SecretMask) {
    let Ok(Value::Object(rec)) = serde_json::from_str::<Value>(line) else {
        eprintln!("[pack] {}", mask.mask_str(line));
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
                    let p = p
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| p.to_string());
                    mask.mask_str(&p).into_owned()
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
    eprintln!(
        "[pack] {} {}",
        mask.mask_str(level),
        mask.mask_str(&message)
    );
    for p in problems {
        eprintln!("[pack]   - {p}");
    }
}
