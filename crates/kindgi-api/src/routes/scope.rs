//! The one scope triplet (platform-api.md §1.8): `scopeKind` `tenant|org|project`, `scopeId`
//! (required for org/project, refused for tenant) and `inherit` `true|false`, from a query
//! string or a register body. Malformed → `400 scope-invalid` with the reference's
//! messages (``scope query parameters malformed: …``). The registry list routes only check
//! it ([`check`]); conversations and MCP endpoints narrow by it ([`parse_query`],
//! [`parse_body`]).

use axum::http::StatusCode;

use crate::error::ApiError;
use crate::query::QueryString;

/// A parsed scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Tenant,
    Org(String),
    Project(String),
}

impl Scope {
    /// `(scope_kind, scope_id)` as stored (`scope_id` empty for the tenant).
    pub fn key(&self) -> (String, String) {
        match self {
            Scope::Tenant => ("tenant".into(), String::new()),
            Scope::Org(id) => ("org".into(), id.clone()),
            Scope::Project(id) => ("project".into(), id.clone()),
        }
    }
}

/// The query triplet: the scope if any, and `inherit` if given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeQuery {
    pub scope: Option<Scope>,
    pub inherit: Option<bool>,
}

/// `400 scope-invalid`.
pub fn scope_invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "scope-invalid", message)
}

/// What a message echoes of client input: at most `limit` characters.
fn echo_within(s: &str, limit: usize) -> String {
    s.chars().take(limit).collect()
}

/// The echo limit of the conversation and MCP routes.
const ECHO: usize = 200;

/// Parses `scopeKind`, `scopeId` and `inherit` (each already percent-decoded).
pub fn parse_query(
    kind: Option<&str>,
    id: Option<&str>,
    inherit: Option<&str>,
) -> Result<ScopeQuery, ApiError> {
    parse_echoing(kind, id, inherit, ECHO)
}

/// The triplet of a registry list route (`/v1/tools`, `/v1/flows`…): checked, narrowing
/// nothing (this runtime has one project per tenant and no orgs). Its messages echo the
/// values whole, as they always have (a registry query value is at most
/// [`crate::query::MAX_VALUE_LEN`] bytes).
pub fn check(q: &QueryString) -> Result<ScopeQuery, ApiError> {
    parse_echoing(
        q.non_empty("scopeKind"),
        q.non_empty("scopeId"),
        q.non_empty("inherit"),
        usize::MAX,
    )
}

fn parse_echoing(
    kind: Option<&str>,
    id: Option<&str>,
    inherit: Option<&str>,
    limit: usize,
) -> Result<ScopeQuery, ApiError> {
    let echo = |s: &str| echo_within(s, limit);
    let malformed = |m: String| scope_invalid(format!("scope query parameters malformed: {m}"));
    let inherit = match inherit.filter(|s| !s.is_empty()) {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(malformed(format!(
                "inherit must be 'true' or 'false', got \"{}\"",
                echo(other)
            )));
        }
    };
    let id = id.filter(|s| !s.is_empty());
    let Some(kind) = kind.filter(|s| !s.is_empty()) else {
        if let Some(id) = id {
            return Err(malformed(format!(
                "scopeId=\"{}\" requires scopeKind",
                echo(id)
            )));
        }
        return Ok(ScopeQuery {
            scope: None,
            inherit,
        });
    };
    let scope = match (kind, id) {
        ("tenant", None) => Scope::Tenant,
        ("tenant", Some(_)) => {
            return Err(malformed(
                "scopeKind='tenant' takes no scopeId (tenant is implicit from the session)".into(),
            ));
        }
        ("org" | "project", None) => {
            return Err(malformed(format!("scopeKind='{kind}' requires scopeId")));
        }
        ("org", Some(id)) => Scope::Org(id.to_owned()),
        ("project", Some(id)) => Scope::Project(id.to_owned()),
        (other, _) => {
            return Err(malformed(format!(
                "scopeKind must be one of 'tenant' | 'org' | 'project', got \"{}\"",
                echo(other)
            )));
        }
    };
    Ok(ScopeQuery {
        scope: Some(scope),
        inherit,
    })
}

