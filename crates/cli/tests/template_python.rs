//! The official `python` template (`kindgi init --template=python`, generated at test time,
//! the official Python SDK) under our `kindgi dev`, driven with the official CLI: its
//! listings, its flow `acme.python.echo-flow` (its one tool, `acme.python.echo`, declares no
//! `mutating`, so a dry run refuses it; live it runs), and its agent `acme.python.echo-agent`
//! dry and live (dev-echo calls the first tool; the guardrail
//! `acme.python.response-not-empty`, a check of pack `acme.python`, passes the answer).
//!
//! Needs the official CLI and `KINDGI_REFERENCE_PYTHON`: skipped without them, failed when
//! `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::templates::*;
use serde_json::json;

const ECHO_REFUSAL: &str = "dry-run-effectful-tool: tool \"acme.python.echo\" is not declared read-only (mutating: false), so it does not run in a dry run";

#[test]
fn the_python_template_runs_its_flow_and_agent_through_the_official_cli() {
    let Some(pack) = serve("python", "python_template_e2e", &[]) else {
        return;
    };
    assert_eq!(
        pack.listed("tools"),
        ["acme.python.echo", "acme.python.greet"]
    );
    assert_eq!(pack.listed("flows"), ["acme.python.echo-flow"]);
    assert_eq!(pack.listed("agents"), ["acme.python.echo-agent"]);
    assert_eq!(
        pack.listed("guardrails"),
        ["acme.python.response-not-empty"]
    );

    // Dry: the echo tool is not declared read-only, so the run fails before calling it.
    let (out, run) = pack.start_flow("acme.python.echo-flow", r#"{"message":"hi"}"#, true);
    assert_eq!(out.code, 1, "echo-flow --dry-run: {out:?}");
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["failureMessage"], ECHO_REFUSAL, "{run}");
    assert!(
        out.stderr
            .contains(&format!("Error [run-failed]: {ECHO_REFUSAL}")),
        "{out:?}"
    );
    let steps = pack.journal(&run);
    assert!(
        steps.contains(&("step.failed".into(), "echo".into())),
        "{steps:?}"
    );
    assert!(
        !steps.contains(&("step.completed".into(), "echo".into())),
        "{steps:?}"
    );

    // Live: the run input is the tool's input; its output the flow's.
    let (out, run) = pack.start_flow("acme.python.echo-flow", r#"{"message":"hi"}"#, false);
    assert_completed("echo-flow", &out, &run);
    assert_eq!(run["output"]["echo"], "hi", "{run}");
    assert_eq!(run["output"]["characterCount"], 2, "{run}");
    assert!(run["output"]["echoedAt"].is_string(), "{run}");

    // The agent, live: dev-echo calls its first tool (echo) with the message.
    let (out, turn) = pack.start_agent("acme.python.echo-agent", "hello python", false);
    let echoed = assert_dev_echo_called("echo-agent", &out, &turn, "acme.python.echo");
    assert_eq!(echoed["echo"], "hello python", "{turn}");
    assert_eq!(echoed["characterCount"], 12, "{turn}");

    // Dry: no model call, no tool call.
    let (out, turn) = pack.start_agent("acme.python.echo-agent", "hello python", true);
    assert_completed("echo-agent --dry-run", &out, &turn);
    assert_eq!(turn["output"]["text"], DRY_RUN_REPLY, "{turn}");
    assert_eq!(turn["output"]["toolCalls"], json!([]), "{turn}");

    pack.stop();
}
