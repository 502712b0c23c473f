//! The pack protocol targets' parts: a real pack service (a small SDK pack) on a loopback
//! port, started once per fuzz process; raw HTTP/1.1 over a socket to it; and a loopback
//! server that answers the pack client with whatever bytes the input holds.

use crate::runtime;
use kindgi_pack::log::{LogConfig, Logger};
use kindgi_pack::sdk::{Check, CheckResult, Pack};
use kindgi_pack::service::{IndexFile, ServiceOptions, start};
use kindgi_tools::{Handler, Tool};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The pack token of the fuzzed service.
pub const TOKEN: &str = "fuzz-token-0123456789abcdef";

/// How long a raw exchange may take before it counts as a hang (the service's own header
/// and body timeouts are 10 s and 60 s; the harness never leaves a request half-sent).
pub const ANSWER_WAIT: Duration = Duration::from_secs(8);

fn handler(f: fn(Value) -> Value) -> Handler {
    Arc::new(move |input, _ctx| Box::pin(async move { Ok(f(input)) }))
}

fn tool(id: &str, input: Value, output: Value, f: fn(Value) -> Value) -> Result<Tool, String> {
    Tool::define(id)
        .version("1.0.0")
        .description("fuzz tool")
        .input(input)
        .output(output)
        .mutating(false)
        .raw_handler(handler(f))
        .build()
        .map_err(|e| format!("{id}: {e}"))
}

/// The fuzzed pack: an echo with a strict input, a tool with defaults, one that returns its
/// input as output (so output validation sees fuzzed data), and a guardrail check.
fn pack() -> Result<Pack, String> {
    let echo_in = json!({"type": "object", "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 64}},
        "required": ["message"], "additionalProperties": false});
    let echo_out = json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]});
    let defaults_in = json!({"type": "object", "properties": {"name": {"type": "string"},
        "greeting": {"type": "string", "default": "Hello"}, "n": {"type": "integer", "minimum": 0, "default": 1}}});
    let mirror_out = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    let check = Check::define("fuzz.min-length")
        .check_id("fuzz.checks.min-length")
        .config_schema(json!({"type": "object", "properties": {"minLength": {"type": "integer", "minimum": 0, "default": 1}}}))
        .evaluate(|config, trace, _| async move {
            let min = config.get("minLength").and_then(Value::as_u64).unwrap_or(1);
            let len = trace["output"].as_str().map_or(0, |s| s.chars().count()) as u64;
            Ok(if len >= min { CheckResult::pass() } else { CheckResult::fail("too short") })
        })
        .build()
        .map_err(|e| format!("the check: {e}"))?;
    Ok(Pack::new("fuzz", "1.0.0")
        .tool(
            "t/echo.rs",
            tool(
                "fuzz.echo",
                echo_in,
                echo_out,
                |i| json!({"message": i["message"]}),
            )?,
        )
        .tool(
            "t/defaults.rs",
            tool(
                "fuzz.defaults",
                defaults_in,
                json!({"type": "object"}),
                |i| i,
            )?,
        )
        .tool(
            "t/mirror.rs",
            tool("fuzz.mirror", json!({"type": "object"}), mirror_out, |i| i)?,
        )
        .check("t/checks.rs", check))
}

/// The address of the process's pack service (started on first use).
pub fn service() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let pack = match pack() {
            Ok(p) => p,
            Err(e) => panic!("the fuzz pack does not build: {e}"),
        };
        let index = pack.index("20261001.1", "2026-10-01T12:00:00.000Z", None);
        let text = index
            .ok()
            .and_then(|i| serde_json::to_vec(&i).ok())
            .unwrap_or_default();
        let file = match IndexFile::parse(&text) {
            Ok(f) => f,
            Err(e) => panic!("the fuzz pack's index is refused: {e}"),
        };
        let logger = Arc::new(Logger::to_writer(
            LogConfig::default(),
            Box::new(std::io::sink()),
        ));
        let registry = pack.registry();
        let running = runtime().block_on(start(
            &file,
            &registry,
            ServiceOptions::loopback(TOKEN),
            logger,
        ));
        match running {
            Ok(r) => {
                let addr = r.addr;
                // Serves for the life of the process.
                std::mem::forget(r);
                addr
            }
            Err(e) => panic!("the fuzz pack service does not start: {e}"),
        }
    })
}

/// A parsed HTTP/1.1 answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `request` and reads the answer until the server closes; `None` when no complete
/// answer arrived within [`ANSWER_WAIT`].
pub fn exchange(addr: SocketAddr, request: &[u8]) -> Option<Answer> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(ANSWER_WAIT)).ok()?;
    stream.write_all(request).ok()?;
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    parse_answer(&out)
}

fn parse_answer(raw: &[u8]) -> Option<Answer> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()?
        .strip_prefix("HTTP/1.1 ")?
        .get(..3)?
        .parse()
        .ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut answer = Answer {
        status,
        headers,
        body: raw[end + 4..].to_vec(),
    };
    if let Some(n) = answer
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        if answer.body.len() < n {
            return None; // cut short
        }
        answer.body.truncate(n);
    }
    Some(answer)
}

/// A loopback HTTP server that answers every request with the bytes last given to
/// [`Scripted::set`], then closes the connection.
pub struct Scripted {
    pub addr: SocketAddr,
    answer: Arc<Mutex<Vec<u8>>>,
}

impl Scripted {
    /// The process's scripted server (started on first use).
    pub fn get() -> &'static Scripted {
        static SERVER: OnceLock<Scripted> = OnceLock::new();
        SERVER.get_or_init(|| {
            let listener = match TcpListener::bind("127.0.0.1:0") {
                Ok(l) => l,
                Err(e) => panic!("cannot bind the scripted server: {e}"),
            };
            let addr = match listener.local_addr() {
                Ok(a) => a,
                Err(e) => panic!("the scripted server has no address: {e}"),
            };
            let answer = Arc::new(Mutex::new(Vec::new()));
            let shared = answer.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let bytes = shared.lock().map(|a| a.clone()).unwrap_or_default();
                    let _ = answer_one(stream, &bytes);
                }
            });
            Scripted { addr, answer }
        })
    }

    pub fn set(&self, bytes: &[u8]) {
        if let Ok(mut a) = self.answer.lock() {
            a.clear();
            a.extend_from_slice(bytes);
        }
    }
}

/// Reads one whole request (headers, then `content-length` bytes), writes `bytes`, closes.
fn answer_one(mut stream: TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let body_start = loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        seen.extend_from_slice(&buf[..n]);
        if let Some(i) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&seen[..body_start]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while seen.len() < body_start + length {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    stream.write_all(bytes)?;
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Both)
}
