//! What `/v1/env` and `/v1/secrets` share (platform-api.md §7, §1.8): the served env and the
//! secrets key ([`ValuesConfig`]), the [`Values`] extractor, the `envName` and scope-triplet
//! rules, the capability check, body parsing and the wire shapes of scopes and times.
//!
//! The host gives its configuration in the state
//! (`AppState::with_values(ValuesConfig::new(..))`); without one, the process environment
//! is read once: `KINDGI_ENV` (default `local`) and `KINDGI_SECRETS_KEY` /
//! `KINDGI_SECRETS_KEY_FILE` ([`kindgi_store::seal`]).

use std::sync::Arc;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::StatusCode;
use axum::http::request::Parts;
use kindgi_store::tokens::HeldCapabilities;
use kindgi_store::values::{Tags, ValueScope, ValuesStore};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::auth::{Caller, Tenant};
use crate::error::ApiError;
use crate::projects::{Projects, default_project_id, tenant_uuid};
use crate::query::QueryString;
use crate::state::AppState;

/// The host's configuration, the env-name rule and the echo limit (a leaf module, so the
/// state can hold the configuration).
pub use crate::values_config::{KeyState, ValuesConfig, clip, is_env_name};
/// The env a runtime serves when `KINDGI_ENV` is unset.
pub use kindgi_store::values::DEFAULT_SERVED_ENV;
/// The most tags on one value, and the longest tag key and value (characters).
pub const MAX_TAGS: usize = 64;
pub const MAX_TAG_KEY: usize = 128;
pub const MAX_TAG_VALUE: usize = 512;
/// The longest env value name.
pub const MAX_NAME: usize = 255;

/// The values store under `config`'s secrets key.
pub fn store_for(db: &kindgi_store::Database, config: &ValuesConfig) -> ValuesStore {
    ValuesStore::with_key(db.clone(), config.seal_key())
}

/// A request's values context: the caller's tenant and capabilities, the store and the
/// configuration.
#[derive(Debug, Clone)]
pub struct Values {
    pub caller: Tenant,
    pub capabilities: HeldCapabilities,
    pub store: ValuesStore,
    pub config: Arc<ValuesConfig>,
    /// The tenant's projects, which a `project` scope must name.
    pub projects: Projects,
}

impl FromRequestParts<AppState> for Values {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Values, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let config = state.values.clone();
        let store = store_for(&state.db, &config);
        Ok(Values {
            caller: Tenant(caller.tenant),
            capabilities: caller.capabilities,
            store,
            config,
            projects: Projects::from_ref(state),
        })
    }
}

impl Values {
    pub fn tenant(&self) -> &str {
        &self.caller.0
    }

    /// The stored scope `raw` names: [`resolve_scope`], a project the tenant made included
    /// (its values are kept and read under it, `404 project-not-found` for no project).
    pub async fn scope(&self, raw: &RawScope) -> Result<ValueScope, ApiError> {
        match resolve_scope(self.tenant(), raw) {
            Err(e) if e.code == "project-not-found" => {
                match self
                    .projects
                    .stored(self.tenant(), &raw.id.to_ascii_lowercase())
                    .await?
                {
                    Some(p) => Ok(ValueScope::Project(p.id)),
                    None => Err(e),
                }
            }
            other => other,
        }
    }

    /// `403 permission-denied` unless the caller's key holds `cap` (platform-api.md §1.2,
    /// fail-closed: see [`HeldCapabilities`]).
    pub fn require(&self, cap: &str) -> Result<(), ApiError> {
        if self.capabilities.holds(cap) {
            return Ok(());
        }
        let message =
            format!("Bearer token is missing the `{cap}` capability required for this route.");
        Err(
            ApiError::new(StatusCode::FORBIDDEN, "permission-denied", message.clone()).with_details(
                json!({"action": "admin", "resource": format!("tenant:{}", tenant_uuid(self.tenant())), "reason": message}),
            ),
        )
    }

    /// `409 env-not-served` unless `env_name` is the served env.
    pub fn require_served(&self, env_name: &str, kind: &str, name: &str) -> Result<(), ApiError> {
        let served = &self.config.served_env;
        if env_name == served {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::CONFLICT,
            "env-not-served",
            format!(
                "This runtime keeps its values under `{served}` only, so the {kind} `{}` under `{env_name}` would never be read. Store it under `{served}`",
                clip(name)
            ),
        )
        .with_details(json!({"envName": env_name, "servedEnv": served})))
    }
}

/// The query parameters (first value of each name).
pub type Params = QueryString;

/// The query string of a values route: the first value of a repeated key counts.
pub fn params(raw: Option<&str>) -> Params {
    QueryString::parse(raw)
}

