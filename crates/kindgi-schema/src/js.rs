//! JavaScript semantics the engine has to reproduce: number reading and printing, property
//! enumeration order, deep equality (fast-deep-equal), string length in code points.

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// A JSON number as JavaScript reads it (a double).
#[inline]
pub(crate) fn num(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

/// `Number.isInteger` for a JSON number.
#[inline]
pub(crate) fn is_integer(n: &Number) -> bool {
    if n.is_i64() || n.is_u64() {
        return true;
    }
    let f = num(n);
    f.is_finite() && f.fract() == 0.0
}

/// A double back to a JSON value, the way `JSON.stringify` would print it.
pub(crate) fn number_value(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        if f == 0.0 {
            return Value::from(0);
        }
        return Value::from(f as i64);
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// A JSON number normalised to what JavaScript holds (e.g. `9007199254740993` → `…992`).
pub(crate) fn js_number_value(n: &Number) -> Value {
    if let Some(i) = n.as_i64() {
        if i.unsigned_abs() <= 9_007_199_254_740_992 {
            return Value::Number(n.clone());
        }
    }
    number_value(num(n))
}

/// `String(n)` for a double.
pub(crate) fn fmt_number(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if f == 0.0 {
        return "0".into();
    }
    let neg = f < 0.0;
    // Shortest round-trip digits and exponent, e.g. "1.2345e3".
    let e = format!("{:e}", f.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp + 1;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        for _ in 0..(n - k) {
            out.push('0');
        }
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        for _ in 0..(-n) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

/// `String(v)` for a JSON scalar used in a message.
pub(crate) fn fmt_value(v: &Value) -> String {
    match v {
        Value::Number(n) => fmt_number(num(n)),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Array(a) => a
            .iter()
            .map(|x| {
                if x.is_null() {
                    String::new()
                } else {
                    fmt_value(x)
                }
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// Whether a key is an array index, which JavaScript enumerates first, ascending.
#[inline]
pub(crate) fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    if b.is_empty()
        || b.len() > 10
        || (b.len() > 1 && b[0] == b'0')
        || !b.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    let v: u64 = key.parse().ok()?;
    if v < u64::from(u32::MAX) {
        Some(v as u32)
    } else {
        None
    }
}

/// Key equality, tuned for the property names of one object: short, and often of equal length
/// (`name`, `mode`, `tags`). Up to 16 bytes, two overlapping word loads per side settle it (a
/// byte loop cost five instructions a byte on every match); longer keys compare as slices.
#[inline(always)]
pub(crate) fn key_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        // Bytes 0, n/2 and n-1 cover every byte of a 1-, 2- or 3-byte key.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

/// The 4 bytes of `s` from `at` (one load).
#[inline(always)]
pub(crate) fn word4(s: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&s[at..at + 4]);
    u32::from_ne_bytes(w)
}

/// The 8 bytes of `s` from `at` (one load).
#[inline(always)]
pub(crate) fn word8(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_ne_bytes(w)
}

/// Whether an object's keys already come in JavaScript enumeration order.
#[inline]
pub(crate) fn in_js_order(map: &Map<String, Value>) -> bool {
    // Only array-index keys (`0`, `17`) move; most objects have none, and a first byte tells.
    if !map
        .keys()
        .any(|k| k.as_bytes().first().is_some_and(u8::is_ascii_digit))
    {
        return true;
    }
    let mut seen_str = false;
    let mut last: Option<u32> = None;
    for k in map.keys() {
        match array_index(k) {
            Some(i) => {
                if seen_str || last.is_some_and(|l| l >= i) {
                    return false;
                }
                last = Some(i);
            }
            None => seen_str = true,
        }
    }
    true
}

/// Keys in JavaScript `for…in` / `Object.keys` order.
pub(crate) fn ordered_keys<'a, I: Iterator<Item = &'a String>>(keys: I) -> Vec<&'a String> {
    let mut v: Vec<&String> = keys.collect();
    v.sort_by(|a, b| match (array_index(a), array_index(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    });
    v
}

/// Reorders an object's keys to JavaScript order (stable for string keys).
pub(crate) fn reorder(map: &mut Map<String, Value>) {
    if in_js_order(map) {
        return;
    }
    let old = std::mem::take(map);
    let mut entries: Vec<(String, Value)> = old.into_iter().collect();
    entries.sort_by(|(a, _), (b, _)| match (array_index(a), array_index(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    });
    map.extend(entries);
}

/// fast-deep-equal: numbers by value, objects by key set, arrays in order.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => num(x) == num(y),
        // Inline: short strings (enum values, tags) differ early, and a `memcmp` call costs more.
        (Value::String(x), Value::String(y)) => key_eq(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && grow(|| x.iter().zip(y).all(|(p, q)| equal(p, q)))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && grow(|| x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w))))
        }
        _ => false,
    }
}

/// Stack head-room kept before recursing, and the size of each extra stack segment: for
/// [`grow`] here, and for the evaluator's and compiler's own recursion.
pub(crate) const STACK_RED_ZONE: usize = 128 * 1024;
pub(crate) const STACK_GROW: usize = 2 * 1024 * 1024;

/// Runs a recursive step with enough stack (instances may nest arbitrarily deep).
#[inline]
pub(crate) fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_GROW, f)
}

