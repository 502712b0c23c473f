//! A key limited to a project (`POST /v1/tokens {projectId}`, platform-api.md §1.2, §10.1)
//! acts in that project only. This middleware refuses, before any route reads the request,
//! one that names another project in any of the places a request names one — the path
//! (`/projects/<id>/…`), the query (`?projectId=<id>`, `?scopeKind=project&scopeId=<id>`)
//! and a JSON write body (`projectId`, `scope.projectId`, `scopeKind: "project"` with
//! `scopeId`, as an MCP endpoint's registration names its project) — with `403 key-project-mismatch`
//! ``This API key is limited to project <key's>; the request names project <named>``,
//! `details {keyProjectId, projectId, action, resource, reason}`, as the official
//! `refuseOtherProjectForKey` answers. Requests of any other caller pass untouched.
//!
//! What the key reaches *inside* its project is each route's to decide ([`KeyProject`]):
//! runs ([`crate::runs`]), registrations, guardrails, conversations, approvals and MCP
//! endpoints are read, listed and changed within it only (docs/tokens.md has the table).
//!
//! The caller is authenticated here (the cached check every route makes) and handed on as
//! the request's [`Authenticated`] caller, so the route does not check the key again. Only a
//! project key's write body is buffered (at most [`crate::BODY_LIMIT`] bytes, as every
//! extractor takes), and only the fields naming a project are decoded.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use crate::BODY_LIMIT;
use crate::auth::{Authenticated, Caller, authenticate};
use crate::error::ApiError;
use crate::query::QueryString;
use crate::state::AppState;

/// The middleware (layered inside the idempotency middleware, which may have authenticated
/// the request already).
pub async fn middleware(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let caller = match request.extensions().get::<Authenticated>() {
        Some(Authenticated(c)) => c.clone(),
        None => match authenticate(&state, request.headers()).await {
            Ok(c) => {
                request.extensions_mut().insert(Authenticated(c.clone()));
                c
            }
            // The route answers the 401 (or the 500), or it is a public route.
            Err(_) => return next.run(request).await,
        },
    };
    let Some(limit) = caller.project_id.clone() else {
        return next.run(request).await;
    };
    let mut named = named_in_uri(&request, &caller.tenant);
    let writes = matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH
    );
    if writes && named.iter().all(|n| n.eq_ignore_ascii_case(&limit)) {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = to_bytes(body, BODY_LIMIT).await else {
            return ApiError::too_large(BODY_LIMIT).into_response();
        };
        named.extend(named_in_body(&bytes));
        request = Request::from_parts(parts, Body::from(bytes));
    }
    let action = match *request.method() {
        Method::GET | Method::HEAD => "read",
        _ => "write",
    };
    match named.iter().find(|n| !n.eq_ignore_ascii_case(&limit)) {
        Some(other) => mismatch(&limit, other, action).into_response(),
        None => next.run(request).await,
    }
}

/// `403 key-project-mismatch` for a key limited to `limit` naming `named`.
pub fn mismatch(limit: &str, named: &str, action: &str) -> ApiError {
    let named: String = named.chars().take(100).collect();
    let message =
        format!("This API key is limited to project {limit}; the request names project {named}");
    ApiError::new(
        StatusCode::FORBIDDEN,
        "key-project-mismatch",
        message.clone(),
    )
    .with_details(json!({
        "keyProjectId": limit,
        "projectId": named,
        "action": action,
        "resource": format!("project:{named}"),
        "reason": message,
    }))
}

