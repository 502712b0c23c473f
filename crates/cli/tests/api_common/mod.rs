//! Shared parts of the API command tests: a scripted HTTP server on loopback that records
//! every request (method, path with query, headers, body) and answers from a closure, and a
//! runner for the `kindgi` binary in a folder with its own `HOME` and no `KINDGI_*`
//! variables unless given.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::Value;

// The same file as `support::spawn`: a test file that declares both modules compiles it
// twice, on purpose (one source, no copies).
#[allow(clippy::duplicate_mod)]
#[path = "../support/spawn.rs"]
pub mod spawn;

pub use spawn::BIN;

/// One request the server got.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

type Answer = dyn Fn(&Seen) -> (u16, String) + Send + Sync;

/// A scripted server.
pub struct Mock {
    pub url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Mock {
    pub fn start(answer: impl Fn(&Seen) -> (u16, String) + Send + Sync + 'static) -> Mock {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let answer: Arc<Answer> = Arc::new(answer);
        std::thread::spawn(move || {
            for stream in l.incoming() {
                let Ok(stream) = stream else { return };
                let log = log.clone();
                let answer = answer.clone();
                std::thread::spawn(move || serve_one(stream, &log, &*answer));
            }
        });
        Mock { url, seen }
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve_one(mut stream: std::net::TcpStream, log: &Mutex<Vec<Seen>>, answer: &Answer) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let mut body = vec![0u8; len];
    let _ = reader.read_exact(&mut body);
    let seen = Seen {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    log.lock().unwrap().push(seen.clone());
    let (status, body) = answer(&seen);
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// An error envelope.
pub fn envelope(code: &str, message: &str) -> String {
    serde_json::json!({"error": {"code": code, "message": message, "requestId": "req-1"}})
        .to_string()
}

#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or(Value::Null)
    }
}

/// Run `kindgi args` in `cwd` with `HOME=home` and only the `env` given of KINDGI_*.
pub fn kindgi(cwd: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .env_remove("KINDGI_DATABASE_URL");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Write `text` at `dir/name` with `mode`.
#[cfg(unix)]
pub fn write_file(dir: &Path, name: &str, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
}
