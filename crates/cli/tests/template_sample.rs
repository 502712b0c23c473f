//! The official `sample` template (`kindgi init --template=sample`, generated at test time)
//! under our `kindgi dev`, driven with the official CLI: its listings, its flow
//! `acme.sample.echo-flow` dry and live, and its agent `acme.sample.echo-agent` dry and live
//! (dev-echo calls the agent's first tool, `acme.sample.echo`, and the guardrail
//! `acme.sample.response-not-empty` — a check of pack `acme.sample`, a pack id with a dot —
//! passes the answer).
//!
//! Needs the official CLI and the wheel's TypeScript packages: skipped without them, failed
//! when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod dev_common;

use dev_common::templates::*;
use serde_json::json;

#[test]
fn the_sample_template_runs_its_flow_and_agent_through_the_official_cli() {
    let Some(pack) = serve("sample", "sample_template_e2e", &[]) else {
        return;
    };
    assert_eq!(
        pack.listed("tools"),
        [
            "acme.sample.echo",
            "acme.sample.fetch-httpbin",
            "acme.sample.greet"
        ]
    );
    // The declarative (`spec: {kind: 'http'}`) tool is run by the runtime itself, so it is
    // registered, not left out (it calls httpbin.org, which a test cannot reach, so it is
    // not called here; crates/cli/tests/dev_python_declarative.rs calls one on loopback).
    assert!(
        !pack.dev.stderr().contains("left out tool"),
        "{}",
        pack.dev.stderr()
    );
    assert_eq!(pack.listed("flows"), ["acme.sample.echo-flow"]);
    assert_eq!(pack.listed("agents"), ["acme.sample.echo-agent"]);
    assert_eq!(
        pack.listed("guardrails"),
        ["acme.sample.response-not-empty"]
    );

    // The flow, dry: the read-only greet tool runs, the agent step skips its model call.
    let (out, run) = pack.start_flow("acme.sample.echo-flow", r#"{"name":"Ada"}"#, true);
    assert_completed("echo-flow --dry-run", &out, &run);
    assert_eq!(
        run["output"],
        json!({"greeting": "Hello, Ada!", "reply": DRY_RUN_REPLY})
    );
    let steps = pack.journal(&run);
    assert!(
        steps.contains(&("step.completed".into(), "greet".into())),
        "{steps:?}"
    );
    assert!(
        steps.contains(&("step.completed".into(), "respond".into())),
        "{steps:?}"
    );

    // Live: the agent step's dev-echo calls the echo tool with the greeting, and answers
    // with its result.
    let (out, run) = pack.start_flow("acme.sample.echo-flow", r#"{"name":"Ada"}"#, false);
    assert_completed("echo-flow", &out, &run);
    assert_eq!(run["output"]["greeting"], "Hello, Ada!", "{run}");
    let echoed = dev_echo_tool_result("echo-flow's reply", &run["output"]["reply"]);
    assert!(
        echoed["echo"].as_str().unwrap().contains("Hello, Ada!"),
        "{echoed}"
    );
    assert!(echoed["echoedAt"].is_string(), "{echoed}");

    // The agent alone, live: dev-echo calls its first tool (echo) with the message.
    let (out, turn) = pack.start_agent("acme.sample.echo-agent", "hi there", false);
    let echoed = assert_dev_echo_called("echo-agent", &out, &turn, "acme.sample.echo");
    assert_eq!(echoed["echo"], "hi there", "{turn}");
    assert_eq!(echoed["characterCount"], 8, "{turn}");
    assert_eq!(turn["agent"]["id"], "acme.sample.echo-agent", "{turn}");

    // Dry: no model call, no tool call.
    let (out, turn) = pack.start_agent("acme.sample.echo-agent", "hi there", true);
    assert_completed("echo-agent --dry-run", &out, &turn);
    assert_eq!(turn["output"]["text"], DRY_RUN_REPLY, "{turn}");
    assert_eq!(turn["output"]["toolCalls"], json!([]), "{turn}");

    pack.stop();
}
