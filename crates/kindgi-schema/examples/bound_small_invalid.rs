#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A measurement bound, not part of the engine: the `small-invalid` benchmark case validated
//! by code written by hand for its one schema, producing the same ten issues in the same
//! 64-byte layout the engine uses (the site's place in a table, a box for extras,
//! `uniqueItems`' pair, the path text inline). It shows what a validator that compiled schemas
//! down to specialised code could reach, next to the interpreter (`bench_cases`) and Ajv
//! (`scripts/ajv/bench.mjs`):
//!
//! ```text
//! cargo run --release -p kindgi-schema --example bound_small_invalid -- CASE.json [SECONDS]
//! ```
//!
//! `CASE.json` holds the `small-invalid` element of `benches/data/cases.json` (as a one-element
//! array). Prints validations per second; `KINDGI_BENCH_ITERS=N` runs exactly N validations and
//! prints nothing (for instruction counts under callgrind). The checks are simplified where
//! that only makes this bound faster (`email` is "contains @", the pattern is hand-coded).

use serde_json::{Map, Value};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

/// Stands for the engine's compile-time site (schema path, keyword, params, message).
struct Site {
    _keyword: &'static str,
}

/// The engine's issue layout: 64 bytes, the site named by its place in the validator's table
/// (the list returned holds one reference to the table).
struct Issue {
    site: u32,
    _extra: Option<Box<(usize, String)>>,
    _pair: [u32; 2],
    text: [u8; 40],
}

struct Run {
    issues: Vec<Issue>,
}

impl Run {
    /// Appends an issue at the path `segs`, with `name` after it (an open params slot).
    #[inline(never)]
    fn report(&mut self, site: usize, segs: &[&[u8]], name: &[u8], pair: [u32; 2]) {
        if self.issues.capacity() == 0 {
            self.issues.reserve(16);
        }
        let mut text = [0u8; 40];
        let mut n = 3;
        for s in segs {
            text[n] = b'/';
            n += 1;
            for c in s.iter() {
                text[n] = *c;
                n += 1;
            }
        }
        text[0] = (n - 3) as u8;
        for c in name {
            text[n] = *c;
            n += 1;
        }
        text[1] = (n - 3) as u8;
        self.issues.push(Issue {
            site: site as u32,
            _extra: None,
            _pair: pair,
            text,
        });
    }
}

fn get<'a>(m: &'a Map<String, Value>, k: &str) -> Option<&'a Value> {
    m.iter().find(|(a, _)| a.as_str() == k).map(|(_, v)| v)
}

