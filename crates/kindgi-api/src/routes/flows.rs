//! `/v1/flows`: publish flows (`OA:PublishFlowBody` → `201 {flowId, version}`) and read,
//! unregister and reinstate their versions ([`super::registry`]). A published flow is
//! checked as the runtime loads one ([`kindgi_runtime::LoadedFlow::load`]: the flow
//! schema's types, the structural rules, every JSON Schema it carries compiles) and pinned:
//! each tool it runs and each agent step resolves to its latest version now (`pins`,
//! `pinsDigest`), when all of them resolve. One that does not resolve leaves the version
//! unpinned (its runs bind the latest versions) rather than refuse the publish.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use kindgi_spec::flow::{Flow, LeafKind, Node};
use kindgi_store::definitions::DefinitionKind;
use serde_json::{Map, Value, json};

use crate::auth::Tenant;
use crate::cpu;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::routes::registry::{self, Kind, Writable};
use crate::state::AppState;

/// The flow kind.
pub static FLOWS: Kind = Kind {
    store: DefinitionKind::Flow,
    title: "Flow",
    path: "/v1/flows",
    id_field: "flowId",
    not_found: "flow-not-found",
    gone: "flow-gone",
    already_registered: "flow-already-registered",
    project_mismatch: "flow-project-mismatch",
    wire_keys: &[
        "id",
        "version",
        "projectId",
        "name",
        "description",
        "nodes",
        "edges",
        "maxParallelism",
        "metadata",
        "pins",
        "pinsDigest",
        "derivedFrom",
        "unregisteredAt",
    ],
};

/// The flow routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(FLOWS.path, post(publish))
        .merge(registry::routes(&FLOWS))
}

/// Checks a flow definition as the runtime loader does; `Err` is `400 validation-failed`
/// with `details.issues[{path, message}]`.
pub fn check_flow(definition: Map<String, Value>) -> Result<Flow, ApiError> {
    let value = Value::Object(definition);
    let flow: Flow = serde_json::from_value(value).map_err(|e| {
        registry::validation_failed(
            "Flow definition",
            vec![json!({"path": "", "message": e.to_string()})],
        )
    })?;
    match kindgi_runtime::LoadedFlow::load(flow.clone()) {
        Ok(_) => Ok(flow),
        Err(kindgi_runtime::FlowError::Parse { message }) => Err(registry::validation_failed(
            "Flow definition",
            vec![json!({"path": "", "message": message})],
        )),
        Err(kindgi_runtime::FlowError::Invalid {
            flow_id,
            version,
            issues,
        }) => Err(registry::validation_failed(
            &format!("Flow \"{flow_id}\" {version}"),
            issues
                .iter()
                .map(|i| json!({"path": i.at, "message": i.message}))
                .collect(),
        )),
    }
}

async fn publish(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    _writable: Writable,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let (project_id, definition) = registry::split_publish_body(&state, &tenant, &body).await?;
    let stored = Value::Object(definition.clone());
    // Loading compiles the flow's schemas: CPU work, off the async workers.
    let flow = cpu::run(move || check_flow(definition)).await??;
    let annotations = pins(&state, &tenant, &flow).await?;
    let record =
        registry::publish(&state, &tenant, &FLOWS, project_id, stored, annotations).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"flowId": record.id, "version": record.version})),
    ))
}

/// `{pins, pinsDigest}` when every tool and agent step resolves to a latest version.
async fn pins(state: &AppState, tenant: &str, flow: &Flow) -> Result<Option<Value>, ApiError> {
    let mut tools = BTreeMap::new();
    let mut agents = BTreeMap::new();
    for node in flow.all_nodes() {
        let Node::Leaf(leaf) = node else { continue };
        match leaf.kind {
            LeafKind::Tool => match state.registry.resolve(tenant, &leaf.ref_, None).await {
                Ok(resolved) => {
                    tools.insert(leaf.ref_.clone(), resolved.resolved_version);
                }
                Err(_) => return Ok(None),
            },
            LeafKind::Agent => match state
                .definitions
                .get_agent(tenant, &leaf.ref_, None)
                .await?
            {
                Some(agent) => {
                    agents.insert(leaf.ref_.clone(), agent.version);
                }
                None => return Ok(None),
            },
        }
    }
    let pins = json!({"tools": tools, "agents": agents});
    let digest = registry::pins_digest(&pins);
    Ok(Some(json!({"pins": pins, "pinsDigest": digest})))
}
