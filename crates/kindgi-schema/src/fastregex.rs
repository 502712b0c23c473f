//! A fast path for `pattern` / `patternProperties`: translates an ECMAScript pattern (flag `u`)
//! into an equivalent pattern for the `regex` crate.
//!
//! Why: `regress` (see [`crate::jsregex`]) is exact but allocates on every match, while the
//! `regex` crate's lazy DFA matches without allocating and is much faster. The two dialects
//! differ in many details (`\d`, `\w`, `\s`, `.` and `\b` are Unicode-aware in `regex`, class
//! syntax has set operations, `\-` and `{` are legal in different places...), so only a small
//! subset whose meaning is provably identical for `RegExp.prototype.test` (an unanchored search
//! that only asks *whether* a match exists) is translated; everything else gives `None` and the
//! engine keeps using `regress`.
//!
//! Why existence is enough: without back-references and lookarounds, a JS pattern denotes a
//! regular language, and backtracking finds a match iff one exists; laziness and the rule that a
//! `*`-iteration may not match the empty string change *which* match is found, never *whether*
//! one is. A Rust `&str` holds no lone surrogates, so code-point (`u`) semantics and `regex`'s
//! scalar-value semantics see the same characters.

use regex_automata::dfa::{Automaton, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, Input};
use std::fmt::Write as _;

use crate::classseq::ClassSeq;

/// Largest `{n,m}` bound translated: bigger counts blow up the `regex` automaton (and compile
/// slowly) for no real schema's benefit, so they stay with `regress`.
const MAX_REPEAT: u32 = 1000;

/// Largest automaton translated, in [`translate`]'s weight (about one NFA state per unit:
/// counted repetitions multiply, nested ones compound — `((a{1000}){1000}){1000}` weighs
/// 10^9). Heavier patterns stay with `regress`, whose program is the size of the pattern, so
/// no automaton is ever built past this: compiling stays in milliseconds and bounded memory.
pub(crate) const MAX_WEIGHT: u64 = 50_000;

/// Heaviest pattern for which a dense DFA is tried (one up to [`DENSE_LIMIT`] bytes rarely
/// comes from a bigger NFA, and trying costs the determinisation).
const DENSE_WEIGHT: u64 = 4_096;

/// NFA size limit for every automaton built here (the `regex-automata` builder has none by
/// default: it would build a billion-state NFA if asked).
const NFA_LIMIT: usize = 2 * 1024 * 1024;

/// What one lazy-DFA pattern's cache may hold (per thread that matches it).
const LAZY_CACHE_LIMIT: usize = 256 * 1024;

/// What one schema's translated patterns may spend, in all: dense DFA bytes and automaton
/// weight. Past either, patterns take the next engine (lazy DFA, then `regress`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompileBudget {
    pub dense_bytes: usize,
    pub weight: u64,
}

impl CompileBudget {
    /// Per schema: 512 KiB of dense tables, and 10 patterns at [`MAX_WEIGHT`].
    pub(crate) const PER_SCHEMA: CompileBudget = CompileBudget {
        dense_bytes: 512 * 1024,
        weight: 10 * MAX_WEIGHT,
    };
}

/// JS `\d`: ASCII digits only (no `i` flag, so no Unicode folding either).
const DIGIT: &[(char, char)] = &[('0', '9')];
/// JS `\w`: ASCII word characters only.
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
/// JS `\s`: WhiteSpace (TAB, VT, FF, ZWNBSP, every `Zs`) plus LineTerminator (LF, CR, LS, PS).
/// Notably not U+0085 (NEL), which Rust's `\s` includes.
const SPACE: &[(char, char)] = &[
    ('\u{9}', '\u{D}'),
    ('\u{20}', '\u{20}'),
    ('\u{A0}', '\u{A0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200A}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202F}', '\u{202F}'),
    ('\u{205F}', '\u{205F}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{FEFF}', '\u{FEFF}'),
];

/// JS `.` without the `s` flag: anything but a LineTerminator.
const DOT: &str = r"[^\n\r\x{2028}\x{2029}]";

