//! Approval gates from the official Python SDK (`kindgi==0.1.10`): agents written with
//! `conversation_policy={"hitl": {"tools": {}}}` under `kindgi dev` — the one whose tool is
//! mutating parks its turn on an approval before the tool runs; the one whose tool is
//! read-only runs it straight away (runtime.md case 36). Needs `KINDGI_REFERENCE_PYTHON`
//! (skipped without it, failed when `KINDGI_REQUIRE_REFERENCE=1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::*;

const TOOLS: &str = r#"
"""my-pack.pay (mutating: left out means true) and my-pack.peek (read-only). Each call
appends the tool's id to the file PACK_TEST_CALLS names, so a test sees what ran."""
import os
from pydantic import BaseModel
from kindgi import ToolContext, tool

class Ask(BaseModel):
    message: str

class Paid(BaseModel):
    paid: bool

class Seen(BaseModel):
    seen: str

def _ran(tool_id: str) -> None:
    with open(os.environ["PACK_TEST_CALLS"], "a") as f:
        f.write(tool_id + "\n")

@tool(id="my-pack.pay", version="0.1.0")
def pay(ask: Ask, ctx: ToolContext) -> Paid:
    """Pays."""
    _ran("my-pack.pay")
    return Paid(paid=True)

@tool(id="my-pack.peek", version="0.1.0", mutating=False)
def peek(ask: Ask, ctx: ToolContext) -> Seen:
    """Looks."""
    _ran("my-pack.peek")
    return Seen(seen=ask.message)
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

peek_agent = Agent(
    id="my-pack.peek-agent",
    version="0.1.0",
    name="Peek agent",
    instructions="Look when asked.",
    tools=[{"id": "my-pack.peek", "version": "^0.1.0"}],
    conversation_policy={"hitl": {"tools": {}}},
)
"#;

#[test]
fn a_python_agents_mutating_tool_parks_and_its_read_only_tool_does_not() {
    let Some(python) =
        reference_python("a_python_agents_mutating_tool_parks_and_its_read_only_tool_does_not")
    else {
        return;
    };
    let tmp = copy_pack(&repo_root().join("examples/my-pack-python"));
    std::fs::write(tmp.path().join("tools/gated_tools.py"), TOOLS).unwrap();
    std::fs::write(tmp.path().join("agents/gated_agents.py"), AGENTS).unwrap();
    let calls = tmp.path().join("calls.txt");
    std::fs::write(&calls, "").unwrap();
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

    // The dev stand-in model calls the agent's first tool with the user's message.
    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--agent=my-pack.peek-agent",
            "--input={\"message\":\"look\"}",
        ],
    );
    let run = out.json();
    assert_eq!(run["status"], "completed", "{out:?}\n{}", dev.stderr());
    assert_eq!(
        ran(),
        "my-pack.peek\n",
        "the read-only tool ran without asking"
    );

    let out = kindgi_in(
        tmp.path(),
        &[
            "runs",
            "start",
            "--agent=my-pack.pay-agent",
            "--input={\"message\":\"pay\"}",
        ],
    );
    let run = out.json();
    assert_eq!(run["status"], "suspended", "{out:?}\n{}", dev.stderr());
    assert_eq!(
        ran(),
        "my-pack.peek\n",
        "the mutating tool waits for a reviewer"
    );
    let status = dev.stop();
    assert!(status.success(), "{status}");
}
