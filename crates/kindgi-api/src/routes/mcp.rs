//! `/v1/mcp/endpoints` (platform-api.md §6): register (validated by [`mcp_validate`],
//! synced into the tool registry by [`mcp_sync`]), list (paging, `transport`, scope
//! triplet), get (credential headers `[redacted]`) and unregister (its tools retire).
//! The resources and prompts proxy routes are in [`super::mcp_proxy`].
//! A `stdio` endpoint needs [`AppState::allow_stdio_mcp`], else `403 host-access-denied`;
//! an HTTP endpoint at an address [`AppState::egress`] refuses is `403 host-access-denied`
//! too, before anything is stored or connected (and every later sync and proxy request is
//! held to the same policy).
//!
//! An endpoint is the tenant's or one of its projects'. A key limited to a project
//! ([`crate::key_project`]) registers endpoints of that project only (a body naming another
//! is `403 key-project-mismatch` before the route; `scopeKind: "tenant"` is `403
//! permission-denied`), lists only its project's, and reading, proxying to or unregistering
//! any other (the tenant's included) is `403 permission-denied` naming
//! `mcp_endpoint:<id>`.
//!
//! Beyond the reference (additive, documented in docs/mcp.md): a read answers
//! `toolIds` (what the last sync registered) and, when it registered nothing because it
//! failed, `syncError`.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_store::mcp_endpoints::{
    McpEndpointFilter, McpEndpointRecord, McpEndpointStore, RegisterOutcome,
};
use serde_json::{Map, Value, json};

use super::mcp_auth;
use super::mcp_sync;
use super::mcp_validate::{self, TRANSPORTS};
use super::scope::{self, Scope};
use super::values;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::key_project::outside;
use crate::page::{clamp_limit, decode_cursor, encode_cursor, page};
use crate::projects::default_project_id;
use crate::query::QueryString;
use crate::routes::key_holder::KeyHolder;
use crate::routes::secret_binding;
use crate::state::AppState;

/// The MCP endpoint routes, to be merged into the `/v1` router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/mcp/endpoints", post(register).get(list))
        .route("/v1/mcp/endpoints/{endpoint_id}", get(get_one))
        .route(
            "/v1/mcp/endpoints/{endpoint_id}/unregister",
            post(unregister),
        )
        .merge(super::mcp_proxy::routes())
}

fn store(state: &AppState) -> McpEndpointStore {
    McpEndpointStore::new(state.db.clone())
}

fn echo(s: &str) -> String {
    s.chars().take(200).collect()
}

fn not_found(endpoint_id: &str, message: String) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "mcp-endpoint-not-found", message)
        .with_details(json!({ "endpointId": echo(endpoint_id) }))
}

/// The wire form of a stored endpoint.
fn serialize(record: &McpEndpointRecord) -> Value {
    let mut v = mcp_validate::redacted(&record.body);
    if let Some(obj) = v.as_object_mut() {
        obj.insert("toolIds".into(), json!(record.tool_ids));
        if let Some(e) = &record.sync_error {
            obj.insert("syncError".into(), Value::String(e.clone()));
        }
    }
    v
}

/// The project an endpoint's tools are filed under.
fn tools_project(tenant: &str, scope: &Scope) -> String {
    match scope {
        Scope::Project(id) => id.clone(),
        Scope::Tenant | Scope::Org(_) => default_project_id(tenant),
    }
}

/// The tenant or one of its projects (this runtime has no orgs): anything else is
/// `scope-invalid`. A key limited to a project registers in it only.
async fn check_scope(
    state: &AppState,
    caller: &KeyHolder,
    scope: Scope,
) -> Result<Scope, ApiError> {
    let tenant = &caller.tenant;
    if let Some(limit) = &caller.key.record.project_id
        && scope == Scope::Tenant
    {
        return Err(outside(
            limit,
            "write",
            &format!("tenant:{}", crate::projects::tenant_uuid(tenant)),
        ));
    }
    match scope {
        Scope::Tenant => Ok(Scope::Tenant),
        Scope::Project(id) => {
            let projects =
                <crate::projects::Projects as axum::extract::FromRef<_>>::from_ref(state);
            match projects.check(tenant, Some(&id)).await {
                Ok(p) => Ok(Scope::Project(p)),
                Err(e) if e.code == "project-not-found" || e.code == "bad-input" => Err(
                    scope::scope_invalid(format!("Project \"{}\" not found for tenant", echo(&id)))
                        .with_details(json!({ "projectId": echo(&id) })),
                ),
                Err(e) => Err(e),
            }
        }
        Scope::Org(id) => Err(scope::scope_invalid(format!(
            "Org \"{}\" not found for tenant",
            echo(&id)
        ))
        .with_details(json!({ "orgId": echo(&id) }))),
    }
}

