//! Helpers shared by the fuzz targets (docs/fuzzing.md): splitting one input into parts,
//! the JSON checks every target makes, and the one async runtime a process shares.
//!
//! An invariant failure is a panic with a message saying which rule broke; libFuzzer turns
//! it into a crash with a reproducer, exactly as a panic inside the code under test would.

use serde_json::Value;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub mod api;
pub mod pack;
pub mod schema;

/// The instances a schema is validated against when the input brings none.
pub const PROBE_INSTANCES: &str = r#"[null, true, false, 0, -1, 1.5, 1e300, "", "a", "2026-01-01",
    [], [1, "a", null], [1, 1], {}, {"a": 1}, {"": null, "b": [{}]}]"#;

/// Splits an input at its first NUL byte: `(head, Some(tail))`, or `(input, None)`.
pub fn split_nul(data: &[u8]) -> (&[u8], Option<&[u8]>) {
    match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    }
}

/// Parses JSON with serde_json's default nesting limit (what every server path uses).
pub fn json(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(bytes).ok()
}

/// The instances to validate: the input's own (the part after the NUL, as JSON), else the
/// probes.
pub fn instances(tail: Option<&[u8]>) -> Vec<Value> {
    if let Some(v) = tail.and_then(json) {
        return vec![v];
    }
    serde_json::from_str(PROBE_INSTANCES).unwrap_or_default()
}

/// Whether `pointer` is a JSON Pointer (`""` or `/…`, with `~` only as `~0`/`~1`).
pub fn is_json_pointer(pointer: &str) -> bool {
    if pointer.is_empty() {
        return true;
    }
    if !pointer.starts_with('/') {
        return false;
    }
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return false;
        }
    }
    true
}

/// A generous bound that separates "slow" from "unbounded" on a shared CI machine: the
/// budgets under test answer in milliseconds. libFuzzer's `-timeout` (scripts/fuzz) is the
/// hard stop; this names the step that overran.
pub const STEP_BUDGET: Duration = Duration::from_secs(5);

/// Runs `f`, panicking (a fuzz finding) if it took longer than [`STEP_BUDGET`].
pub fn within_budget<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(
        took <= STEP_BUDGET,
        "{what} took {took:?}, over the {STEP_BUDGET:?} budget"
    );
    out
}

/// The process's async runtime (the servers a target starts run on it between inputs).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => panic!("cannot start the fuzz target's runtime: {e}"),
        }
    })
}
