//! What a JSON body will cost once parsed, found by one pass over its bytes that allocates
//! nothing: a 10 MiB body of `[1,1,1,…]` is 5 million values, and as `serde_json::Value`s
//! (with `preserve_order`) that is ~40× the body. The service refuses a body whose parsed
//! form would pass its budget before parsing it, and reserves the estimate while it runs.
//!
//! The scan is lenient: it only counts. Whether the body is valid JSON is the parser's
//! business afterwards (a body the scan misreads is refused or parsed, never mis-served).

use serde_json::Value;

/// Bytes of one `Value` slot (enum with an `IndexMap` inside, so 80 on 64-bit targets).
const VALUE: usize = std::mem::size_of::<Value>();
/// One array element: its slot, twice over for the doubling growth of the `Vec`.
const ELEMENT: usize = 2 * VALUE;
/// One object member: the map's entry (hash, key `String`, value slot) and its index table
/// slot, twice over for the doubling growth.
const MEMBER: usize = 2 * (8 + std::mem::size_of::<String>() + VALUE) + 2 * 9;
/// A string's heap block beyond its bytes (rounding and the allocator's header).
const STRING: usize = 24;
/// Nesting past this is refused by the parser anyway (serde_json's recursion limit is 128).
const MAX_DEPTH: usize = 256;

/// The estimated bytes the parsed form of `body` takes (not counting `body` itself).
pub(crate) fn parsed_bytes(body: &[u8]) -> usize {
    #[derive(Clone, Copy, PartialEq)]
    enum In {
        Array,
        Object,
    }
    let mut stack: Vec<In> = Vec::new();
    // In an object: whether the next string is a key.
    let mut expect_key = false;
    let mut total: usize = 0;
    let mut i = 0;
    let n = body.len();
    let slot = |stack: &[In]| match stack.last() {
        None => VALUE,
        Some(In::Array) => ELEMENT,
        Some(In::Object) => MEMBER,
    };
    while i < n {
        let b = body[i];
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => {
                let start = i + 1;
                i = start;
                while i < n && body[i] != b'"' {
                    i += if body[i] == b'\\' { 2 } else { 1 };
                }
                let len = i.min(n) - start;
                i += 1;
                let key = expect_key && stack.last() == Some(&In::Object);
                total = total.saturating_add(len + STRING);
                if key {
                    expect_key = false;
                } else {
                    total = total.saturating_add(slot(&stack));
                }
            }
            b'[' | b'{' => {
                total = total.saturating_add(slot(&stack));
                if stack.len() >= MAX_DEPTH {
                    return total;
                }
                if b == b'[' {
                    stack.push(In::Array);
                } else {
                    stack.push(In::Object);
                    expect_key = true;
                }
                i += 1;
            }
            b']' | b'}' => {
                stack.pop();
                expect_key = false;
                i += 1;
            }
            b',' => {
                expect_key = stack.last() == Some(&In::Object);
                i += 1;
            }
            b':' => {
                expect_key = false;
                i += 1;
            }
            _ => {
                // A number or a literal (`true`, `false`, `null`): no heap of its own.
                total = total.saturating_add(slot(&stack));
                while i < n && !matches!(body[i], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                {
                    i += 1;
                }
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_values_by_where_they_sit() {
        assert_eq!(parsed_bytes(b"1"), VALUE);
        assert_eq!(parsed_bytes(b"[1,2,3]"), VALUE + 3 * ELEMENT);
        assert_eq!(
            parsed_bytes(br#"{"ab":"xyz"}"#),
            VALUE + (2 + STRING) + (3 + STRING) + MEMBER
        );
        assert_eq!(
            parsed_bytes(br#"{"a":[1],"b":{}}"#),
            VALUE + 2 * (1 + STRING) + 2 * MEMBER + ELEMENT
        );
    }

    #[test]
    fn escapes_do_not_end_strings() {
        assert_eq!(
            parsed_bytes(br#"["a\"b",1]"#),
            VALUE + 2 * ELEMENT + 4 + STRING
        );
    }

    #[test]
    fn dense_numbers_cost_far_more_than_their_text() {
        let mut body = b"[1".to_vec();
        for _ in 0..99_999 {
            body.extend_from_slice(b",1");
        }
        body.push(b']');
        assert!(parsed_bytes(&body) > 40 * body.len());
    }

    #[test]
    fn garbage_and_depth_do_not_panic() {
        for body in [
            &b"[[[[["[..],
            b"\"unterminated",
            b"}}}]]]",
            b"\"\\",
            b"",
            b",:,:",
        ] {
            let _ = parsed_bytes(body);
        }
        let deep = vec![b'['; 100_000];
        assert!(parsed_bytes(&deep) <= (MAX_DEPTH + 1) * ELEMENT);
    }
}
