//! The catalog MCP server (tests/servers/fastmcp_catalog.py: resources, prompts, one tool),
//! started for a test and killed when dropped.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

/// A server process killed when dropped.
pub struct Catalog {
    child: std::process::Child,
    pub port: u16,
}

impl Drop for Catalog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts tests/servers/fastmcp_catalog.py (resources and prompts) over streamable HTTP.
pub fn catalog_server() -> Option<Catalog> {
    use std::io::BufRead as _;
    let py = crate::mcp_support::python()?;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/fastmcp_catalog.py");
    let mut child = std::process::Command::new(py)
        .arg(script)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().strip_prefix("PORT ").unwrap().parse().unwrap();
    Some(Catalog { child, port })
}
