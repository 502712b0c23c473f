//! Starting and watching the pack service under test: its command line with the index
//! substituted, its environment, its stdout/stderr lines, its `listening` port, SIGTERM.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

/// How long a service may take to write `listening` (the reference supervisor's boot timeout).
pub const BOOT_TIMEOUT: Duration = Duration::from_secs(60);

/// The command under test, split at the `--index` argument so the kit can substitute it.
#[derive(Debug, Clone)]
pub struct ServiceCommand {
    pub program: String,
    /// Arguments with `--index` (and its value), `--module-root` and `--host` taken out.
    pub args: Vec<String>,
    pub index: PathBuf,
    pub module_root: PathBuf,
    pub host: Option<String>,
}

/// Why a command cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("no command: pass the pack service's command after `--`")]
    Empty,
    #[error(
        "the command has no `--index PATH`: the kit needs the base index path to substitute its variants"
    )]
    NoIndex,
    #[error("`{0}` needs a value")]
    MissingValue(String),
}

impl ServiceCommand {
    /// Splits `argv` (program first).
    pub fn parse(argv: &[String]) -> Result<Self, CommandError> {
        let (program, rest) = argv.split_first().ok_or(CommandError::Empty)?;
        let mut args = Vec::new();
        let mut index = None;
        let mut module_root = None;
        let mut host = None;
        let mut it = rest.iter();
        while let Some(arg) = it.next() {
            let mut take = |name: &str| -> Result<Option<String>, CommandError> {
                if arg == name {
                    return it
                        .next()
                        .cloned()
                        .map(Some)
                        .ok_or_else(|| CommandError::MissingValue(name.to_owned()));
                }
                Ok(arg.strip_prefix(&format!("{name}=")).map(str::to_owned))
            };
            if let Some(v) = take("--index")? {
                index = Some(PathBuf::from(v));
            } else if let Some(v) = take("--module-root")? {
                module_root = Some(PathBuf::from(v));
            } else if let Some(v) = take("--host")? {
                host = Some(v);
            } else {
                args.push(arg.clone());
            }
        }
        let index = index.ok_or(CommandError::NoIndex)?;
        let module_root = module_root.unwrap_or_else(|| {
            index
                .parent()
                .map(Path::to_path_buf)
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or_else(|| PathBuf::from("."))
        });
        Ok(Self {
            program: program.clone(),
            args,
            index,
            module_root,
            host,
        })
    }

    /// A shipped variant beside the base index: `index.json` → `index.<name>.json`.
    pub fn sibling_variant(&self, name: &str) -> PathBuf {
        let stem = self
            .index
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "index".to_owned());
        let ext = self
            .index
            .extension()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "json".to_owned());
        self.index.with_file_name(format!("{stem}.{name}.{ext}"))
    }
}

/// One start of the service: which index, which environment changes, which host.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    pub index: Option<PathBuf>,
    /// Variables set on top of the inherited environment (after the kit's own).
    pub env: BTreeMap<String, String>,
    /// Variables removed (e.g. the token, to test it missing).
    pub env_remove: Vec<String>,
    /// `--host` value instead of the command's (or `127.0.0.1`).
    pub host: Option<String>,
}

