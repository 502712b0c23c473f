//! Patterns that spell a whole string as a sequence of ASCII character classes —
//! `^[a-z][a-z0-9-]*$`, `^\d{4}-\d{2}-\d{2}$`, `^[A-Z]{3}$`, the commonest kind in tool schemas
//! (ids, slugs, codes) — matched by one pass over the bytes, with no automaton to walk.
//!
//! A step is a set of ASCII bytes with a count range. The pass takes as many bytes as a step
//! allows before moving on, and never goes back, so only sequences where that is exact are
//! accepted: a step whose count varies must be the last one, or be followed by a step that
//! needs at least one byte none of which it could take itself. Then any match gives every
//! step exactly the bytes the pass gives it, so the pass finds a match iff one exists. Every
//! set is ASCII, so a string with any other character never matches, as the JavaScript
//! pattern would not (its classes hold no such character either).
//!
//! Anything else — alternation, groups, `.`, negated classes, `\s`, lookarounds, a missing
//! anchor — is refused here and left to the other paths of [`crate::fastregex`].

/// A byte set over ASCII: bit `b` of the 128.
type Set = u128;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Step {
    set: Set,
    min: u32,
    /// `u32::MAX`: no upper bound.
    max: u32,
}

/// An anchored sequence of character-class steps (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClassSeq {
    /// Each step's bit (`1 << k`) and count range.
    steps: Box<[(StepBits, u32, u32)]>,
    /// For every byte value, the steps whose set holds it: a byte costs one load and a test.
    bytes: Box<[StepBits; 256]>,
}

/// One bit per step.
type StepBits = u16;

/// Most steps a sequence may have (one bit each in [`StepBits`]).
const MAX_STEPS: usize = StepBits::BITS as usize;

/// Largest count written in a quantifier that is accepted (bigger ones go elsewhere).
const MAX_COUNT: u32 = 100_000;

const DIGITS: Set = range(b'0', b'9');
const WORD: Set = range(b'0', b'9') | range(b'A', b'Z') | range(b'a', b'z') | bit(b'_');

const fn bit(b: u8) -> Set {
    1 << b
}

const fn range(lo: u8, hi: u8) -> Set {
    // `hi` < 128 and `lo` <= `hi`: bits lo..=hi.
    let upto_hi = if hi == 127 {
        Set::MAX
    } else {
        (1 << (hi + 1)) - 1
    };
    upto_hi & !((1 << lo) - 1)
}

impl ClassSeq {
    /// The pattern as a class sequence, or `None` when it is not one this pass matches exactly.
    pub(crate) fn parse(pattern: &str) -> Option<ClassSeq> {
        let b = pattern.as_bytes();
        if !pattern.is_ascii() || b.first() != Some(&b'^') {
            return None;
        }
        let mut steps: Vec<Step> = Vec::new();
        let mut i = 1;
        loop {
            let c = *b.get(i)?;
            i += 1;
            let set = match c {
                b'$' if i == b.len() => break,
                b'[' => class(b, &mut i)?,
                b'\\' => escape(b, &mut i, false)?,
                b'^' | b'$' | b'.' | b'|' | b'(' | b')' | b']' | b'{' | b'}' | b'*' | b'+'
                | b'?' => return None,
                _ => bit(c),
            };
            let (min, max) = quantifier(b, &mut i)?;
            steps.push(Step { set, min, max });
        }
        // The pass is exact only where a varying step cannot hand bytes to the next one.
        for (k, s) in steps.iter().enumerate() {
            if s.min == s.max {
                continue;
            }
            if let Some(next) = steps.get(k + 1) {
                if next.min == 0 || next.set & s.set != 0 {
                    return None;
                }
            }
        }
        if steps.len() > MAX_STEPS {
            return None;
        }
        let mut bytes = Box::new([0 as StepBits; 256]);
        for (k, step) in steps.iter().enumerate() {
            for (c, members) in bytes.iter_mut().enumerate().take(128) {
                if (step.set >> c) & 1 == 1 {
                    *members |= 1 << k;
                }
            }
        }
        Some(ClassSeq {
            steps: steps
                .iter()
                .enumerate()
                .map(|(k, s)| (1 << k, s.min, s.max))
                .collect(),
            bytes,
        })
    }