/// The register body's `scopeKind` + `scopeId` (required), with the reference's messages.
pub fn parse_body(
    kind: Option<&serde_json::Value>,
    id: Option<&serde_json::Value>,
) -> Result<Scope, ApiError> {
    let kind = kind.and_then(|v| v.as_str()).filter(|s| !s.is_empty());
    let id_text = id.and_then(|v| v.as_str()).filter(|s| !s.is_empty());
    let id_present = id.is_some_and(|v| match v {
        serde_json::Value::Null => false,
        serde_json::Value::String(s) => !s.is_empty(),
        _ => true,
    });
    let Some(kind) = kind else {
        return Err(scope_invalid(
            "scopeKind required in register body: one of \"tenant\" | \"org\" | \"project\"",
        ));
    };
    match kind {
        "tenant" if id_present => Err(scope_invalid(
            "scopeKind=\"tenant\" takes no scopeId (tenant is implicit from the session)",
        )),
        "tenant" => Ok(Scope::Tenant),
        "org" | "project" => {
            let Some(id) = id_text else {
                return Err(scope_invalid(format!(
                    "scopeKind=\"{kind}\" requires a non-empty scopeId in the body"
                )));
            };
            Ok(if kind == "org" {
                Scope::Org(id.to_owned())
            } else {
                Scope::Project(id.to_owned())
            })
        }
        other => Err(scope_invalid(format!(
            "scopeKind must be one of \"tenant\" | \"org\" | \"project\", got \"{}\"",
            echo_within(other, ECHO)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn query_triplet() {
        assert_eq!(
            parse_query(None, None, None).ok(),
            Some(ScopeQuery::default())
        );
        let q = parse_query(Some("project"), Some("p1"), Some("false")).ok();
        assert_eq!(
            q,
            Some(ScopeQuery {
                scope: Some(Scope::Project("p1".into())),
                inherit: Some(false)
            })
        );
        for (k, i, inh) in [
            (Some("tenant"), Some("x"), None),
            (Some("org"), None, None),
            (None, Some("x"), None),
            (Some("galaxy"), None, None),
            (None, None, Some("maybe")),
        ] {
            let e = parse_query(k, i, inh).err().map(|e| (e.code, e.message));
            let (code, message) = e.unwrap_or_default();
            assert_eq!(code, "scope-invalid");
            assert!(
                message.starts_with("scope query parameters malformed: "),
                "{message}"
            );
        }
    }

    #[test]
    fn body_scope() {
        assert_eq!(
            parse_body(Some(&json!("tenant")), None).ok(),
            Some(Scope::Tenant)
        );
        assert!(parse_body(None, None).is_err());
        assert!(parse_body(Some(&json!("tenant")), Some(&json!("x"))).is_err());
        assert!(parse_body(Some(&json!("project")), None).is_err());
        assert_eq!(
            parse_body(Some(&json!("org")), Some(&json!("o"))).ok(),
            Some(Scope::Org("o".into()))
        );
    }

    #[test]
    fn triplets_are_checked_as_the_reference_does() {
        assert_eq!(
            check(&QueryString::parse(None)).ok(),
            Some(ScopeQuery::default())
        );
        assert_eq!(
            check(&QueryString::parse(Some("scopeKind=tenant&inherit=true"))).ok(),
            Some(ScopeQuery {
                scope: Some(Scope::Tenant),
                inherit: Some(true)
            })
        );
        let msg = |q: &str| check(&QueryString::parse(Some(q))).err().map(|e| e.message);
        assert_eq!(
            msg("scopeKind=project").as_deref(),
            Some("scope query parameters malformed: scopeKind='project' requires scopeId")
        );
        assert_eq!(
            msg("scopeId=x").as_deref(),
            Some("scope query parameters malformed: scopeId=\"x\" requires scopeKind")
        );
        assert_eq!(
            msg("inherit=yes").as_deref(),
            Some(
                "scope query parameters malformed: inherit must be 'true' or 'false', got \"yes\""
            )
        );
        assert!(msg("scopeKind=team").is_some());
        assert!(msg("scopeKind=tenant&scopeId=t").is_some());
    }
}