/// A random token: 32 random bytes, base64url without padding (43 characters).
pub fn random_token() -> String {
    let bytes: [u8; 32] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Lines a process wrote, shared with the reader tasks.
#[derive(Debug, Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>);

impl Lines {
    pub fn snapshot(&self) -> Vec<String> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }
    fn push(&self, line: String) {
        if let Ok(mut l) = self.0.lock() {
            l.push(line);
        }
    }
    /// The JSON objects among the lines.
    pub fn records(&self) -> Vec<Value> {
        self.snapshot()
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(Value::is_object)
            .collect()
    }
    /// Waits until a line satisfies `pred`, up to `timeout`.
    pub async fn wait_for(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let until = Instant::now() + timeout;
        loop {
            if let Some(l) = self.snapshot().into_iter().find(|l| pred(l)) {
                return Some(l);
            }
            if Instant::now() >= until {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    /// Waits until a record satisfies `pred`, up to `timeout`.
    pub async fn wait_record(
        &self,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let until = Instant::now() + timeout;
        loop {
            if let Some(r) = self.records().into_iter().find(|r| pred(r)) {
                return Some(r);
            }
            if Instant::now() >= until {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The service event a line is (`listening`, `call`, …): a record's `event` with
/// `subsystem:"pack"`, else a bare object's `kind`.
pub fn event_of(record: &Value) -> Option<&str> {
    if record.get("subsystem").and_then(Value::as_str) == Some("pack")
        && let Some(e) = record.get("event").and_then(Value::as_str)
    {
        return Some(e);
    }
    record.get("kind").and_then(Value::as_str)
}

/// A started process (booted or not).
#[derive(Debug)]
pub struct Process {
    child: Child,
    pub stdout: Lines,
    pub stderr: Lines,
    pub token: String,
    pub started: Instant,
}

/// A service that wrote `listening`.
#[derive(Debug)]
pub struct Service {
    pub process: Process,
    pub port: u16,
    pub base: String,
    /// Time from spawn to the `listening` line.
    pub boot: Duration,
}

/// How a process ended.
#[derive(Debug, Clone)]
pub struct Exit {
    pub code: Option<i32>,
    pub after: Duration,
}

impl ServiceCommand {
    /// Spawns the command for `launch` with `token` (raw: the kit may pass a bad one).
    pub fn spawn(&self, launch: &Launch, token: &str) -> std::io::Result<Process> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args);
        let index = launch.index.as_deref().unwrap_or(&self.index);
        cmd.arg("--index").arg(index);
        cmd.arg("--module-root").arg(&self.module_root);
        let host = launch
            .host
            .clone()
            .or_else(|| self.host.clone())
            .unwrap_or_else(|| "127.0.0.1".to_owned());
        cmd.arg("--host").arg(host);
        // The kit's own environment, minus anything that would configure the service
        // behind the checks' back.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("KINDGI_") || name.starts_with("CONFORMANCE_") || name == "PORT" {
                cmd.env_remove(name.as_ref());
            }
        }
        cmd.env("PORT", "0");
        cmd.env("KINDGI_PACK_SERVICE_TOKEN", token);
        cmd.env("KINDGI_LOG_FORMAT", "json");
        cmd.envs(&launch.env);
        for name in &launch.env_remove {
            cmd.env_remove(name);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let stdout = Lines::default();
        let stderr = Lines::default();
        if let Some(out) = child.stdout.take() {
            tokio::spawn(collect_lines(out, stdout.clone()));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(collect_lines(err, stderr.clone()));
        }
        Ok(Process {
            child,
            stdout,
            stderr,
            token: token.trim().to_owned(),
            started: Instant::now(),
        })
    }

    /// Spawns and waits for `listening`; the error says what the process wrote instead.
    pub async fn start(&self, launch: &Launch, token: &str) -> Result<Service, String> {
        let mut process = self
            .spawn(launch, token)
            .map_err(|e| format!("could not start `{}`: {e}", self.program))?;
        let until = Instant::now() + BOOT_TIMEOUT;
        loop {
            if let Some(port) = process.stderr.records().iter().find_map(|r| {
                (event_of(r) == Some("listening"))
                    .then(|| r.get("port").and_then(Value::as_u64))
                    .flatten()
            }) {
                let boot = process.started.elapsed();
                let port = u16::try_from(port)
                    .map_err(|_| format!("listening port {port} is not a port"))?;
                return Ok(Service {
                    base: format!("http://127.0.0.1:{port}"),
                    process,
                    port,
                    boot,
                });
            }
            if let Ok(Some(status)) = process.child.try_wait() {
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(format!(
                    "the service exited ({status}) before writing `listening`; stderr: {}",
                    tail(&process.stderr.snapshot())
                ));
            }
            if Instant::now() >= until {
                return Err(format!(
                    "no `listening` line within {} s; stderr: {}",
                    BOOT_TIMEOUT.as_secs(),
                    tail(&process.stderr.snapshot())
                ));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Process {
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends SIGTERM (through `kill`, so no unsafe code is needed).
    pub async fn terminate(&mut self) -> Result<(), String> {
        let pid = self.child.id().ok_or("the process already exited")?;
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .await
            .map_err(|e| format!("could not run kill: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("kill -TERM {pid} failed: {status}"))
        }
    }

    /// Waits for the process to exit, up to `timeout`; `None` when it is still running.
    pub async fn wait(&mut self, timeout: Duration) -> Option<Exit> {
        let status = tokio::time::timeout(timeout, self.child.wait())
            .await
            .ok()?
            .ok()?;
        // Let the reader tasks drain the pipes.
        tokio::time::sleep(Duration::from_millis(50)).await;
        Some(Exit {
            code: status.code(),
            after: self.started.elapsed(),
        })
    }

    /// SIGTERM, then SIGKILL after `grace`.
    pub async fn stop(&mut self, grace: Duration) {
        if self.terminate().await.is_ok() && self.wait(grace).await.is_some() {
            return;
        }
        let _ = self.child.kill().await;
    }
}

/// Collects every line `reader` yields into `lines` until end of file. Bytes that are not
/// UTF-8 are replaced, not a reason to stop: a service whose pipe is no longer drained
/// blocks on its next log line, and the check waiting on it would fail for the wrong reason.
async fn collect_lines(reader: impl AsyncRead + Unpin, lines: Lines) {
    let mut reader = BufReader::new(reader);
    while let Some(line) = next_lossy_line(&mut reader).await {
        lines.push(line);
    }
}

/// The next `\n`- or `\r\n`-ended line (the last may lack one), lossily decoded; `None` at
/// end of file or on a read error.
async fn next_lossy_line(reader: &mut (impl AsyncBufRead + Unpin)) -> Option<String> {
    let mut bytes = Vec::new();
    match reader.read_until(b'\n', &mut bytes).await {
        Ok(0) | Err(_) => None,
        Ok(_) => {
            let line = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            Some(String::from_utf8_lossy(line).into_owned())
        }
    }
}

/// The last lines of a stream, for error messages.
pub fn tail(lines: &[String]) -> String {
    let start = lines.len().saturating_sub(3);
    let joined = lines[start..].join(" | ");
    if joined.is_empty() {
        "(nothing)".to_owned()
    } else if joined.len() > 600 {
        format!("{}…", joined.chars().take(600).collect::<String>())
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_that_are_not_utf8_do_not_stop_the_collector() {
        // `lines()` stopped at the first invalid line and left the pipe undrained.
        let lines = Lines::default();
        collect_lines(&b"{\"a\":1}\r\n\xff oops\nlast"[..], lines.clone()).await;
        assert_eq!(lines.snapshot(), vec!["{\"a\":1}", "\u{fffd} oops", "last"]);
    }
}
