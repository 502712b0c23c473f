//! The property names an object schema declares (`properties`), with a lookup that takes one
//! probe whether the key is declared or not.
//!
//! `additionalProperties` asks of every key of every object whether `properties` declares it.
//! Ajv's generated code answers with a chain of `key === "name"` tests, which V8 runs as
//! pointer comparisons (both sides are interned strings). A scan over the names here costs a
//! comparison per name, and an undeclared key — the one that ends up reported — meets them
//! all. So the compiler looks for a small perfect hash over the names: the name's first and
//! last 8 bytes and its length, times a multiplier picked so that no two names share a slot. A
//! key then costs two loads, one multiplication, one table read and one comparison. Names no
//! multiplier separates (long ones alike at both ends) keep the scan.

use crate::js;

/// A slot table: `slots[hash(key)]` is the place of the only name that can be `key`, plus one
/// (0: no name hashes there).
#[derive(Debug, Clone)]
struct Table {
    slots: Box<[u8]>,
    seed: u64,
    /// `64 - log2(slots.len())`: the hash is the top bits of the product.
    shift: u32,
}

/// Declared property names, in declaration order.
#[derive(Debug, Clone)]
pub(crate) struct DeclaredNames {
    names: Vec<Box<str>>,
    table: Option<Table>,
}

/// Multipliers tried for the perfect hash, in this order (odd, with well-mixed bits).
const SEEDS: u64 = 256;

/// The largest table: 32 names spread over 128 slots are separated by one of [`SEEDS`]
/// multipliers almost always.
const MAX_SLOTS: usize = 128;

/// The bytes the hash sees: all of a key up to 16 bytes long (in two overlapping words, as
/// [`js::key_eq`] reads them), the first and last 8 of a longer one, and the length.
#[inline(always)]
fn pack(key: &[u8]) -> u64 {
    let n = key.len();
    let (head, tail) = match n {
        0 => (0, 0),
        1..=3 => (
            u64::from(key[0]) | u64::from(key[n / 2]) << 8 | u64::from(key[n - 1]) << 16,
            0,
        ),
        4..=7 => (
            u64::from(js::word4(key, 0)),
            u64::from(js::word4(key, n - 4)),
        ),
        _ => (js::word8(key, 0), js::word8(key, n - 8)),
    };
    // Rotated so that equal words (a key of exactly 4 or 8 bytes) do not cancel out.
    (head ^ tail.rotate_left(29)).wrapping_add(n as u64)
}

#[inline(always)]
fn slot(key: &[u8], seed: u64, shift: u32) -> usize {
    (pack(key).wrapping_mul(seed) >> shift) as usize
}

/// The `i`-th multiplier: odd, from a Weyl sequence over the golden ratio.
fn seed(i: u64) -> u64 {
    0x9E37_79B9_7F4A_7C15_u64.wrapping_mul(i.wrapping_add(1)) | 1
}

impl DeclaredNames {
    pub(crate) fn new(names: Vec<Box<str>>) -> DeclaredNames {
        let table = Self::build(&names);
        DeclaredNames { names, table }
    }

    fn build(names: &[Box<str>]) -> Option<Table> {
        if names.is_empty() || names.len() >= usize::from(u8::MAX) {
            return None;
        }
        // At least four slots a name keeps collisions rare, so a multiplier is found quickly.
        let size = (names.len() * 4).next_power_of_two().clamp(16, MAX_SLOTS);
        if names.len() > size / 2 {
            return None;
        }
        let shift = 64 - size.trailing_zeros();
        let mut slots = vec![0u8; size];
        'seeds: for i in 0..SEEDS {
            let seed = seed(i);
            slots.fill(0);
            for (place, name) in names.iter().enumerate() {
                let at = slot(name.as_bytes(), seed, shift);
                match slots.get_mut(at) {
                    Some(s) if *s == 0 => *s = place as u8 + 1,
                    _ => continue 'seeds,
                }
            }
            return Some(Table {
                slots: slots.into_boxed_slice(),
                seed,
                shift,
            });
        }
        None
    }

    /// The names, in declaration order.
    #[cfg(test)]
    fn as_slice(&self) -> &[Box<str>] {
        &self.names
    }

    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    pub(crate) fn get(&self, place: usize) -> Option<&str> {
        self.names.get(place).map(|n| &**n)
    }

    /// The place of `key` among the names, if declared. `cursor` is the place after the
    /// previous hit: keys usually come in the declared order, now and then without an optional
    /// one, so the two names from there are tried first, then the table (or, without one, the scan).
    #[inline(always)]
    pub(crate) fn find(&self, key: &str, cursor: &mut usize) -> Option<usize> {
        let Some(t) = &self.table else {
            return scan(&self.names, cursor, key);
        };
        for step in 0..2 {
            if let Some(n) = self.names.get(*cursor + step) {
                if js::key_eq(n, key) {
                    *cursor += step + 1;
                    return Some(*cursor - 1);
                }
            }
        }
        let place = usize::from(*t.slots.get(slot(key.as_bytes(), t.seed, t.shift))?);
        let name = self.names.get(place.wrapping_sub(1))?;
        if !js::key_eq(name, key) {
            return None;
        }
        *cursor = place;
        Some(place - 1)
    }

    /// Whether the names were given a table (for tests).
    #[cfg(test)]
    fn hashed(&self) -> bool {
        self.table.is_some()
    }
}