fn host_access_denied(endpoint_id: &str) -> ApiError {
    let message = format!(
        "MCP endpoint \"{}\" uses the stdio transport, which runs a command on the server's host; this server refuses that (start it with --allow-stdio-mcp to allow it). Run the MCP server over HTTP (streamable-http) instead.",
        echo(endpoint_id)
    );
    ApiError::new(StatusCode::FORBIDDEN, "host-access-denied", message.clone()).with_details(
        json!({
            "action": "admin",
            "resource": format!("mcp_endpoint:{}", echo(endpoint_id)),
            "reason": message,
        }),
    )
}

/// `403 host-access-denied` when the host's egress policy refuses the endpoint's address.
async fn check_egress(state: &AppState, endpoint_id: &str, body: &Value) -> Result<(), ApiError> {
    // A body with no reachable URI yet fails its sync with the reason instead.
    let Ok(uri) = mcp_sync::endpoint_uri(body) else {
        return Ok(());
    };
    let Ok(endpoint) = kindgi_mcp::Endpoint::parse(&uri) else {
        return Ok(());
    };
    let Err(refused) = kindgi_mcp::check_endpoint(&state.egress, &endpoint).await else {
        return Ok(());
    };
    let message = format!("MCP endpoint \"{}\": {refused}", echo(endpoint_id));
    Err(
        ApiError::new(StatusCode::FORBIDDEN, "host-access-denied", message.clone()).with_details(
            json!({
                "action": "connect",
                "resource": format!("mcp_endpoint:{}", echo(endpoint_id)),
                "reason": message,
            }),
        ),
    )
}

async fn register(
    State(state): State<AppState>,
    caller: KeyHolder,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|_| ApiError::bad_input("Request body must be valid JSON"))?;
    let Value::Object(object) = value else {
        return Err(ApiError::bad_input("Request body must be an object"));
    };
    let endpoint =
        mcp_validate::validate(&object).map_err(mcp_validate::Invalid::into_api_error)?;
    let endpoint_id = endpoint["endpointId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let transport = endpoint["transport"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if transport == "stdio" && !state.allow_stdio_mcp {
        return Err(host_access_denied(&endpoint_id));
    }
    let mut secrets = Vec::new();
    secret_binding::secret_refs(&Value::Object(object.clone()), &mut secrets);
    secret_binding::require(
        &caller,
        &secrets,
        &format!("MCP endpoint {}", echo(&endpoint_id)),
    )?;
    let tenant = caller.tenant.clone();
    super::providers_keys::refuse(
        &state,
        &tenant,
        &secrets,
        &super::providers_keys::never_given("an MCP endpoint"),
    )
    .await?;
    check_egress(&state, &endpoint_id, &endpoint).await?;
    let scope = scope::parse_body(object.get("scopeKind"), object.get("scopeId"))?;
    let scope = check_scope(&state, &caller, scope).await?;
    let (scope_kind, scope_id) = scope.key();
    let mut record = McpEndpointRecord {
        tenant_id: tenant.clone(),
        endpoint_id: endpoint_id.clone(),
        name: endpoint["name"].as_str().unwrap_or_default().to_owned(),
        transport,
        body: endpoint,
        scope_kind,
        scope_id,
        tool_ids: Vec::new(),
        sync_error: None,
        created_at: 0,
        unregistered_at: None,
    };
    let store = store(&state);
    let outcome = store
        .register(&record)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    if outcome == RegisterOutcome::AlreadyRegistered {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "mcp-endpoint-already-registered",
            format!(
                "MCP endpoint \"{}\" is already registered",
                echo(&endpoint_id)
            ),
        )
        .with_details(json!({ "endpointId": echo(&endpoint_id) })));
    }
    let project = tools_project(&tenant, &scope);
    let values = values::store_for(&state.db, &state.values);
    match mcp_sync::sync(
        &*state.registry,
        &values,
        &record,
        &project,
        mcp_sync::SYNC_TIMEOUT,
        &state.egress,
    )
    .await
    {
        Ok(ids) => record.tool_ids = ids,
        Err(why) => {
            tracing::warn!(endpoint = %endpoint_id, %why, "MCP endpoint sync registered no tools");
            record.sync_error = Some(why);
        }
    }
    store
        .record_sync(
            &tenant,
            &endpoint_id,
            &record.tool_ids,
            record.sync_error.as_deref(),
        )
        .await
        .map_err(|e| ApiError::internal(&e))?;
    Ok((
        StatusCode::CREATED,
        Json(json!({ "endpointId": endpoint_id })),
    )
        .into_response())
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let tenant = &caller.tenant;
    // A repeated key is read by its last value.
    let q = QueryString::parse(query.as_deref());
    let limit = clamp_limit(q.last("limit"));
    let transport = q.last("transport").filter(|t| !t.is_empty());
    if let Some(t) = transport {
        if !TRANSPORTS.contains(&t) {
            return Err(ApiError::bad_input(format!(
                "Unknown transport \"{}\" — must be one of {}",
                echo(t),
                TRANSPORTS.join(" / ")
            )));
        }
    }
    let scope = scope::parse_query(q.last("scopeKind"), q.last("scopeId"), q.last("inherit"))?;
    let inherit = scope.inherit.unwrap_or(true);
    let scopes: Vec<(String, String)> = match (&caller.project_id, &scope.scope) {
        // A key limited to a project lists its project's endpoints only (the tenant's are
        // not its project's; a scope naming another project was refused before).
        (Some(limit), None | Some(Scope::Project(_))) => {
            vec![Scope::Project(limit.to_ascii_lowercase()).key()]
        }
        (Some(_), Some(_)) => {
            return Ok(Json(page(Vec::new(), None, Map::new())).into_response());
        }
        (None, None) => Vec::new(),
        (None, Some(s)) if inherit && *s != Scope::Tenant => vec![s.key(), Scope::Tenant.key()],
        (None, Some(s)) => vec![s.key()],
    };
    let after: Option<Value> = decode_cursor(q.last("cursor"))?;
    let after = match after {
        None => None,
        Some(v) => Some(
            v.get("id")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ApiError::bad_input("`cursor` is malformed"))?,
        ),
    };
    let filter = McpEndpointFilter {
        transport: transport.map(str::to_owned),
        scopes,
        after,
        limit: limit + 1,
    };
    let mut rows = store(&state)
        .list(tenant, &filter)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more
        .then(|| {
            rows.last()
                .map(|r| encode_cursor(&json!({ "id": r.endpoint_id })))
        })
        .flatten();
    let data = rows.iter().map(serialize).collect();
    Ok(Json(page(data, next, Map::new())).into_response())
}

