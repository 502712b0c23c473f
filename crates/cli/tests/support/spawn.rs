//! Starting the processes the CLI's end-to-end tests talk to, written once: the `kindgi`
//! binary under test, `kindgi server` and `kindgi dev` command lines, a pack service's
//! `serve`, and the one spawner that waits for a process's `listening` line while draining
//! both of its pipes. `support`, `dev_common` and `api_common` each include this file
//! (`#[path]`), so a test file that declares any of them gets the same code.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead as _, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The `kindgi` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_kindgi");

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_owned()
}

/// Sends `sig` (`TERM`, `INT`, …) to `pid` with `kill`.
pub fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

/// Child pids of `pid` (Linux `/proc`).
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(s.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
        }
    }
    out
}

/// `kindgi server --listen 127.0.0.1:0 --database DATABASE EXTRA…`, with no listen address,
/// database or model taken from the outer environment.
pub fn server_command(database: impl AsRef<std::ffi::OsStr>, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["server", "--listen", "127.0.0.1:0", "--database"])
        .arg(database)
        .args(extra)
        .env_remove("KINDGI_LISTEN")
        .env_remove("KINDGI_DATABASE_URL")
        .env_remove("KINDGI_MODEL");
    cmd
}

/// `kindgi dev DIR --port 0 EXTRA…`, with no API address, key or model taken from the outer
/// environment.
pub fn dev_command(dir: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("dev")
        .arg(dir)
        .args(["--port", "0"])
        .args(extra)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .env_remove("KINDGI_MODEL");
    cmd
}

/// `EXE serve --index INDEX` with the service token `token` on `port` (0: a free one),
/// logging JSON lines (the `listening` one names the port).
pub fn pack_command(exe: &Path, index: &Path, token: &str, port: u16) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(["serve", "--index"])
        .arg(index)
        .env("KINDGI_PACK_SERVICE_TOKEN", token)
        .env("PORT", port.to_string())
        .env("KINDGI_LOG_FORMAT", "json");
    cmd
}

/// The address in `kindgi server`'s first line (`kindgi server listening on http://…`).
pub fn server_listening(line: &str) -> Option<String> {
    let rest = line.strip_prefix("kindgi server listening on http://")?;
    Some(rest.split_whitespace().next()?.to_owned())
}

/// The URL in `kindgi dev`'s `kindgi dev: listening on …` line.
pub fn dev_listening(line: &str) -> Option<String> {
    line.strip_prefix("kindgi dev: listening on ")
        .map(|url| url.trim().to_owned())
}

/// `127.0.0.1:PORT` from a pack service's JSON `listening` record.
pub fn pack_listening(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    (v["event"] == "listening" || v["kind"] == "listening")
        .then(|| format!("127.0.0.1:{}", v["port"]))
}

/// Which pipe carries a process's `listening` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    Stdout,
    Stderr,
}

/// A process that printed its `listening` line.
pub struct Listening {
    pub child: Child,
    /// What the `listening` parser picked out of the line.
    pub addr: String,
    /// The line itself.
    pub line: String,
    /// Every later line of both pipes, as they come (until both close).
    pub lines: mpsc::Receiver<String>,
    /// Everything the other pipe wrote so far (stderr when stdout is watched).
    pub other: Arc<Mutex<String>>,
}

/// Spawns `cmd` (stdin closed, both pipes read to the end in the background, so a chatty
/// child never blocks) and waits up to `within` for a line of `watch` that `listening`
/// picks an address out of. Panics, with what the child wrote, if it exits or stays silent
/// first.
pub fn spawn_until_listening(
    mut cmd: Command,
    watch: Watch,
    listening: impl Fn(&str) -> Option<String>,
    within: Duration,
) -> Listening {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let stdout: Box<dyn Read + Send> = Box::new(child.stdout.take().unwrap());
    let stderr: Box<dyn Read + Send> = Box::new(child.stderr.take().unwrap());
    let (watched, other) = match watch {
        Watch::Stdout => (stdout, stderr),
        Watch::Stderr => (stderr, stdout),
    };
    let (tx, rx) = mpsc::channel();
    let (watched_tx, watched_rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Reading goes on even when nobody listens any more.
        for line in BufReader::new(watched).lines() {
            let Ok(line) = line else { break };
            let _ = watched_tx.send(line);
        }
    });
    let other_sink = Arc::new(Mutex::new(String::new()));
    let sink = other_sink.clone();
    let other_tx = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(other).lines() {
            let Ok(line) = line else { break };
            {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
            let _ = other_tx.send(line);
        }
    });
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match watched_rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(addr) = listening(&line) {
                    // The watched pipe's later lines join the other pipe's in `lines`.
                    std::thread::spawn(move || {
                        for line in watched_rx {
                            let _ = tx.send(line);
                        }
                    });
                    return Listening {
                        child,
                        addr,
                        line,
                        lines: rx,
                        other: other_sink,
                    };
                }
            }
            Err(_) => {
                let _ = child.kill();
                let status = child.wait();
                // Let the reader catch the last of what it wrote.
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "{cmd:?} never listened ({status:?}); its other output:\n{}",
                    other_sink.lock().unwrap()
                );
            }
        }
    }
}

/// The lines that came after `listening`, until both pipes closed (or 10 s of silence).
pub fn rest_of(lines: &mpsc::Receiver<String>) -> Vec<String> {
    let mut rest = Vec::new();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(10)) {
        rest.push(line);
    }
    rest
}

/// Waits up to `bound` for `child` to exit (then kills it: `None`).
pub fn exit_within(child: &mut Child, bound: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + bound;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}