/// `envName`: required (`400 env-name-required`), `[a-z][a-z0-9-]{0,62}`.
pub fn env_name(raw: Option<&str>) -> Result<String, ApiError> {
    let required = |m: &str| ApiError::new(StatusCode::BAD_REQUEST, "env-name-required", m);
    match raw {
        None | Some("") => Err(required("`envName` query parameter is required")),
        Some(s) if is_env_name(s) => Ok(s.to_owned()),
        Some(_) => Err(required(
            "`envName` must match RFC-1035-like grammar [a-z][a-z0-9-]{0,62}.",
        )),
    }
}

fn scope_invalid(message: String) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "scope-invalid", message)
}

/// The scope as the caller wrote it: kind and id, before it is checked against what exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawScope {
    pub kind: String,
    pub id: String,
}

/// The `?scopeKind` + `?scopeId` + `?inherit` triplet (§1.8): `400 scope-invalid` for a
/// malformed one, `400 scope-kind-required` when `scopeKind` is missing.
pub fn query_scope(p: &Params) -> Result<RawScope, ApiError> {
    let get = |n: &str| p.first(n).filter(|s| !s.is_empty());
    if let Some(inherit) = get("inherit") {
        if inherit != "true" && inherit != "false" {
            return Err(scope_invalid(format!(
                "scope query parameters malformed: inherit must be 'true' or 'false', got \"{}\"",
                clip(inherit)
            )));
        }
    }
    let (kind, id) = (get("scopeKind"), get("scopeId"));
    let Some(kind) = kind else {
        if let Some(id) = id {
            return Err(scope_invalid(format!(
                "scope query parameters malformed: scopeId=\"{}\" requires scopeKind",
                clip(id)
            )));
        }
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "scope-kind-required",
            "`scopeKind` query parameter is required.",
        ));
    };
    match (kind, id) {
        ("tenant", None) => Ok(RawScope { kind: "tenant".into(), id: String::new() }),
        ("tenant", Some(_)) => Err(scope_invalid(
            "scope query parameters malformed: scopeKind='tenant' takes no scopeId (tenant is implicit from the session)".into(),
        )),
        ("org" | "project", None) => Err(scope_invalid(format!(
            "scope query parameters malformed: scopeKind='{kind}' requires scopeId"
        ))),
        ("org" | "project", Some(id)) => Ok(RawScope { kind: kind.into(), id: id.into() }),
        _ => Err(scope_invalid(format!(
            "scope query parameters malformed: scopeKind must be one of 'tenant' | 'org' | 'project', got \"{}\"",
            clip(kind)
        ))),
    }
}

/// The stored scope a raw one names in `tenant`: the tenant, or its Default project. A
/// project id that is not a UUID is `400 scope-invalid`; another project is
/// `404 project-not-found` (unless it is stored: [`Values::scope`] knows those); an org is
/// `404 not-found` (this runtime has no orgs).
pub fn resolve_scope(tenant: &str, raw: &RawScope) -> Result<ValueScope, ApiError> {
    let what = if raw.kind == "org" {
        "an org"
    } else {
        "a project"
    };
    match raw.kind.as_str() {
        "tenant" => return Ok(ValueScope::Tenant),
        "org" | "project" => {}
        _ => {
            return Err(scope_invalid(format!(
                "scope kind \"{}\" is not tenant, org or project",
                clip(&raw.kind)
            )));
        }
    }
    if uuid::Uuid::parse_str(&raw.id).is_err() {
        return Err(scope_invalid(format!(
            "scope query parameters malformed: scopeId must be {what} id (a UUID), got \"{}\"",
            clip(&raw.id)
        )));
    }
    if raw.kind == "org" {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not-found",
            format!(
                "No org with id \"{}\" in this tenant: this runtime has no orgs; use scopeKind=tenant, or scopeKind=project with the Default project",
                raw.id
            ),
        )
        .with_details(json!({"orgId": raw.id})));
    }
    let default = default_project_id(tenant);
    if raw.id.eq_ignore_ascii_case(&default) {
        return Ok(ValueScope::Project(default));
    }
    Err(ApiError::new(
        StatusCode::NOT_FOUND,
        "project-not-found",
        format!("No project with id \"{}\" in this tenant", raw.id),
    )
    .with_details(json!({"projectId": raw.id})))
}

/// `OA:Scope` of a stored scope: `tenantId` is the tenant's UUID ([`tenant_uuid`]), as on
/// the rest of the wire.
pub fn scope_json(tenant: &str, scope: &ValueScope) -> Value {
    let tenant_id = tenant_uuid(tenant);
    match scope {
        ValueScope::Tenant => json!({"kind": "tenant", "tenantId": tenant_id}),
        ValueScope::Org(id) => json!({"kind": "org", "tenantId": tenant_id, "orgId": id}),
        ValueScope::Project(id) => {
            json!({"kind": "project", "tenantId": tenant_id, "projectId": id})
        }
    }
}