/// The projects the path and the query name (`/projects/default` names `tenant`'s Default
/// project).
fn named_in_uri(request: &Request, tenant: &str) -> Vec<String> {
    let mut named = Vec::new();
    let path = request.uri().path();
    if let Some((_, rest)) = path.split_once("/projects/") {
        let id = rest.split('/').next().unwrap_or_default();
        // Decoded as a query value would be (a project id is a UUID: nothing to decode).
        let decoded = url::form_urlencoded::parse(format!("p={id}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        match decoded.as_str() {
            "" => {}
            "default" => named.push(crate::projects::default_project_id(tenant)),
            _ => named.push(decoded),
        }
    }
    let q = QueryString::parse(request.uri().query());
    if let Some(p) = q.non_empty("projectId") {
        named.push(p.to_owned());
    }
    if q.first("scopeKind") == Some("project")
        && let Some(id) = q.first("scopeId")
    {
        named.push(id.to_owned());
    }
    named
}

/// What a write body names: `projectId`, `scope.projectId` and the `scopeId` of
/// `scopeKind: "project"`, when they are strings.
#[derive(Deserialize)]
struct BodyNames {
    #[serde(rename = "projectId", default)]
    project_id: Option<serde_json::Value>,
    #[serde(default)]
    scope: Option<serde_json::Value>,
    #[serde(rename = "scopeKind", default)]
    scope_kind: Option<serde_json::Value>,
    #[serde(rename = "scopeId", default)]
    scope_id: Option<serde_json::Value>,
}

/// The projects a JSON object body names (none when it is not one: the route answers that).
fn named_in_body(bytes: &[u8]) -> Vec<String> {
    let starts_object = bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    if !starts_object {
        return Vec::new();
    }
    let Ok(names) = serde_json::from_slice::<BodyNames>(bytes) else {
        return Vec::new();
    };
    let mut named = Vec::new();
    if let Some(serde_json::Value::String(p)) = names.project_id {
        named.push(p);
    }
    if let Some(serde_json::Value::String(p)) = names
        .scope
        .as_ref()
        .and_then(|s| s.get("projectId"))
        .cloned()
    {
        named.push(p);
    }
    if let (Some(serde_json::Value::String(kind)), Some(serde_json::Value::String(p))) =
        (&names.scope_kind, names.scope_id)
        && kind == "project"
    {
        named.push(p);
    }
    named
}

/// `403 permission-denied` for `resource` (`project:<id>`, `agent:<id>`…) that a key limited
/// to project `limit` does not reach, as the official authorizer words it: ``Permission
/// denied: the API key is limited to project <id>``, `details {action, resource, reason}`.
pub fn outside(limit: &str, action: &str, resource: &str) -> ApiError {
    let reason = format!("the API key is limited to project {limit}");
    ApiError::new(
        StatusCode::FORBIDDEN,
        "permission-denied",
        format!("Permission denied: {reason}"),
    )
    .with_details(json!({"action": action, "resource": resource, "reason": reason}))
}

/// What a caller's key limits it to, for the routes that look inside a project.
pub trait KeyProject {
    /// Whether a record of `project` (the tenant's Default project when `None`) is within
    /// the caller's key's project (always, for a key limited to none).
    fn reaches(&self, project: Option<&str>) -> bool;

    /// [`KeyProject::reaches`], else [`outside`] for `resource`.
    fn check_reaches(
        &self,
        project: Option<&str>,
        action: &str,
        resource: &str,
    ) -> Result<(), ApiError>;
}

impl KeyProject for Caller {
    fn reaches(&self, project: Option<&str>) -> bool {
        let Some(limit) = &self.project_id else {
            return true;
        };
        let default;
        let project = match project {
            Some(p) => p,
            None => {
                default = crate::projects::default_project_id(&self.tenant);
                &default
            }
        };
        project.eq_ignore_ascii_case(limit)
    }

    fn check_reaches(
        &self,
        project: Option<&str>,
        action: &str,
        resource: &str,
    ) -> Result<(), ApiError> {
        match &self.project_id {
            Some(limit) if !self.reaches(project) => Err(outside(limit, action, resource)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_name_their_projects() {
        assert_eq!(
            named_in_body(br#" {"projectId":"p1","scope":{"kind":"project","projectId":"p2"}}"#),
            vec!["p1".to_owned(), "p2".to_owned()]
        );
        assert!(named_in_body(b"[1]").is_empty());
        assert!(named_in_body(b"{not json").is_empty());
        assert!(named_in_body(br#"{"projectId": 7}"#).is_empty());
        assert_eq!(
            named_in_body(br#"{"scopeKind":"project","scopeId":"p3"}"#),
            vec!["p3".to_owned()]
        );
        assert!(named_in_body(br#"{"scopeKind":"tenant","scopeId":"p3"}"#).is_empty());
    }

    #[test]
    fn uris_name_their_projects() {
        let r = |uri: &str| {
            Request::builder()
                .uri(uri)
                .body(Body::empty())
                .map(|r| named_in_uri(&r, "acme"))
                .unwrap_or_default()
        };
        assert_eq!(r("/v1/projects/p%2D1/x"), vec!["p-1".to_owned()]);
        assert_eq!(
            r("/v1/env?scopeKind=project&scopeId=s&projectId=q"),
            vec!["q".to_owned(), "s".to_owned()]
        );
        assert!(r("/v1/runs?scopeKind=tenant").is_empty());
        assert_eq!(
            r("/v1/projects/default"),
            vec![crate::projects::default_project_id("acme")]
        );
    }
}