/// The `regex` crate's equivalent of the ECMAScript pattern `js` (flag `u`), or `None` when
/// the pattern uses anything whose meaning differs or is not handled here.
#[cfg(test)]
pub(crate) fn translate(js: &str) -> Option<String> {
    translate_weighed(js).map(|(out, _)| out)
}

/// [`translate`], with the automaton's weight (see [`MAX_WEIGHT`]); `None` past that weight.
pub(crate) fn translate_weighed(js: &str) -> Option<(String, u64)> {
    let p: Vec<char> = js.chars().collect();
    let mut out = String::with_capacity(js.len() * 2);
    let mut i = 0;
    let mut depth = 0usize;
    let mut w = Weight::default();
    // Whether the previous token can take a quantifier (an atom not already quantified); JS
    // with `u` rejects quantified assertions and double quantifiers, so we must too.
    let mut quantifiable = false;
    while let Some(&c) = p.get(i) {
        i += 1;
        match c {
            '^' | '$' | '|' => {
                out.push(c);
                w.atom(1);
                quantifiable = false;
            }
            '(' => {
                if p.get(i) == Some(&'?') {
                    // Only `(?:`; lookarounds and named groups are out of scope.
                    if p.get(i + 1) != Some(&':') {
                        return None;
                    }
                    i += 2;
                }
                // Captures are irrelevant to `test`, so every group is non-capturing.
                out.push_str("(?:");
                depth += 1;
                w.open();
                quantifiable = false;
            }
            ')' => {
                depth = depth.checked_sub(1)?;
                out.push(')');
                w.close()?;
                quantifiable = true;
            }
            '*' | '+' | '?' | '{' => {
                if !quantifiable {
                    return None;
                }
                if c == '{' {
                    let (lo, hi) = braced(&p, &mut i)?;
                    match hi {
                        Some(hi) if hi == lo => write!(out, "{{{lo}}}").ok()?,
                        Some(hi) => write!(out, "{{{lo},{hi}}}").ok()?,
                        None => write!(out, "{{{lo},}}").ok()?,
                    }
                    // The NFA holds `hi` copies of the atom (`lo + 1` when unbounded).
                    w.repeat(u64::from(hi.unwrap_or(lo.saturating_add(1))));
                } else {
                    out.push(c);
                    w.repeat(1);
                }
                if p.get(i) == Some(&'?') {
                    i += 1;
                    out.push('?');
                }
                quantifiable = false;
            }
            // Lone `}` and `]` are syntax errors under `u`.
            '}' | ']' => return None,
            '.' => {
                out.push_str(DOT);
                w.atom(class_weight(4));
                quantifiable = true;
            }
            '[' => {
                let ranges = class(&p, &mut i, &mut out)?;
                w.atom(class_weight(ranges));
                quantifiable = true;
            }
            '\\' => {
                match escape(&p, &mut i, false)? {
                    Atom::Char(ch) => {
                        push_literal(&mut out, ch);
                        w.atom(ch.len_utf8() as u64);
                    }
                    Atom::Set(neg, set) => {
                        push_set(&mut out, neg, set);
                        w.atom(class_weight(set.len() + usize::from(neg)));
                    }
                }
                quantifiable = true;
            }
            _ => {
                push_literal(&mut out, c);
                w.atom(c.len_utf8() as u64);
                quantifiable = true;
            }
        }
        if w.total() > MAX_WEIGHT {
            return None;
        }
    }
    if depth != 0 {
        return None;
    }
    let total = w.total();
    (total <= MAX_WEIGHT).then_some((out, total))
}

/// A class's weight: UTF-8 automata split a range into a few byte sequences each.
fn class_weight(ranges: usize) -> u64 {
    1 + 4 * ranges as u64
}

/// The running weight of a pattern being translated: the sum of its atoms, a quantifier
/// multiplying the atom or group before it. Saturating, so a billion-fold count is just huge.
#[derive(Default)]
struct Weight {
    /// The current group's sum so far.
    cur: u64,
    /// The weight of the last atom or group (what a quantifier multiplies).
    last: u64,
    /// The enclosing groups' sums.
    outer: Vec<u64>,
}