/// `^[a-z][a-z0-9-]*$`
fn tag_pattern(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

fn validate(r: &mut Run, v: &Value) -> bool {
    const NONE: [u32; 2] = [0; 2];
    let Value::Object(m) = v else {
        r.report(0, &[], b"", NONE);
        return false;
    };
    let declared = ["msg", "count", "mode", "email", "tags", "when", "opts"];
    let mut ok = true;
    for name in ["msg", "count"] {
        if get(m, name).is_none() {
            r.report(1, &[], b"", NONE);
            ok = false;
        }
    }
    for k in m.keys() {
        if !declared.contains(&k.as_str()) {
            r.report(2, &[], k.as_bytes(), NONE);
            ok = false;
        }
    }
    if let Some(x) = get(m, "msg") {
        if let Value::String(s) = x {
            let len = s.chars().count();
            if len > 2000 {
                r.report(3, &[b"msg"], b"", NONE);
                ok = false;
            }
            if len < 1 {
                r.report(4, &[b"msg"], b"", NONE);
                ok = false;
            }
        } else {
            r.report(5, &[b"msg"], b"", NONE);
            ok = false;
        }
    }
    if let Some(x) = get(m, "count") {
        match x.as_f64() {
            Some(n) if x.is_i64() || x.is_u64() => {
                if n > 100.0 {
                    r.report(6, &[b"count"], b"", NONE);
                    ok = false;
                }
                if n < 0.0 {
                    r.report(7, &[b"count"], b"", NONE);
                    ok = false;
                }
            }
            _ => {
                r.report(8, &[b"count"], b"", NONE);
                ok = false;
            }
        }
    }
    if let Some(x) = get(m, "mode") {
        if !x.is_string() {
            r.report(9, &[b"mode"], b"", NONE);
            ok = false;
        }
        if !["fast", "safe", "auto"]
            .iter()
            .any(|e| x.as_str() == Some(*e))
        {
            r.report(10, &[b"mode"], b"", NONE);
            ok = false;
        }
    }
    if let Some(x) = get(m, "email") {
        if let Value::String(s) = x {
            if !s.contains('@') {
                r.report(11, &[b"email"], b"", NONE);
                ok = false;
            }
        } else {
            r.report(12, &[b"email"], b"", NONE);
            ok = false;
        }
    }
    if let Some(x) = get(m, "tags") {
        if let Value::Array(a) = x {
            if a.len() > 10 {
                r.report(13, &[b"tags"], b"", NONE);
                ok = false;
            }
            for (i, item) in a.iter().enumerate() {
                if let Value::String(s) = item {
                    if !tag_pattern(s) {
                        let digit = [b'0' + (i % 10) as u8];
                        r.report(14, &[b"tags", &digit], b"", NONE);
                        ok = false;
                    }
                } else {
                    r.report(15, &[b"tags"], b"", NONE);
                    ok = false;
                }
            }
            'dup: for i in (0..a.len()).rev() {
                for j in (0..i).rev() {
                    if a[i] == a[j] {
                        r.report(16, &[b"tags"], b"", [j as u32, i as u32]);
                        ok = false;
                        break 'dup;
                    }
                }
            }
        } else {
            r.report(17, &[b"tags"], b"", NONE);
            ok = false;
        }
    }
    if let Some(x) = get(m, "when") {
        if !x.is_string() {
            r.report(18, &[b"when"], b"", NONE);
            ok = false;
        }
    }
    if let Some(x) = get(m, "opts") {
        if let Value::Object(o) = x {
            for k in o.keys() {
                if k != "loud" && k != "ratio" {
                    r.report(19, &[b"opts"], k.as_bytes(), NONE);
                    ok = false;
                }
            }
            if get(o, "loud").is_some_and(|l| !l.is_boolean()) {
                r.report(20, &[b"opts", b"loud"], b"", NONE);
                ok = false;
            }
            if let Some(ratio) = get(o, "ratio") {
                if let Some(n) = ratio.as_f64() {
                    if n <= 0.0 {
                        r.report(21, &[b"opts", b"ratio"], b"", NONE);
                        ok = false;
                    }
                    if n > 1.0 {
                        r.report(22, &[b"opts", b"ratio"], b"", NONE);
                        ok = false;
                    }
                } else {
                    r.report(23, &[b"opts", b"ratio"], b"", NONE);
                    ok = false;
                }
            }
        } else {
            r.report(24, &[b"opts"], b"", NONE);
            ok = false;
        }
    }
    ok
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: bound_small_invalid CASE.json [SECONDS]");
    let secs: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let instance = &cases[0]["instance"];
    let sites: Arc<[Arc<Site>]> = (0..25).map(|_| Arc::new(Site { _keyword: "k" })).collect();
    let run = |instance: &Value| {
        let mut r = Run { issues: Vec::new() };
        let ok = validate(&mut r, instance);
        (ok, Arc::clone(&sites), r.issues)
    };
    let (valid, table, issues) = run(instance);
    assert!(!valid && issues.len() == 10, "not the small-invalid case");
    assert!(
        issues
            .iter()
            .all(|i| i.text[1] as usize <= 37 && (i.site as usize) < table.len())
    );
    if let Some(n) = std::env::var("KINDGI_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        for _ in 0..n {
            black_box(run(black_box(instance)));
        }
        return;
    }
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        for _ in 0..1000 {
            black_box(run(black_box(instance)));
        }
        n += 1000;
    }
    println!("{:.0}", n as f64 / start.elapsed().as_secs_f64());
}
