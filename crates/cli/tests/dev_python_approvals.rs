//! A gated run approved from the official CLI, unchanged, under `kindgi dev` on a pack
//! written with the official Python SDK (`kindgi==0.1.10`, `conversation_policy={"hitl":
//! {"tools": {}}}`): the CLI finds the dev runtime through its `.kindgirc.json` (the dev key is
//! an admin reviewer, docs/approvals.md), `runs resume` exits 3 naming the approval, `approvals
//! list|get|complete --decision=approve` decide it, the mutating tool then runs once and
//! `runs resume` exits 0. Needs `KINDGI_REFERENCE_PYTHON` and the official CLI beside it
//! (skipped without them, failed when `KINDGI_REQUIRE_REFERENCE=1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use std::path::Path;
use std::process::{Command, Stdio};

use dev_common::*;

const TOOLS: &str = r#"
"""my-pack.pay (mutating: left out means true). Each call appends its id to the file
PACK_TEST_CALLS names, so the test sees what ran."""
import os
from pydantic import BaseModel
from kindgi import ToolContext, tool

class Ask(BaseModel):
    message: str

class Paid(BaseModel):
    paid: bool

@tool(id="my-pack.pay", version="0.1.0")
def pay(ask: Ask, ctx: ToolContext) -> Paid:
    """Pays."""
    with open(os.environ["PACK_TEST_CALLS"], "a") as f:
        f.write("my-pack.pay\n")
    return Paid(paid=True)
"#;

const AGENTS: &str = r#"
from kindgi import Agent

pay_agent = Agent(
    id="my-pack.pay-agent",
    version="0.1.0",
    name="Pay agent",
    instructions="Pay when asked.",
    tools=[{"id": "my-pack.pay", "version": "^0.1.0"}],
    conversation_policy={"hitl": {"tools": {}}},
)
"#;

/// The official CLI in the pack folder, `HOME` a fresh directory, no API variables.
fn official(cli: &Path, cwd: &Path, home: &Path, args: &[&str]) -> Out {
    let out = Command::new(cli)
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("KINDGI_API_URL")
        .env_remove("KINDGI_API_TOKEN")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn the_official_cli_approves_a_python_agents_gated_call_under_kindgi_dev() {
    let Some(python) =
        reference_python("the_official_cli_approves_a_python_agents_gated_call_under_kindgi_dev")
    else {
        return;
    };
    let cli = python.with_file_name("kindgi");
    assert!(cli.exists(), "the official CLI is not at {}", cli.display());
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    std::fs::write(tmp.path().join("tools/gated_tools.py"), TOOLS).unwrap();
    std::fs::write(tmp.path().join("agents/gated_agents.py"), AGENTS).unwrap();
    let calls = tmp.path().join("calls.txt");
    std::fs::write(&calls, "").unwrap();
    let home = tempfile::tempdir().unwrap();
    let py = python.display().to_string();
    let calls_env = calls.display().to_string();
    let dev = start_dev(
        tmp.path(),
        &[
            ("KINDGI_PYTHON", &py),
            ("PACK_TEST_CALLS", &calls_env),
            // The pack does not declare the calls file in its index, so the SDK's own env
            // filter would drop it too.
            ("KINDGI_PACK_ENV_FILTER", "off"),
        ],
        // The pack sees only what its environment allowlist passes (docs/dev.md).
        &["--no-watch", "--pack-env", "PACK_TEST_CALLS"],
    );
    let ran = || std::fs::read_to_string(&calls).unwrap();
    let run_cli = |args: &[&str], code: i32| {
        let out = official(&cli, tmp.path(), home.path(), args);
        assert_eq!(
            out.code,
            code,
            "{args:?}: {}\n{}\n{}",
            out.stdout,
            out.stderr,
            dev.stderr()
        );
        out.json()
    };

    let run = run_cli(
        &[
            "runs",
            "start",
            "--agent=my-pack.pay-agent",
            "--input={\"message\":\"pay\"}",
        ],
        0,
    );
    assert_eq!(run["status"], "suspended", "{run}");
    let id = run["id"].as_str().unwrap().to_owned();
    let waits = run_cli(&["runs", "resume", &id], 3);
    assert_eq!(waits["kind"], "approval", "{waits}");
    let approval = waits["approvals"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(waits["approvals"][0]["tool"]["id"], "my-pack.pay");

    let page = run_cli(&["approvals", "list", "--status=pending"], 0);
    assert_eq!(page["data"][0]["id"], approval.as_str(), "{page}");
    let one = run_cli(&["approvals", "get", &approval], 0);
    assert_eq!(one["subjectRef"]["toolId"], "my-pack.pay");
    assert_eq!(ran(), "", "the mutating tool waits for a reviewer");

    let done = run_cli(
        &["approvals", "complete", &approval, "--decision=approve"],
        0,
    );
    assert_eq!(done["approval"]["status"], "approved", "{done}");
    assert_eq!(done["resume"]["kind"], "ok", "{done}");
    assert_eq!(ran(), "my-pack.pay\n", "approved, the call ran once");
    let waits = run_cli(&["runs", "resume", &id], 0);
    assert_eq!(waits["kind"], "not-waiting", "{waits}");

    // Ours reads the same runtime the same way.
    let out = kindgi_in(tmp.path(), &["approvals", "get", &approval]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["status"], "approved");
    let status = dev.stop();
    assert!(status.success(), "{status}");
}
