//! The MCP proxy routes (platform-api.md §6): a per-request MCP client to a registered
//! endpoint for its resources and prompts.
//!
//! - `GET /v1/mcp/endpoints/{id}/resources` → `{data: [{uri, name, description?, mimeType?}]}`
//! - `GET /v1/mcp/endpoints/{id}/resources/{uri}` (URL-encoded) → `{uri, mimeType?, text?|blob?}`
//! - `GET /v1/mcp/endpoints/{id}/prompts` → `{data: [{name, description?, arguments?}]}`
//! - `POST /v1/mcp/endpoints/{id}/prompts/{name}` `{arguments?: {k: string}}` →
//!   `{messages: [{role, content}]}`
//!
//! Unknown endpoint → `404 mcp-endpoint-not-found`; a resource or prompt the server does not
//! list → `404 mcp-resource-not-found` / `mcp-prompt-not-found`; any other upstream failure
//! (unreachable, an error answer, a timeout) → `502 mcp-resource-read-failed` /
//! `mcp-prompt-get-failed` with the reason, the endpoint's credential masked (`***`) in it
//! whether the failure came at connect or after.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kindgi_mcp::{ConnectOptions, McpClient};
use kindgi_store::mcp_endpoints::McpEndpointStore;
use serde_json::{Map, Value, json};

use super::mcp_auth::{self, EndpointAuth};
use super::mcp_sync::{SYNC_TIMEOUT, endpoint_uri};
use super::values;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::projects::default_project_id;
use crate::state::AppState;

/// The proxy routes, merged with the endpoint routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/mcp/endpoints/{endpoint_id}/resources", get(resources))
        .route(
            "/v1/mcp/endpoints/{endpoint_id}/resources/{uri}",
            get(read_resource),
        )
        .route("/v1/mcp/endpoints/{endpoint_id}/prompts", get(prompts))
        .route(
            "/v1/mcp/endpoints/{endpoint_id}/prompts/{name}",
            post(get_prompt),
        )
}

fn echo(s: &str) -> String {
    s.chars().take(200).collect()
}

/// Which proxy failure code a route answers with.
#[derive(Clone, Copy)]
enum Kind {
    Resource,
    Prompt,
}

fn upstream(kind: Kind, endpoint_id: &str, message: String) -> ApiError {
    let code = match kind {
        Kind::Resource => "mcp-resource-read-failed",
        Kind::Prompt => "mcp-prompt-get-failed",
    };
    ApiError::new(StatusCode::BAD_GATEWAY, code, message)
        .with_details(json!({ "endpointId": echo(endpoint_id) }))
}

/// Connects to `tenant`'s endpoint `endpoint_id`; the endpoint's credential comes back too,
/// to mask it in what the server answers later.
async fn connect(
    state: &AppState,
    caller: &Caller,
    endpoint_id: &str,
    kind: Kind,
) -> Result<(McpClient, EndpointAuth), ApiError> {
    let tenant = caller.tenant.as_str();
    let record = McpEndpointStore::new(state.db.clone())
        .get(tenant, endpoint_id)
        .await
        .map_err(|e| ApiError::internal(&e))?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "mcp-endpoint-not-found",
                format!(
                    "No MCP endpoint registered with id \"{}\"",
                    echo(endpoint_id)
                ),
            )
            .with_details(json!({ "endpointId": echo(endpoint_id) }))
        })?;
    // A key limited to a project reaches its project's endpoints only.
    mcp_auth::check_reaches(caller, &record, "read")?;
    let uri = endpoint_uri(&record.body).map_err(|why| upstream(kind, endpoint_id, why))?;
    let project = match record.scope_kind.as_str() {
        "project" => record.scope_id.clone(),
        _ => default_project_id(tenant),
    };
    let values = values::store_for(&state.db, &state.values);
    let auth = mcp_auth::resolve(&values, &record, &project, &state.egress)
        .await
        .map_err(|why| upstream(kind, endpoint_id, why))?;
    let options = ConnectOptions {
        timeout: SYNC_TIMEOUT,
        egress: state.egress.clone(),
        auth: auth.headers.clone(),
        ..Default::default()
    };
    let client = McpClient::connect(&uri, options)
        .await
        .map_err(|e| upstream(kind, endpoint_id, auth.masked(&e.to_string())))?;
    Ok((client, auth))
}

/// Keeps only `keys` of `v` (those present and not null).
fn pick(v: &Value, keys: &[&str]) -> Value {
    let mut o = Map::new();
    for k in keys {
        if let Some(x) = v.get(*k).filter(|x| !x.is_null()) {
            o.insert((*k).to_owned(), x.clone());
        }
    }
    Value::Object(o)
}

async fn resources(
    State(state): State<AppState>,
    caller: Caller,
    Path(endpoint_id): Path<String>,
) -> Result<Response, ApiError> {
    let (client, auth) = connect(&state, &caller, &endpoint_id, Kind::Resource).await?;
    let listed = client.list_resources().await;
    client.close().await;
    let listed =
        listed.map_err(|e| upstream(Kind::Resource, &endpoint_id, auth.masked(&e.to_string())))?;
    let data: Vec<Value> = listed
        .iter()
        .map(|r| pick(r, &["uri", "name", "description", "mimeType"]))
        .collect();
    Ok(Json(json!({ "data": data })).into_response())
}

