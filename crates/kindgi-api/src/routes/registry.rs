//! What the versioned registries (flows, agents) share: the read routes, unregister and
//! reinstate, the publish bookkeeping, the read-only refusal and the wire shape of an item
//! (platform-api.md §5). Each kind is a [`Kind`] — its codes, nouns and the OpenAPI
//! properties its items carry — and [`routes`] mounts the shared handlers under its path;
//! the kind's own file adds its publish route (validation differs per kind).
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/<kind>s?limit&cursor&name&includeRetired` | page of the latest active version per id (`name`: id prefix) |
//! | `GET /v1/<kind>s/{id}` | latest active version; `404 <kind>-not-found`; `410 <kind>-gone` |
//! | `GET …/{id}/versions?limit&cursor&includeTombstoned` | page, semver ascending |
//! | `GET …/{id}/versions/{version}` | that version, unregistered ones too |
//! | `POST …/{id}/versions/{version}/unregister` | `{<kind>Id, version, unregistered: true}` |
//! | `POST …/{id}/versions/{version}/reinstate` | `{<kind>Id, version, wasTombstoned}` |
//!
//! Registrations are tenant-wide, as the reference keeps them: every key of the tenant
//! lists and reads every project's items (`?projectId=` is checked, narrowing nothing). A key
//! limited to a project ([`crate::key_project`]) lists only its project's items (a pack's,
//! which have no project, count as the Default project's) and is refused reading,
//! unregistering or reinstating another's (`403 permission-denied`, as the official
//! authorizer answers).

use axum::extract::rejection::PathRejection;
use axum::extract::{FromRef, FromRequestParts, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_store::definitions::{
    DefinitionError, DefinitionKind, DefinitionRecord, Latest, ListDefinitions, NewDefinition,
    SOURCE_API,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::key_project::KeyProject;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::Projects;
use crate::query::QueryString;
use crate::state::AppState;

/// One versioned registry kind.
#[derive(Debug)]
pub struct Kind {
    pub store: DefinitionKind,
    /// `Flow`, `Agent`: how messages name it.
    pub title: &'static str,
    /// `/v1/flows`.
    pub path: &'static str,
    /// `flowId`.
    pub id_field: &'static str,
    pub not_found: &'static str,
    pub gone: &'static str,
    pub already_registered: &'static str,
    pub project_mismatch: &'static str,
    /// The properties of the kind's OpenAPI item schema, in order. An item is rendered
    /// with exactly these (from the definition, the record and its annotations).
    pub wire_keys: &'static [&'static str],
}

/// The shared routes of `kind` (its publish route is the kind's own).
pub fn routes(kind: &'static Kind) -> Router<AppState> {
    // Each handler is given `kind` by its route (a closure), not by a request extension.
    type Id = Result<Path<String>, PathRejection>;
    type Version = Result<Path<(String, String)>, PathRejection>;
    let item = format!("{}/{{id}}", kind.path);
    Router::new()
        .route(
            kind.path,
            get(move |s: State<AppState>, c: Caller, q: RawQuery| list(kind, s, c, q)),
        )
        .route(
            &item,
            get(move |s: State<AppState>, c: Caller, p: Id, q: RawQuery| {
                get_latest(kind, s, c, p, q)
            }),
        )
        .route(
            &format!("{item}/versions"),
            get(move |s: State<AppState>, c: Caller, p: Id, q: RawQuery| {
                list_versions(kind, s, c, p, q)
            }),
        )
        .route(
            &format!("{item}/versions/{{version}}"),
            get(move |s: State<AppState>, c: Caller, p: Version| get_version(kind, s, c, p)),
        )
        .route(
            &format!("{item}/versions/{{version}}/unregister"),
            post(
                move |s: State<AppState>, c: Caller, w: Writable, p: Version| {
                    unregister(kind, s, c, w, p)
                },
            ),
        )
        .route(
            &format!("{item}/versions/{{version}}/reinstate"),
            post(
                move |s: State<AppState>, c: Caller, w: Writable, p: Version| {
                    reinstate(kind, s, c, w, p)
                },
            ),
        )
}

/// An extractor that refuses the request when the registries are read-only
/// (`409 registry-read-only`). Put it after [`crate::auth::Tenant`] (or [`Caller`]) and
/// before the body, so a caller without a key is still `401` and a body is never read.
#[derive(Debug, Clone, Copy)]
pub struct Writable;

impl FromRequestParts<AppState> for Writable {
    type Rejection = ApiError;

    async fn from_request_parts(
        _parts: &mut Parts,
        state: &AppState,
    ) -> Result<Writable, ApiError> {
        match state.registry_read_only_reason() {
            None => Ok(Writable),
            Some(reason) => Err(read_only(reason)),
        }
    }
}

/// `409 registry-read-only` with `reason` as its message.
pub fn read_only(reason: &str) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, "registry-read-only", reason)
}

fn path_error(e: PathRejection) -> ApiError {
    ApiError::bad_input(format!("The path is not valid: {e}"))
}

/// RFC 3339 (milliseconds, `Z`) of Unix milliseconds. (core's record time format).
pub use kindgi_core::ids::format_millis as rfc3339;

/// The wire item of `record`: the kind's OpenAPI properties, in order, from the record
/// (`projectId`, `unregisteredAt`), its annotations (`pins`, `pinsDigest`…) and the
/// definition. Fields the definition has and the schema lacks are not sent.
pub fn wire(keys: &[&str], record: &DefinitionRecord) -> Result<Value, ApiError> {
    let definition = record.definition().map_err(|e| ApiError::internal(&e))?;
    let annotations = record.annotations().map_err(|e| ApiError::internal(&e))?;
    let mut out = Map::new();
    for &key in keys {
        let value = match key {
            "projectId" => record.project_id.clone().map(Value::String),
            "unregisteredAt" => record.unregistered_at.map(|at| Value::String(rfc3339(at))),
            _ => annotations
                .get(key)
                .or_else(|| definition.get(key))
                .cloned(),
        };
        if let Some(v) = value {
            out.insert(key.to_owned(), v);
        }
    }
    Ok(Value::Object(out))
}

/// `404 <kind>-not-found` for an id never registered.
pub fn not_found(kind: &Kind, id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        kind.not_found,
        format!("No {} registered with id \"{id}\"", kind.store.as_str()),
    )
    .with_details(json!({ kind.id_field: id }))
}

/// `404 <kind>-not-found` for a version that is not there; `suffix` says what for
/// (`" to unregister"`).
fn version_not_found(kind: &Kind, id: &str, version: &str, suffix: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        kind.not_found,
        format!(
            "No {} \"{id}\" at version \"{version}\"{suffix}",
            kind.store.as_str()
        ),
    )
    .with_details(json!({ kind.id_field: id, "version": version }))
}

/// The list cursor: the last id of the previous page.
#[derive(Debug, Serialize, Deserialize)]
struct IdCursor {
    id: String,
}

/// The versions cursor: the last version of the previous page.
#[derive(Debug, Serialize, Deserialize)]
struct VersionCursor {
    v: String,
}

/// `?limit, cursor, name, includeRetired` of a list route, as a store query.
pub fn list_query(q: Option<&str>) -> Result<ListDefinitions, ApiError> {
    let q = QueryString::clipped(q);
    crate::routes::scope::check(&q)?;
    let cursor: Option<IdCursor> = decode_cursor(q.first("cursor"))?;
    Ok(ListDefinitions {
        limit: clamp_limit(q.first("limit")),
        after: cursor.map(|c| c.id),
        prefix: q.non_empty("name").map(str::to_owned),
        include_retired: q.flag("includeRetired"),
    })
}

/// The page body of listed records, rendered with `keys`.
pub fn list_page(
    keys: &[&str],
    items: &[DefinitionRecord],
    has_more: bool,
) -> Result<Value, ApiError> {
    let data = items
        .iter()
        .map(|r| wire(keys, r))
        .collect::<Result<Vec<_>, _>>()?;
    let next = has_more
        .then(|| {
            items
                .last()
                .map(|r| encode_cursor(&IdCursor { id: r.id.clone() }))
        })
        .flatten();
    Ok(page(data, next, Map::new()))
}

async fn list(
    kind: &'static Kind,
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(q): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let query = list_query(q.as_deref())?;
    let mut found = state
        .definitions
        .list(&caller.tenant, kind.store, &query)
        .await?;
    // A key limited to a project lists that project's items (the official filters the page
    // by `read` the same way, after paging).
    found
        .items
        .retain(|r| caller.reaches(r.project_id.as_deref()));
    list_page(kind.wire_keys, &found.items, found.has_more).map(Json)
}

/// `?projectId=` of an item read: a UUID naming one of the tenant's projects (`400`,
/// `404 project-not-found`). Registrations are tenant-wide (an id's versions live in its
/// first project), so it narrows nothing.
pub async fn check_project_query(
    state: &AppState,
    tenant: &str,
    q: Option<&str>,
) -> Result<(), ApiError> {
    match QueryString::clipped(q).non_empty("projectId") {
        Some(p) => Projects::from_ref(state)
            .check(tenant, Some(p))
            .await
            .map(drop),
        None => Ok(()),
    }
}

/// `Ok` when the caller's key reaches `record`'s project, else the official
/// `403 permission-denied` naming `<kind>:<id>` ([`crate::key_project::outside`]).
pub fn check_item(kind: &Kind, caller: &Caller, record: &DefinitionRecord) -> Result<(), ApiError> {
    caller.check_reaches(
        record.project_id.as_deref(),
        "read",
        &format!("{}:{}", kind.store.as_str(), record.id),
    )
}

async fn get_latest(
    kind: &'static Kind,
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
    RawQuery(q): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let Path(id) = path.map_err(path_error)?;
    let tenant = &caller.tenant;
    check_project_query(&state, tenant, q.as_deref()).await?;
    match state.definitions.latest(tenant, kind.store, &id).await? {
        Latest::Active(r) => {
            check_item(kind, &caller, &r)?;
            wire(kind.wire_keys, &r).map(Json)
        }
        Latest::Gone(_) => Err(ApiError::new(
            StatusCode::GONE,
            kind.gone,
            format!(
                "{} \"{id}\" has no active versions; reinstate a tombstoned version or publish a new one",
                kind.title
            ),
        )
        .with_details(json!({ kind.id_field: id }))),
        Latest::NotFound => Err(not_found(kind, &id)),
    }
}

async fn list_versions(
    kind: &'static Kind,
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<String>, PathRejection>,
    RawQuery(q): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let tenant = &caller.tenant;
    let Path(id) = path.map_err(path_error)?;
    let q = QueryString::clipped(q.as_deref());
    let limit = clamp_limit(q.first("limit"));
    let cursor: Option<VersionCursor> = decode_cursor(q.first("cursor"))?;
    let include = q.flag("includeTombstoned");
    let all = state.definitions.versions(tenant, kind.store, &id).await?;
    let Some(first) = all.first() else {
        return Err(not_found(kind, &id));
    };
    check_item(kind, &caller, first)?;
    let shown: Vec<&DefinitionRecord> = all
        .iter()
        .filter(|r| include || !r.is_unregistered())
        .collect();
    let start = match cursor {
        None => 0,
        Some(c) => shown
            .iter()
            .position(|r| r.version == c.v)
            .map(|i| i + 1)
            .ok_or_else(|| {
                ApiError::bad_input("`cursor` is malformed")
                    .with_details(json!({"field": "cursor"}))
            })?,
    };
    let window: Vec<&DefinitionRecord> = shown.into_iter().skip(start).take(limit + 1).collect();
    let has_more = window.len() > limit;
    let items: Vec<&DefinitionRecord> = window.into_iter().take(limit).collect();
    let data = items
        .iter()
        .map(|r| wire(kind.wire_keys, r))
        .collect::<Result<Vec<_>, _>>()?;
    let next = has_more
        .then(|| {
            items.last().map(|r| {
                encode_cursor(&VersionCursor {
                    v: r.version.clone(),
                })
            })
        })
        .flatten();
    Ok(Json(page(data, next, Map::new())))
}

async fn get_version(
    kind: &'static Kind,
    State(state): State<AppState>,
    caller: Caller,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path((id, version)) = path.map_err(path_error)?;
    match state
        .definitions
        .get_version(&caller.tenant, kind.store, &id, &version)
        .await?
    {
        Some(r) => {
            check_item(kind, &caller, &r)?;
            wire(kind.wire_keys, &r).map(Json)
        }
        None => Err(version_not_found(kind, &id, &version, "")),
    }
}

/// Before a version of `kind` changes: the caller's key reaches the version's project
/// (`403 permission-denied` naming `<kind>:<id>`, action `write`). An unknown version is
/// left to the change's `404`.
async fn check_writes(
    kind: &Kind,
    state: &AppState,
    caller: &Caller,
    id: &str,
    version: &str,
) -> Result<(), ApiError> {
    if caller.project_id.is_none() {
        return Ok(());
    }
    match state
        .definitions
        .get_version(&caller.tenant, kind.store, id, version)
        .await?
    {
        Some(r) => caller.check_reaches(
            r.project_id.as_deref(),
            "write",
            &format!("{}:{}", kind.store.as_str(), r.id),
        ),
        None => Ok(()),
    }
}

async fn unregister(
    kind: &'static Kind,
    State(state): State<AppState>,
    caller: Caller,
    _writable: Writable,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path((id, version)) = path.map_err(path_error)?;
    check_writes(kind, &state, &caller, &id, &version).await?;
    state
        .definitions
        .set_unregistered(&caller.tenant, kind.store, &id, &version, true)
        .await?
        .ok_or_else(|| version_not_found(kind, &id, &version, " to unregister"))?;
    Ok(Json(
        json!({ kind.id_field: id, "version": version, "unregistered": true }),
    ))
}

async fn reinstate(
    kind: &'static Kind,
    State(state): State<AppState>,
    caller: Caller,
    _writable: Writable,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path((id, version)) = path.map_err(path_error)?;
    check_writes(kind, &state, &caller, &id, &version).await?;
    let changed = state
        .definitions
        .set_unregistered(&caller.tenant, kind.store, &id, &version, false)
        .await?
        .ok_or_else(|| version_not_found(kind, &id, &version, " to reinstate"))?;
    Ok(Json(
        json!({ kind.id_field: id, "version": version, "wasTombstoned": changed }),
    ))
}

/// A publish body split into its `projectId` (checked: required, a UUID, the tenant's
/// project) and the definition (an object without it).
pub async fn split_publish_body(
    state: &crate::state::AppState,
    tenant: &str,
    body: &[u8],
) -> Result<(String, Map<String, Value>), ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|_| ApiError::bad_input("Request body must be valid JSON"))?;
    let Value::Object(mut object) = value else {
        return Err(ApiError::bad_input("Request body must be an object"));
    };
    let project = match object.remove("projectId") {
        Some(Value::String(p)) if !p.is_empty() => p,
        _ => {
            return Err(ApiError::bad_input("`projectId` is required")
                .with_details(json!({"field": "projectId"})));
        }
    };
    let projects = <crate::projects::Projects as axum::extract::FromRef<_>>::from_ref(state);
    let project_id = projects.check(tenant, Some(&project)).await?;
    Ok((project_id, object))
}

/// Store a checked definition as a new version of `kind` through the API.
pub async fn publish(
    state: &AppState,
    tenant: &str,
    kind: &Kind,
    project_id: String,
    definition: Value,
    annotations: Option<Value>,
) -> Result<DefinitionRecord, ApiError> {
    let field = |k: &str| {
        definition
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let new = NewDefinition {
        id: field("id"),
        version: field("version"),
        project_id: Some(project_id),
        definition,
        annotations,
        source: SOURCE_API.to_owned(),
    };
    state
        .definitions
        .publish(tenant, kind.store, &new)
        .await
        .map_err(|e| publish_error(kind, e))
}

/// The REST answer of a refused publish.
pub fn publish_error(kind: &Kind, e: DefinitionError) -> ApiError {
    match e {
        DefinitionError::AlreadyRegistered { id, version, .. }
        | DefinitionError::VersionTaken { id, version, .. } => ApiError::new(
            StatusCode::CONFLICT,
            kind.already_registered,
            format!(
                "{} \"{id}\" version \"{version}\" is already registered",
                kind.title
            ),
        )
        .with_details(json!({ kind.id_field: id, "version": version })),
        DefinitionError::ProjectMismatch { id, .. } => ApiError::new(
            StatusCode::CONFLICT,
            kind.project_mismatch,
            format!(
                "{} \"{id}\" belongs to another project; publish its versions there",
                kind.title
            ),
        )
        .with_details(json!({ kind.id_field: id })),
        DefinitionError::Store(e) => ApiError::from(e),
    }
}

/// `sha256:<hex>` of `pins` as canonical JSON (sorted keys, no whitespace): the pins
/// must be built from ordered maps (`BTreeMap`) so the text is canonical.
pub fn pins_digest(pins: &Value) -> String {
    use sha2::Digest as _;
    let canonical = canonical_json(pins);
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(canonical)))
}

fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&m[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical_json).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// A `validation-failed` answer: `what` is not valid, with every issue (`{path, message}`).
pub fn validation_failed(what: &str, issues: Vec<Value>) -> ApiError {
    let first = issues
        .first()
        .map(|i| {
            let path = i.get("path").and_then(Value::as_str).unwrap_or_default();
            let message = i.get("message").and_then(Value::as_str).unwrap_or_default();
            if path.is_empty() {
                message.to_owned()
            } else {
                format!("{path}: {message}")
            }
        })
        .unwrap_or_default();
    let more = if issues.len() > 1 {
        format!(" (and {} more)", issues.len() - 1)
    } else {
        String::new()
    };
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "validation-failed",
        format!("{what} is not valid: {first}{more}"),
    )
    .with_details(json!({ "issues": issues }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_over_sorted_keys() {
        let a = json!({"tools": {"b": "1.0.0", "a": "2.0.0"}, "agents": {}});
        let b = json!({"agents": {}, "tools": {"a": "2.0.0", "b": "1.0.0"}});
        assert_eq!(pins_digest(&a), pins_digest(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"agents":{},"tools":{"a":"2.0.0","b":"1.0.0"}}"#
        );
        assert!(pins_digest(&a).starts_with("sha256:"));
        assert_eq!(pins_digest(&a).len(), 7 + 64);
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
    }
}
