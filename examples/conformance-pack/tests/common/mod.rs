//! The fixture binary as a child process started the way `kindgi dev` starts a Rust pack
//! (`serve --index … --module-root … --host 127.0.0.1`, `PORT=0`, JSON logs, the env check
//! set to warn), and plain HTTP/1.1 calls to it over loopback.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// The fixture binary; `PACK_FIXTURE_BIN` points the tests at another build (a release
/// build, or an older one, to compare figures).
pub fn bin() -> PathBuf {
    std::env::var_os("PACK_FIXTURE_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_conformance-pack")),
        PathBuf::from,
    )
}

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A running fixture; killed when dropped.
pub struct Fixture {
    pub child: Child,
    pub port: u16,
    /// Every stderr line after `listening`, as it arrives.
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Fixture {
    /// The stderr lines after `listening` so far.
    pub fn lines(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the fixture on `index` (a file in the fixture's folder) with `env` added.
pub fn start(index: &str, env: &[(&str, &std::ffi::OsStr)]) -> Fixture {
    let d = dir();
    let mut cmd = Command::new(bin());
    cmd.arg("serve")
        .arg("--index")
        .arg(d.join(index))
        .arg("--module-root")
        .arg(&d)
        .args(["--host", "127.0.0.1"])
        .current_dir(&d)
        .env("PORT", "0")
        .env("KINDGI_LOG_FORMAT", "json")
        .env("KINDGI_PACK_ENV_CHECK", "warn")
        .env_remove("KINDGI_PACK_SERVICE_TOKEN")
        .env_remove("KINDGI_PACK_SERVICE_TOKEN_FILE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut svc = Fixture {
        child: cmd.spawn().unwrap(),
        port: 0,
        stderr: Arc::default(),
    };
    let stderr = svc.child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    loop {
        let Ok(line) = rx.recv_timeout(Duration::from_secs(30)) else {
            panic!("no listening line; stderr: {seen:?}");
        };
        let record: Value = serde_json::from_str(&line).unwrap_or_default();
        if record["event"] == "listening" {
            svc.port = record["port"].as_u64().unwrap() as u16;
            // Keep draining stderr so the child never blocks on a full pipe.
            let kept = svc.stderr.clone();
            std::thread::spawn(move || {
                while let Ok(line) = rx.recv() {
                    kept.lock().unwrap().push(line);
                }
            });
            return svc;
        }
        seen.push(line);
    }
}

/// POSTs `body` to `/v1/invoke` with `token`; the status and the body as JSON.
pub fn invoke(port: u16, token: &str, body: &[u8]) -> (u16, Value) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST /v1/invoke HTTP/1.1\r\nhost: x\r\nkindgi-pack-token: {token}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}
