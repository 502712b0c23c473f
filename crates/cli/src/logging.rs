//! The `kindgi` binary's log: one `tracing` subscriber, installed before any command runs,
//! writing to stderr. Human-readable lines by default (colour only on a terminal);
//! `KINDGI_LOG_FORMAT=json` writes one JSON object per line (the event's fields flattened,
//! its request's span as `span`). `KINDGI_LOG` filters, in the `RUST_LOG` syntax
//! (`warn`, `kindgi_api=debug,info`, …); unset, servers (`server`, `dev`) log `info` and
//! one-shot commands `warn`, so their stdout and stderr stay their answer. A `KINDGI_LOG`
//! that does not parse is said once on stderr, and the default is used.
//!
//! What is logged is the libraries' events (`tracing`), each request's carrying its
//! `request_id` (the API's request span, `kindgi_api::request_id`). Nothing logs a request's
//! headers, so no `Authorization` value reaches a log.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// The filter variable (`RUST_LOG` syntax).
pub const FILTER_VAR: &str = "KINDGI_LOG";
/// The format variable: `json`, or anything else for human-readable lines.
pub const FORMAT_VAR: &str = "KINDGI_LOG_FORMAT";

/// Installs the subscriber with `default_filter` when `KINDGI_LOG` is unset or bad.
pub fn install(default_filter: &str) {
    let mut problem = None;
    let filter = match std::env::var(FILTER_VAR) {
        Ok(v) if !v.trim().is_empty() => EnvFilter::try_new(v.trim()).unwrap_or_else(|e| {
            problem = Some(format!(
                "kindgi: {FILTER_VAR}={v:?} is not a log filter ({e}); logging at {default_filter:?}. Use the RUST_LOG syntax, e.g. KINDGI_LOG=warn or KINDGI_LOG=kindgi_api=debug,info"
            ));
            EnvFilter::new(default_filter)
        }),
        _ => EnvFilter::new(default_filter),
    };
    let json = std::env::var(FORMAT_VAR).is_ok_and(|v| v.trim().eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // Only fails when a subscriber is already set, which only a test harness would do.
    let _ = if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init()
    } else {
        builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init()
    };
    if let Some(p) = problem {
        eprintln!("{p}");
    }
}
