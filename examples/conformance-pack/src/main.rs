//! The `conformance` fixture pack (pack-protocol reference §12), written with the Rust pack
//! SDK: nine tools, two checks, an agent and a flow, plus the tools and checks only the
//! `extras` and `import-throws` index variants list.
//!
//! ```sh
//! conformance-pack index > examples/conformance-pack/index.json
//! conformance-pack index --variant extras > examples/conformance-pack/index.extras.json
//! conformance-pack index --variant import-throws > examples/conformance-pack/index.import-throws.json
//! conformance-pack serve --index examples/conformance-pack/index.json --host 127.0.0.1
//! ```

mod broken;
mod checks;
mod extras;
mod tools;

use kindgi_pack::sdk::{Pack, PackCheck, PackTool};
use serde_json::json;
use std::process::ExitCode;

/// Builds a tool or check at startup; a definition error here is a bug in this fixture.
fn defined<T, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> T {
    match r {
        Ok(t) => t,
        Err(e) => {
            eprintln!("the conformance fixture's {what} is invalid: {e}");
            std::process::exit(1)
        }
    }
}

fn pack() -> Pack {
    let mut pack = Pack::new("conformance", "1.0.0").pins("20261001.7", "2026-10-01T12:00:00.000Z");
    for (path, tool) in [
        ("src/tools/echo.rs", tools::echo::tool()),
        ("src/tools/bad_output.rs", tools::bad_output::tool()),
        ("src/tools/throws.rs", tools::throws::tool()),
        ("src/tools/sleep.rs", tools::sleep::tool()),
        ("src/tools/hold.rs", tools::hold::tool()),
        ("src/tools/context.rs", tools::context::tool()),
        ("src/tools/defaults.rs", tools::defaults::tool()),
        ("src/tools/noisy.rs", tools::noisy::tool()),
        ("src/tools/process_env.rs", tools::process_env::tool()),
    ] {
        pack = pack.tool(path, defined(path, tool));
    }
    pack = pack
        .check(
            "src/checks/min_length.rs",
            defined("min-length", checks::min_length::check()),
        )
        .check(
            "src/checks/throws.rs",
            defined("check-throws", checks::throws::check()),
        );
    for (path, tool) in [
        ("src/extras/echo_v2.rs", extras::echo_v2::tool()),
        ("src/extras/versioned.rs", extras::versioned::tool("1.0.0")),
        ("src/extras/versioned.rs", extras::versioned::tool("2.0.0")),
        ("src/extras/bad_schema.rs", Ok(extras::bad_schema::tool())),
        ("src/extras/token_probe.rs", extras::token_probe::tool()),
        ("src/extras/log_probe.rs", extras::log_probe::tool()),
    ] {
        pack = pack.add_tool(PackTool::new(path, defined(path, tool)).only_in_variant("extras"));
    }
    for (path, check) in [
        ("src/extras/slow.rs", extras::slow::check()),
        ("src/extras/waits.rs", extras::waits::check()),
    ] {
        pack = pack.add_check(PackCheck::new(path, defined(path, check)).only_in_variant("extras"));
    }
    pack = pack.add_tool(
        PackTool::new(
            "src/broken/import_throws.rs",
            defined("import-throws", broken::import_throws::tool()),
        )
        .load(broken::import_throws::load)
        .only_in_variant("import-throws"),
    );
    pack.agent(
        "src/main.rs",
        json!({
            "id": "conformance.echo-agent",
            "version": "1.0.0",
            "name": "Echo agent",
            "instructions": "Repeat the user's message with conformance.echo.",
            "capabilities": [],
            "guardrails": [],
            "parameters": [],
            "retrieval": [],
            "settings": [],
            "tools": [{"id": "conformance.echo", "version": "1.0.0"}],
        }),
    )
    .flow(
        "src/main.rs",
        json!({
            "id": "conformance.echo-flow",
            "version": "1.0.0",
            "name": "Echo flow",
            "nodes": [{"id": "echo", "kind": "tool", "ref": "conformance.echo"}],
            "edges": [
                {"id": "e1", "from": "$start", "to": "echo"},
                {"id": "e2", "from": "echo", "to": "$end"},
            ],
            "kernelPayloadVersion": 1,
        }),
    )
}

fn main() -> ExitCode {
    // Takes the service token out of the environment before any tool is even defined.
    kindgi_pack::sdk::main(pack)
}
