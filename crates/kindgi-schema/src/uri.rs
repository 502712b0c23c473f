//! URI reference resolution (RFC 3986 §5) for `$id` and `$ref`. Nothing is ever fetched: a
//! reference resolves only to a schema inside the compiled document or a bundled meta-schema.

struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn parse(s: &str) -> Parts<'_> {
    let (rest, fragment) = match s.find('#') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (rest, query) = match rest.find('?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mut scheme = None;
    let mut rest = rest;
    if let Some(i) = rest.find(':') {
        let cand = &rest[..i];
        let valid = cand.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && cand
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if valid && !cand.contains('/') {
            scheme = Some(cand);
            rest = &rest[i + 1..];
        }
    }
    let (authority, path) = if let Some(r) = rest.strip_prefix("//") {
        match r.find('/') {
            Some(i) => (Some(&r[..i]), &r[i..]),
            None => (Some(r), ""),
        }
    } else {
        (None, rest)
    };
    Parts {
        scheme,
        authority,
        path,
        query,
        fragment,
    }
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let absolute = path.starts_with('/');
    let segs: Vec<&str> = path.split('/').collect();
    let n = segs.len();
    for (i, seg) in segs.iter().enumerate() {
        if i == 0 && absolute {
            continue;
        }
        match *seg {
            "." => {
                if i == n - 1 {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if i == n - 1 {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

fn merge_paths(base: &Parts<'_>, rel: &str) -> String {
    if base.authority.is_some() && base.path.is_empty() {
        return format!("/{rel}");
    }
    match base.path.rfind('/') {
        Some(i) => format!("{}{}", &base.path[..=i], rel),
        None => rel.to_owned(),
    }
}

fn compose(
    scheme: Option<&str>,
    authority: Option<&str>,
    path: &str,
    query: Option<&str>,
    fragment: Option<&str>,
) -> String {
    let mut out = String::new();
    if let Some(s) = scheme {
        out.push_str(&s.to_ascii_lowercase());
        out.push(':');
    }
    if let Some(a) = authority {
        out.push_str("//");
        out.push_str(&a.to_ascii_lowercase());
    }
    out.push_str(path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// Resolves `reference` against `base`.
pub(crate) fn resolve(base: &str, reference: &str) -> String {
    let r = parse(reference);
    let b = parse(base);
    if r.scheme.is_some() {
        return compose(
            r.scheme,
            r.authority,
            &remove_dot_segments(r.path),
            r.query,
            r.fragment,
        );
    }
    if r.authority.is_some() {
        return compose(
            b.scheme,
            r.authority,
            &remove_dot_segments(r.path),
            r.query,
            r.fragment,
        );
    }
    if r.path.is_empty() {
        let q = r.query.or(b.query);
        return compose(b.scheme, b.authority, b.path, q, r.fragment);
    }
    let path = if r.path.starts_with('/')
        || (b.scheme.is_none() && b.authority.is_none() && b.path.is_empty())
    {
        remove_dot_segments(r.path)
    } else {
        remove_dot_segments(&merge_paths(&b, r.path))
    };
    compose(b.scheme, b.authority, &path, r.query, r.fragment)
}

/// Ajv's `normalizeId`: drops a trailing `#` or `#/`.
pub(crate) fn normalize_id(id: &str) -> &str {
    id.strip_suffix("#/")
        .or_else(|| id.strip_suffix('#'))
        .unwrap_or(id)
}

/// Splits `uri#fragment`.
pub(crate) fn split_fragment(uri: &str) -> (&str, Option<&str>) {
    match uri.find('#') {
        Some(i) => (&uri[..i], Some(&uri[i + 1..])),
        None => (uri, None),
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn resolves() {
        assert_eq!(
            resolve("https://example.com/root.json", "item.json"),
            "https://example.com/item.json"
        );
        assert_eq!(
            resolve("https://example.com/a/b", "../c"),
            "https://example.com/c"
        );
        assert_eq!(resolve("", "item.json"), "item.json");
        assert_eq!(
            resolve("https://x.org/s", "#/$defs/a"),
            "https://x.org/s#/$defs/a"
        );
        assert_eq!(resolve("", "#foo"), "#foo");
        assert_eq!(
            resolve("https://json-schema.org/draft/2020-12/schema", "meta/core"),
            "https://json-schema.org/draft/2020-12/meta/core"
        );
        assert_eq!(resolve("urn:example:a", "#x"), "urn:example:a#x");
    }
}
