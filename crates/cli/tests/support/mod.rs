//! What the `kindgi server` end-to-end tests share: the real `kindgi server` on a free
//! loopback port ([`Server`]), a tenant admin's key from `kindgi tokens create --database`
//! ([`create_token`]), and a Rust pack's own service process ([`PackService`]), both started
//! by [`spawn`], which `dev_common` and `api_common` share too. (`kindgi dev` tests share
//! `dev_common`, the `kindgi runs` client tests `api_common`.)
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod spawn;

pub use spawn::{BIN, repo_root};
use spawn::{
    Watch, pack_command, pack_listening, server_command, server_listening, spawn_until_listening,
};

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
        let mut cmd = server_command(database, extra);
        cmd.envs(envs.iter().copied());
        let up = spawn_until_listening(
            cmd,
            Watch::Stdout,
            |line| server_listening(line).map(|addr| format!("http://{addr}")),
            Duration::from_secs(900),
        );
        Server {
            child: up.child,
            url: up.addr,
            listening_line: up.line,
            stderr: up.other,
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
        let up = spawn_until_listening(
            pack_command(exe, index, token, port),
            Watch::Stderr,
            pack_listening,
            Duration::from_secs(900),
        );
        let port = up
            .addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {:?}", up.line));
        PackService {
            child: up.child,
            port,
        }
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