/// The place of `k` among `names`, trying the names at `at` (just after the previous hit) and
/// after it first: instance keys usually come in the declared order, now and then without an
/// optional one.
#[inline(always)]
fn scan(names: &[Box<str>], at: &mut usize, k: &str) -> Option<usize> {
    for step in 0..2 {
        if let Some(n) = names.get(*at + step) {
            if js::key_eq(n, k) {
                *at += step + 1;
                return Some(*at - 1);
            }
        }
    }
    let i = names.iter().position(|n| js::key_eq(n, k))?;
    *at = i + 1;
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> DeclaredNames {
        DeclaredNames::new(list.iter().map(|s| Box::from(*s)).collect())
    }

    /// Every declared name is found at its place, and nothing else is found, with or without a
    /// table.
    fn check(d: &DeclaredNames, others: &[&str]) {
        for (i, n) in d.as_slice().iter().enumerate() {
            assert_eq!(d.find(n, &mut 0), Some(i), "{n}");
            assert_eq!(d.find(n, &mut { i }), Some(i), "{n}");
        }
        for o in others {
            assert_eq!(d.find(o, &mut 0), None, "{o}");
        }
    }

    const OTHERS: &[&str] = &[
        "",
        "x",
        "extra",
        "msg ",
        "MSG",
        "ms",
        "msgs",
        "count2",
        "cOunt",
        "é",
        "constructor",
        "toString",
        "0",
        "10",
        "mode\0",
    ];

    #[test]
    fn the_usual_names_get_a_table() {
        let d = names(&["msg", "count", "mode", "email", "tags", "when", "opts"]);
        assert!(d.hashed());
        check(&d, OTHERS);
    }

    #[test]
    fn thirty_two_names_get_a_table() {
        let list: Vec<String> = (0..32).map(|i| format!("field_{i}")).collect();
        let refs: Vec<&str> = list.iter().map(String::as_str).collect();
        let d = names(&refs);
        assert!(d.hashed());
        check(&d, OTHERS);
        check(&d, &["field_32", "field_", "field_100", "field_1 "]);
    }

    /// Long names alike in their first and last 8 bytes cannot be told apart by the hash: the
    /// scan takes over.
    #[test]
    fn names_the_hash_cannot_separate_are_scanned() {
        let d = names(&["customer_X_address", "customer_Y_address", "q"]);
        assert!(!d.hashed());
        check(&d, OTHERS);
        check(&d, &["customer_Z_address", "customer_address"]);
    }

    #[test]
    fn empty_and_odd_names() {
        let d = names(&["", "a", "~0", "a/b", "ü", "ab", "ba"]);
        check(&d, &["b", "~1", "a/c", "u", "aa", "bb"]);
        let d = names(&[]);
        assert!(!d.hashed());
        check(&d, OTHERS);
    }

    /// Any name set: a found place always names the key, and every name is found.
    #[test]
    fn random_name_sets() {
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"ab_-0Z";
        for _ in 0..300 {
            let count = (next() % 33) as usize;
            let mut list: Vec<String> = Vec::new();
            while list.len() < count {
                let len = (next() % 6) as usize;
                let s: String = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
                    .collect();
                if !list.contains(&s) {
                    list.push(s);
                }
            }
            let refs: Vec<&str> = list.iter().map(String::as_str).collect();
            let d = names(&refs);
            for _ in 0..50 {
                let len = (next() % 6) as usize;
                let k: String = (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
                    .collect();
                let want = list.iter().position(|n| *n == k);
                assert_eq!(d.find(&k, &mut 0), want, "{k} in {list:?}");
            }
            check(&d, &[]);
        }
    }
}
