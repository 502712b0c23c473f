//! The answer to a request no mounted route takes: `501 not-served` when it is an operation
//! of the official Platform API (`openapi/official.txt`, written by `scripts/openapi` from the
//! official document), naming its family; `404 route-not-found` otherwise.
//!
//! The router is matched first, so whatever is mounted is served; this runs only in the
//! fallback. The official list is parsed once (on first use) into templates grouped by
//! method; matching walks the request path's segments without allocating.

use std::collections::HashSet;
use std::sync::LazyLock;

use axum::http::StatusCode;
use serde_json::json;

use crate::ApiError;

/// Every official operation: `METHOD /path family /prefix` a line.
const OFFICIAL: &str = include_str!("../openapi/official.txt");
/// The official operations this server mounts: `METHOD /path` a line.
const SERVED: &str = include_str!("../openapi/served.txt");

/// One official operation.
#[derive(Debug)]
pub struct Operation {
    pub method: &'static str,
    /// The official template, `/v1/schedules/{triggerId}`.
    pub path: &'static str,
    pub family: &'static str,
    /// The path the family's answers name, `/v1/schedules`.
    pub prefix: &'static str,
    /// Does this server mount this operation (a request can still miss it: a literal route
    /// beside it, `GET /v1/projects/default`, takes its other methods)?
    pub served: bool,
    /// Does this server serve other operations of the family?
    pub family_served: bool,
    /// `Some(literal)` or `None` for a `{parameter}`, per segment after the leading `/`.
    segments: Vec<Option<&'static str>>,
}

impl Operation {
    /// Does `path` (split at `/`, without the leading empty segment) fit the template? The
    /// score ranks fits: a literal segment earlier beats a parameter
    /// (`/v1/approvals/reviewers` over `/v1/approvals/{approvalId}`).
    fn score(&self, path: &str) -> Option<u64> {
        let mut score = 0u64;
        let mut given = path.split('/').skip(1);
        for (i, want) in self.segments.iter().enumerate() {
            let have = given.next()?;
            match want {
                Some(literal) if *literal == have => {
                    if let Some(bit) = 63usize.checked_sub(i) {
                        score |= 1 << bit;
                    }
                }
                Some(_) => return None,
                None if have.is_empty() => return None,
                None => {}
            }
        }
        given.next().is_none().then_some(score)
    }
}

struct Official {
    /// Operations by method (GET, POST, …).
    by_method: Vec<(&'static str, Vec<Operation>)>,
}

static OFFICIAL_OPS: LazyLock<Official> = LazyLock::new(|| parse(OFFICIAL, SERVED));

fn lines(text: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect())
}

fn parse(official: &'static str, served: &'static str) -> Official {
    let served_ops: HashSet<(&str, &str)> = lines(served)
        .filter_map(|w| Some((*w.first()?, *w.get(1)?)))
        .collect();
    let mut ops = Vec::new();
    for words in lines(official) {
        let [method, path, family, prefix] = words[..] else {
            continue;
        };
        ops.push(Operation {
            method,
            path,
            family,
            prefix,
            served: served_ops.contains(&(method, path)),
            family_served: false,
            segments: path
                .split('/')
                .skip(1)
                .map(|s| (!s.starts_with('{')).then_some(s))
                .collect(),
        });
    }
    let served_families: HashSet<&str> = ops
        .iter()
        .filter(|o| served_ops.contains(&(o.method, o.path)))
        .map(|o| o.family)
        .collect();
    let mut by_method: Vec<(&'static str, Vec<Operation>)> = Vec::new();
    for mut op in ops {
        op.family_served = served_families.contains(op.family);
        match by_method.iter_mut().find(|(m, _)| *m == op.method) {
            Some((_, list)) => list.push(op),
            None => by_method.push((op.method, vec![op])),
        }
    }
    Official { by_method }
}

/// The official operation `method path` is, the best-fitting template, if any (a `HEAD`
/// is also a `GET`'s, as the router treats it).
pub fn official_operation(method: &str, path: &str) -> Option<&'static Operation> {
    let best = |method: &str| {
        let (_, ops) = OFFICIAL_OPS
            .by_method
            .iter()
            .find(|(m, _)| m.eq_ignore_ascii_case(method))?;
        ops.iter()
            .filter_map(|op| op.score(path).map(|s| (s, op)))
            .max_by_key(|(s, _)| *s)
            .map(|(_, op)| op)
    };
    best(method).or_else(|| {
        method
            .eq_ignore_ascii_case("HEAD")
            .then(|| best("GET"))
            .flatten()
    })
}

