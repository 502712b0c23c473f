//! An in-process pack service on 127.0.0.1:0 for the service tests: a small pack written
//! with the SDK, a log sink to read its records, and raw-HTTP helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use kindgi_pack::log::{LogConfig, Logger};
use kindgi_pack::sdk::{Check, CheckResult, Pack};
use kindgi_pack::service::{IndexFile, RunningService, ServiceOptions, start};
use kindgi_tools::{Handler, HandlerError, Tool};
use serde_json::{Value, json};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub const TOKEN: &str = "test-token-0123456789";

#[derive(Clone, Default)]
pub struct Sink(pub Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    pub fn records(&self) -> Vec<Value> {
        self.text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn events(&self, event: &str) -> Vec<Value> {
        self.records()
            .into_iter()
            .filter(|r| r["event"] == event)
            .collect()
    }

    /// Waits (up to 5 s) for a record matching `pred`.
    pub async fn wait_for(&self, pred: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..500 {
            if let Some(r) = self.records().into_iter().find(|r| pred(r)) {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no matching record in:\n{}", self.text());
    }
}

pub fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Value, kindgi_tools::ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    Arc::new(move |input, ctx| Box::pin(f(input, ctx)))
}

pub fn tool(id: &str, version: &str, input: Value, output: Value, h: Handler) -> Tool {
    Tool::define(id)
        .version(version)
        .description("test tool")
        .input(input)
        .output(output)
        .mutating(false)
        .raw_handler(h)
        .build()
        .unwrap()
}

/// The test pack: echo (1.0.0 and 2.0.0 when `two_echoes`), sleep, hold (released by a
/// file), throws, panics, bad-output, defaults, context, and two checks.
pub fn pack(two_echoes: bool) -> Pack {
    let echo_in = json!({"type":"object","properties":{"message":{"type":"string","minLength":1}},"required":["message"],"additionalProperties":false});
    let echo_out = json!({"type":"object","properties":{"message":{"type":"string"},"version":{"type":"string"}},"required":["message"]});
    let obj = json!({"type":"object"});
    let mut pack = Pack::new("test", "1.0.0")
        .tool("t/echo.rs", tool("test.echo", "1.0.0", echo_in.clone(), echo_out.clone(), handler(|i, _| async move {
            Ok(json!({"message": i["message"]}))
        })))
        .tool("t/sleep.rs", tool("test.sleep", "1.0.0", json!({"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}), obj.clone(), handler(|i, ctx| async move {
            let ms = i["ms"].as_u64().unwrap_or(0);
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                () = ctx.signal.cancelled() => {}
            }
            Ok(json!({"slept": ms}))
        })))
        .tool("t/stubborn.rs", tool("test.stubborn", "1.0.0", obj.clone(), obj.clone(), handler(|i, _| async move {
            // Ignores its signal: finishes late.
            tokio::time::sleep(Duration::from_millis(i["ms"].as_u64().unwrap_or(300))).await;
            Ok(json!({}))
        })))
        .tool("t/hold.rs", tool("test.hold", "1.0.0", obj.clone(), obj.clone(), handler(|i, ctx| async move {
            let release = i["release"].as_str().unwrap_or_default().to_owned();
            loop {
                if std::path::Path::new(&release).exists() {
                    return Ok(json!({"released": true}));
                }
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(5)) => {}
                    () = ctx.signal.cancelled() => return Ok(json!({"released": false})),
                }
            }
        })))
        .tool("t/throws.rs", tool("test.throws", "1.0.0", obj.clone(), obj.clone(), handler(|_, _| async move {
            Err(HandlerError::msg("boom"))
        })))
        .tool("t/panics.rs", tool("test.panics", "1.0.0", obj.clone(), obj.clone(), handler(|_, _| async move {
            if true { panic!("kaboom") }
            Ok(json!({}))
        })))
        .tool("t/bad_output.rs", tool("test.bad-output", "1.0.0", obj.clone(), json!({"type":"object","properties":{"message":{"type":"string"}}}), handler(|_, _| async move {
            Ok(json!({"message": 7}))
        })))
        .tool("t/defaults.rs", tool("test.defaults", "1.0.0",
            json!({"type":"object","properties":{"name":{"type":"string"},"greeting":{"type":"string","default":"Hello"},"options":{"type":"object","default":{},"properties":{"loud":{"type":"boolean","default":false}}}},"required":["name"]}),
            obj.clone(), handler(|i, _| async move { Ok(i) })))
        .tool("t/context.rs", tool("test.context", "1.0.0", obj.clone(), obj.clone(), handler(|_, ctx| async move {
            let raw = kindgi_pack::sdk::call_context().map(|c| Value::Object((*c).clone())).unwrap_or_default();
            Ok(json!({"raw": raw, "tenant": ctx.tenant_id, "run": ctx.run_id, "env": ctx.env.map(|e| (*e).clone())}))
        })))
        .check("t/checks.rs", Check::define("test.min-length").check_id("test.checks.min-length")
            .config_schema(json!({"type":"object","properties":{"minLength":{"type":"integer","minimum":0,"default":1}}}))
            .evaluate(|config, trace, _| async move {
                let min = config.get("minLength").and_then(Value::as_u64).unwrap_or(1);
                let len = trace["output"].as_str().map_or(0, |s| s.chars().count()) as u64;
                Ok(if len >= min { CheckResult::pass() } else { CheckResult::fail("too short") })
            }).build().unwrap())
        .check("t/checks.rs", Check::define("test.waits")
            .evaluate(|_, _, ctx| async move {
                ctx.signal.cancelled().await;
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(CheckResult::pass())
            }).build().unwrap());
    if two_echoes {
        pack = pack.tool(
            "t/echo2.rs",
            tool(
                "test.echo",
                "2.0.0",
                echo_in,
                echo_out,
                handler(
                    |i, _| async move { Ok(json!({"message": i["message"], "version": "2.0.0"})) },
                ),
            ),
        );
    }
    pack
}