impl Weight {
    fn atom(&mut self, w: u64) {
        self.cur = self.cur.saturating_add(w);
        self.last = w;
    }

    fn open(&mut self) {
        self.outer.push(self.cur);
        self.cur = 0;
    }

    fn close(&mut self) -> Option<()> {
        let inner = self.cur.saturating_add(1);
        self.cur = self.outer.pop()?;
        self.atom(inner);
        Some(())
    }

    fn repeat(&mut self, times: u64) {
        let grown = self.last.saturating_mul(times.max(1));
        self.cur = self.cur.saturating_sub(self.last).saturating_add(grown);
        self.last = grown;
    }

    /// The whole pattern's weight so far (open groups included).
    fn total(&self) -> u64 {
        self.outer
            .iter()
            .fold(self.cur, |sum, w| sum.saturating_add(*w))
    }
}

/// `translate` + compile; None when either fails (e.g. size limits).
#[cfg(test)]
pub(crate) fn compile(js: &str) -> Option<FastRegex> {
    let mut unlimited = CompileBudget {
        dense_bytes: usize::MAX,
        weight: u64::MAX,
    };
    compile_within(js, &mut unlimited)
}

/// [`compile`], spending at most what `budget` has left (and taking what it spends off it):
/// one schema cannot make the engine hold unbounded tables, however many patterns it has.
/// Past the dense budget, patterns use the `regex` crate's lazy DFA; past the weight budget (or
/// [`MAX_WEIGHT`] for one pattern), `regress`. Every automaton is built under a size limit.
pub(crate) fn compile_within(js: &str, budget: &mut CompileBudget) -> Option<FastRegex> {
    if let Some(seq) = ClassSeq::parse(js) {
        return Some(FastRegex::Classes(seq));
    }
    let (translated, weight) = translate_weighed(js)?;
    if weight > budget.weight {
        return None;
    }
    budget.weight -= weight;
    if weight <= DENSE_WEIGHT {
        if let Some(dfa) = dense_dfa(&translated, budget.dense_bytes.min(DENSE_LIMIT)) {
            // Searches always start at the beginning of the text, so the start state is fixed.
            if let Ok(start) = dfa.start_state(&start::Config::new().anchored(Anchored::No)) {
                budget.dense_bytes = budget.dense_bytes.saturating_sub(dfa.memory_usage());
                return Some(FastRegex::Dense(Box::new(Dense { dfa, start })));
            }
        }
    }
    regex::RegexBuilder::new(&translated)
        .size_limit(NFA_LIMIT)
        .dfa_size_limit(LAZY_CACHE_LIMIT)
        .build()
        .ok()
        .map(FastRegex::Lazy)
}

/// The largest dense DFA built for one pattern (typical schema patterns need a few KiB).
const DENSE_LIMIT: usize = 64 * 1024;

/// A translated pattern, ready to search.
#[derive(Debug)]
pub(crate) enum FastRegex {
    /// A whole-string sequence of ASCII classes (`^[a-z][a-z0-9-]*$`): one pass, no tables.
    Classes(ClassSeq),
    /// A fully compiled DFA: a search is a table walk, with no cache to fetch and nothing
    /// allocated. Built when the pattern's DFA is small.
    Dense(Box<Dense>),
    /// The `regex` crate (lazy DFA and friends) for the rest.
    Lazy(regex::Regex),
}

impl FastRegex {
    /// `RegExp.prototype.test`: is there a match anywhere in `s`?
    #[inline]
    pub(crate) fn is_match(&self, s: &str) -> bool {
        match self {
            FastRegex::Classes(c) => c.is_match(s),
            FastRegex::Dense(d) => d.is_match(s),
            FastRegex::Lazy(re) => lazy_match(re, s),
        }
    }
}

/// Out of line: the `regex` crate's search is large, and inlined it would widen the frame of
/// every other path.
#[inline(never)]
fn lazy_match(re: &regex::Regex, s: &str) -> bool {
    re.is_match(s)
}

