//! How `kindgi dev` ends and starts again, with the real binary: a kill -9 takes its pack
//! service down with it (no orphan left listening), every start rotates the folder's one dev
//! API key (the previous one stops authenticating), and a SIGTERM while a run's pack call is
//! in flight leaves the run to resume — the next start completes it, as after a crash.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// The pack service's port, from its `Listening on port N` line on our stderr.
fn pack_port(dev: &Dev) -> u16 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let err = dev.stderr();
        if let Some(port) = err
            .lines()
            .filter_map(|l| l.split("Listening on port ").nth(1))
            .filter_map(|p| p.trim().parse::<u16>().ok())
            .next_back()
        {
            return port;
        }
        assert!(Instant::now() < deadline, "no listening line:\n{err}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn listening(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// The dev API key in the folder's discovery file.
fn dev_token(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join(".kindgirc.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["token"].as_str().unwrap().to_owned()
}

/// `GET /v1/tools` with `token`: the status code.
fn status_with(url: &str, token: &str) -> u16 {
    let host = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /v1/tools HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    buf.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Ids of the dev tenant's keys that still authenticate, read from the folder's database.
fn active_dev_keys(dir: &Path) -> Vec<String> {
    let db = dir.join(".kindgi/dev.db");
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let db = kindgi_store::Database::connect(&db.display().to_string())
                .await
                .unwrap();
            let keys = kindgi_store::tokens::TokenStore::new(db.clone())
                .active_keys("default")
                .await
                .unwrap();
            db.close().await;
            keys.into_iter().map(|k| k.key_id).collect()
        })
}

fn key_id(key: &str) -> String {
    kindgi_store::tokens::hash_key(key)[..16].to_owned()
}

#[test]
fn a_kill_9_takes_the_pack_service_down_and_the_next_start_rotates_the_dev_key() {
    let dir = repo_root().join("examples/my-pack");
    let dev = start_dev(&dir, &[], &["--no-watch", "--reset"]);
    let first_key = dev_token(&dir);
    let pack = dev.pack_pid().expect("a pack service child");
    let port = pack_port(&dev);
    assert!(listening(port), "the pack service listens on {port}");
    assert_eq!(status_with(&dev.url, &first_key), 200);

    // kill -9: nothing of kindgi dev runs any more, yet its pack service goes too.
    let mut dev = dev;
    signal(dev.child.id(), "KILL");
    let _ = dev.child.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pack) || listening(port) {
        assert!(
            Instant::now() < deadline,
            "the pack service {pack} outlived a killed kindgi dev by 5 s (port {port} listening: {})",
            listening(port)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(dev);

    // The next start mints a new key and revokes the crashed one's.
    let dev = start_dev(&dir, &[], &["--no-watch"]);
    let second_key = dev_token(&dir);
    assert_ne!(second_key, first_key);
    assert_eq!(status_with(&dev.url, &second_key), 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    while status_with(&dev.url, &first_key) != 401 {
        assert!(
            Instant::now() < deadline,
            "the previous dev key still authenticates 10 s after the next start"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(active_dev_keys(&dir), vec![key_id(&second_key)]);

    // A clean stop revokes the key it handed out.
    let status = dev.stop();
    assert!(status.success(), "{status}");
    assert_eq!(active_dev_keys(&dir), Vec::<String>::new());
}

/// Read-only, and slow the first time only: the first call sleeps (long past the pack
/// service's own stop grace), a call after a restart answers at once.
const ONCE_SLOW_TOOL: &str = r#"
"""my-pack.once-slow: sleeps 30 s on its first call, answers at once afterwards."""
import pathlib, time
from pydantic import BaseModel
from kindgi import ToolContext, tool

MARK = pathlib.Path(__file__).resolve().parent.parent / ".slept-once"

class Nothing(BaseModel):
    pass

class Done(BaseModel):
    done: bool

@tool(id="my-pack.once-slow", version="0.1.0", mutating=False)
def once_slow(_: Nothing, ctx: ToolContext) -> Done:
    """Sleeps 30 s the first time."""
    if not MARK.exists():
        MARK.write_text("1")
        time.sleep(30)
    return Done(done=True)
"#;

const ONCE_SLOW_FLOW: &str = r#"
from kindgi import Flow

once_slow_flow = Flow(
    id="my-pack.once-slow-flow",
    version="0.1.0",
    nodes=[{"id": "slow", "kind": "tool", "ref": "my-pack.once-slow"}],
    edges=[
        {"id": "e1", "from": "$start", "to": "slow"},
        {"id": "e2", "from": "slow", "to": "$end"},
    ],
)
"#;

fn stored_run(dir: &Path, id: &str) -> kindgi_runtime::RunRecord {
    use kindgi_runtime::RunStore as _;
    let db = dir.join(".kindgi/dev.db");
    let id = id.to_owned();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let db = kindgi_store::Database::connect(&db.display().to_string())
                .await
                .unwrap();
            let run = kindgi_store::runs::RunsStore::new(db.clone())
                .get_run(&id)
                .await
                .unwrap()
                .unwrap();
            db.close().await;
            run
        })
}

#[test]
fn a_sigterm_mid_call_leaves_the_run_to_resume_and_the_next_start_completes_it() {
    let Some(python) = reference_python(
        "a_sigterm_mid_call_leaves_the_run_to_resume_and_the_next_start_completes_it",
    ) else {
        return;
    };
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    std::fs::write(tmp.path().join("tools/once_slow.py"), ONCE_SLOW_TOOL).unwrap();
    std::fs::write(tmp.path().join("flows/once_slow_flow.py"), ONCE_SLOW_FLOW).unwrap();
    let py = python.display().to_string();
    let dev = start_dev(tmp.path(), &[("KINDGI_PYTHON", &py)], &["--no-watch"]);
    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--flow=my-pack.once-slow-flow",
            "--input={}",
            "--no-wait",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let id = out.json()["id"].as_str().unwrap().to_owned();
    // The call is in the service's hands once its mark exists.
    let mark = tmp.path().join(".slept-once");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !mark.exists() {
        assert!(Instant::now() < deadline, "the call never reached the tool");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = dev.stop();
    assert!(status.success(), "{status}");

    // Left as a crash would leave it: not ended, no failure.
    let run = stored_run(tmp.path(), &id);
    assert!(
        matches!(
            run.status,
            kindgi_runtime::RunStatus::Running | kindgi_runtime::RunStatus::Pending
        ),
        "{run:?}"
    );
    assert_eq!(run.failure_message, None);

    // The next start resumes it; the tool answers at once this time.
    let dev = start_dev(tmp.path(), &[("KINDGI_PYTHON", &py)], &["--no-watch"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let run = loop {
        let got = kindgi_in(tmp.path(), &["runs", "get", &id]);
        let run: serde_json::Value = serde_json::from_str(&got.stdout).unwrap_or_default();
        if run["status"] == "completed" || run["status"] == "failed" {
            break run;
        }
        assert!(
            Instant::now() < deadline,
            "the run was not resumed within 30 s: {run}\n{}",
            dev.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(run["output"], serde_json::json!({"done": true}));
    assert!(
        dev.stderr().contains("resumed 1 unfinished run(s)"),
        "{}",
        dev.stderr()
    );
    let status = dev.stop();
    assert!(status.success(), "{status}");
}
