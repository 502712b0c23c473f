//! Starting the real MCP servers the tests talk to: the reference "everything" server (npm)
//! and a FastMCP server (official Python SDK), plus the misbehaving stdio script.
//! A missing reference fails the test under KINDGI_REQUIRE_REFERENCE=1, else skips it.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// `None` (after printing why) when a reference is missing and not required; panics when required.
pub fn reference(what: &str, found: Option<String>) -> Option<String> {
    kindgi_spec::testing::reference_or_skip(what, found, "not found")
}

/// The test servers (this file is also included by the CLI's tests, from another crate).
pub fn servers_dir() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers");
    if here.join("misbehaving.py").exists() {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kindgi-mcp/tests/servers")
    }
}

/// Node: the reference Node 24 when set up, else `node` on PATH.
pub fn node() -> String {
    if let Ok(dir) = std::env::var("KINDGI_NODE24_DIR") {
        let p = PathBuf::from(dir).join("bin/node");
        if p.exists() {
            return p.display().to_string();
        }
    }
    "node".to_owned()
}

/// The everything server's entry script.
pub fn everything_js() -> Option<String> {
    let found = std::env::var("KINDGI_NPM_NODE_MODULES")
        .ok()
        .and_then(|dir| {
            let p =
                PathBuf::from(dir).join("@modelcontextprotocol/server-everything/dist/index.js");
            p.exists().then(|| p.display().to_string())
        });
    reference(
        "@modelcontextprotocol/server-everything (KINDGI_NPM_NODE_MODULES)",
        found,
    )
}

/// The Python with the official `mcp` SDK.
pub fn python() -> Option<String> {
    let found = std::env::var("KINDGI_REFERENCE_PYTHON").ok().filter(|p| {
        Command::new(p)
            .args(["-c", "import mcp.server.fastmcp"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    reference(
        "the Python MCP SDK (KINDGI_REFERENCE_PYTHON with `mcp`)",
        found,
    )
}

/// Any Python 3 (for the SDK-free misbehaving server).
pub fn any_python() -> String {
    std::env::var("KINDGI_REFERENCE_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// Percent-encodes a stdio endpoint word.
pub fn word(s: &str) -> String {
    s.replace('%', "%25").replace(' ', "%20")
}

pub fn everything_stdio() -> Option<String> {
    let js = everything_js()?;
    Some(format!("mcp+stdio://{} {} stdio", word(&node()), word(&js)))
}

pub fn fastmcp_stdio() -> Option<String> {
    let py = python()?;
    Some(format!(
        "mcp+stdio://{} {} stdio",
        word(&py),
        word(
            &servers_dir()
                .join("fastmcp_server.py")
                .display()
                .to_string()
        )
    ))
}

pub fn misbehaving(mode: &str) -> String {
    format!(
        "mcp+stdio://{} {} {mode}",
        word(&any_python()),
        word(&servers_dir().join("misbehaving.py").display().to_string())
    )
}

/// A server process killed when dropped.
pub struct ServerProcess {
    child: Child,
    pub port: u16,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the everything server in `streamableHttp` or `sse` mode on a free port.
pub fn everything_http(mode: &str) -> Option<ServerProcess> {
    let js = everything_js()?;
    for _ in 0..5 {
        let port = free_port();
        let mut child = Command::new(node())
            .args([js.as_str(), mode])
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains(&format!("port {port}")) || line.contains("in use") {
                    let _ = tx.send(line);
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if !line.contains("in use") => return Some(ServerProcess { child, port }),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
    panic!("the everything server did not start in {mode} mode");
}

/// Starts the FastMCP server in `sse` or `streamable-http` mode; it prints the port it bound.
pub fn fastmcp_http(mode: &str) -> Option<ServerProcess> {
    let py = python()?;
    let mut child = Command::new(py)
        .arg(servers_dir().join("fastmcp_server.py"))
        .arg(mode)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(port) = line.strip_prefix("PORT ") {
                let _ = tx.send(port.trim().parse::<u16>().unwrap());
            }
        }
    });
    let port = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the FastMCP server did not report its port");
    Some(ServerProcess { child, port })
}
