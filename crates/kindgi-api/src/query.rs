//! The one query-string reader of every route: [`QueryString`], the pairs of a raw query
//! in order, each percent-decoded by `url::form_urlencoded` (`+` is a space). Routes differ
//! only in which value of a repeated key they read — the first ([`QueryString::first`]; the
//! registries, tokens, env and secrets) or the last ([`QueryString::last`]; runs,
//! approvals, conversations, MCP endpoints), as each always has — and in their limits: the
//! run routes refuse a query over [`MAX_QUERY_LEN`] ([`QueryString::bounded`]), the
//! registries read at most [`MAX_VALUE_LEN`] bytes of a value ([`QueryString::clipped`]).
//! Also the `true`-only booleans of the Platform API ([`QueryString::flag`]:
//! `includeRetired=true`, `includeTombstoned=true`; anything else is false).

use crate::error::ApiError;

/// The longest query string the run routes read (longer is `400 bad-input`).
pub const MAX_QUERY_LEN: usize = 16 * 1024;

/// The longest value the registries read; a longer one is cut (ids and cursors are far
/// shorter).
pub const MAX_VALUE_LEN: usize = 4096;

/// A query string's pairs, decoded, in order.
#[derive(Debug, Clone, Default)]
pub struct QueryString(pub Vec<(String, String)>);

impl QueryString {
    /// Every pair of `raw` (none when there is no query).
    pub fn parse(raw: Option<&str>) -> QueryString {
        QueryString::read(raw.unwrap_or_default(), usize::MAX)
    }

    /// [`QueryString::parse`], refusing a query over [`MAX_QUERY_LEN`] bytes.
    pub fn bounded(raw: Option<&str>) -> Result<QueryString, ApiError> {
        let raw = raw.unwrap_or_default();
        if raw.len() > MAX_QUERY_LEN {
            return Err(ApiError::bad_input(format!(
                "The query string is longer than {MAX_QUERY_LEN} bytes"
            )));
        }
        Ok(QueryString::read(raw, usize::MAX))
    }

    /// [`QueryString::parse`], each value cut at [`MAX_VALUE_LEN`] bytes before decoding.
    pub fn clipped(raw: Option<&str>) -> QueryString {
        QueryString::read(raw.unwrap_or_default(), MAX_VALUE_LEN)
    }

    fn read(raw: &str, max_value: usize) -> QueryString {
        let pairs = raw
            .split('&')
            .filter_map(|pair| {
                // The key and at most `max_value` bytes of the value, decoded as one pair.
                let end = match pair.find('=') {
                    Some(eq) => eq + 1 + floor_boundary(&pair[eq + 1..], max_value),
                    None => pair.len(),
                };
                url::form_urlencoded::parse(&pair.as_bytes()[..end])
                    .next()
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
            })
            .collect();
        QueryString(pairs)
    }

    /// The first value of `key`.
    pub fn first(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The last value of `key`.
    pub fn last(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`.
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The first value of `key`, when it is not empty.
    pub fn non_empty(&self, key: &str) -> Option<&str> {
        self.first(key).filter(|v| !v.is_empty())
    }

    /// The first value of `key` is `true`, exactly.
    pub fn flag(&self, key: &str) -> bool {
        self.first(key) == Some("true")
    }
}

fn floor_boundary(s: &str, max: usize) -> usize {
    let mut i = s.len().min(max);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_decode() {
        let q = |raw: &str| QueryString::clipped(Some(raw));
        assert_eq!(q("a=1&name=acme%2Ex+y").first("name"), Some("acme.x y"));
        assert_eq!(q("a=1").first("name"), None);
        assert_eq!(q("name=%").first("name"), Some("%"));
        assert_eq!(q("name=%41").first("name"), Some("A"));
        assert_eq!(q("x=%4").first("x"), Some("%4"));
        assert_eq!(
            q("a=1&principal=user%3Au1").first("principal"),
            Some("user:u1")
        );
        assert!(q("includeRetired=true").flag("includeRetired"));
        assert!(!q("includeRetired=1").flag("includeRetired"));
        assert_eq!(QueryString::parse(None).first("x"), None);
    }

    #[test]
    fn repeated_keys_keep_their_order() {
        let q = QueryString::parse(Some("s=a&s=b&t="));
        assert_eq!((q.first("s"), q.last("s")), (Some("a"), Some("b")));
        assert_eq!(q.all("s"), vec!["a", "b"]);
        assert_eq!((q.first("t"), q.non_empty("t")), (Some(""), None));
    }

    #[test]
    fn long_values_are_cut_only_when_clipped() {
        let raw = format!("v={}", "x".repeat(MAX_VALUE_LEN + 10));
        let clipped = QueryString::clipped(Some(&raw));
        assert_eq!(clipped.first("v").map(str::len), Some(MAX_VALUE_LEN));
        let whole = QueryString::parse(Some(&raw));
        assert_eq!(whole.first("v").map(str::len), Some(MAX_VALUE_LEN + 10));
        let long = "y".repeat(MAX_QUERY_LEN + 1);
        assert!(QueryString::bounded(Some(&long)).is_err());
    }
}