/// The answer to `method path` that no mounted route took.
pub fn unknown_route(method: &str, path: &str) -> ApiError {
    match official_operation(method, path) {
        Some(op) if !op.served => not_served(op),
        _ => crate::route_not_found(method, path),
    }
}

/// `501 not-served` for an official operation this server does not mount.
pub fn not_served(op: &Operation) -> ApiError {
    let message = if op.family_served {
        format!(
            "{} {} is not served by this runtime (it serves part of the {} family, `{}`); GET /v1/openapi.json lists what is",
            op.method, op.path, op.family, op.prefix
        )
    } else {
        format!(
            "The {} family (`{}`) is not served by this runtime; GET /v1/openapi.json lists what is",
            op.family, op.prefix
        )
    };
    ApiError::new(StatusCode::NOT_IMPLEMENTED, "not-served", message).with_details(json!({
        "family": op.family,
        "method": op.method,
        "path": op.path,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn official_operations_are_matched_by_template() {
        let op = official_operation("GET", "/v1/schedules/trg_1").unwrap();
        assert_eq!(
            (op.family, op.path),
            ("schedules", "/v1/schedules/{triggerId}")
        );
        let op = official_operation("post", "/v1/projects/p1/sites/s1/pause").unwrap();
        assert_eq!(op.family, "sites");
        assert_eq!(op.prefix, "/v1/projects/{projectId}/sites");
        // A literal segment beats a parameter.
        let op = official_operation("GET", "/v1/approvals/reviewers").unwrap();
        assert_eq!(
            (op.family, op.path),
            ("reviewers", "/v1/approvals/reviewers")
        );
        let op = official_operation("GET", "/v1/approvals/apr_1").unwrap();
        assert_eq!(op.family, "approvals");
        let op = official_operation("HEAD", "/v1/schedules").unwrap();
        assert_eq!((op.method, op.path), ("GET", "/v1/schedules"));
    }

    #[test]
    fn other_paths_are_not_official() {
        for (m, p) in [
            ("GET", "/v1/nope"),
            ("GET", "/v1/schedules/"),
            ("GET", "/v1/schedules//fires"),
            ("DELETE", "/v1/schedules"),
            ("GET", "/v1/schedules/a/b"),
            ("BREW", "/v1/schedules"),
        ] {
            assert!(official_operation(m, p).is_none(), "{m} {p}");
        }
    }

    #[test]
    fn the_answer_names_the_family() {
        let e = unknown_route("GET", "/v1/eval-runs");
        assert_eq!((e.status.as_u16(), e.code), (501, "not-served"));
        assert_eq!(
            e.message,
            "The eval-runs family (`/v1/eval-runs`) is not served by this runtime; GET /v1/openapi.json lists what is"
        );
        assert_eq!(
            e.details.unwrap(),
            json!({"family": "eval-runs", "method": "GET", "path": "/v1/eval-runs"})
        );
        let e = unknown_route("DELETE", "/v1/projects/p1");
        assert!(
            e.message.contains("serves part of the projects family"),
            "{}",
            e.message
        );
        assert_eq!(unknown_route("GET", "/v1/nope").code, "route-not-found");
        // A served operation a literal route shadows stays an unknown route.
        assert_eq!(
            unknown_route("PATCH", "/v1/projects/default").code,
            "route-not-found"
        );
    }
}
