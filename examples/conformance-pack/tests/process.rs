//! The fixture binary as a process: the committed index files are what `index` writes, and
//! `serve` follows the process contract (records, config problems, boot failures, token
//! scrubbing, the env filter, SIGTERM drain, cancellation on disconnect, the cap).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Collected output lines of a child process.
type Lines = Arc<Mutex<Vec<String>>>;

const BIN: &str = env!("CARGO_BIN_EXE_conformance-pack");
const TOKEN: &str = "conformance-token-0123456789abcdef";

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn committed_indexes_are_what_index_writes() {
    for (file, variant) in [
        ("index.json", None),
        ("index.extras.json", Some("extras")),
        ("index.import-throws.json", Some("import-throws")),
    ] {
        let mut cmd = Command::new(BIN);
        cmd.arg("index");
        if let Some(v) = variant {
            cmd.args(["--variant", v]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let committed = std::fs::read(dir().join(file)).unwrap();
        assert!(
            out.stdout == committed,
            "{file} differs from `conformance-pack index`; regenerate it"
        );
        // A second build is byte-identical.
        let again = cmd.output().unwrap();
        assert_eq!(again.stdout, out.stdout);
    }
    let index: Value =
        serde_json::from_slice(&std::fs::read(dir().join("index.json")).unwrap()).unwrap();
    let ids: Vec<&str> = index["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "conformance.bad-output",
            "conformance.context",
            "conformance.defaults",
            "conformance.echo",
            "conformance.hold",
            "conformance.noisy",
            "conformance.process-env",
            "conformance.sleep",
            "conformance.throws",
        ]
    );
    assert!(
        index["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["version"] == "1.0.0")
    );
    let guardrails: Vec<&str> = index["guardrails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        guardrails,
        ["conformance.check-throws", "conformance.min-length"]
    );
    assert_eq!(
        index["agents"][0]["tools"],
        json!([{"id": "conformance.echo", "version": "1.0.0"}])
    );
    assert_eq!(index["flows"][0]["kernelPayloadVersion"], 1);
    assert_eq!(index["artifactVersion"], "20261001.7");
    assert_eq!(index["publishedAt"], "2026-10-01T12:00:00.000Z");
}

/// A running fixture service with its stdout/stderr lines collected.
struct Service {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<Vec<String>>>,
    stdout: Arc<Mutex<Vec<String>>>,
}

fn collect(
    stream: impl Read + Send + 'static,
    lines: Arc<Mutex<Vec<String>>>,
    tx: Option<mpsc::Sender<String>>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if let Some(tx) = &tx {
                let _ = tx.send(line.clone());
            }
            lines.lock().unwrap().push(line);
        }
    });
}

fn spawn(
    index: &str,
    env: &[(&str, &str)],
    extra_args: &[&str],
) -> (Child, Lines, Lines, mpsc::Receiver<String>) {
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .args(["--index", index, "--host", "127.0.0.1"])
        .args(extra_args);
    cmd.env("PORT", "0")
        .env("KINDGI_PACK_SERVICE_TOKEN", TOKEN)
        .env("KINDGI_LOG_FORMAT", "json");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    collect(child.stderr.take().unwrap(), stderr.clone(), Some(tx));
    collect(child.stdout.take().unwrap(), stdout.clone(), None);
    (child, stderr, stdout, rx)
}

