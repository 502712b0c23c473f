#![allow(clippy::unwrap_used, clippy::expect_used)]
// A counting global allocator needs `unsafe impl GlobalAlloc` (it only forwards to `System`).
#![allow(unsafe_code)]
//! Compiling a schema whose `pattern` hides a huge automaton (nested or large counted
//! repetitions, huge classes) finishes quickly and within a bounded amount of memory.
//!
//! This binary's allocator counts live bytes and refuses any allocation past [`CAP`] (the
//! process then aborts, so the test fails loudly instead of eating the machine's memory); each
//! compile's peak is also checked against [`PEAK_BOUND`]. One test per binary: the peak is
//! process-wide.

use kindgi_schema::{CompileOptions, Mode, Side, compile};
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Hard cap on live heap bytes in this test binary.
const CAP: usize = 1024 * 1024 * 1024;
/// What one schema's compile may peak at, above what was live before it.
const PEAK_BOUND: usize = 64 * 1024 * 1024;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts (and refuses past the cap).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        if now > CAP {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let grow = new_size.saturating_sub(layout.size());
        let now = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
        if now > CAP {
            LIVE.fetch_sub(grow, Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            LIVE.fetch_sub(grow, Ordering::Relaxed);
        } else {
            LIVE.fetch_sub(layout.size().saturating_sub(new_size), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Patterns whose automata would be huge if built in full.
const NASTY: &[&str] = &[
    "^((a{1000}){1000}){1000}$",
    "((a{1000}){1000}){1000}",
    "(a{1000}){1000}",
    "((((a{9}){9}){9}){9}){9}",
    "^(\\w{1000}){1000}$",
    "^(?:[\\u{0}-\\u{10FFFF}]{1000}){1000}$",
    "^[^a]{1000}[^b]{1000}[^c]{1000}$",
    "^(.{1000}){1000}$",
    "^(\\s{1000}|\\S{1000}){1000}$",
    "a{0,1000}b{0,1000}c{0,1000}d{0,1000}",
    "^(\\p{L}{1000}){1000}$",
    "^[a-z]{100000}$",
    "a{0,4294967295}b",
    "^(a{1000}){1000}\\1$",
];

#[test]
fn nasty_counted_patterns_compile_quickly_and_bounded() {
    let opts = CompileOptions {
        mode: Mode::Pack,
        side: Side::Output,
    };
    for p in NASTY {
        let schema = json!({"type": "string", "pattern": p});
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let started = Instant::now();
        let v = compile(&schema, opts).unwrap_or_else(|e| panic!("{p}: {e}"));
        let took = started.elapsed();
        let peak = PEAK.load(Ordering::Relaxed) - before;
        assert!(
            peak < PEAK_BOUND,
            "{p}: compiling peaked at {peak} bytes (bound {PEAK_BOUND})"
        );
        // Generous: a hang detector, not a speed test.
        assert!(took < Duration::from_secs(20), "{p}: compile took {took:?}");
        // Still answers (some strings are out of the matcher's budget: also an answer).
        let _ = v.validate(&json!("aaaa"));
        let _ = v.validate(&json!("a".repeat(1000)));
    }
}