    /// Whether `s` matches (the pattern is anchored at both ends, so a search is a match of
    /// the whole string).
    #[inline]
    pub(crate) fn is_match(&self, s: &str) -> bool {
        let mut rest = s.as_bytes();
        for &(bit, min, max) in &self.steps {
            let head = rest.get(..rest.len().min(max as usize)).unwrap_or(rest);
            let mut taken = 0;
            for &c in head {
                if self.bytes[usize::from(c)] & bit == 0 {
                    break;
                }
                taken += 1;
            }
            if taken < min as usize {
                return false;
            }
            rest = rest.get(taken..).unwrap_or_default();
        }
        rest.is_empty()
    }
}

/// An optional quantifier after an atom at `b[*i]`: its count range (`(1, 1)` when none).
fn quantifier(b: &[u8], i: &mut usize) -> Option<(u32, u32)> {
    let q = match b.get(*i) {
        Some(b'*') => (0, u32::MAX),
        Some(b'+') => (1, u32::MAX),
        Some(b'?') => (0, 1),
        Some(b'{') => {
            *i += 1;
            let min = number(b, i)?;
            let max = match b.get(*i) {
                Some(b'}') => min,
                Some(b',') if b.get(*i + 1) == Some(&b'}') => {
                    *i += 1;
                    u32::MAX
                }
                Some(b',') => {
                    *i += 1;
                    number(b, i)?
                }
                _ => return None,
            };
            if b.get(*i) != Some(&b'}') || max < min {
                return None;
            }
            (min, max)
        }
        _ => return Some((1, 1)),
    };
    *i += 1;
    // A lazy quantifier finds a match just when the greedy one does, but keep to the plain.
    if matches!(b.get(*i), Some(b'?' | b'*' | b'+' | b'{')) {
        return None;
    }
    Some(q)
}

/// Decimal digits at `b[*i]`, at most [`MAX_COUNT`].
fn number(b: &[u8], i: &mut usize) -> Option<u32> {
    let start = *i;
    let mut n: u32 = 0;
    while let Some(&d) = b.get(*i).filter(|d| d.is_ascii_digit()) {
        n = n.checked_mul(10)?.checked_add(u32::from(d - b'0'))?;
        *i += 1;
    }
    (*i > start && n <= MAX_COUNT).then_some(n)
}

/// The escape after a `\` (at `b[*i]`): `\d`, `\w`, a control escape or an escaped syntax
/// character. Everything else (`\s`, `\b`, `\u…`, back-references…) is refused.
fn escape(b: &[u8], i: &mut usize, in_class: bool) -> Option<Set> {
    let c = *b.get(*i)?;
    *i += 1;
    Some(match c {
        b'd' => DIGITS,
        b'w' => WORD,
        b'n' => bit(b'\n'),
        b'r' => bit(b'\r'),
        b't' => bit(b'\t'),
        b'f' => bit(0x0C),
        b'v' => bit(0x0B),
        b'^' | b'$' | b'\\' | b'.' | b'*' | b'+' | b'?' | b'(' | b')' | b'[' | b']' | b'{'
        | b'}' | b'|' | b'/' => bit(c),
        b'-' if in_class => bit(c),
        _ => return None,
    })
}

/// A class after its `[`, up to and past its `]`. Not negated, not empty.
fn class(b: &[u8], i: &mut usize) -> Option<Set> {
    if matches!(b.get(*i), Some(b'^' | b']')) {
        return None;
    }
    let mut set: Set = 0;
    loop {
        if b.get(*i) == Some(&b']') {
            *i += 1;
            return Some(set);
        }
        let lo = class_atom(b, i)?;
        let is_range = b.get(*i) == Some(&b'-') && !matches!(b.get(*i + 1), Some(b']') | None);
        if !is_range {
            set |= lo;
            continue;
        }
        *i += 1;
        let hi = class_atom(b, i)?;
        // Both ends single bytes (`\d-z` is an error under `u`), in order.
        let (lo, hi) = (single(lo)?, single(hi)?);
        if hi < lo {
            return None;
        }
        set |= range(lo, hi);
    }
}

/// One member of a class at `b[*i]`: a byte or an escape.
fn class_atom(b: &[u8], i: &mut usize) -> Option<Set> {
    let c = *b.get(*i)?;
    *i += 1;
    match c {
        b'\\' => escape(b, i, true),
        b'[' | b']' => None,
        _ => Some(bit(c)),
    }
}

