//! Test-only fault injection: `KINDGI_FAULT=<point>` makes the process abort at that point,
//! as a crash would, so tests can kill a runtime between two writes and check what recovery
//! does. Points: `after-decision` (a reviewer's decision is journaled and its approval row
//! moved — one transaction — and the run is not resumed yet). Never set it in production.

use std::sync::OnceLock;

/// Aborts the process when `KINDGI_FAULT` names `point`.
pub(crate) fn point(point: &str) {
    static FAULT: OnceLock<Option<String>> = OnceLock::new();
    let fault = FAULT.get_or_init(|| std::env::var("KINDGI_FAULT").ok());
    if fault.as_deref() == Some(point) {
        eprintln!("KINDGI_FAULT={point}: aborting here (test-only fault injection)");
        std::process::abort();
    }
}