/// A dense DFA and its start state for a search from the beginning of the text.
#[derive(Debug)]
pub(crate) struct Dense {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
}

impl Dense {
    /// Walks the table byte by byte and stops at the first match or the dead state. The
    /// library's search sets up an `Input` and finds the start state on every call, which
    /// costs more than the walk for the short strings schemas check. Out of line, so a class
    /// sequence's check stays small enough to inline where a pattern is checked.
    #[inline(never)]
    fn is_match(&self, s: &str) -> bool {
        let dfa = &self.dfa;
        let mut state = self.start;
        for &b in s.as_bytes() {
            state = dfa.next_state(state, b);
            if dfa.is_special_state(state) {
                if dfa.is_match_state(state) {
                    return true;
                }
                if dfa.is_dead_state(state) {
                    return false;
                }
                if dfa.is_quit_state(state) {
                    return dense_fallback(dfa, s);
                }
            }
        }
        dfa.is_match_state(dfa.next_eoi_state(state))
    }
}

/// Only reached if a dense search gives up (it cannot, as built): an anchored retry at every
/// position, which is a complete search.
#[cold]
fn dense_fallback(dfa: &dense::DFA<Vec<u32>>, s: &str) -> bool {
    (0..=s.len()).filter(|&i| s.is_char_boundary(i)).any(|i| {
        let input = Input::new(s)
            .range(i..)
            .anchored(Anchored::Yes)
            .earliest(true);
        matches!(dfa.try_search_fwd(&input), Ok(Some(_)))
    })
}

/// The pattern as a dense DFA of at most `limit` bytes.
fn dense_dfa(pattern: &str, limit: usize) -> Option<dense::DFA<Vec<u32>>> {
    if limit == 0 {
        return None;
    }
    dense::Builder::new()
        .thompson(thompson::Config::new().nfa_size_limit(Some(NFA_LIMIT)))
        .configure(
            dense::Config::new()
                .dfa_size_limit(Some(limit))
                .determinize_size_limit(Some(4 * limit)),
        )
        .build(pattern)
        .ok()
}

