//! Query-string helpers shared by the registry routes: one parameter, percent-decoded
//! (`+` is a space), and the `true`-only booleans of the Platform API
//! (`includeRetired=true`, `includeTombstoned=true`: anything else is false).

/// The longest query value read; a longer one is cut (ids and cursors are far shorter).
const MAX_VALUE_LEN: usize = 4096;

/// The value of query parameter `name` (percent-decoded), if present.
pub fn param(query: Option<&str>, name: &str) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(k) == name).then(|| decode(&v[..floor_boundary(v, MAX_VALUE_LEN)]))
    })
}

/// `name=true` exactly.
pub fn flag(query: Option<&str>, name: &str) -> bool {
    param(query, name).is_some_and(|v| v == "true")
}

/// A non-empty value of `name`.
pub fn non_empty(query: Option<&str>, name: &str) -> Option<String> {
    param(query, name).filter(|v| !v.is_empty())
}

fn floor_boundary(s: &str, max: usize) -> usize {
    let mut i = s.len().min(max);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn decode(v: &str) -> String {
    let v = v.replace('+', " ");
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_decode() {
        assert_eq!(
            param(Some("a=1&name=acme%2Ex+y"), "name").as_deref(),
            Some("acme.x y")
        );
        assert_eq!(param(Some("a=1"), "name"), None);
        assert_eq!(param(Some("name=%"), "name").as_deref(), Some("%"));
        assert_eq!(param(Some("name=%41"), "name").as_deref(), Some("A"));
        assert!(flag(Some("includeRetired=true"), "includeRetired"));
        assert!(!flag(Some("includeRetired=1"), "includeRetired"));
    }
}
