//! Path spelling: `schemaPath` URI fragments and `instancePath` JSON Pointers, as Ajv writes them.

/// JSON Pointer escaping (`~` → `~0`, `/` → `~1`).
pub(crate) fn escape_pointer(s: &str) -> String {
    if !s.contains(['~', '/']) {
        return s.to_owned();
    }
    s.replace('~', "~0").replace('/', "~1")
}

/// One `schemaPath` segment: JSON-Pointer escaped, then `encodeURIComponent`.
pub(crate) fn fragment_segment(s: &str) -> String {
    encode_uri_component(&escape_pointer(s))
}

/// JavaScript's `encodeURIComponent`.
pub(crate) fn encode_uri_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'!' | b'~' | b'*' | b'\'' | b'(' | b')'
            );
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-decoding of a URI fragment (`decodeURIComponent`, lenient).
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Unescapes one JSON Pointer token.
pub(crate) fn unescape_pointer(s: &str) -> String {
    s.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_segments() {
        assert_eq!(fragment_segment("prénom nom"), "pr%C3%A9nom%20nom");
        assert_eq!(fragment_segment("^[0-9]+$"), "%5E%5B0-9%5D%2B%24");
        assert_eq!(fragment_segment("a/b"), "a~1b");
        assert_eq!(fragment_segment("c~d"), "c~0d");
        assert_eq!(percent_decode("c%20d"), "c d");
    }
}