pub fn index_file(pack: &Pack, edit: impl FnOnce(&mut Value)) -> IndexFile {
    let index = pack
        .index("20261001.7", "2026-10-01T12:00:00.000Z", None)
        .unwrap();
    let mut value = serde_json::to_value(&index).unwrap();
    edit(&mut value);
    IndexFile::parse(value.to_string().as_bytes()).unwrap()
}

pub struct Svc {
    pub running: Option<RunningService>,
    pub base: String,
    pub port: u16,
    pub logs: Sink,
    pub http: reqwest::Client,
}

impl Svc {
    pub async fn start_with(
        pack: Pack,
        file: IndexFile,
        opts: impl FnOnce(&mut ServiceOptions),
    ) -> Svc {
        let logs = Sink::default();
        let logger = Arc::new(Logger::to_writer(
            LogConfig::default(),
            Box::new(logs.clone()),
        ));
        let mut options = ServiceOptions::loopback(TOKEN);
        opts(&mut options);
        let running = start(&file, &pack.registry(), options, logger)
            .await
            .unwrap();
        let port = running.port();
        Svc {
            running: Some(running),
            base: format!("http://127.0.0.1:{port}"),
            port,
            logs,
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap(),
        }
    }

    pub async fn start() -> Svc {
        let pack = pack(false);
        let file = index_file(&pack, |_| {});
        Self::start_with(pack, file, |_| {}).await
    }

    pub async fn invoke_with(&self, body: &Value, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut req = self
            .http
            .post(format!("{}/v1/invoke", self.base))
            .header("kindgi-pack-token", TOKEN)
            .header("content-type", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.body(body.to_string()).send().await.unwrap()
    }

    pub async fn invoke(&self, body: &Value) -> Value {
        let res = self.invoke_with(body, &[]).await;
        assert_eq!(res.status(), 200);
        res.json().await.unwrap()
    }
}

pub fn call(tool: &str, input: Value) -> Value {
    json!({"v": 2, "kind": "invoke", "tool": {"id": tool}, "input": input, "ctx": {"tenantId": "t-1", "runId": "run-1"}})
}

pub fn check(id: &str, config: Value, output: &str) -> Value {
    json!({"v": 2, "kind": "check-invoke", "check": {"id": id}, "config": config, "trace": {"output": output, "runId": "r", "tenantId": "t"}})
}

/// Sends raw bytes and reads the whole answer (until the server closes or `wait` passes).
pub async fn raw(port: u16, request: &[u8], wait: Duration) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(wait, stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}
