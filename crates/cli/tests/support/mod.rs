//! What the `kindgi server` end-to-end tests share: the real `kindgi server` on a free
//! loopback port ([`Server`]), a tenant admin's key from `kindgi tokens create --database`
//! ([`create_token`]), and a Rust pack's own service process ([`PackService`]).
//! (`kindgi dev` tests share `dev_common`, the `kindgi runs` client tests `api_common`.)
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead as _, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

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

/// `target/debug/<name>`, which must be built (`cargo build -p <name>`).
pub fn built(name: &str) -> PathBuf {
    let p = repo_root().join("target/debug").join(name);
    assert!(
        p.is_file(),
        "{} is not built (cargo build -p {name})",
        p.display()
    );
    p
}

/// Collects what a child writes on `from` in the background.
pub fn drain(mut from: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let sink = Arc::new(Mutex::new(String::new()));
    let s = sink.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            s.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    sink
}

/// A running `kindgi server --listen 127.0.0.1:0`; killed on drop.
pub struct Server {
    child: Child,
    pub url: String,
    /// The first line it printed on stdout (the one naming its address).
    pub listening_line: String,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// `kindgi server` over `database`, nothing else.
    pub fn start(database: &str) -> Server {
        Server::start_with(database, &[], &[])
    }

    /// `kindgi server` over `database` with `extra` arguments and `envs` set (and
    /// `KINDGI_MODEL` unset, so the outer environment picks no model); waits for the first
    /// stdout line and reads the address from it.
    pub fn start_with(database: &str, extra: &[&str], envs: &[(&str, &str)]) -> Server {
        let mut child = Command::new(BIN)
            .args(["server", "--listen", "127.0.0.1:0", "--database", database])
            .args(extra)
            .envs(envs.iter().copied())
            .env_remove("KINDGI_MODEL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = drain(child.stderr.take().unwrap());
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some(url) = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .map(str::to_owned)
        else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "kindgi server did not start: {line:?}\nstderr:\n{}",
                stderr.lock().unwrap()
            );
        };
        Server {
            child,
            url,
            listening_line: line,
            stderr,
        }
    }

    /// Everything it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// SIGTERM; it must exit 0 within 20 s.
    pub fn stop(mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "exit {status:?}; stderr:\n{}",
                    self.stderr()
                );
                return;
            }
            assert!(
                Instant::now() < deadline,
                "kindgi server did not stop on SIGTERM; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL: no drain, no cleanup.
    pub fn kill9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A key `kindgi tokens create --database` printed, and its id (printed on stderr).
pub struct CreatedToken {
    pub key: String,
    pub key_id: String,
}

/// `kindgi tokens create --database DATABASE --tenant TENANT`: a tenant admin's key.
pub fn create_token(database: &str, tenant: &str) -> CreatedToken {
    let o = Command::new(BIN)
        .args([
            "tokens",
            "create",
            "--database",
            database,
            "--tenant",
            tenant,
        ])
        .env_remove("KINDGI_API_TOKEN")
        .env_remove("KINDGI_API_URL")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let key = String::from_utf8(o.stdout).unwrap().trim().to_owned();
    assert!(
        key.starts_with("kgi_") && !key.contains(char::is_whitespace),
        "{key}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    let key_id = stderr
        .split(|c: char| !c.is_ascii_hexdigit())
        .find(|w| w.len() == 16)
        .unwrap_or_else(|| panic!("no key id in {stderr:?}"))
        .to_owned();
    CreatedToken { key, key_id }
}

/// A Rust pack's service process (`EXE serve --index INDEX`); killed on drop.
pub struct PackService {
    child: Child,
    pub port: u16,
}

impl PackService {
    /// `exe serve --index index` with the service token `token`, on `port` (0: a free one);
    /// waits for its `listening` line.
    pub fn start(exe: &Path, index: &Path, token: &str, port: u16) -> PackService {
        let mut child = Command::new(exe)
            .args(["serve", "--index"])
            .arg(index)
            .env("KINDGI_PACK_SERVICE_TOKEN", token)
            .env("PORT", port.to_string())
            .env("KINDGI_LOG_FORMAT", "json")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let port = loop {
            let line = lines
                .next()
                .expect("the pack service exited before listening")
                .unwrap();
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && (v["kind"] == "listening" || v["event"] == "listening")
            {
                break u16::try_from(v["port"].as_u64().unwrap()).unwrap();
            }
        };
        // Keep reading, so a chatty service never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        PackService { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// SIGKILL, mid-whatever.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PackService {
    fn drop(&mut self) {
        self.kill9();
    }
}
