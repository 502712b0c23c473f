//! `uniqueItems` over arrays of any items in expected linear time: items are hashed by their
//! canonical JSON value — numbers by mathematical value (`1` and `1.0` alike, as Ajv's
//! deep-equal compares them), objects by key set whatever the key order, arrays in order — and
//! only items with the same hash are compared. Ajv compares every pair; the pair reported is
//! the same as Ajv's (see [`duplicate_hashed`]). The hasher is keyed at random per process
//! (`RandomState`), so crafted items cannot make every hash collide.

use serde_json::Value;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::sync::OnceLock;

use crate::js;

/// Ajv's own search, pairwise: the highest `i` with an equal item before it, and the nearest
/// such `j`. [`duplicate_hashed`] gives the same pair in expected linear time. (The evaluator
/// uses it for short arrays; here, beside its linear twin, so the two are tested together.)
pub(crate) fn duplicate_quadratic(items: &[Value]) -> Option<(usize, usize)> {
    for i in (0..items.len()).rev() {
        for j in (0..i).rev() {
            if js::equal(&items[i], &items[j]) {
                return Some((i, j));
            }
        }
    }
    None
}

/// The process's hash key (one `RandomState`, so hashing does not reseed per validation).
fn keyed() -> &'static RandomState {
    static KEY: OnceLock<RandomState> = OnceLock::new();
    KEY.get_or_init(RandomState::new)
}

/// Hashes `v` so that items [`js::equal`] calls equal hash alike.
fn hash_value(v: &Value, key: &RandomState, h: &mut impl Hasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => {
            // Compared as doubles: hash the double, with -0 as 0 (they are equal).
            let x = js::num(n);
            let x = if x == 0.0 { 0.0 } else { x };
            (2u8, x.to_bits()).hash(h);
        }
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            js::grow(|| a.iter().for_each(|x| hash_value(x, key, h)));
        }
        Value::Object(o) => {
            // Key order does not matter: entries hash on their own and add up.
            let sum = js::grow(|| {
                o.iter().fold(0u64, |sum, (k, x)| {
                    let mut e = key.build_hasher();
                    k.hash(&mut e);
                    hash_value(x, key, &mut e);
                    sum.wrapping_add(e.finish())
                })
            });
            (5u8, o.len(), sum).hash(h);
        }
    }
}

/// Ajv's `uniqueItems` answer: the highest `i` that has an equal item before it, and the
/// nearest such `j` (`j < i`), or `None`. Items fall into classes of equal values; each class
/// remembers its first member (to compare against) and its latest one.
pub(crate) fn duplicate_hashed(items: &[Value]) -> Option<(usize, usize)> {
    let key = keyed();
    duplicate_by(items, |item| {
        let mut h = key.build_hasher();
        hash_value(item, key, &mut h);
        h.finish()
    })
}

/// [`duplicate_hashed`] with the hash function given (tests force collisions with it).
fn duplicate_by(items: &[Value], hash_of: impl Fn(&Value) -> u64) -> Option<(usize, usize)> {
    // Hash → the class with that hash: (first member, latest member). Unequal items with the
    // same 64-bit keyed hash are astronomically rare; their classes go to `collided`.
    let mut classes: HashMap<u64, (usize, usize), BuildHasherDefault<Prehashed>> =
        HashMap::with_capacity_and_hasher(items.len(), BuildHasherDefault::default());
    let mut collided: Vec<(u64, usize, usize)> = Vec::new();
    let mut found = None;
    for (i, item) in items.iter().enumerate() {
        let hash = hash_of(item);
        let class = match classes.entry(hash) {
            Entry::Vacant(e) => {
                e.insert((i, i));
                continue;
            }
            Entry::Occupied(e) => e.into_mut(),
        };
        let latest = if js::equal(&items[class.0], item) {
            &mut class.1
        } else {
            match collided
                .iter_mut()
                .find(|(h, first, _)| *h == hash && js::equal(&items[*first], item))
            {
                Some((_, _, latest)) => latest,
                None => {
                    collided.push((hash, i, i));
                    continue;
                }
            }
        };
        found = Some((i, *latest));
        *latest = i;
    }
    found
}

/// A hasher for keys that already are keyed hashes: passes the `u64` through.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; fold anything else in all the same.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::{duplicate_by, duplicate_hashed, duplicate_quadratic};
    use serde_json::{Value, json};

    /// A small deterministic generator of items with many duplicates of every kind: equal
    /// numbers spelled differently, objects with reordered keys, nested arrays and objects.
    fn item(next: &mut impl FnMut() -> u64, depth: u32) -> Value {
        let pick = next() % if depth == 0 { 9 } else { 12 };
        match pick {
            0 => Value::Null,
            1 => json!(next() % 2 == 0),
            2 => json!(next() % 4),
            3 => serde_json::from_str(
                ["1.0", "2.0", "0.0", "-0.0", "1e0", "3.00"][(next() % 6) as usize],
            )
            .unwrap_or(Value::Null),
            4 => json!((next() % 3) as f64 + 0.5),
            5 => json!(["a", "b", "", "ab"][(next() % 4) as usize]),
            6 => json!(u64::MAX - next() % 2),
            7 => json!(9_007_199_254_740_993_u64 - next() % 2),
            8 => json!(-((next() % 3) as i64)),
            9 => {
                let len = next() % 3;
                Value::Array((0..len).map(|_| item(next, depth - 1)).collect())
            }
            _ => {
                // Keys in one of two orders.
                let a = item(next, depth - 1);
                let b = item(next, depth - 1);
                let text = if next() % 2 == 0 {
                    format!("{{\"x\":{a},\"y\":{b}}}")
                } else {
                    format!("{{\"y\":{b},\"x\":{a}}}")
                };
                let mut v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                if next() % 4 == 0 {
                    if let Value::Object(m) = &mut v {
                        m.remove("y");
                    }
                }
                v
            }
        }
    }

    #[test]
    fn hashed_search_reports_the_pair_the_pairwise_one_does() {
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut with_dup, mut without) = (0, 0);
        for round in 0..20_000 {
            let len = (next() % 40) as usize;
            let depth = if round % 2 == 0 { 0 } else { 2 };
            let items: Vec<Value> = (0..len).map(|_| item(&mut next, depth)).collect();
            let want = duplicate_quadratic(&items);
            assert_eq!(
                duplicate_hashed(&items),
                want,
                "{}",
                Value::Array(items.clone())
            );
            // Every hash colliding, or half of them: the collision path gives the same pair.
            assert_eq!(duplicate_by(&items, |_| 7), want);
            assert_eq!(duplicate_by(&items, |v| u64::from(v.is_number())), want);
            if want.is_some() {
                with_dup += 1;
            } else {
                without += 1;
            }
        }
        assert!(with_dup > 1000 && without > 1000, "{with_dup} / {without}");
    }

    #[test]
    fn equal_numbers_and_reordered_objects_are_duplicates() {
        let items: Vec<Value> =
            serde_json::from_str(r#"[{"a":1,"b":[1.0]}, 2, {"b":[1],"a":1.0}, -0.0, 0]"#).unwrap();
        assert_eq!(duplicate_hashed(&items), Some((4, 3)));
        assert_eq!(duplicate_quadratic(&items), Some((4, 3)));
        assert_eq!(duplicate_hashed(&items[..3]), Some((2, 0)));
    }
}
