//! `my-pack`: the example pack of the read-only guide (seed 004), written with the Rust pack
//! SDK. Five tools — `my-pack.lookup-order` (read-only), `my-pack.add-order-note`
//! (mutating, writes `external:orders`), `my-pack.greet` (read-only),
//! `my-pack.request-review` (a pausing tool: the run waits for a reviewer's answer, handed
//! over through the file `MY_PACK_REVIEW_OUTBOX` names; docs/pauses.md) and
//! `my-pack.send-reply` (mutating) — a before-tool guardrail check
//! (`my-pack.no-card-numbers`), two agents (`my-pack.echo-agent`, and
//! `my-pack.support-agent` with approval gates on) and three flows: `my-pack.check-order`,
//! `my-pack.note-order` and `my-pack.echo-flow`.
//!
//! ```sh
//! kindgi dev examples/my-pack          # builds, indexes, serves, registers
//! kindgi runs start --flow=my-pack.check-order --input='{"orderId":"ord_1001"}' --dry-run
//! ```
//!
//! Or by hand: `my-pack index --out index.json`, then `my-pack serve --index index.json`.

mod checks;
mod flows;
mod tools;

use kindgi_pack::sdk::Pack;
use std::process::ExitCode;

/// Builds a tool at startup; a definition error here is a bug in this example.
fn defined<T, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> T {
    match r {
        Ok(t) => t,
        Err(e) => {
            eprintln!("my-pack: the {what} definition is invalid: {e}");
            std::process::exit(1)
        }
    }
}

fn pack() -> Pack {
    Pack::new("my-pack", "0.1.0")
        .tool(
            "src/tools/lookup_order.rs",
            defined("lookup-order", tools::lookup_order::tool()),
        )
        .tool(
            "src/tools/add_order_note.rs",
            defined("add-order-note", tools::add_order_note::tool()),
        )
        .tool("src/tools/greet.rs", defined("greet", tools::greet::tool()))
        .tool(
            "src/tools/request_review.rs",
            defined("request-review", tools::request_review::tool()),
        )
        .tool(
            "src/tools/send_reply.rs",
            defined("send-reply", tools::send_reply::tool()),
        )
        .check(
            "src/checks.rs",
            defined("no-card-numbers", checks::no_card_numbers()),
        )
        .env(&[], &[tools::request_review::OUTBOX_ENV])
        .agent("src/flows.rs", flows::echo_agent())
        .agent("src/flows.rs", flows::support_agent())
        .flow("src/flows.rs", flows::check_order())
        .flow("src/flows.rs", flows::note_order())
        .flow("src/flows.rs", flows::echo_flow())
}

fn main() -> ExitCode {
    pack().main()
}