async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    Path(endpoint_id): Path<String>,
) -> Result<Response, ApiError> {
    let record = store(&state)
        .get(&caller.tenant, &endpoint_id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .ok_or_else(|| {
            not_found(
                &endpoint_id,
                format!(
                    "No MCP endpoint registered with id \"{}\"",
                    echo(&endpoint_id)
                ),
            )
        })?;
    mcp_auth::check_reaches(&caller, &record, "read")?;
    Ok(Json(serialize(&record)).into_response())
}

async fn unregister(
    State(state): State<AppState>,
    caller: Caller,
    Path(endpoint_id): Path<String>,
) -> Result<Response, ApiError> {
    let tenant = &caller.tenant;
    if caller.project_id.is_some()
        && let Some(record) = store(&state)
            .get(tenant, &endpoint_id)
            .await
            .map_err(|e| ApiError::internal(&e))?
    {
        mcp_auth::check_reaches(&caller, &record, "write")?;
    }
    let record = store(&state)
        .unregister(tenant, &endpoint_id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .ok_or_else(|| {
            not_found(
                &endpoint_id,
                format!("No MCP endpoint \"{}\" to unregister", echo(&endpoint_id)),
            )
        })?;
    mcp_sync::retire_tools(&*state.registry, tenant, &record.tool_ids).await;
    Ok(Json(json!({ "endpointId": endpoint_id, "unregistered": true })).into_response())
}

/// Syncs every registered endpoint of every tenant into `state.registry` (a host calls it
/// at boot, as the reference runtime does); returns `(endpoint, error)` for those whose
/// sync registered no tools.
pub async fn sync_all(state: &AppState) -> Result<Vec<(String, String)>, kindgi_store::StoreError> {
    let store = store(state);
    // The process's configuration (`KINDGI_ENV`, the key), as boot syncs have always read:
    // a host may give the state its own only after syncing.
    let values = values::store_for(&state.db, &values::ValuesConfig::process());
    let mut failed = Vec::new();
    for record in store.all_active().await? {
        let scope = match record.scope_kind.as_str() {
            "project" => Scope::Project(record.scope_id.clone()),
            _ => Scope::Tenant,
        };
        let project = tools_project(&record.tenant_id, &scope);
        let outcome = mcp_sync::sync(
            &*state.registry,
            &values,
            &record,
            &project,
            mcp_sync::SYNC_TIMEOUT,
            &state.egress,
        )
        .await;
        let (ids, error) = match outcome {
            Ok(ids) => (ids, None),
            Err(e) => {
                failed.push((record.endpoint_id.clone(), e.clone()));
                (Vec::new(), Some(e))
            }
        };
        store
            .record_sync(
                &record.tenant_id,
                &record.endpoint_id,
                &ids,
                error.as_deref(),
            )
            .await?;
    }
    Ok(failed)
}
