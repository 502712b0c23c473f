//! The official `kindgi dev --runtime-url` against our `kindgi server`: the official CLI
//! scaffolds a pack (`kindgi init --template=python`), its dev writes
//! `.kindgi/dev/runtime.env` and waits for a runtime at the URL; our server, started with
//! exactly that file's variables as its environment, must take the dev token (as a tenant
//! admin's key of `KINDGI_TENANT_ID`, the seed user as the person), listen on
//! `KINDGI_API_HOST:KINDGI_API_PORT`, and register the primitives of the pack service at
//! `KINDGI_PACK_SERVICE_URL` (called with `KINDGI_PACK_SERVICE_TOKEN`). Then a flow run
//! through the official CLI completes.
//!
//! Fails, not skips, under `KINDGI_REQUIRE_REFERENCE=1` when the official CLI is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;
mod support;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dev_common::*;
use serde_json::Value;

/// A child process stopped with SIGINT (so it stops its own children) on drop.
struct Stopped {
    child: Child,
    output: Arc<Mutex<String>>,
}

impl Stopped {
    fn spawn(mut cmd: Command) -> Stopped {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        for reader in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let out = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(reader).lines().map_while(Result::ok) {
                    let mut o = out.lock().unwrap();
                    o.push_str(&line);
                    o.push('\n');
                }
            });
        }
        Stopped { child, output }
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Waits until its output holds `text` (or it exits, or the bound passes: a failure).
    fn wait_for(&mut self, text: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(600);
        while !self.output().contains(text) {
            let exited = self.child.try_wait().unwrap();
            assert!(
                exited.is_none() && Instant::now() < deadline,
                "{what}: never printed {text:?} (exit: {exited:?}); output:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The official CLI next to the reference Python, or `None` (skip).
fn official_cli(test: &str) -> Option<PathBuf> {
    let python = reference_python(test)?;
    let cli = python.with_file_name("kindgi");
    assert!(
        cli.exists(),
        "{test}: the official CLI is not at {}",
        cli.display()
    );
    Some(cli)
}

/// A loopback port nobody holds now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `NAME=value` lines, literally (the format `docker run --env-file` reads).
fn env_file(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (n, v) = l.split_once('=').unwrap();
            (n.to_owned(), v.to_owned())
        })
        .collect()
}

fn official(cli: &Path, cwd: &Path, args: &[&str]) -> std::process::Output {
    Command::new(cli)
        .args(args)
        .current_dir(cwd)
        .env("PATH", path_with_venv(cli))
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `PATH` with the reference venv first, so the official dev finds the Python with the
/// official SDK.
fn path_with_venv(cli: &Path) -> String {
    format!(
        "{}:{}",
        cli.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn official_dev_with_runtime_url_runs_a_flow_on_our_server() {
    let Some(cli) = official_cli("official_dev_with_runtime_url_runs_a_flow_on_our_server") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let init = official(&cli, tmp.path(), &["init", "demo", "--template=python"]);
    assert!(init.status.success(), "kindgi init: {init:?}");
    let pack = tmp.path().join("demo");

    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let mut dev_cmd = Command::new(&cli);
    dev_cmd
        .args(["dev", "--runtime-url", &url, "--database-url"])
        // Written into runtime.env only: our server is given its own database below.
        .arg("postgres://postgres@127.0.0.1:5432/unused")
        .current_dir(&pack)
        .env("PATH", path_with_venv(&cli))
        .env("KINDGI_DEV_SANDBOX", "off")
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN");
    let mut dev = Stopped::spawn(dev_cmd);
    // The official dev writes runtime.env, then waits for a runtime at the URL.
    dev.wait_for("Waiting for the Kindgi runtime", "the official kindgi dev");
    let env_path = pack.join(".kindgi/dev/runtime.env");
    let env = env_file(&env_path);
    let var = |name: &str| {
        env.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("runtime.env has no {name}"))
    };
    assert_eq!(var("KINDGI_API_PORT"), port.to_string());
    assert_eq!(var("KINDGI_SECRETS_BACKEND"), "dotenv");

    let mut server_cmd = Command::new(kindgi());
    server_cmd
        .args(["server", "--database"])
        .arg(tmp.path().join("ours.db"))
        .env_remove("KINDGI_LISTEN")
        .env_remove("KINDGI_MODEL")
        .envs(env.iter().map(|(n, v)| (n.as_str(), v.as_str())));
    let mut server = Stopped::spawn(server_cmd);
    server.wait_for(&format!("listening on {url}"), "kindgi server");
    assert!(
        !server.output().contains(&var("KINDGI_API_TOKEN")),
        "the dev token is printed:\n{}",
        server.output()
    );

    // The official dev took our server: its dev token was accepted, the primitives loaded.
    dev.wait_for("Kindgi is up", "the official kindgi dev");

    let flows = official(&cli, &pack, &["flows", "list"]);
    let flows: Value = serde_json::from_slice(&flows.stdout).unwrap();
    assert!(
        flows["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"] == "demo.echo-flow"),
        "{flows}"
    );
    let run = official(
        &cli,
        &pack,
        &[
            "runs",
            "start",
            "--flow=demo.echo-flow",
            r#"--input={"message":"hi"}"#,
            "--json",
        ],
    );
    assert!(
        run.status.success(),
        "runs start: {run:?}\n{}",
        server.output()
    );
    let run: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["output"]["echo"], "hi", "{run}");
    assert_eq!(run["tenantId"], var("KINDGI_TENANT_ID").as_str(), "{run}");
    assert_eq!(run["startedBy"], "person", "{run}");
}
