//! The scope triplet of the list routes (platform-api.md §1.8): `scopeKind`
//! (`tenant|org|project`), `scopeId` (required for `org`/`project`, refused for `tenant`) and
//! `inherit` (`true|false`). A malformed triplet is `400 scope-invalid` with the reference's
//! message (`scope query parameters malformed: …`). This runtime has one project per tenant
//! and no orgs, so a well-formed scope does not narrow a list; it is only checked.

use axum::http::StatusCode;

use crate::error::ApiError;
use crate::routes::query;

/// A checked scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Tenant,
    Org(String),
    Project(String),
}

fn invalid(what: String) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "scope-invalid",
        format!("scope query parameters malformed: {what}"),
    )
}

/// Checks `scopeKind`, `scopeId` and `inherit` of a raw query.
pub fn check(q: Option<&str>) -> Result<(Option<Scope>, Option<bool>), ApiError> {
    let kind = query::non_empty(q, "scopeKind");
    let id = query::non_empty(q, "scopeId");
    let inherit = match query::non_empty(q, "inherit").as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(invalid(format!(
                "inherit must be 'true' or 'false', got \"{other}\""
            )));
        }
    };
    let scope = match (kind.as_deref(), id) {
        (None, None) => None,
        (None, Some(id)) => return Err(invalid(format!("scopeId=\"{id}\" requires scopeKind"))),
        (Some("tenant"), None) => Some(Scope::Tenant),
        (Some("tenant"), Some(_)) => {
            return Err(invalid(
                "scopeKind='tenant' takes no scopeId (tenant is implicit from the session)".into(),
            ));
        }
        (Some(k @ ("org" | "project")), None) => {
            return Err(invalid(format!("scopeKind='{k}' requires scopeId")));
        }
        (Some("org"), Some(id)) => Some(Scope::Org(id)),
        (Some("project"), Some(id)) => Some(Scope::Project(id)),
        (Some(other), _) => {
            return Err(invalid(format!(
                "scopeKind must be one of 'tenant' | 'org' | 'project', got \"{other}\""
            )));
        }
    };
    Ok((scope, inherit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triplets_are_checked_as_the_reference_does() {
        assert_eq!(check(None).ok(), Some((None, None)));
        assert_eq!(
            check(Some("scopeKind=tenant&inherit=true")).ok(),
            Some((Some(Scope::Tenant), Some(true)))
        );
        let msg = |q: &str| check(Some(q)).err().map(|e| e.message);
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