/// Whether a request's `tenantId` names `tenant`: its UUID ([`tenant_uuid`], any case), or,
/// for clients written before the UUID, its name.
pub fn names_tenant(tenant_id: &str, tenant: &str) -> bool {
    tenant_id == tenant || tenant_id.eq_ignore_ascii_case(&tenant_uuid(tenant))
}

/// The reference's `scopesEqual`: a body scope names the same kind and id as the query
/// (its `tenantId`, when present, must name the caller's tenant: [`names_tenant`]).
pub fn scopes_equal(body: &Value, tenant: &str, raw: &RawScope) -> bool {
    let Some(o) = body.as_object() else {
        return false;
    };
    if o.get("kind").and_then(Value::as_str) != Some(raw.kind.as_str()) {
        return false;
    }
    if let Some(t) = o.get("tenantId") {
        if !t.as_str().is_some_and(|t| names_tenant(t, tenant)) {
            return false;
        }
    }
    let field = match raw.kind.as_str() {
        "org" => "orgId",
        "project" => "projectId",
        _ => return true,
    };
    o.get(field).and_then(Value::as_str) == Some(raw.id.as_str())
}

/// RFC 3339 (milliseconds, UTC) of a stored time.
pub fn time(ms: i64) -> String {
    kindgi_runtime::record::format_millis(ms)
}

/// The body as a JSON object: `400 bad-input` for bad JSON (`details.maxDepth` when it is
/// nested too deep) or a non-object.
pub fn object_body(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(ApiError::bad_input("Request body must be an object")),
        Err(e) if e.to_string().contains("recursion limit") => Err(ApiError::bad_input(
            "Request body is nested deeper than 128 levels",
        )
        .with_details(json!({"maxDepth": 128}))),
        Err(_) => Err(ApiError::bad_input("Request body must be valid JSON")),
    }
}

/// `tags`, when present: a string map within the budgets, else `400 bad-input`.
pub fn tags(body: &Map<String, Value>) -> Result<Option<Tags>, ApiError> {
    let Some(raw) = body.get("tags") else {
        return Ok(None);
    };
    let bad = || {
        ApiError::bad_input("`tags` must be a string map when present")
            .with_details(json!({"field": "tags"}))
    };
    let map = raw.as_object().ok_or_else(bad)?;
    if map.len() > MAX_TAGS {
        return Err(ApiError::bad_input(format!(
            "`tags` has {} entries; at most {MAX_TAGS}",
            map.len()
        ))
        .with_details(json!({"field": "tags", "max": MAX_TAGS})));
    }
    let mut out = Tags::new();
    for (k, v) in map {
        let v = v.as_str().ok_or_else(bad)?;
        if k.chars().count() > MAX_TAG_KEY || v.chars().count() > MAX_TAG_VALUE {
            return Err(ApiError::bad_input(format!(
                "a tag key is at most {MAX_TAG_KEY} characters and a tag value at most {MAX_TAG_VALUE}"
            ))
            .with_details(json!({"field": "tags", "tag": clip(k)})));
        }
        out.insert(k.clone(), v.to_owned());
    }
    Ok(Some(out))
}

/// A non-negative integer field (`ifRevision`, `ifVersion`), when present.
pub fn revision_field(body: &Map<String, Value>, field: &str) -> Result<Option<i64>, ApiError> {
    match body.get(field) {
        None => Ok(None),
        Some(v) => v.as_i64().filter(|n| *n >= 0).map(Some).ok_or_else(|| {
            ApiError::bad_input(format!("`{field}` must be a number when present"))
                .with_details(json!({"field": field}))
        }),
    }
}

/// A list position: which list issued it, and where the page ended.
#[derive(Debug, Serialize, Deserialize)]
pub struct Position {
    pub list: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: i64,
}

/// Decode `?cursor` for `list`; one another list issued is `400 bad-input` (malformed).
pub fn cursor(p: &Params, list: &str) -> Result<Option<Position>, ApiError> {
    let pos: Option<Position> = crate::page::decode_cursor(p.first("cursor"))?;
    match pos {
        Some(pos) if pos.list != list => {
            Err(ApiError::bad_input("`cursor` is malformed")
                .with_details(json!({"field": "cursor"})))
        }
        other => Ok(other),
    }
}

/// The `503` for a configured but unusable key, or `None` when the key is fine or missing
/// (a missing key surfaces as [`ValuesError::NoKey`]).
pub fn key_problem(config: &ValuesConfig) -> Option<ApiError> {
    match &config.key {
        KeyState::Invalid(reason) => Some(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "secret-provider-unavailable",
            format!(
                "This runtime's secrets key is not usable, so it cannot store secret values: {reason}"
            ),
        )),
        _ => None,
    }
}