/// The byte of a one-byte set.
fn single(s: Set) -> Option<u8> {
    (s.count_ones() == 1).then_some(s.trailing_zeros() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets() {
        assert_eq!(range(b'a', b'c'), bit(b'a') | bit(b'b') | bit(b'c'));
        assert_eq!(range(0, 127), Set::MAX);
        assert_eq!(DIGITS.count_ones(), 10);
        assert_eq!(WORD.count_ones(), 63);
    }

    #[test]
    fn accepted_shapes() {
        for p in [
            r"^[a-z][a-z0-9-]*$",
            r"^[0-9]{5}$",
            r"^\d{3}-\d{4}$",
            r"^[A-Z]{2,3}$",
            r"^v\d+$",
            r"^[a-z0-9_]+$",
            r"^[a-f0-9]{64}$",
            r"^[\w.-]+$",
            r"^[-a-z]+$",
            r"^[a-z-]+$",
            r"^\$[a-z]+$",
            r"^[a-z]+:[0-9]+$",
            r"^$",
            r"^a?b$",
            r"^[a-z]{1,3}-[0-9]{2,}$",
        ] {
            assert!(ClassSeq::parse(p).is_some(), "{p}");
        }
    }

    #[test]
    fn refused_shapes() {
        for p in [
            r"[a-z]+$",
            r"^[a-z]+",
            r"^[a-z]+|x$",
            r"^([a-z])+$",
            r"^.+$",
            r"^[^a-z]+$",
            r"^\s+$",
            r"^[\s]+$",
            r"^[a-z]+[a-z0-9]*$",
            r"^[a-z]*[0-9]*$",
            r"^a*?$",
            r"^a{2,1}$",
            r"^a{x}$",
            r"^é$",
            r"^\bx$",
            r"^[\d-z]$",
            r"^[z-a]$",
            r"^a{1000000}$",
            r"^x$y",
        ] {
            assert!(ClassSeq::parse(p).is_none(), "{p}");
        }
    }

    /// Random patterns from class-sequence pieces (and pieces that must be refused): every
    /// pattern the parser takes answers as `regress` (the exact engine) does, on random text.
    #[test]
    fn random_patterns_agree_with_regress() {
        const PIECES: &[&str] = &[
            "a", "b", "-", "_", "[a-z]", "[0-9]", "[ab-]", "[-z]", "\\d", "\\w", "\\.", "\\-", "*",
            "+", "?", "{2}", "{1,3}", "{0,}", "(", ")", "|", ".", "[^a]", "\\s", "$", "^",
        ];
        const TEXT: &[u8] = b"ab-_z09Z. ";
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut taken = 0;
        for _ in 0..20_000 {
            let mut p = String::from("^");
            for _ in 0..1 + next(5) {
                p.push_str(PIECES[next(PIECES.len())]);
            }
            p.push('$');
            let Some(seq) = ClassSeq::parse(&p) else {
                continue;
            };
            let Ok(exact) = crate::jsregex::compile_u(&p) else {
                continue;
            };
            taken += 1;
            for _ in 0..40 {
                let len = next(7);
                let text: String = (0..len).map(|_| TEXT[next(TEXT.len())] as char).collect();
                let want = exact.find(&text).is_some();
                assert_eq!(seq.is_match(&text), want, "/{p}/ on {text:?}");
            }
            assert_eq!(seq.is_match("é"), exact.find("é").is_some(), "/{p}/ on é");
        }
        assert!(taken > 1000, "only {taken} patterns were class sequences");
    }

    #[test]
    fn matches() {
        let p = ClassSeq::parse(r"^[a-z][a-z0-9-]*$").unwrap();
        for (s, want) in [
            ("alpha", true),
            ("beta-2", true),
            ("x", true),
            ("Alpha", false),
            ("", false),
            ("a b", false),
            ("aé", false),
            ("a\n", false),
        ] {
            assert_eq!(p.is_match(s), want, "{s:?}");
        }
        let p = ClassSeq::parse(r"^[a-z]{1,3}-[0-9]{2,}$").unwrap();
        for (s, want) in [
            ("abc-12", true),
            ("a-123", true),
            ("abcd-12", false),
            ("abc-1", false),
            ("-12", false),
        ] {
            assert_eq!(p.is_match(s), want, "{s:?}");
        }
        let p = ClassSeq::parse(r"^[\]\\-]+$").unwrap();
        assert!(p.is_match("]\\-"));
        assert!(!p.is_match("a"));
    }
}