async fn read_resource(
    State(state): State<AppState>,
    caller: Caller,
    Path((endpoint_id, uri)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let (client, auth) = connect(&state, &caller, &endpoint_id, Kind::Resource).await?;
    let read = client.read_resource(&uri).await;
    let known = match &read {
        Ok(_) => true,
        Err(_) => client
            .list_resources()
            .await
            .map(|all| {
                all.iter()
                    .any(|r| r.get("uri").and_then(Value::as_str) == Some(&uri))
            })
            .unwrap_or(true),
    };
    client.close().await;
    let result = match read {
        Ok(r) => r,
        Err(_) if !known => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "mcp-resource-not-found",
                format!(
                    "No MCP resource \"{}\" at endpoint \"{}\"",
                    echo(&uri),
                    echo(&endpoint_id)
                ),
            )
            .with_details(json!({ "endpointId": echo(&endpoint_id), "uri": echo(&uri) })));
        }
        Err(e) => {
            return Err(upstream(
                Kind::Resource,
                &endpoint_id,
                auth.masked(&e.to_string()),
            ));
        }
    };
    let first = result
        .get("contents")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .cloned()
        .ok_or_else(|| {
            upstream(
                Kind::Resource,
                &endpoint_id,
                format!("the server read \"{}\" as no contents", echo(&uri)),
            )
        })?;
    let mut body = pick(&first, &["uri", "mimeType", "text", "blob"]);
    if let Some(o) = body.as_object_mut() {
        o.entry("uri").or_insert_with(|| Value::String(uri.clone()));
    }
    Ok(Json(body).into_response())
}

async fn prompts(
    State(state): State<AppState>,
    caller: Caller,
    Path(endpoint_id): Path<String>,
) -> Result<Response, ApiError> {
    let (client, auth) = connect(&state, &caller, &endpoint_id, Kind::Prompt).await?;
    let listed = client.list_prompts().await;
    client.close().await;
    let listed =
        listed.map_err(|e| upstream(Kind::Prompt, &endpoint_id, auth.masked(&e.to_string())))?;
    let data: Vec<Value> = listed
        .iter()
        .map(|p| {
            let mut out = pick(p, &["name", "description"]);
            if let (Some(args), Some(o)) = (
                p.get("arguments").and_then(Value::as_array),
                out.as_object_mut(),
            ) {
                let args: Vec<Value> = args
                    .iter()
                    .map(|a| pick(a, &["name", "description", "required"]))
                    .collect();
                o.insert("arguments".into(), Value::Array(args));
            }
            out
        })
        .collect();
    Ok(Json(json!({ "data": data })).into_response())
}

/// The prompt body: `{arguments?: {k: string}}` (an empty body is `{}`).
fn prompt_arguments(body: &[u8]) -> Result<Option<Map<String, Value>>, ApiError> {
    if body.is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|_| ApiError::bad_input("Request body must be valid JSON"))?;
    let Value::Object(mut o) = value else {
        return Err(ApiError::bad_input("Request body must be an object"));
    };
    match o.remove("arguments") {
        None => Ok(None),
        Some(Value::Object(args)) if args.values().all(Value::is_string) => Ok(Some(args)),
        Some(_) => Err(ApiError::bad_input(
            "arguments must be a Record<string, string>",
        )),
    }
}

async fn get_prompt(
    State(state): State<AppState>,
    caller: Caller,
    Path((endpoint_id, name)): Path<(String, String)>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let arguments = prompt_arguments(&body)?;
    let (client, auth) = connect(&state, &caller, &endpoint_id, Kind::Prompt).await?;
    let got = client.get_prompt(&name, arguments).await;
    let known = match &got {
        Ok(_) => true,
        Err(_) => client
            .list_prompts()
            .await
            .map(|all| {
                all.iter()
                    .any(|p| p.get("name").and_then(Value::as_str) == Some(&name))
            })
            .unwrap_or(true),
    };
    client.close().await;
    let result = match got {
        Ok(r) => r,
        Err(_) if !known => {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "mcp-prompt-not-found",
                format!(
                    "No MCP prompt \"{}\" at endpoint \"{}\"",
                    echo(&name),
                    echo(&endpoint_id)
                ),
            )
            .with_details(json!({ "endpointId": echo(&endpoint_id), "promptName": echo(&name) })));
        }
        Err(e) => {
            return Err(
                upstream(Kind::Prompt, &endpoint_id, auth.masked(&e.to_string())).with_details(
                    json!({ "endpointId": echo(&endpoint_id), "promptName": echo(&name) }),
                ),
            );
        }
    };
    let messages: Vec<Value> = result
        .get("messages")
        .and_then(Value::as_array)
        .map(|m| m.iter().map(|x| pick(x, &["role", "content"])).collect())
        .unwrap_or_default();
    Ok(Json(json!({ "messages": messages })).into_response())
}
