//! Shared helpers of the `kindgi dev` / `kindgi runs` end-to-end tests: start the real
//! `kindgi dev` binary on a free port, run the real `kindgi runs …`, stop with SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

// The same file as `support::spawn`: a test file that declares both modules compiles it
// twice, on purpose (one source, no copies).
#[allow(clippy::duplicate_mod)]
#[path = "../support/spawn.rs"]
pub mod spawn;

pub mod templates;

use spawn::{Watch, dev_command, dev_listening, spawn_until_listening};
pub use spawn::{children_of, repo_root, signal};

/// The `kindgi` binary under test.
pub fn kindgi() -> &'static str {
    spawn::BIN
}

/// The reference Python, or `None` (skip) — a failure when `KINDGI_REQUIRE_REFERENCE=1`.
pub fn reference_python(test: &str) -> Option<PathBuf> {
    kindgi_spec::testing::reference_or_skip(
        test,
        std::env::var_os("KINDGI_REFERENCE_PYTHON")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from),
        "KINDGI_REFERENCE_PYTHON is not set",
    )
}

/// Copies a pack folder (without its state, build output or caches) into a temp dir.
pub fn copy_pack(src: &Path) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(src, tmp.path());
    tmp
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let n = name.to_string_lossy();
        if [".kindgi", "target", "__pycache__", ".venv", "node_modules"].contains(&n.as_ref())
            || n.starts_with(".kindgirc")
        {
            continue;
        }
        let to = dst.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// The official TypeScript packages and Node 24 of the kindgi-cli wheel.
pub struct TsReference {
    pub node_modules: PathBuf,
    /// `bin/node` of Node 24.
    pub node: PathBuf,
}

/// The reference, or `None` (skip) — a failure when `KINDGI_REQUIRE_REFERENCE=1` or `CI`.
pub fn ts_reference(test: &str) -> Option<TsReference> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let node_modules = var("KINDGI_CLI_NODE_MODULES")
        .filter(|d| d.join("@kindgi/handler-runtime/package.json").is_file());
    let node = var("KINDGI_NODE24_DIR")
        .map(|d| d.join("bin/node"))
        .filter(|n| n.is_file());
    if let (Some(node_modules), Some(node)) = (node_modules, node) {
        return Some(TsReference { node_modules, node });
    }
    kindgi_spec::testing::skip_without_reference(
        test,
        "KINDGI_CLI_NODE_MODULES (with @kindgi/handler-runtime) or KINDGI_NODE24_DIR (with \
         bin/node) is missing",
    );
    None
}

/// A temp copy of `examples/my-pack-ts` whose `node_modules` is the wheel's (what the
/// example's `link-sdk` script sets up in the repository).
pub fn ts_pack(r: &TsReference) -> tempfile::TempDir {
    let tmp = copy_pack(&repo_root().join("examples/my-pack-ts"));
    std::os::unix::fs::symlink(&r.node_modules, tmp.path().join("node_modules")).unwrap();
    tmp
}

/// A running `kindgi dev`.
pub struct Dev {
    pub child: Child,
    pub url: String,
    pub dir: PathBuf,
    pub stderr: Arc<Mutex<String>>,
}

/// Starts `kindgi dev DIR --port 0 --no-watch` (plus `extra` args) and waits for its
/// `listening` line.
pub fn start_dev(dir: &Path, envs: &[(&str, &str)], extra: &[&str]) -> Dev {
    let mut cmd = dev_command(dir, extra);
    cmd.envs(envs.iter().copied());
    // A cold build of the Rust example can take minutes on a busy machine.
    let up = spawn_until_listening(cmd, Watch::Stdout, dev_listening, Duration::from_secs(900));
    Dev {
        child: up.child,
        url: up.addr,
        dir: dir.to_owned(),
        stderr: up.other,
    }
}

impl Dev {
    /// SIGTERM; the exit status (must be 0 within 20 s).
    pub fn stop(self) -> std::process::ExitStatus {
        self.stop_with("TERM")
    }