impl Service {
    fn start(index: &str, env: &[(&str, &str)]) -> Service {
        let (child, stderr, stdout, rx) = spawn(index, env, &[]);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let line = rx
                .recv_timeout(deadline - Instant::now())
                .unwrap_or_else(|_| panic!("no listening line: {:?}", stderr.lock().unwrap()));
            let record: Value = serde_json::from_str(&line).unwrap();
            if record["event"] == "listening" {
                assert_eq!(record["kind"], "listening");
                assert_eq!(record["subsystem"], "pack");
                assert_eq!(record["level"], "info");
                assert_eq!(record["severity"], "INFO");
                assert_eq!(record["packId"], "conformance");
                assert!(record["time"].is_string());
                let port = record["port"].as_u64().unwrap() as u16;
                return Service {
                    child,
                    port,
                    stderr,
                    stdout,
                };
            }
        }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn records(&self) -> Vec<Value> {
        self.stderr
            .lock()
            .unwrap()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn wait_record(&self, pred: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..500 {
            if let Some(r) = self.records().into_iter().find(|r| pred(r)) {
                return r;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no matching record: {:?}", self.stderr.lock().unwrap());
    }

    fn wait_stdout(&self, line: &str) {
        for _ in 0..500 {
            if self.stdout.lock().unwrap().iter().any(|l| l == line) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no stdout line {line}: {:?}", self.stdout.lock().unwrap());
    }

    fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn wait_exit(&mut self, within: Duration) -> i32 {
        let until = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < until,
                "the service did not exit in {within:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn index(name: &str) -> String {
    dir().join(name).to_string_lossy().into_owned()
}

fn call(tool: &str, input: Value) -> Value {
    json!({"v": 2, "kind": "invoke", "tool": {"id": tool}, "input": input, "ctx": {"tenantId": "t-conformance", "runId": "run-conformance"}})
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

async fn invoke(svc: &Service, body: &Value, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = client()
        .post(format!("{}/v1/invoke", svc.base()))
        .header("kindgi-pack-token", TOKEN)
        .header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.body(body.to_string()).send().await.unwrap()
}

/// Runs `serve` expecting it to exit 1; returns its stderr records.
fn boot_fails(index: &str, env: &[(&str, &str)], args: &[&str]) -> Vec<Value> {
    let (mut child, stderr, _, _) = spawn(index, env, args);
    let status = child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(status.code(), Some(1), "{:?}", stderr.lock().unwrap());
    stderr
        .lock()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn configuration_problems_are_reported_together() {
    let base = index("index.json");
    let records = boot_fails(&base, &[("KINDGI_PACK_SERVICE_TOKEN", "")], &[]);
    assert_eq!(records[0]["event"], "config-invalid");
    assert_eq!(records[0]["kind"], "config-invalid");
    let records = boot_fails(&base, &[("KINDGI_PACK_SERVICE_TOKEN", "two words")], &[]);
    assert!(
        records[0]["problems"][0]
            .as_str()
            .unwrap()
            .contains("printable ASCII")
    );
    let records = boot_fails(
        &base,
        &[("PORT", "x"), ("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "0")],
        &[],
    );
    assert_eq!(
        records[0]["problems"],
        json!([
            "PORT must be a port number, got \"x\"",
            "KINDGI_PACK_SERVICE_MAX_CONCURRENCY must be a positive integer"
        ])
    );
    for (k, v) in [
        ("KINDGI_PACK_ENV_CHECK", "loose"),
        ("KINDGI_PACK_ENV_FILTER", "no"),
        ("KINDGI_LOG_LEVEL", "loud"),
    ] {
        let records = boot_fails(&base, &[(k, v)], &[]);
        assert_eq!(records[0]["event"], "config-invalid", "{k}");
        assert!(records[0].to_string().contains(k), "{k}: {records:?}");
    }
    let records = boot_fails(&base, &[], &["--host", ""]);
    assert!(
        records[0]["problems"]
            .as_array()
            .unwrap()
            .contains(&json!("--host needs an address"))
    );
}

#[test]
fn boot_failures() {
    let records = boot_fails(&index("index.import-throws.json"), &[], &[]);
    assert_eq!(records.last().unwrap()["event"], "boot-failed");
    assert!(
        records.last().unwrap()["problems"]
            .to_string()
            .contains("conformance.import-throws")
    );
    let records = boot_fails("/nonexistent/index.json", &[], &[]);
    assert!(
        records[0]["problems"][0]
            .as_str()
            .unwrap()
            .starts_with("Cannot read the pack index")
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut value: Value =
        serde_json::from_slice(&std::fs::read(index("index.json")).unwrap()).unwrap();
    value["v"] = json!(2);
    let v2 = tmp.path().join("v2.json");
    std::fs::write(&v2, value.to_string()).unwrap();
    let records = boot_fails(v2.to_str().unwrap(), &[], &[]);
    assert_eq!(
        records[0]["problems"],
        json!(["Index envelope v2 is not v1"])
    );
    value["v"] = json!(1);
    value["tools"].as_array_mut().unwrap().push(json!({"id":"conformance.ghost","version":"1.0.0","input":{},"output":{},"modulePath":"tools/does-not-exist.rs"}));
    let ghost = tmp.path().join("ghost.json");
    std::fs::write(&ghost, value.to_string()).unwrap();
    let records = boot_fails(ghost.to_str().unwrap(), &[], &[]);
    assert_eq!(
        records[0]["problems"],
        json!(["Missing module: tools/does-not-exist.rs"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_is_trimmed_and_scrubbed_and_env_is_filtered() {
    let svc = Service::start(
        &index("index.json"),
        &[
            ("KINDGI_PACK_SERVICE_TOKEN", &format!("{TOKEN}\n")),
            ("CONFORMANCE_UNDECLARED", "undeclared-value-42"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret-value"),
            ("K_SERVICE", "svc"),
            ("LC_MESSAGES", "C"),
        ],
    );
    let res = client()
        .get(format!("{}/v1/info", svc.base()))
        .header("kindgi-pack-token", TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let res = client()
        .get(format!("{}/v1/info", svc.base()))
        .header("kindgi-pack-token", format!("{TOKEN}x"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let out: Value = invoke(&svc, &call("conformance.process-env", json!({})), &[])
        .await
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = out["output"]["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(!names.contains(&"KINDGI_PACK_SERVICE_TOKEN"));
    assert!(!names.contains(&"CONFORMANCE_UNDECLARED"));
    assert!(!names.contains(&"AWS_SECRET_ACCESS_KEY"));
    for kept in [
        "K_SERVICE",
        "LC_MESSAGES",
        "PORT",
        "PATH",
        "KINDGI_LOG_FORMAT",
    ] {
        assert!(names.contains(&kept), "{kept} dropped: {names:?}");
    }
    let dropped = svc.wait_record(|r| r["event"] == "env-dropped");
    assert!(
        dropped["names"]
            .as_array()
            .unwrap()
            .contains(&json!("CONFORMANCE_UNDECLARED"))
    );
    let all = svc.stderr.lock().unwrap().join("\n");
    assert!(
        !all.contains("undeclared-value-42")
            && !all.contains("aws-secret-value")
            && !all.contains(TOKEN)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_noisy_stdout_and_trace_ids() {
    let svc = Service::start(&index("index.json"), &[]);
    let res = invoke(&svc, &call("conformance.noisy", json!({})), &[]).await;
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"v":2,"kind":"result","output":{"ok":true}})
    );
    svc.wait_stdout("noisy: a line on stdout");
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut body = call("conformance.echo", json!({"message": "hi"}));
    body["ctx"]["secrets"] = json!({"API_KEY": "s3cret-never-logged"});
    invoke(&svc, &body, &[("traceparent", tp)]).await;
    let r = svc.wait_record(|r| r["event"] == "call" && r["traceId"].is_string());
    assert_eq!(r["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_ne!(r["spanId"], "00f067aa0ba902b7");
    assert_eq!(r["spanId"].as_str().unwrap().len(), 16);
    assert_eq!(
        (
            r["tenantId"].clone(),
            r["runId"].clone(),
            r["toolId"].clone()
        ),
        (
            json!("t-conformance"),
            json!("run-conformance"),
            json!("conformance.echo")
        )
    );
    assert_eq!(
        (r["target"].clone(), r["outcome"].clone(), r["kind"].clone()),
        (json!("tool"), json!("ok"), json!("call"))
    );
    assert!(r["durationMs"].is_u64());
    let msg = r["message"].as_str().unwrap();
    assert!(
        msg.starts_with("tool conformance.echo ok ") && msg.ends_with("ms"),
        "{msg}"
    );
    let noisy = svc
        .records()
        .into_iter()
        .find(|r| r["event"] == "call" && r["id"] == "conformance.noisy")
        .unwrap();
    assert!(noisy.get("traceId").is_none() && noisy.get("spanId").is_none());
    assert!(
        !svc.stderr
            .lock()
            .unwrap()
            .join("\n")
            .contains("s3cret-never-logged")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_and_late_handlers() {
    let svc = Service::start(&index("index.extras.json"), &[]);
    let started = Instant::now();
    let out: Value = invoke(
        &svc,
        &call("conformance.sleep", json!({"ms": 5000})),
        &[("kindgi-timeout-ms", "300")],
    )
    .await
    .json()
    .await
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(out["code"], "deadline-exceeded");
    assert_eq!(out["toolId"], "conformance.sleep");
    assert_eq!(out["message"], "conformance.sleep passed its deadline");
    for bad in ["abc", "0", "-1"] {
        let out: Value = invoke(
            &svc,
            &call("conformance.sleep", json!({"ms": 50})),
            &[("kindgi-timeout-ms", bad)],
        )
        .await
        .json()
        .await
        .unwrap();
        assert_eq!(out["kind"], "result", "{bad}");
    }
    let body = json!({"v":2,"kind":"check-invoke","check":{"id":"conformance.checks.slow"},"config":{},"trace":{"output":"x"}});
    let out: Value = invoke(&svc, &body, &[("kindgi-timeout-ms", "100")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(out["code"], "deadline-exceeded");
    assert_eq!(out["checkId"], "conformance.checks.slow");
    let late = svc.wait_record(|r| {
        r["event"] == "handler-finished-late" && r["id"] == "conformance.checks.slow"
    });
    assert!(late["afterMs"].as_u64().unwrap() < 1000);
    // Without a deadline the slow check passes after 300 ms.
    let out: Value = invoke(&svc, &body, &[]).await.json().await.unwrap();
    assert_eq!(out["result"]["passed"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnect_cancels_and_cap_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let svc = Service::start(
        &index("index.json"),
        &[("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "1")],
    );
    let release = tmp.path().join("release-1").to_string_lossy().into_owned();
    let body = call("conformance.hold", json!({"release": release}));
    let base = svc.base();
    let held = tokio::spawn(async move {
        client()
            .post(format!("{base}/v1/invoke"))
            .header("kindgi-pack-token", TOKEN)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    });
    svc.wait_stdout(&format!("hold: {release}"));
    let res = invoke(
        &svc,
        &call("conformance.echo", json!({"message": "hi"})),
        &[],
    )
    .await;
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "1");
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"error": "overloaded"})
    );
    let res = client()
        .get(format!("{}/v1/info", svc.base()))
        .header("kindgi-pack-token", TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    std::fs::write(&release, "").unwrap();
    assert_eq!(held.await.unwrap()["output"], json!({"released": true}));
    assert_eq!(
        invoke(
            &svc,
            &call("conformance.echo", json!({"message": "hi"})),
            &[]
        )
        .await
        .status(),
        200
    );

    // A caller that goes away: the call is cancelled and recorded so.
    let release = tmp.path().join("release-2").to_string_lossy().into_owned();
    let body = call("conformance.hold", json!({"release": release}));
    let base = svc.base();
    let abandoned = tokio::spawn(async move {
        let _ = client()
            .post(format!("{base}/v1/invoke"))
            .header("kindgi-pack-token", TOKEN)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await;
    });
    svc.wait_stdout(&format!("hold: {release}"));
    abandoned.abort();
    let r = svc.wait_record(|r| {
        r["event"] == "call" && r["id"] == "conformance.hold" && r["outcome"] == "cancelled"
    });
    assert_eq!(r["level"], "warn");
    // The slot is free again.
    assert_eq!(
        invoke(
            &svc,
            &call("conformance.echo", json!({"message": "hi"})),
            &[]
        )
        .await
        .status(),
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_then_exits_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let mut svc = Service::start(&index("index.json"), &[]);
    let release = tmp.path().join("release").to_string_lossy().into_owned();
    let body = call("conformance.hold", json!({"release": release}));
    let base = svc.base();
    let held = tokio::spawn(async move {
        client()
            .post(format!("{base}/v1/invoke"))
            .header("kindgi-pack-token", TOKEN)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    });
    svc.wait_stdout(&format!("hold: {release}"));
    svc.sigterm();
    svc.wait_record(|r| r["event"] == "draining");
    let res = client()
        .get(format!("{}/readyz", svc.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "1");
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"error": "draining"})
    );
    assert_eq!(
        invoke(
            &svc,
            &call("conformance.echo", json!({"message": "hi"})),
            &[]
        )
        .await
        .status(),
        503
    );
    let res = client()
        .get(format!("{}/healthz", svc.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    std::fs::write(&release, "").unwrap();
    assert_eq!(held.await.unwrap()["output"], json!({"released": true}));
    assert_eq!(svc.wait_exit(Duration::from_secs(5)), 0);
    svc.wait_record(|r| r["event"] == "stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_call_that_never_ends_exits_within_the_drain() {
    let tmp = tempfile::tempdir().unwrap();
    let mut svc = Service::start(&index("index.json"), &[]);
    let release = tmp.path().join("never").to_string_lossy().into_owned();
    let body = call("conformance.hold", json!({"release": release}));
    let base = svc.base();
    let _held = tokio::spawn(async move {
        let _ = client()
            .post(format!("{base}/v1/invoke"))
            .header("kindgi-pack-token", TOKEN)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await;
    });
    svc.wait_stdout(&format!("hold: {release}"));
    let started = Instant::now();
    svc.sigterm();
    assert_eq!(svc.wait_exit(Duration::from_secs(11)), 0);
    assert!(
        started.elapsed() >= Duration::from_secs(7),
        "exited before the drain time"
    );
    svc.wait_record(|r| r["event"] == "stopped");
}