/// What an escape denotes.
enum Atom {
    Char(char),
    /// A class escape: (negated, members).
    Set(bool, &'static [(char, char)]),
}

/// Parses the escape after a `\` (at `p[*i]`). `in_class` allows `\-`, which `u` only accepts
/// inside a class.
fn escape(p: &[char], i: &mut usize, in_class: bool) -> Option<Atom> {
    let c = *p.get(*i)?;
    *i += 1;
    let atom = match c {
        'd' => Atom::Set(false, DIGIT),
        'D' => Atom::Set(true, DIGIT),
        'w' => Atom::Set(false, WORD),
        'W' => Atom::Set(true, WORD),
        's' => Atom::Set(false, SPACE),
        'S' => Atom::Set(true, SPACE),
        't' => Atom::Char('\t'),
        'n' => Atom::Char('\n'),
        'r' => Atom::Char('\r'),
        'f' => Atom::Char('\u{C}'),
        'v' => Atom::Char('\u{B}'),
        // `\0` followed by a digit is a syntax error under `u`.
        '0' if !p.get(*i).is_some_and(char::is_ascii_digit) => Atom::Char('\0'),
        'x' => {
            let v = hex_digits(p, i, 2)?;
            Atom::Char(char::from_u32(v)?)
        }
        'u' if p.get(*i) == Some(&'{') => {
            *i += 1;
            let start = *i;
            let mut v: u32 = 0;
            while let Some(d) = p.get(*i).and_then(|d| d.to_digit(16)) {
                v = v.checked_mul(16)?.checked_add(d)?;
                if v > 0x10FFFF {
                    return None;
                }
                *i += 1;
            }
            if *i == start || p.get(*i) != Some(&'}') {
                return None;
            }
            *i += 1;
            // `from_u32` refuses surrogates: a lone one never matches a `&str` anyway, but
            // keeping such patterns on `regress` avoids reasoning about it.
            Atom::Char(char::from_u32(v)?)
        }
        // A surrogate `\uHHHH` may pair with the next escape into one code point: not handled.
        'u' => Atom::Char(char::from_u32(hex_digits(p, i, 4)?)?),
        '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
        | '/' => Atom::Char(c),
        '-' if in_class => Atom::Char('-'),
        _ => return None,
    };
    Some(atom)
}

/// Exactly `n` hex digits at `p[*i]`.
fn hex_digits(p: &[char], i: &mut usize, n: usize) -> Option<u32> {
    let mut v = 0;
    for _ in 0..n {
        v = v * 16 + p.get(*i)?.to_digit(16)?;
        *i += 1;
    }
    Some(v)
}

/// Parses a braced quantifier after its `{` (at `p[*i]`): `{n}`, `{n,}`, `{n,m}` as
/// (n, Some(m) / None for unbounded). Anything else is a syntax error under `u`.
fn braced(p: &[char], i: &mut usize) -> Option<(u32, Option<u32>)> {
    let lo = decimal(p, i)?;
    let hi = if p.get(*i) == Some(&',') {
        *i += 1;
        if p.get(*i) == Some(&'}') {
            None
        } else {
            Some(decimal(p, i)?)
        }
    } else {
        Some(lo)
    };
    if p.get(*i) != Some(&'}') {
        return None;
    }
    *i += 1;
    if hi.is_some_and(|hi| hi < lo) {
        return None;
    }
    Some((lo, hi))
}

/// One or more ASCII digits at `p[*i]`, at most `MAX_REPEAT`.
fn decimal(p: &[char], i: &mut usize) -> Option<u32> {
    let start = *i;
    let mut v: u32 = 0;
    while let Some(d) = p.get(*i).and_then(|d| d.to_digit(10)) {
        v = v.saturating_mul(10).saturating_add(d);
        *i += 1;
    }
    (*i > start && v <= MAX_REPEAT).then_some(v)
}

/// Parses a class after its `[` (at `p[*i]`) and emits it with every member as `\x{HEX}`, so
/// none of Rust's class syntax (`[`, `&&`, `--`, `~~`, `^`...) can be triggered by accident.
fn class(p: &[char], i: &mut usize, out: &mut String) -> Option<usize> {
    let negated = p.get(*i) == Some(&'^');
    if negated {
        *i += 1;
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    loop {
        let c = *p.get(*i)?;
        *i += 1;
        if c == ']' {
            break;
        }
        let first = class_atom(p, i, c)?;
        // `-` makes a range unless it is the class's last character.
        if p.get(*i) == Some(&'-') && p.get(*i + 1).is_some_and(|&n| n != ']') {
            let next = p[*i + 1];
            *i += 2;
            let second = class_atom(p, i, next)?;
            // Under `u`, a class escape at either end of a range is a syntax error.
            let (Atom::Char(lo), Atom::Char(hi)) = (first, second) else {
                return None;
            };
            if lo > hi {
                return None;
            }
            ranges.push((lo, hi));
        } else {
            match first {
                Atom::Char(ch) => ranges.push((ch, ch)),
                // A negated class escape inside a class is not handled.
                Atom::Set(true, _) => return None,
                Atom::Set(false, set) => ranges.extend_from_slice(set),
            }
        }
    }
    // `[]` matches nothing and `[^]` anything; Rust spells neither this way.
    if ranges.is_empty() {
        return None;
    }
    out.push('[');
    if negated {
        out.push('^');
    }
    push_ranges(out, &ranges);
    out.push(']');
    Some(ranges.len() + usize::from(negated))
}

/// One class member starting with `c` (already consumed).
fn class_atom(p: &[char], i: &mut usize, c: char) -> Option<Atom> {
    if c == '\\' {
        escape(p, i, true)
    } else {
        Some(Atom::Char(c))
    }
}

fn push_literal(out: &mut String, c: char) {
    let mut buf = [0u8; 4];
    out.push_str(&regex::escape(c.encode_utf8(&mut buf)));
}

fn push_set(out: &mut String, negated: bool, set: &[(char, char)]) {
    out.push('[');
    if negated {
        out.push('^');
    }
    push_ranges(out, set);
    out.push(']');
}

fn push_ranges(out: &mut String, ranges: &[(char, char)]) {
    for &(lo, hi) in ranges {
        // Writing to a String cannot fail.
        let _ = write!(out, "\\x{{{:X}}}", u32::from(lo));
        if hi != lo {
            let _ = write!(out, "-\\x{{{:X}}}", u32::from(hi));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_tables_stay_within_the_schema_budget() {
        let with = |dense_bytes| CompileBudget {
            dense_bytes,
            weight: u64::MAX,
        };
        let mut budget = with(64 * 1024);
        let first = compile_within("^[a-z]+(-[a-z0-9]+)*$", &mut budget).unwrap();
        assert!(matches!(first, FastRegex::Dense(_)));
        assert!(
            budget.dense_bytes < 64 * 1024,
            "the DFA's size is taken off the budget"
        );
        let mut spent = with(0);
        let lazy = compile_within("^[a-z]+(-[a-z0-9]+)*$", &mut spent).unwrap();
        assert!(
            matches!(lazy, FastRegex::Lazy(_)),
            "no budget left: the lazy DFA"
        );
        for s in ["alpha", "beta-2", "Alpha", "", "a b", "x", "a--b"] {
            assert_eq!(first.is_match(s), lazy.is_match(s), "{s:?}");
        }
        // A whole-string class sequence needs no table at all.
        let mut budget = with(64 * 1024);
        let seq = compile_within("^[a-z][a-z0-9-]*$", &mut budget).unwrap();
        assert!(matches!(seq, FastRegex::Classes(_)));
        assert_eq!(budget.dense_bytes, 64 * 1024);
        // A pattern whose DFA is larger than the per-pattern limit falls back too.
        let mut budget = with(usize::MAX);
        let big = compile_within("^[^\\s@]{1,400}@[^\\s@]{1,400}$", &mut budget).unwrap();
        assert!(matches!(big, FastRegex::Lazy(_)));
        assert!(big.is_match("ada@example.com") && !big.is_match("nope"));
    }

    /// Patterns that must translate (so the differential test cannot pass vacuously).
    const SUPPORTED: &[&str] = &[
        // Common schema patterns.
        r"^[a-z][a-z0-9-]*$",
        r"^[0-9]{5}$",
        r"^\d{3}-\d{4}$",
        r"^[A-Z]{2,3}$",
        r"^(foo|bar)$",
        r"^[^\s@]+@[^\s@]+\.[^\s@]+$",
        r"^\w+$",
        r".+",
        r"abc",
        r"",
        r"^$",
        r"^[a-zA-Z0-9_.-]+$",
        r"^https?://",
        r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        r"^\S+$",
        r"^\s*$",
        r"^\D+$",
        r"^\W+$",
        r"^x-",
        r"^v[0-9]+(\.[0-9]+){0,2}$",
        // Anchors and alternation.
        r"^a|b$",
        r"a|^b",
        r"(^a|b)c",
        r"^(?:a|b)+$",
        r"a|",
        r"|a",
        r"()",
        r"(|a)b",
        r"(^)*a",
        r"(?:)?",
        // Quantifiers, lazy too.
        r"^a*?$",
        r"^a+?b",
        r"^a??b$",
        r"^a{2}$",
        r"^a{2,}$",
        r"^a{2,3}$",
        r"^a{2,3}?$",
        r"^a{0}$",
        r"^a{01,002}$",
        r"^(a*)*$",
        r"^(a|ab)(c|bcd)(d*)$",
        r"^((a)|b)+$",
        r"^(?:(?:a|b)c)*d$",
        // Dot.
        r"^.$",
        r"^.*$",
        r"a.c",
        r"^..$",
        // Class escapes.
        r"^\s$",
        r"^\S$",
        r"^\w$",
        r"^\d$",
        r"\d",
        // Character escapes.
        r"^\t\n\r\f\v$",
        r"\n",
        r"^\0$",
        r"^\x41\x7a$",
        r"^\u00e9$",
        r"^\u{1F600}$",
        r"^\u{00000041}$",
        r"\^\$\\\.\*\+\?\(\)\[\]\{\}\|\/",
        // Classes.
        r"^[-a]$",
        r"^[a-]$",
        r"^[a\-z]$",
        r"^[\]]$",
        r"^[\^]$",
        r"^[^^]$",
        r"^[a^]$",
        r"^[[]$",
        r"^[\\]$",
        r"^[&&a]$",
        r"^[a&&b]$",
        r"^[+--b]+$",
        r"^[~~]$",
        r"^[--a]+$",
        r"^[a-c-e]+$",
        r"^[\d\s]+$",
        r"^[\w.]+$",
        r"^[^\d]+$",
        r"^[^\n]+$",
        r"^[\x41-\x5A]+$",
        r"^[\u00e0-\u00ff]+$",
        r"^[\u{1F600}-\u{1F64F}]$",
        r"^[😀]$",
        r"^[é😀a]+$",
        r"^[\t-\r]$",
        r"^[.*+?]$",
        r"^[(){}|$]+$",
        r"^[ ]$",
        r"^[#]$",
        // Non-ASCII and astral literals.
        r"^é$",
        r"^😀+$",
        r"^日本語",
        r"a b",
        r"#x",
        r"^a&&b~~c--d$",
        r"^\d{3}",
    ];

    /// Patterns the class-sequence pass takes (some are in `SUPPORTED` too): the differential
    /// test below checks them as well.
    const CLASS_SEQUENCES: &[&str] = &[
        r"^[a-z][a-z0-9-]*$",
        r"^[0-9]{5}$",
        r"^\d{3}-\d{4}$",
        r"^[A-Z]{2,3}$",
        r"^\w+$",
        r"^$",
        r"^a{2,3}$",
        r"^a{0}$",
        r"^a{01,002}$",
        r"^[+--b]+$",
        r"^[--a]+$",
        r"^[a-c-e]+$",
        r"^[a\-z]$",
        r"^[\]]$",
        r"^\t\n\r\f\v$",
        r"^[\w.]+$",
        r"^[.*+?]$",
        r"^[(){}|$]+$",
        r"^a&&b~~c--d$",
        r"^[a-z]{1,3}-[0-9]{2,}$",
        r"^[a-z]+:[0-9]+$",
        r"^a?b$",
        r"^[ab]*c$",
        r"^\w{2}\d?$",
        r"^[\]\\-]+$",
    ];

    #[test]
    fn class_sequences_take_the_one_pass() {
        for p in CLASS_SEQUENCES {
            assert!(
                matches!(compile(p), Some(FastRegex::Classes(_))),
                "{p} should be a class sequence"
            );
        }
    }

    /// Patterns that must not translate.
    const UNSUPPORTED: &[&str] = &[
        r"\bfoo",
        r"\B",
        r"(?=a)",
        r"(?!a)",
        r"(?<=a)b",
        r"(?<!a)b",
        r"(?<n>a)",
        r"(a)\1",
        r"\k<n>",
        r"\p{L}",
        r"\P{L}",
        r"\cA",
        r"[]",
        r"[^]",
        r"[\D]",
        r"[\W]",
        r"[\S]",
        r"\uD83D",
        r"\uD83D\uDE00",
        r"\u{D800}",
        r"\u{110000}",
        r"\u{}",
        r"\x4",
        r"\u12",
        r"\00",
        r"\-",
        r"\a",
        r"\e",
        r"[\b]",
        r"[\d-z]",
        r"[a-\d]",
        r"[z-a]",
        r"a{",
        r"a{,3}",
        r"a{3,2}",
        r"a{1001}",
        r"a{1,}}",
        r"{",
        r"}",
        r"]",
        r"*a",
        r"a**",
        r"a*??",
        r"^*",
        r"$+",
        r"[a--b]",
        r"(",
        r")",
        r"(a",
        r"a)",
        r"[a",
        r"\",
        r"(?i)a",
    ];

    const SUBJECTS: &[&str] = &[
        "",
        "abc-12",
        "a-123",
        "abcd-12",
        "abc-1",
        "x:1",
        "x:",
        "aabbc",
        "ab1",
        "]\\-",
        "a",
        "b",
        "c",
        "d",
        "ab",
        "ba",
        "abc",
        "abcd",
        "aa",
        "aaa",
        "aaaa",
        "foo",
        "bar",
        "foobar",
        "x-foo",
        "abc-def",
        "Abc",
        "ABC",
        "AB",
        "12345",
        "1234",
        "123-4567",
        "v1.2.3",
        "a@b.c",
        "a @b.c",
        "https://x",
        "0123abcd-0123-0123-0123-0123456789ab",
        "hello world",
        " ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "a\nb",
        "a\rc",
        "a\u{2028}c",
        "\u{2029}",
        "\u{0B}\u{0C}",
        "\u{A0}",
        "\u{FEFF}",
        "\u{85}",
        "\u{1680}\u{2000}\u{200A}\u{202F}\u{205F}\u{3000}",
        "\u{200B}",
        "\0",
        "é",
        "café",
        "٣",
        "٣٤٥",
        "😀",
        "😀😀",
        "a😀b",
        "日本語テキスト",
        "_",
        "-",
        "^",
        "]",
        "[",
        "\\",
        "&",
        "~",
        "#",
        "a&&b~~c--d",
        "^$\\.*+?()[]{}|/",
        ".",
        "Az",
        "\u{e0}\u{ff}",
        "\u{1F64F}",
        "\u{1F650}",
        "\u{10FFFF}",
        "ac",
        "abcbcd",
        "abbcdd",
    ];

    #[test]
    fn supported_patterns_translate_and_compile() {
        for p in SUPPORTED {
            assert!(
                compile(p).is_some(),
                "{p:?} should translate: {:?}",
                translate(p)
            );
        }
    }

    #[test]
    fn unsupported_patterns_are_refused() {
        for p in UNSUPPORTED {
            assert_eq!(translate(p), None, "{p:?} should not translate");
        }
    }

    #[test]
    fn differential_against_regress() {
        let mut compared = 0usize;
        for p in SUPPORTED.iter().chain(CLASS_SEQUENCES).chain(UNSUPPORTED) {
            let Some(fast) = compile(p) else { continue };
            // Anything we translate must be a valid JS pattern too.
            let slow = crate::jsregex::compile_u(p)
                .unwrap_or_else(|e| panic!("{p:?} translated but regress refuses: {e:?}"));
            for s in SUBJECTS {
                let want = slow.find(s).is_some();
                assert_eq!(fast.is_match(s), want, "pattern {p:?} on {s:?}");
                compared += 1;
            }
        }
        assert!(compared >= 60 * 40, "only {compared} comparisons");
    }

    /// Small deterministic generator of patterns from JS tokens: for every pattern we translate,
    /// `regress` must compile it and agree on every subject.
    #[test]
    fn differential_generated() {
        const TOKENS: &[&str] = &[
            "a", "b", "-", ".", "^", "$", "|", "(", "(?:", ")", "*", "+", "?", "{2}", "{1,2}",
            "{0,}", "\\d", "\\w", "\\s", "\\S", "\\D", "\\W", "[a-c]", "[^a]", "[\\s-]", "[-\\w]",
            "é", "😀", "\\n", "\\u{e9}", "[\\]^]",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut translated = 0usize;
        for _ in 0..4000 {
            let len = 1 + (next() % 7) as usize;
            let mut p = String::new();
            for _ in 0..len {
                p.push_str(TOKENS[(next() % TOKENS.len() as u64) as usize]);
            }
            let Some(fast) = compile(&p) else { continue };
            let slow = crate::jsregex::compile_u(&p)
                .unwrap_or_else(|e| panic!("{p:?} translated but regress refuses: {e:?}"));
            translated += 1;
            for s in SUBJECTS {
                assert_eq!(
                    fast.is_match(s),
                    slow.find(s).is_some(),
                    "pattern {p:?} on {s:?}"
                );
            }
        }
        assert!(
            translated > 500,
            "only {translated} generated patterns translated"
        );
    }
}