    /// Sends `sig` (`TERM`, `INT`); the exit status (within 20 s).
    pub fn stop_with(mut self, sig: &str) -> std::process::ExitStatus {
        let pack = self.pack_pid();
        signal(self.child.id(), sig);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                if let Some(p) = pack {
                    assert!(
                        !std::path::Path::new(&format!("/proc/{p}")).exists()
                            || std::fs::read_to_string(format!("/proc/{p}/stat"))
                                .is_ok_and(|st| st.contains(") Z ")),
                        "the pack service {p} outlived kindgi dev"
                    );
                }
                return s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "kindgi dev did not stop within 20 s of SIGTERM; stderr:\n{}",
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The pid of the pack service child.
    pub fn pack_pid(&self) -> Option<u32> {
        children_of(self.child.id()).into_iter().next()
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The result of one `kindgi …` invocation.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Runs `kindgi ARGS` in `cwd` (so it finds `.kindgirc.json` there), without API env vars.
pub fn kindgi_in(cwd: &Path, args: &[&str]) -> Out {
    let out = Command::new(kindgi())
        .args(args)
        .current_dir(cwd)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The exact refusal of seed 004 for `my-pack.add-order-note`.
pub const NOTE_REFUSAL: &str = "dry-run-effectful-tool: tool \"my-pack.add-order-note\" is not declared read-only (mutating: false), so it does not run in a dry run";

/// The guide's three dry runs (seed 004), run with the real `kindgi runs start` in `dir`.
pub fn guide_dry_runs(dir: &Path) {
    let out = kindgi_in(
        dir,
        &[
            "runs",
            "start",
            "--flow=my-pack.check-order",
            "--input={\"orderId\":\"ord_1001\"}",
            "--dry-run",
        ],
    );
    assert_eq!(out.code, 0, "check-order: {out:?}");
    let run = out.json();
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["dryRun"], true);
    assert_eq!(
        run["output"],
        serde_json::json!({"status": "shipped", "orderId": "ord_1001", "totalCents": 4200})
    );
    assert_eq!(run["flowId"], "my-pack.check-order");
    assert!(run["id"].as_str().is_some_and(|s| !s.is_empty()));

    let out = kindgi_in(
        dir,
        &[
            "runs",
            "start",
            "--flow=my-pack.note-order",
            "--input={\"orderId\":\"ord_1001\",\"text\":\"Customer called\"}",
            "--dry-run",
        ],
    );
    assert_eq!(out.code, 1, "note-order: {out:?}");
    let run = out.json();
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["dryRun"], true);
    assert_eq!(run["failureMessage"], NOTE_REFUSAL);
    assert_eq!(
        out.stderr.trim(),
        format!("Error [run-failed]: {NOTE_REFUSAL}")
    );
    // The refused tool was never called: its step started and failed, nothing completed.
    let id = run["id"].as_str().unwrap();
    let j = kindgi_in(dir, &["runs", "journal", id]);
    assert_eq!(j.code, 0, "{j:?}");
    let entries = j.json()["data"].as_array().unwrap().clone();
    let kinds: Vec<(String, String)> = entries
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or("").to_owned(),
                e["nodeId"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert!(
        kinds.contains(&("step.completed".into(), "lookup".into())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("step.failed".into(), "note".into())),
        "{kinds:?}"
    );
    assert!(
        !kinds.contains(&("step.completed".into(), "note".into())),
        "{kinds:?}"
    );

    let out = kindgi_in(
        dir,
        &[
            "runs",
            "start",
            "--flow=my-pack.echo-flow",
            "--input={\"name\":\"Ada\"}",
            "--dry-run",
        ],
    );
    assert_eq!(out.code, 0, "echo-flow: {out:?}");
    let run = out.json();
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["dryRun"], true);
    assert_eq!(
        run["output"],
        serde_json::json!({"reply": "[dry-run: model call skipped]", "greeting": "Hello, Ada!"})
    );
}