/// String length as Ajv counts it (code points, `ucs2length`).
#[inline]
pub(crate) fn str_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Whether `s` has at most `limit` characters (as [`str_len`] counts them). A character takes
/// at least one byte, so a string within the limit in bytes needs no count.
#[inline(always)]
pub(crate) fn len_at_most(s: &str, limit: i64) -> bool {
    let bytes = i64::try_from(s.len()).unwrap_or(i64::MAX);
    bytes <= limit || i64::try_from(str_len(s)).unwrap_or(i64::MAX) <= limit
}

/// Whether `s` has at least `limit` characters. A character takes at most four bytes, so too
/// few bytes, or four times enough, settle it without a count.
#[inline(always)]
pub(crate) fn len_at_least(s: &str, limit: u64) -> bool {
    let bytes = s.len() as u64;
    if bytes < limit {
        return false;
    }
    bytes / 4 >= limit || str_len(s) as u64 >= limit
}

/// Ajv's `getProperty`: `.name` for identifiers, `["…"]` otherwise.
pub(crate) fn js_property(key: &str) -> String {
    let mut chars = key.chars();
    let ident = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '$' || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '$' || c == '_');
    if ident {
        format!(".{key}")
    } else {
        let s = serde_json::to_string(key).unwrap_or_default();
        format!(
            "[{}]",
            s.replace('\u{2028}', "\\u2028")
                .replace('\u{2029}', "\\u2029")
        )
    }
}

/// Property names JavaScript objects inherit from `Object.prototype`: Ajv's `data.x !== undefined`
/// check finds them on every object.
pub(crate) fn inherited(key: &str) -> bool {
    matches!(
        key,
        "constructor"
            | "__proto__"
            | "__defineGetter__"
            | "__defineSetter__"
            | "__lookupGetter__"
            | "__lookupSetter__"
            | "hasOwnProperty"
            | "isPrototypeOf"
            | "propertyIsEnumerable"
            | "toLocaleString"
            | "toString"
            | "valueOf"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-length shortcuts agree with counting, for ASCII, two-, three- and four-byte
    /// characters, at every limit around the length.
    #[test]
    fn length_limits_agree_with_counting() {
        for s in [
            "",
            "a",
            "hi",
            "hello world",
            "é",
            "éé",
            "日本語",
            "😀",
            "a😀b",
            "😀😀😀😀x",
        ] {
            let n = str_len(s) as i64;
            for limit in -2..=(s.len() as i64 + 5) {
                assert_eq!(len_at_most(s, limit), n <= limit, "{s:?} at most {limit}");
                if limit >= 0 {
                    assert_eq!(
                        len_at_least(s, limit as u64),
                        n >= limit,
                        "{s:?} at least {limit}"
                    );
                }
            }
            assert!(len_at_most(s, i64::MAX) && !len_at_least(s, u64::MAX));
        }
    }

    /// Every length up to past the word sizes, with a difference at every position, agrees
    /// with plain equality.
    #[test]
    fn key_eq_is_equality() {
        let base: String = "abcdefghijklmnopqrstuvwxyzäöü0123456789".into();
        for n in 0..=base.len() {
            let Some(a) = base.get(..n) else { continue };
            assert!(key_eq(a, a), "{a}");
            let copy = String::from(a);
            assert!(key_eq(a, &copy), "{a}");
            for i in 0..n {
                let mut b = a.as_bytes().to_vec();
                b[i] = if b[i] == b'#' { b'$' } else { b'#' };
                let Ok(b) = String::from_utf8(b) else {
                    continue;
                };
                assert!(!key_eq(a, &b), "{a} vs {b}");
            }
            if let Some(shorter) = a.get(..n.saturating_sub(1)) {
                assert_eq!(key_eq(a, shorter), n == 0, "{a}");
            }
        }
    }

    #[test]
    fn prints_numbers_like_js() {
        assert_eq!(fmt_number(1e-7), "1e-7");
        assert_eq!(fmt_number(1e21), "1e+21");
        assert_eq!(fmt_number(1e20), "100000000000000000000");
        assert_eq!(fmt_number(0.01), "0.01");
        assert_eq!(fmt_number(1.5), "1.5");
        assert_eq!(fmt_number(-2.5), "-2.5");
        assert_eq!(fmt_number(123456.789), "123456.789");
        assert_eq!(fmt_number(0.000001), "0.000001");
        assert_eq!(fmt_number(1.2345e-10), "1.2345e-10");
        assert_eq!(fmt_number(10.0), "10");
    }

    #[test]
    fn orders_keys_like_js() {
        let keys = [
            "zeta".to_string(),
            "10".into(),
            "2".into(),
            "a".into(),
            "01".into(),
        ];
        let got: Vec<&str> = ordered_keys(keys.iter())
            .into_iter()
            .map(String::as_str)
            .collect();
        assert_eq!(got, ["2", "10", "zeta", "a", "01"]);
    }
}
